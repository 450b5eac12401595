package sqlite

import (
	"context"
	"errors"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/vector"
)

// PurgePages lets the tests purge the search indexes in small steps.
var PurgePages = &purgePages

// BusyTimeout lets the tests wait less for locks.
var BusyTimeout = &busyTimeout

// FailHalfway submits a write that renames the store and then fails, as
// a write failing after its first change would.
func (db *DB) FailHalfway(ctx context.Context, storeID string) error {
	return db.write(ctx, func(tx *txn) error {
		if _, err := tx.exec(ctx, `UPDATE stores SET name = 'half-written' WHERE id = ?`, storeID); err != nil {
			return err
		}
		return memstore.Errorf(memstore.EConflict, "failed halfway")
	})
}

// FailUnwritten submits a write that reads the store and then fails with
// an error that is not a refusal, as a driver error would, before any
// change.
func (db *DB) FailUnwritten(ctx context.Context, storeID string) error {
	return db.write(ctx, func(tx *txn) error {
		var name string
		if err := tx.queryRow(ctx, `SELECT name FROM stores WHERE id = ?`, storeID).Scan(&name); err != nil {
			return err
		}
		return ErrUnwritten
	})
}

// ErrUnwritten is FailUnwritten's error.
var ErrUnwritten = errors.New("failed before writing")

// HoldWrites keeps the writer waiting until release is called, so that a
// test can queue writes to run together in the next batch, in the order
// they were queued.
func (db *DB) HoldWrites(ctx context.Context) (release func()) {
	held, released := make(chan struct{}), make(chan struct{})
	go db.write(ctx, func(*txn) error {
		close(held)
		<-released
		return nil
	})
	<-held
	return func() { close(released) }
}

// FailAfterWebhookEvents submits a write that creates a store of
// workspace workspaceID and archives store storeID, events that webhooks
// may want, and then fails, so that it is rolled back.
func (db *DB) FailAfterWebhookEvents(ctx context.Context, workspaceID, storeID string) error {
	return db.write(ctx, func(tx *txn) error {
		now := db.now()
		if _, err := tx.exec(ctx, `INSERT INTO stores (id, workspace_id, name, description, metadata, created_at, updated_at) VALUES (?, ?, 'rolled back', '', '{}', ?, ?)`,
			db.ids.New(memstore.StoreIDPrefix, now), workspaceID, nanos(now), nanos(now)); err != nil {
			return err
		}
		if err := insertEvent(ctx, tx, storeID, memstore.EventStoreArchived, "", memstore.Actor{}, now); err != nil {
			return err
		}
		return memstore.Errorf(memstore.EConflict, "failed after its changes")
	})
}

// KeptRevocations lets the tests keep few rows of revocations.
var KeptRevocations = &keptRevocations

// ReadRevocations reads the revocations table after row last, as the
// reader of a listening DB does, and tells db's listeners; the tests
// listen through db.Revocations, which starts no reader of its own.
func (db *DB) ReadRevocations(ctx context.Context, last int64) (int64, error) {
	return db.readRevocations(ctx, last)
}

// VectorRowsRead is how many vectors this DB's semantic searches read
// from the file.
func (db *DB) VectorRowsRead() int64 { return db.vectors.rowsRead.Load() }

// SetVectorCopyBytes sets the bound of db's copies of stores' vectors.
func (db *DB) SetVectorCopyBytes(n int64) { db.vectors.Limit = n }

// SetVectorCopyShare sets a workspace's share of db's copies of stores'
// vectors.
func (db *DB) SetVectorCopyShare(n int64) { db.vectors.WorkspaceLimit = n }

// VectorCopies is how many copies of stores' vectors db keeps, and each
// one's place in their order of use.
func (db *DB) VectorCopies() (int, map[vector.CopyKey]uint64) {
	return db.vectors.Len(), db.vectors.Uses()
}

// VectorCopyHolds says whether one of db's copies holds a vector of the
// memory.
func (db *DB) VectorCopyHolds(memoryID string) bool { return db.vectors.Holds(memoryID) }

// SweepVectorCopies runs the sweep of db's copies as it would run at now.
func (db *DB) SweepVectorCopies(now time.Time) {
	db.vectors.Sweep(now.Add(-memstore.VectorCopyIdle))
}

// PlaceCopyMax lets the tests make the stores too large for the copies of
// places.
var PlaceCopyMax = &placeCopyMax

// PlaceCopies is how many copies of places db keeps.
func (db *DB) PlaceCopies() int { return db.places.Len() }

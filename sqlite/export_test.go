package sqlite

import (
	"context"

	"github.com/memstore/memstore"
)

// PurgePages lets the tests purge the search indexes in small steps.
var PurgePages = &purgePages

// BusyTimeout lets the tests wait less for locks.
var BusyTimeout = &busyTimeout

// FailHalfway submits a write that renames the store and then fails, as
// a write failing after its first change would.
func (db *DB) FailHalfway(ctx context.Context, storeID string) error {
	return db.write(ctx, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `UPDATE stores SET name = 'half-written' WHERE id = ?`, storeID); err != nil {
			return err
		}
		return memstore.Errorf(memstore.EConflict, "failed halfway")
	})
}

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

package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/vector"
)

// FailAfterWebhookEvents creates, in one transaction, a store of
// workspace workspaceID and an archive event of store storeID, events
// that webhooks may want, and then fails, so that it is rolled back.
func (db *DB) FailAfterWebhookEvents(ctx context.Context, workspaceID, storeID string) error {
	return db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		now := db.stamp()
		if _, err := tx.Exec(ctx, `INSERT INTO stores (id, workspace_id, name, description, metadata, created_at, updated_at) VALUES ($1, $2, 'rolled back', '', '{}', $3, $3)`,
			db.ids.New(memstore.StoreIDPrefix, now), workspaceID, keyset.Nanos(now)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, insertEvent("$1", "$2", "NULL", "''", "''", "$3"), storeID, string(memstore.EventStoreArchived), keyset.Nanos(now)); err != nil {
			return err
		}
		return memstore.Errorf(memstore.EConflict, "failed after its changes")
	})
}

// VectorRowsRead is how many vectors this DB's semantic searches read
// from the database.
func (db *DB) VectorRowsRead() int64 { return db.vectors.rowsRead.Load() }

// SetVectorLogKeep keeps n entries of vector_log, until the returned
// function restores the default.
func SetVectorLogKeep(n int) func() {
	old := vectorLogKeep
	vectorLogKeep = n
	return func() { vectorLogKeep = old }
}

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

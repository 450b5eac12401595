package sqlite

import (
	"context"
	"slices"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sqlread"
)

// The change feed (memstore's feed.go) in the events table: each write
// that changes a store adds its event in its own transaction, numbered
// after the store's last one, which the single writer makes exact. The
// batcher tells the listeners of each store that has new events once the
// batch has committed (tryBatch).

// insertEvent adds event e of store storeID, about version versionID
// ("" for none), made by by at at, and notes the store for the notice
// after the commit.
func insertEvent(ctx context.Context, tx *txn, storeID string, e memstore.EventType, versionID string, by memstore.Actor, at time.Time) error {
	var vid any
	if versionID != "" {
		vid = versionID
	}
	_, err := tx.exec(ctx, `INSERT INTO events (store_id, seq, type, version_id, actor_type, actor_id, created_at)
		VALUES (?, coalesce((SELECT seq FROM events WHERE store_id = ? ORDER BY seq DESC LIMIT 1), 0) + 1, ?, ?, ?, ?, ?)`,
		storeID, storeID, string(e), vid, string(by.Type), by.ID, nanos(at))
	if err == nil {
		tx.evented = append(tx.evented, storeID)
	}
	return err
}

// notifyEvents tells the listeners of each store of stores, the stores of
// a committed transaction's events, once.
func (db *DB) notifyEvents(stores []string) {
	for i, id := range stores {
		if !slices.Contains(stores[:i], id) {
			db.Notify(id)
		}
	}
}

// Events implements memstore.EventStorage (sqlread.Events).
func (db *DB) Events(ctx context.Context, workspaceID, storeID string, f memstore.EventFilter) (memstore.EventPage, error) {
	page, err := sqlread.Events(db.readStore(ctx, workspaceID, storeID), dialect, storeID, f)
	return page, wrap(err, "list events")
}

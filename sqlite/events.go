package sqlite

import (
	"context"
	"slices"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/sqlrow"
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

// Events implements memstore.EventStorage: one read transaction, the
// events joined to their versions for the path and hash.
func (db *DB) Events(ctx context.Context, workspaceID, storeID string, f memstore.EventFilter) (memstore.EventPage, error) {
	n, err := memstore.PageSize(f.Limit, false)
	if err != nil {
		return memstore.EventPage{}, err
	}
	after, known, err := keyset.EventsAfter(f.After, storeID)
	if err != nil {
		return memstore.EventPage{}, err
	}
	var events []memstore.Event
	err = db.read(ctx, func(tx *txn) error {
		if _, err := storeState(ctx, tx, workspaceID, storeID); err != nil {
			return err
		}
		if !known {
			err := tx.queryRow(ctx, `SELECT coalesce((SELECT seq FROM events WHERE store_id = ? ORDER BY seq DESC LIMIT 1), 0)`, storeID).Scan(&after)
			if err != nil {
				return err
			}
		}
		rows, err := tx.query(ctx, `SELECT `+sqlrow.EventColumns+`
			FROM events e LEFT JOIN versions v ON v.store_id = e.store_id AND v.id = e.version_id
			WHERE e.store_id = ? AND e.seq > ? ORDER BY e.seq LIMIT ?`, storeID, after, n+1)
		if err != nil {
			return err
		}
		defer rows.Close()
		events, err = sqlrow.Collect(rows, sqlrow.ScanEvent)
		return err
	})
	if err != nil {
		return memstore.EventPage{}, wrap(err, "list events")
	}
	return keyset.EventsPage(storeID, after, events, n), nil
}

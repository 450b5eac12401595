package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/sqlrow"
)

// The change feed (memstore's feed.go) in the events table. Each write
// that changes a store adds its event in its own transaction, numbered
// after the store's last one while it holds the store's lock (see the
// package doc), so that the numbers follow the commits without gaps.
// After the commit it tells this process's listeners, then the other
// processes (notify.go).

// insertEvent is the statement that adds an event numbered after its
// store's last, given the SQL expressions (placeholders) of its store,
// type, version (NULL for none), actor and time. Every caller holds the
// store's lock.
func insertEvent(store, typ, version, actorType, actorID, at string) string {
	return `INSERT INTO events (store_id, seq, type, version_id, actor_type, actor_id, created_at)
		VALUES (` + store + `, coalesce((SELECT seq FROM events WHERE store_id = ` + store + ` ORDER BY seq DESC LIMIT 1), 0) + 1, ` +
		typ + `, ` + version + `, ` + actorType + `, ` + actorID + `, ` + at + `)`
}

// Events implements memstore.EventStorage: in one snapshot, the events
// joined to their versions for the path and hash.
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
	err = db.inTx(ctx, readTx, func(tx pgx.Tx) error {
		if _, err := storeState(ctx, tx, workspaceID, storeID, false); err != nil {
			return err
		}
		if !known {
			if err := tx.QueryRow(ctx, `SELECT coalesce((SELECT seq FROM events WHERE store_id = $1 ORDER BY seq DESC LIMIT 1), 0)`, storeID).Scan(&after); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, `SELECT `+sqlrow.EventColumns+`
			FROM events e LEFT JOIN versions v ON v.id = e.version_id
			WHERE e.store_id = $1 AND e.seq > $2 ORDER BY e.seq LIMIT $3`, storeID, after, n+1)
		if err != nil {
			return err
		}
		events, err = collect(rows, sqlrow.ScanEvent)
		return err
	})
	if err != nil {
		return memstore.EventPage{}, wrap(err, "list events")
	}
	return keyset.EventsPage(storeID, after, events, n), nil
}

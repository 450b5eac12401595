package postgres

import (
	"context"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sqlread"
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

// Events implements memstore.EventStorage (sqlread.Events).
func (db *DB) Events(ctx context.Context, workspaceID, storeID string, f memstore.EventFilter) (memstore.EventPage, error) {
	page, err := sqlread.Events(db.readStore(ctx, workspaceID, storeID), dialect, storeID, f)
	return page, wrap(err, "list events")
}

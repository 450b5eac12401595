package postgres

import (
	"context"

	"github.com/memstore/memstore"
)

// Counts is how much the database holds, for monitoring. It counts every
// row, as the SQLite backend does; search's backlog is the changes of
// memories queued for the indexer (searchindex.go).
func (db *DB) Counts(ctx context.Context) (memstore.Counts, error) {
	var c memstore.Counts
	err := db.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM workspaces), (SELECT count(*) FROM stores),
		(SELECT count(*) FROM memories), (SELECT count(*) FROM versions),
		(SELECT count(*) FROM search_queue)`).
		Scan(&c.Workspaces, &c.Stores, &c.Memories, &c.Versions, &c.SearchBacklog)
	return c, wrap(err, "count")
}

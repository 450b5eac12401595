package sqlite

import (
	"context"
	"database/sql"

	"github.com/memstore/memstore"
)

// Ping reports whether the database answers a read.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return wrap(translate(db.r.QueryRowContext(ctx, `SELECT 1`).Scan(&one)), "ping the database")
}

// PoolStats reports the connections of both pools, reads and the writer,
// added up.
func (db *DB) PoolStats() memstore.PoolStats {
	var p memstore.PoolStats
	for _, s := range []sql.DBStats{db.r.Stats(), db.w.Stats()} {
		p.Open += s.OpenConnections
		p.InUse += s.InUse
		p.Idle += s.Idle
		p.Max += s.MaxOpenConnections
		p.Waits += s.WaitCount
		p.WaitTime += s.WaitDuration
	}
	return p
}

package postgres

import (
	"context"

	"github.com/memstore/memstore"
)

// Ping reports whether the database answers, on a connection of the pool.
// When that connection turns out dead (the server restarted since it was
// opened), the pool's idle connections are likely dead too: they are
// closed, and a new connection asked.
func (db *DB) Ping(ctx context.Context) error {
	err := db.pool.Ping(ctx)
	if unreachable(err) {
		db.pool.Reset()
		err = db.pool.Ping(ctx)
	}
	return wrap(err, "ping the database")
}

// PoolStats reports the pool's connections. A wait is an acquisition
// that found no idle connection.
func (db *DB) PoolStats() memstore.PoolStats {
	s := db.pool.Stat()
	return memstore.PoolStats{
		Open: int(s.TotalConns()), InUse: int(s.AcquiredConns()), Idle: int(s.IdleConns()), Max: int(s.MaxConns()),
		Waits: s.EmptyAcquireCount(), WaitTime: s.EmptyAcquireWaitTime(),
	}
}

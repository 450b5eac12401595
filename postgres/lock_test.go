package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// A lockHolder holds, in a transaction of a connection of its own, what a
// statement locked, while the test watches the database from another.
type lockHolder struct {
	tx    pgx.Tx
	watch *pgx.Conn
}

// holdLock runs stmt with args in a new transaction on a connection of
// its own to url, which keeps its locks until release.
func holdLock(t *testing.T, url, stmt string, args ...any) *lockHolder {
	t.Helper()
	ctx := context.Background()
	conns := make([]*pgx.Conn, 2)
	for i := range conns {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(ctx) })
		conns[i] = c
	}
	tx, err := conns[0].Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, stmt, args...); err != nil {
		t.Fatal(err)
	}
	return &lockHolder{tx: tx, watch: conns[1]}
}

// waitFor reads count, a query of one number, until it is want or 20
// seconds have passed, and returns the last. It reads on a connection
// outside any transaction, which sees each commit (pg_stat_activity too).
func (h *lockHolder) waitFor(t *testing.T, want int, count string, args ...any) int {
	t.Helper()
	n := 0
	for deadline := time.Now().Add(20 * time.Second); n < want && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := h.watch.QueryRow(context.Background(), count, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// release ends the holding transaction, and its locks.
func (h *lockHolder) release(t *testing.T) {
	t.Helper()
	if err := h.tx.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
}

package postgres_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore/internal/pgtest"
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

// contendedDB makes a fresh database and returns its URL, and the same
// with a pool large enough for racers beside the pool's own connections.
func contendedDB(t *testing.T) (dbURL, pooled string) {
	t.Helper()
	dbURL = pgtest.DB(t, migrate)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", "8")
	u.RawQuery = q.Encode()
	return dbURL, u.String()
}

// raceForTheLast runs racers creates at once, create(i) for the i-th,
// while another connection holds back inserts into table until every
// create waits on a lock, so that creates which did not wait for one
// another would all have counted the same rows. SHARE mode lets the rows
// be read and counted, but not inserted. Each create refused must be
// refused with want; it returns how many were made, and the holder, whose
// watch connection reads what was committed.
func raceForTheLast(t *testing.T, dbURL, table string, racers int, create func(i int) error, want error) (int, *lockHolder) {
	t.Helper()
	h := holdLock(t, dbURL, `LOCK TABLE `+table+` IN SHARE MODE`)
	errs := make(chan error, racers)
	for i := range racers {
		go func() { errs <- create(i) }()
	}
	if waiting := h.waitFor(t, racers, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock'`); waiting != racers {
		t.Fatalf("%d of %d creates wait on a lock", waiting, racers)
	}
	h.release(t)
	made := 0
	for range racers {
		if err := <-errs; err == nil {
			made++
		} else if err.Error() != want.Error() {
			t.Errorf("a create beyond the limit: %v, want %v", err, want)
		}
	}
	return made, h
}

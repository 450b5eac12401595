package httpapi_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/internal/testdb"
	"github.com/memstore/memstore/postgres"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// openPostgres opens a fresh PostgreSQL database, closed when the test
// ends; the test is skipped where pgtest finds no PostgreSQL.
func openPostgres(tb testing.TB, opts postgres.Options) *postgres.DB {
	tb.Helper()
	return openPostgresURL(tb, postgresURL(tb), opts)
}

// postgresURL makes a fresh PostgreSQL database, dropped when the test
// ends, and returns its URL.
func postgresURL(tb testing.TB) string {
	tb.Helper()
	return pgtest.DB(tb, func(ctx context.Context, url string) error {
		db, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			return err
		}
		return db.Close()
	})
}

// openPostgresURL opens the database at url, closed when the test ends.
func openPostgresURL(tb testing.TB, url string, opts postgres.Options) *postgres.DB {
	tb.Helper()
	return testdb.Open(tb, func(ctx context.Context) (*postgres.DB, error) { return postgres.Open(ctx, url, opts) })
}

// postgresReplicas starts n servers, each with a process's connection
// pool of its own, on one fresh PostgreSQL database, as replicas behind a
// load balancer would be; o adjusts each (its db is set here).
func postgresReplicas(tb testing.TB, n int, o harnessOptions) []*apiHarness {
	tb.Helper()
	return postgresReplicasAt(tb, postgresURL(tb), n, o)
}

// postgresReplicasAt is postgresReplicas on the database at url.
func postgresReplicasAt(tb testing.TB, url string, n int, o harnessOptions) []*apiHarness {
	tb.Helper()
	hs := make([]*apiHarness, n)
	for i := range hs {
		o.db = openPostgresURL(tb, url, postgres.Options{})
		hs[i] = newAPIHarness(tb, o)
	}
	return hs
}

// TestStreamEndsAfterUnheardRevocation: a session token revoked without
// a notice reaching the replica that serves its stream (here, revoked in
// the database behind every replica's back) ends the stream once that
// replica's listening connection breaks and it listens again: it says
// notices went unheard, and the stream's token is read again.
func TestStreamEndsAfterUnheardRevocation(t *testing.T) {
	url := postgresURL(t)
	h := postgresReplicasAt(t, url, 1, harnessOptions{})[0]
	_, _, secret := h.newKey(t, "unheard")
	c := h.client(secret)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	st, err := c.CreateStore(ctx, nil, memstore.StoreCreate{Name: "feed"})
	if err != nil {
		t.Fatal(err)
	}
	_, tok, token, err := c.CreateSession(ctx, nil, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() {
		ended <- h.client(token).StreamEvents(ctx, nil, st.ID, "", func(memstore.Event) error { return nil })
	}()
	time.Sleep(300 * time.Millisecond) // the stream is open

	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, `UPDATE session_tokens SET revoked_at = $1 WHERE id = $2`, time.Now().UnixNano(), tok.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ended:
		t.Fatalf("the stream ended before the replica could know: %v", err)
	case <-time.After(time.Second):
	}
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ended:
		if memstore.ErrorCode(err) == memstore.ENotFound || err == nil {
			t.Errorf("the stream ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the stream of a token revoked unheard goes on after its replica listens again")
	}
}

package httpapi_test

import (
	"context"
	"os"
	"testing"

	"github.com/memstore/memstore/internal/pgtest"
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
	db, err := postgres.Open(context.Background(), url, opts)
	if err != nil {
		tb.Fatal(err)
	}
	// Registered before the server's cleanup, so it runs after it.
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Error(err)
		}
	})
	return db
}

// postgresReplicas starts n servers, each with a process's connection
// pool of its own, on one fresh PostgreSQL database, as replicas behind a
// load balancer would be; o adjusts each (its db is set here).
func postgresReplicas(tb testing.TB, n int, o harnessOptions) []*apiHarness {
	tb.Helper()
	url := postgresURL(tb)
	hs := make([]*apiHarness, n)
	for i := range hs {
		o.db = openPostgresURL(tb, url, postgres.Options{})
		hs[i] = newAPIHarness(tb, o)
	}
	return hs
}

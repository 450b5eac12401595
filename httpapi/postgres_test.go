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
	url := pgtest.DB(tb, func(ctx context.Context, url string) error {
		db, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			return err
		}
		return db.Close()
	})
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

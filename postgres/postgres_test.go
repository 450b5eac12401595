package postgres_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/internal/testdb"
	"github.com/memstore/memstore/postgres"
	"github.com/memstore/memstore/storetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// migrate brings the template database's schema up to date.
func migrate(ctx context.Context, url string) error {
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		return err
	}
	return db.Close()
}

// mustOpen opens a fresh database, closed when the test ends.
func mustOpen(t *testing.T, opts postgres.Options) *postgres.DB {
	t.Helper()
	return mustOpenAt(t, pgtest.DB(t, migrate), opts)
}

// mustOpenAt opens the database at url, closed when the test ends.
func mustOpenAt(t *testing.T, url string, opts postgres.Options) *postgres.DB {
	t.Helper()
	return testdb.Open(t, func(ctx context.Context) (*postgres.DB, error) { return postgres.Open(ctx, url, opts) })
}

// TestConformance holds the database to the contract every backend
// keeps, through the core that every surface calls.
func TestConformance(t *testing.T) {
	storetest.RunAll(t, storetest.Target{
		Database: func(t *testing.T, now func() time.Time) memstore.Database {
			return mustOpen(t, postgres.Options{Now: now})
		},
		RolledBack: func(ctx context.Context, db memstore.Database, workspaceID, storeID string) error {
			return db.(*postgres.DB).FailAfterWebhookEvents(ctx, workspaceID, storeID)
		},
	})
}

func asError(err error, e **memstore.Error) bool { return errors.As(err, e) }

package postgres_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
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
	db, err := postgres.Open(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestConformance runs the behaviour every backend must have, through
// the core that every surface calls.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Backend { return memstore.NewCore(mustOpen(t, postgres.Options{})) })
	storetest.RunLimits(t, func(t *testing.T, limit int) storetest.Backend {
		return memstore.NewCore(mustOpen(t, postgres.Options{}), memstore.MaxMemoriesPerStore(limit))
	})
}

func TestKeyConformance(t *testing.T) {
	storetest.RunKeys(t, func(t *testing.T) memstore.KeyService { return memstore.NewCore(mustOpen(t, postgres.Options{})) })
}

func TestUserConformance(t *testing.T) {
	storetest.RunUsers(t, func(t *testing.T) storetest.UsersBackend { return mustOpen(t, postgres.Options{}) })
}

func TestSessionConformance(t *testing.T) {
	storetest.RunSessions(t, func(t *testing.T, now func() time.Time) storetest.SessionBackend {
		db := mustOpen(t, postgres.Options{Now: now})
		return memstore.NewCore(db)
	})
}

func asError(err error, e **memstore.Error) bool { return errors.As(err, e) }
func TestIsolationConformance(t *testing.T) {
	storetest.RunIsolation(t, func(t *testing.T) storetest.IsolationBackend {
		return memstore.NewCore(mustOpen(t, postgres.Options{}))
	})
}

func TestSearchConformance(t *testing.T) {
	storetest.RunSearch(t, func(t *testing.T) storetest.SearchBackend { return memstore.NewCore(mustOpen(t, postgres.Options{})) })
}

func TestFeedConformance(t *testing.T) {
	storetest.RunFeed(t, func(t *testing.T) storetest.FeedBackend { return memstore.NewCore(mustOpen(t, postgres.Options{})) })
}

func TestWebhookConformance(t *testing.T) {
	storetest.RunWebhooks(t, func(t *testing.T) storetest.WebhooksBackend { return mustOpen(t, postgres.Options{}) })
}

func TestWebhookDeliveryConformance(t *testing.T) {
	storetest.RunWebhookDeliveries(t, func(t *testing.T) storetest.WebhookDeliveryBackend { return mustOpen(t, postgres.Options{}) },
		func(ctx context.Context, b storetest.WebhookDeliveryBackend, workspaceID, storeID string) error {
			return b.(*postgres.DB).FailAfterWebhookEvents(ctx, workspaceID, storeID)
		})
}

package webhook_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/postgres"
	"github.com/memstore/memstore/webhook"
)

// TestMain stops the PostgreSQL server that pgtest may have started.
func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// TestReplicasSendOnce runs two deliverers on one PostgreSQL database,
// as two servers would, starting together on a full outbox, and checks
// that each event is sent once and only once.
func TestReplicasSendOnce(t *testing.T) {
	url := pgtest.DB(t, func(ctx context.Context, url string) error {
		db, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			return err
		}
		return db.Close()
	})
	open := func() *postgres.DB {
		db, err := postgres.Open(context.Background(), url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	a, b := open(), open()
	ctx := t.Context()
	w, err := a.CreateWorkspace(ctx, "hooks")
	if err != nil {
		t.Fatal(err)
	}
	c := &memstore.Caller{WorkspaceID: w.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_test"}}
	r := newReceiver(t, always(200))
	if _, err := memstore.NewWebhooks(a, memstore.WebhooksAllowPrivate(true)).CreateWebhook(ctx, c,
		memstore.WebhookCreate{URL: r.URL, EnabledEvents: []string{memstore.WebhookStoreCreated}}); err != nil {
		t.Fatal(err)
	}
	// The events wait in the outbox, for both replicas to start at once.
	const stores = 60
	co := memstore.NewCore(a)
	for i := range stores {
		if _, err := co.CreateStore(ctx, c, memstore.StoreCreate{Name: fmt.Sprint("s", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, db := range []*postgres.DB{a, b} {
		dctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			webhook.New(db, webhook.Options{AllowPrivate: true, Poll: 5 * time.Millisecond}).Run(dctx)
		}()
		t.Cleanup(func() { stop(); <-done })
	}
	waitFor(t, "every store's delivery", func() bool { return len(r.deliveries()) >= stores })
	time.Sleep(200 * time.Millisecond) // a second sending would arrive by now
	seen := map[string]int{}
	for _, d := range r.deliveries() {
		seen[d.header.Get("webhook-id")]++
	}
	if len(seen) != stores || len(r.deliveries()) != stores {
		t.Errorf("%d deliveries of %d events, want each of %d once", len(r.deliveries()), len(seen), stores)
	}
}

package webhook_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
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
// as two servers would, starting together on many due events and many
// events in the stores' feeds, to a receiver slow enough that both have
// attempts in flight at once, and checks that each event is sent once
// and only once: a claim that two deliverers could both take, or that
// let a delivery in flight be taken again, would send some twice.
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
	var (
		mu             sync.Mutex
		seen           = map[string]int{} // by webhook-id
		inFlight, most int
	)
	r := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		mu.Lock()
		seen[req.Header.Get("webhook-id")]++
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(30 * time.Millisecond) // slow: attempts overlap
		mu.Lock()
		inFlight--
		mu.Unlock()
	}))
	t.Cleanup(r.Close)
	if _, err := memstore.NewWebhooks(a, memstore.WebhooksAllowPrivate(true)).CreateWebhook(ctx, c,
		memstore.WebhookCreate{URL: r.URL, EnabledEvents: []string{memstore.WebhookStoreCreated, memstore.WebhookMemoryCreated}}); err != nil {
		t.Fatal(err)
	}
	// The events wait, for both replicas to start at once.
	const stores = 120
	co := memstore.NewCore(a)
	for i := range stores {
		s, err := co.CreateStore(ctx, c, memstore.StoreCreate{Name: fmt.Sprint("s", i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := co.CreateMemory(ctx, c, s.ID, memstore.MemoryCreate{Path: "/a.md", Content: "a"}); err != nil {
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
	sent := func() (events, requests, overlap int) {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range seen {
			requests += n
		}
		return len(seen), requests, most
	}
	const events = 2 * stores // each store's creation and its memory's
	waitFor(t, "every event's delivery", func() bool { n, _, _ := sent(); return n >= events })
	time.Sleep(200 * time.Millisecond) // a second sending would arrive by now
	got, requests, overlap := sent()
	if got != events || requests != events {
		t.Errorf("%d deliveries of %d events, want each of %d once", requests, got, events)
	}
	// Each deliverer has at most MaxInFlightPerEndpoint attempts to the
	// endpoint at once: more means both were sending together.
	if overlap <= webhook.MaxInFlightPerEndpoint {
		t.Errorf("at most %d attempts at once: the deliverers never overlapped, so the test proves nothing", overlap)
	}
}

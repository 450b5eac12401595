package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/postgres"
)

// feedClaim is a claim of room n for deliveries due at now, reading the
// feeds of the stores changed, or of all when changed is nil.
func feedClaim(now time.Time, n int, changed ...string) memstore.WebhookClaim {
	return memstore.WebhookClaim{Now: now, Until: now.Add(time.Minute), N: n, PerEndpoint: n, Changed: changed, AllFeeds: changed == nil}
}

// types are the event types of deliveries.
func types(ds []memstore.WebhookDelivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Event.Type+" "+d.Event.StoreID)
	}
	slices.Sort(out)
	return out
}

// TestFeedIsOutbox checks that a change of a memory writes no delivery,
// that a claim turns the events of the feeds it reads into deliveries
// once, that a store's deletion first makes those its feed still owes,
// and that an endpoint enabled again hears nothing of the changes made
// while it was disabled.
func TestFeedIsOutbox(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, postgres.Options{})
	w, err := db.CreateWorkspace(ctx, "feed")
	if err != nil {
		t.Fatal(err)
	}
	c := &memstore.Caller{WorkspaceID: w.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_feed"}}
	co, ws := memstore.NewCore(db), memstore.NewWebhooks(db, memstore.WebhooksAllowPrivate(true))
	hook, err := ws.CreateWebhook(ctx, c, memstore.WebhookCreate{URL: "http://127.0.0.1:9/", EnabledEvents: []string{memstore.WebhookMemoryCreated}})
	if err != nil {
		t.Fatal(err)
	}
	var stores []string
	for i := range 3 {
		s, err := co.CreateStore(ctx, c, memstore.StoreCreate{Name: fmt.Sprint("s", i)})
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s.ID)
		if _, err := co.CreateMemory(ctx, c, s.ID, memstore.MemoryCreate{Path: "/a.md", Content: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	if log, err := ws.WebhookDeliveries(ctx, c, hook.ID, 100); err != nil || len(log) != 0 {
		t.Fatalf("changes of memories wrote %d deliveries (%v), want none before a claim", len(log), err)
	}

	now := time.Now()
	got, err := db.ClaimWebhookDeliveries(ctx, feedClaim(now, 10, stores[0]))
	if want := []string{memstore.WebhookMemoryCreated + " " + stores[0]}; err != nil || !slices.Equal(types(got), want) {
		t.Errorf("a claim of the feed of %s: %v (%v), want %v", stores[0], types(got), err, want)
	}
	// The store's deletion makes the delivery its feed still owes.
	if err := co.DeleteStore(ctx, c, stores[1]); err != nil {
		t.Fatal(err)
	}
	got, err = db.ClaimWebhookDeliveries(ctx, feedClaim(now.Add(time.Second), 10))
	if want := []string{memstore.WebhookMemoryCreated + " " + stores[1], memstore.WebhookMemoryCreated + " " + stores[2]}; err != nil || !slices.Equal(types(got), want) {
		t.Errorf("a claim of every feed after %s's deletion: %v (%v), want %v", stores[1], types(got), err, want)
	}
	if got, err := db.ClaimWebhookDeliveries(ctx, feedClaim(now.Add(time.Second), 10)); err != nil || len(got) != 0 {
		t.Errorf("a claim after every feed was read: %v (%v)", types(got), err)
	}

	// Changes made while the endpoint is disabled are not its concern.
	for _, state := range []memstore.WebhookState{memstore.WebhookDisabled, memstore.WebhookEnabled} {
		if _, err := ws.UpdateWebhook(ctx, c, hook.ID, memstore.WebhookUpdate{State: &state}); err != nil {
			t.Fatal(err)
		}
		if _, err := co.CreateMemory(ctx, c, stores[2], memstore.MemoryCreate{Path: "/" + string(state) + ".md", Content: "b"}); err != nil {
			t.Fatal(err)
		}
	}
	got, err = db.ClaimWebhookDeliveries(ctx, feedClaim(now.Add(time.Second), 10))
	if err != nil || len(got) != 1 || got[0].Event.Type != memstore.WebhookMemoryCreated {
		t.Errorf("after the endpoint was enabled again: %v (%v), want the one memory created since", types(got), err)
	}
}

// TestFeedClaimsApart runs claims of every feed at once on two
// connections' pools, as the deliverers of two replicas would: every
// event becomes one delivery, and no claim fails on another's.
func TestFeedClaimsApart(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t, migrate)
	a, b := mustOpenAt(t, url, postgres.Options{}), mustOpenAt(t, url, postgres.Options{})
	w, err := a.CreateWorkspace(ctx, "apart")
	if err != nil {
		t.Fatal(err)
	}
	c := &memstore.Caller{WorkspaceID: w.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_apart"}}
	co := memstore.NewCore(a)
	if _, err := memstore.NewWebhooks(a, memstore.WebhooksAllowPrivate(true)).CreateWebhook(ctx, c,
		memstore.WebhookCreate{URL: "http://127.0.0.1:9/", EnabledEvents: []string{memstore.WebhookMemoryCreated}}); err != nil {
		t.Fatal(err)
	}
	const stores, memories = 4, 30
	for i := range stores {
		s, err := co.CreateStore(ctx, c, memstore.StoreCreate{Name: fmt.Sprint("s", i)})
		if err != nil {
			t.Fatal(err)
		}
		for j := range memories {
			if _, err := co.CreateMemory(ctx, c, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/%d.md", j), Content: "x"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	now := time.Now()
	for _, db := range []*postgres.DB{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, err := db.ClaimWebhookDeliveries(ctx, feedClaim(now, 3))
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, d := range got {
					seen[d.Event.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	twice := 0
	for _, n := range seen {
		if n > 1 {
			twice++
		}
	}
	if len(seen) != stores*memories || twice != 0 {
		t.Errorf("%d events claimed, %d of them more than once; want each of %d once", len(seen), twice, stores*memories)
	}
}

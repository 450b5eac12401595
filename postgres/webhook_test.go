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

// feedFixture is a workspace with an endpoint that asks for the
// creation of memories, and its stores.
type feedFixture struct {
	db     *postgres.DB
	caller *memstore.Caller
	core   *memstore.Core
	hooks  *memstore.Webhooks
	hook   *memstore.WebhookEndpoint
}

func newFeedFixture(t *testing.T, db *postgres.DB) *feedFixture {
	t.Helper()
	ctx := context.Background()
	w, err := db.CreateWorkspace(ctx, "feed")
	if err != nil {
		t.Fatal(err)
	}
	f := &feedFixture{db: db, core: memstore.NewCore(db), hooks: memstore.NewWebhooks(db, memstore.WebhooksAllowPrivate(true)),
		caller: &memstore.Caller{WorkspaceID: w.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_feed"}}}
	f.hook, err = f.hooks.CreateWebhook(ctx, f.caller, memstore.WebhookCreate{URL: "http://127.0.0.1:9/", EnabledEvents: []string{memstore.WebhookMemoryCreated}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *feedFixture) store(t *testing.T, name string) string {
	t.Helper()
	s, err := f.core.CreateStore(context.Background(), f.caller, memstore.StoreCreate{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// write creates a memory in store and returns its ID.
func (f *feedFixture) write(t *testing.T, store, path string) string {
	t.Helper()
	m, err := f.core.CreateMemory(context.Background(), f.caller, store, memstore.MemoryCreate{Path: path, Content: "x"})
	if err != nil {
		t.Fatal(err)
	}
	return m.ID
}

func (f *feedFixture) setState(t *testing.T, state memstore.WebhookState) {
	t.Helper()
	if _, err := f.hooks.UpdateWebhook(context.Background(), f.caller, f.hook.ID, memstore.WebhookUpdate{State: &state}); err != nil {
		t.Fatal(err)
	}
}

// memories are the memory IDs of deliveries, sorted.
func memories(ds []memstore.WebhookDelivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Event.MemoryID)
	}
	slices.Sort(out)
	return out
}

// claim claims up to n deliveries of every feed, due a second from now,
// and returns the memories they are about, sorted.
func (f *feedFixture) claim(n int) ([]string, error) {
	ds, err := f.db.ClaimWebhookDeliveries(context.Background(), feedClaim(time.Now().Add(time.Second), n))
	return memories(ds), err
}

// TestFeedOwedAcrossDisable checks that an endpoint disabled and enabled
// again is still sent the changes made before it was disabled, and not
// those made while it was.
func TestFeedOwedAcrossDisable(t *testing.T) {
	ctx := context.Background()
	f := newFeedFixture(t, mustOpen(t, postgres.Options{}))
	store := f.store(t, "s")
	var want []string
	for i := range 3 {
		want = append(want, f.write(t, store, fmt.Sprintf("/before%d.md", i)))
	}
	f.setState(t, memstore.WebhookDisabled)
	f.write(t, store, "/disabled.md")
	f.setState(t, memstore.WebhookEnabled)
	want = append(want, f.write(t, store, "/after.md"))
	slices.Sort(want)

	ds, err := f.db.ClaimWebhookDeliveries(ctx, feedClaim(time.Now().Add(time.Second), 10))
	if got := memories(ds); err != nil || !slices.Equal(got, want) {
		t.Errorf("claimed the creations of %v (%v), want %v: the three made before the endpoint was disabled and the one after it was enabled", got, err, want)
	}

	// The same when the deliverer disables the endpoint, a delivery
	// having failed every attempt.
	owed := f.write(t, store, "/owed.md")
	d := ds[0]
	d.State = memstore.DeliveryFailed
	if _, err := f.db.RecordWebhookAttempts(ctx, []memstore.WebhookAttempt{{Delivery: &d, Disable: "failed"}}, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	if w, err := f.db.Webhook(ctx, f.caller.WorkspaceID, f.hook.ID); err != nil || w.State != memstore.WebhookDisabled {
		t.Fatalf("the endpoint after its delivery failed: %v (%v), want disabled", w, err)
	}
	f.write(t, store, "/disabled again.md")
	f.setState(t, memstore.WebhookEnabled)
	got, err := f.claim(10)
	if err != nil || !slices.Equal(got, []string{owed}) {
		t.Errorf("after the deliverer disabled the endpoint and it was enabled again: claimed %v (%v), want %v", got, err, owed)
	}
}

// longFeedFixture is a feed fixture on a database at url, whose store
// holds more memories than two pages of a feed hold,
// and returns their IDs, sorted.
func longFeedFixture(t *testing.T) (f *feedFixture, url, store string, ids []string) {
	t.Helper()
	url = pgtest.DB(t, migrate)
	f = newFeedFixture(t, mustOpenAt(t, url, postgres.Options{}))
	store = f.store(t, "long")
	for i := range 2*memstore.FeedScan + 10 {
		ids = append(ids, f.write(t, store, fmt.Sprintf("/long/%d.md", i)))
	}
	slices.Sort(ids)
	return f, url, store, ids
}

// whileHeld runs do while another connection holds the row that lock
// (a statement taking a row lock, of the argument arg) locks, and
// checks that want deliveries of the fixture's endpoint are committed
// meanwhile: do's transactions that make them wait for no such lock.
// It then releases the row and returns do's error.
func (f *feedFixture) whileHeld(t *testing.T, url, lock, arg string, want int, do func() error) error {
	t.Helper()
	h := holdLock(t, url, lock, arg)
	done := make(chan error, 1)
	go func() { done <- do() }()
	if n := h.waitFor(t, want, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1`, f.hook.ID); n != want {
		t.Errorf("%d deliveries committed while the row was held, want %d", n, want)
	}
	h.release(t)
	return <-done
}

// TestEnablePaysOwedInPages checks that enabling an endpoint owed a long
// feed makes its deliveries in transactions of their own before the one
// that enables it: they are committed while that one waits for the
// endpoint's row, which another change holds.
func TestEnablePaysOwedInPages(t *testing.T) {
	ctx := context.Background()
	f, url, store, want := longFeedFixture(t)
	f.setState(t, memstore.WebhookDisabled)
	f.write(t, store, "/disabled.md")
	if err := f.whileHeld(t, url, `SELECT FROM webhook_endpoints WHERE id = $1 FOR NO KEY UPDATE`, f.hook.ID, len(want), func() error {
		state := memstore.WebhookEnabled
		_, err := f.hooks.UpdateWebhook(ctx, f.caller, f.hook.ID, memstore.WebhookUpdate{State: &state})
		return err
	}); err != nil {
		t.Fatalf("enable the endpoint: %v", err)
	}
	got, err := f.claim(3 * memstore.FeedScan)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("claimed %d deliveries (%v), want the %d creations made before the endpoint was disabled, each once", len(got), err, len(want))
	}
}

// TestDeleteStoreDrainsInPages checks that a store's deletion makes the
// deliveries of a long feed in transactions of their own before the one
// that deletes it: they are committed while that one still waits for the
// store's row, which a writer holds.
func TestDeleteStoreDrainsInPages(t *testing.T) {
	ctx := context.Background()
	f, url, store, want := longFeedFixture(t)
	if err := f.whileHeld(t, url, `SELECT FROM stores WHERE id = $1 FOR NO KEY UPDATE`, store, len(want), func() error {
		return f.core.DeleteStore(ctx, f.caller, store)
	}); err != nil {
		t.Fatalf("delete the store: %v", err)
	}
	if _, err := f.core.Store(ctx, f.caller, store); memstore.ErrorCode(err) != memstore.ENotFound {
		t.Errorf("the store after its deletion: %v, want not found", err)
	}
	got, err := f.claim(3 * memstore.FeedScan)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("claimed %d deliveries (%v), want the %d creations of the deleted store's memories, each once", len(got), err, len(want))
	}
}

// TestDeleteStorePaysOwed checks that a store's deletion makes the
// deliveries its feed owes a disabled endpoint, which are sent once the
// endpoint is enabled again.
func TestDeleteStorePaysOwed(t *testing.T) {
	ctx := context.Background()
	f := newFeedFixture(t, mustOpen(t, postgres.Options{}))
	store := f.store(t, "s")
	want := []string{f.write(t, store, "/a.md"), f.write(t, store, "/b.md")}
	slices.Sort(want)
	f.setState(t, memstore.WebhookDisabled)
	f.write(t, store, "/disabled.md")
	if err := f.core.DeleteStore(ctx, f.caller, store); err != nil {
		t.Fatal(err)
	}
	f.setState(t, memstore.WebhookEnabled)
	got, err := f.claim(10)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("claimed %v (%v), want %v: the changes made before the endpoint was disabled", got, err, want)
	}
}

// TestFeedClaimsFair checks that a store whose feed grows faster than
// its endpoint's claims take does not hold back another store's event:
// the claims serve first the cursor whose next event is the oldest.
func TestFeedClaimsFair(t *testing.T) {
	f := newFeedFixture(t, mustOpen(t, postgres.Options{}))
	busy, quiet := f.store(t, "busy"), f.store(t, "quiet")
	f.write(t, busy, "/0.md")
	f.write(t, busy, "/1.md")
	lone := f.write(t, quiet, "/lone.md")
	for i := range 2 {
		for j := range 3 {
			f.write(t, busy, fmt.Sprintf("/%d-%d.md", i, j))
		}
		got, err := f.claim(2)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(got, lone) {
			return
		}
	}
	t.Errorf("the quiet store's event was not claimed within two claims of room 2 while the busy store's feed grew")
}

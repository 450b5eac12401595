package storetest

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
)

// A RolledBack makes, in one transaction of b, a new store of workspace
// workspaceID and an archive event of store storeID, as a change would,
// and then fails, so that the transaction is rolled back; it returns the
// failure.
type RolledBack func(ctx context.Context, b memstore.Database, workspaceID, storeID string) error

// runWebhookDeliveries runs the tests of the deliveries: every change an
// enabled endpoint asks for reaches it, once, with its type and IDs, and
// one event ID shared by its endpoints; a rolled-back change reaches
// none; claims lease; attempts are recorded; a final failure disables
// the endpoint; the feeds' cursors move past exactly what claims took.
// open returns a fresh, empty database.
func runWebhookDeliveries(t *testing.T, open func(t *testing.T) memstore.Database, rolledBack RolledBack) {
	t.Run("Deliveries", func(t *testing.T) { testWebhookDeliveries(t, open(t), rolledBack) })
	t.Run("Feeds", func(t *testing.T) { testWebhookFeeds(t, open(t)) })
	t.Run("FeedsOwed", func(t *testing.T) { testWebhookFeedsOwed(t, open(t)) })
	t.Run("FairClaims", func(t *testing.T) { testWebhookFairClaims(t, open(t)) })
}

// claimAll claims every delivery due at now, until until.
func claimAll(t *testing.T, b memstore.Database, now, until time.Time) []memstore.WebhookDelivery {
	t.Helper()
	var all []memstore.WebhookDelivery
	for {
		ds, err := b.ClaimWebhookDeliveries(context.Background(), memstore.WebhookClaim{Now: now, Until: until, N: 3, PerEndpoint: 3, AllFeeds: true}) // small batches, to page
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 0 {
			return all
		}
		all = append(all, ds...)
	}
}

// eventID is the form of a webhook event's ID: memstore's prefix and a
// lowercase ULID.
var eventID = regexp.MustCompile(`^wevt_[0-7][0-9a-hjkmnp-tv-z]{25}$`)

func testWebhookDeliveries(t *testing.T, b memstore.Database, rolledBack RolledBack) {
	ctx := context.Background()
	co := memstore.NewCore(b)
	ws := memstore.NewWebhooks(b, memstore.WebhooksAllowPrivate(true))
	c, other := webhookWorkspace(t, b, "one"), webhookWorkspace(t, b, "two")
	mustStore := func(c *memstore.Caller, name string) *memstore.Store {
		t.Helper()
		s, err := co.CreateStore(ctx, c, memstore.StoreCreate{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	mustHook := func(c *memstore.Caller, events ...string) *memstore.WebhookEndpoint {
		t.Helper()
		w, err := ws.CreateWebhook(ctx, c, memstore.WebhookCreate{URL: hookURL, EnabledEvents: events})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	// Changes before any endpoint are not kept for webhooks.
	before := mustStore(c, "before")
	if ds := claimAll(t, b, time.Now(), time.Now().Add(time.Minute)); len(ds) != 0 {
		t.Errorf("%d deliveries with no endpoint", len(ds))
	}
	all := mustHook(c, memstore.WebhookEventTypes...)
	created := mustHook(c, memstore.WebhookStoreCreated)
	off := mustHook(c, memstore.WebhookEventTypes...)
	disabled := memstore.WebhookDisabled
	if _, err := ws.UpdateWebhook(ctx, c, off.ID, memstore.WebhookUpdate{State: &disabled}); err != nil {
		t.Fatal(err)
	}
	theirs := mustHook(other, memstore.WebhookEventTypes...)

	s := mustStore(c, "notes")
	m, err := co.CreateMemory(ctx, c, s.ID, memstore.MemoryCreate{Path: "/a.md", Content: "one"})
	if err != nil {
		t.Fatal(err)
	}
	two, path := "two", "/b.md"
	m2, err := co.UpdateMemory(ctx, c, s.ID, m.ID, memstore.MemoryUpdate{Content: &two})
	if err != nil {
		t.Fatal(err)
	}
	m3, err := co.UpdateMemory(ctx, c, s.ID, m.ID, memstore.MemoryUpdate{Path: &path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := co.RedactVersion(ctx, c, s.ID, m.VersionID); err != nil {
		t.Fatal(err)
	}
	if err := co.DeleteMemory(ctx, c, s.ID, m.ID, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := co.ArchiveStore(ctx, c, s.ID); err != nil {
		t.Fatal(err)
	}
	if err := co.DeleteStore(ctx, c, s.ID); err != nil {
		t.Fatal(err)
	}
	mustStore(other, "theirs")

	now := time.Now()
	claimed := claimAll(t, b, now, now.Add(time.Minute))
	by := map[string][]memstore.WebhookDelivery{} // by endpoint
	events := map[string][]string{}               // the endpoints of each event ID
	for _, d := range claimed {
		by[d.EndpointID] = append(by[d.EndpointID], d)
		events[d.Event.ID] = append(events[d.Event.ID], d.EndpointID)
		if d.State != memstore.DeliveryPending || d.Attempts != 0 || d.URL != hookURL || !strings.HasPrefix(d.Secret, memstore.WebhookSecretPrefix) ||
			!eventID.MatchString(d.Event.ID) || d.LastAttemptAt != nil || !d.NextAttemptAt.Equal(now.Add(time.Minute)) {
			t.Errorf("claimed %+v", d)
		}
	}
	if len(events) != 9 {
		t.Errorf("%d events, want 8 of one workspace and 1 of the other", len(events))
	}
	// One delivery per endpoint that wants the event, all with the
	// event's one ID: the store's creation went to both endpoints that
	// want it, every other event of the workspace to one.
	for id, eps := range events {
		slices.Sort(eps)
		want := []string{all.ID}
		switch {
		case slices.Contains(eps, theirs.ID):
			want = []string{theirs.ID}
		case slices.Contains(eps, created.ID):
			want = []string{all.ID, created.ID}
			slices.Sort(want)
		}
		if !slices.Equal(eps, want) {
			t.Errorf("event %s went to %v, want %v", id, eps, want)
		}
	}

	// A change rolled back reaches no endpoint.
	if err := rolledBack(ctx, b, c.WorkspaceID, before.ID); err == nil {
		t.Fatal("the rolled-back change did not fail")
	}
	if ds := claimAll(t, b, time.Now().Add(time.Second), now.Add(time.Minute)); len(ds) != 0 {
		t.Errorf("a rolled-back change made %d deliveries: %+v", len(ds), ds)
	}

	type seen struct{ typ, memory, version string }
	var got []seen
	mine := by[all.ID]
	slices.SortFunc(mine, func(a, b memstore.WebhookDelivery) int { return strings.Compare(a.Event.ID, b.Event.ID) })
	for _, d := range mine {
		if d.Event.StoreID != s.ID || d.Event.WorkspaceID != c.WorkspaceID {
			t.Errorf("event %+v is not of store %s", d.Event, s.ID)
		}
		got = append(got, seen{d.Event.Type, d.Event.MemoryID, d.Event.VersionID})
	}
	want := []seen{
		{memstore.WebhookStoreCreated, "", ""},
		{memstore.WebhookMemoryCreated, m.ID, m.VersionID},
		{memstore.WebhookMemoryModified, m.ID, m2.VersionID},
		{memstore.WebhookMemoryRenamed, m.ID, m3.VersionID},
		{memstore.WebhookVersionRedacted, m.ID, m.VersionID},
		{memstore.WebhookMemoryDeleted, m.ID, ""},
		{memstore.WebhookStoreArchived, "", ""},
		{memstore.WebhookStoreDeleted, "", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("the endpoint of every type got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].typ != want[i].typ || got[i].memory != want[i].memory || (want[i].version != "" && got[i].version != want[i].version) {
			t.Errorf("event %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if got[5].version == "" {
		t.Errorf("memory.deleted names no version")
	}
	if len(by[created.ID]) != 1 || by[created.ID][0].Event.Type != memstore.WebhookStoreCreated || len(by[off.ID]) != 0 ||
		len(by[theirs.ID]) != 1 || by[theirs.ID][0].Event.WorkspaceID != other.WorkspaceID {
		t.Errorf("deliveries: %d to the store-created endpoint, %d to the disabled one, %d to the other workspace's",
			len(by[created.ID]), len(by[off.ID]), len(by[theirs.ID]))
	}

	// No one claims a delivery again before its lease ends.
	again, err := b.ClaimWebhookDeliveries(ctx, memstore.WebhookClaim{Now: now.Add(30 * time.Second), Until: now.Add(2 * time.Minute), N: 100, PerEndpoint: 100, AllFeeds: true})
	if err != nil || len(again) != 0 {
		t.Errorf("claimed %d leased deliveries (%v)", len(again), err)
	}
	later := now.Add(time.Minute)
	// A claim passes over the endpoints that have no room left...
	skipping, err := b.ClaimWebhookDeliveries(ctx, memstore.WebhookClaim{Now: later, Until: later.Add(time.Minute), N: 100, PerEndpoint: 4,
		Holds: map[string]int{all.ID: 4, theirs.ID: 5}})
	if err != nil || len(skipping) != 1 || skipping[0].EndpointID != created.ID {
		t.Errorf("claimed %+v, all endpoints but one full (%v)", skipping, err)
	}
	// ... and takes no more of an endpoint than its room, oldest first.
	capped, err := b.ClaimWebhookDeliveries(ctx, memstore.WebhookClaim{Now: later, Until: later.Add(time.Minute), N: 100, PerEndpoint: 4,
		Holds: map[string]int{all.ID: 1}})
	count := map[string]int{}
	for _, d := range capped {
		if count[d.EndpointID]++; d.EndpointID == all.ID && d.Event.ID > mine[2].Event.ID {
			t.Errorf("claimed %s of %s before its older ones", d.Event.ID, all.ID)
		}
	}
	if err != nil || len(capped) != 4 || count[all.ID] != 3 || count[theirs.ID] != 1 {
		t.Errorf("claimed %v with room for 3 of %s and 4 of %s (%v)", count, all.ID, theirs.ID, err)
	}
	again, err = b.ClaimWebhookDeliveries(ctx, memstore.WebhookClaim{Now: later, Until: later.Add(time.Minute), N: 2, PerEndpoint: 4, AllFeeds: true})
	if err != nil || len(again) != 2 {
		t.Fatalf("claimed %d of 2 after the lease (%v)", len(again), err)
	}

	// An attempt recorded under a claim since lost (its lease ended and
	// another claim took the delivery) changes nothing, nor disables.
	policy := memstore.RetryPolicy{MinBackoff: time.Second, MaxBackoff: time.Second, MaxAttempts: 1}
	lateOK, lateBad := mine[0], by[created.ID][0]
	lateOK.Attempted(later, 204, "", policy)
	lateReason := lateBad.Attempted(later, 500, "HTTP 500: late", policy)
	if _, err := b.RecordWebhookAttempts(ctx, []memstore.WebhookAttempt{{Delivery: &lateOK}, {Delivery: &lateBad, Disable: lateReason}}, later, nil); err != nil {
		t.Fatal(err)
	}
	if hook, err := ws.Webhook(ctx, c, created.ID); err != nil || hook.State != memstore.WebhookEnabled {
		t.Errorf("an attempt recorded after its lease was lost disabled its endpoint: %+v, %v", hook, err)
	}
	if log, err := ws.WebhookDeliveries(ctx, c, all.ID, 100); err != nil || log[len(log)-1].State != memstore.DeliveryPending || log[len(log)-1].Attempts != 0 {
		t.Errorf("an attempt recorded after its lease was lost: %+v, %v", log[len(log)-1], err)
	}

	// Attempts under the claims that hold them: one delivered; one failing
	// its last attempt disables its endpoint; the same transaction claims
	// the next.
	var ok memstore.WebhookDelivery
	for _, d := range capped {
		if d.Event.ID == mine[0].Event.ID {
			ok = d
		}
	}
	ok.Attempted(later, 204, "", policy)
	bad := skipping[0]
	reason := bad.Attempted(later, 500, "HTTP 500: down", policy)
	if reason == "" || bad.State != memstore.DeliveryFailed {
		t.Fatalf("a last failed attempt: %+v, reason %q", bad, reason)
	}
	next, err := b.RecordWebhookAttempts(ctx, []memstore.WebhookAttempt{{Delivery: &ok}, {Delivery: &bad, Disable: reason}}, later,
		&memstore.WebhookClaim{Now: later, Until: later.Add(time.Minute), N: 100, PerEndpoint: 100, AllFeeds: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(next) != 3 || next[0].EndpointID != all.ID || next[0].URL != hookURL {
		t.Errorf("the claim with the record: %+v, want the 3 of %s still due", next, all.ID)
	}
	hook, err := ws.Webhook(ctx, c, created.ID)
	if err != nil || hook.State != memstore.WebhookDisabled || hook.DisabledReason != reason {
		t.Errorf("the failing endpoint: %+v, %v", hook, err)
	}
	log, err := ws.WebhookDeliveries(ctx, c, all.ID, 100)
	if err != nil || len(log) != 8 || log[len(log)-1].Event.ID != ok.Event.ID {
		t.Fatalf("the log of the endpoint: %d deliveries, %v", len(log), err)
	}
	first := log[len(log)-1]
	if first.State != memstore.DeliveryDelivered || first.Attempts != 1 || first.LastStatus != 204 || first.LastAttemptAt == nil || first.Secret != "" {
		t.Errorf("the delivered delivery: %+v", first)
	}
	failed, err := ws.WebhookDeliveries(ctx, c, created.ID, 0)
	if err != nil || len(failed) != 1 || failed[0].State != memstore.DeliveryFailed || failed[0].LastError != "HTTP 500: down" || failed[0].LastStatus != 500 {
		t.Errorf("the failed delivery: %+v, %v", failed, err)
	}
	_, err = ws.WebhookDeliveries(ctx, other, all.ID, 10)
	wantCode(t, err, memstore.ENotFound, "another workspace's log")

	// Pruning removes what is done, never what is pending.
	pruned, err := b.PruneWebhookDeliveries(ctx, now.Add(time.Hour))
	if err != nil || pruned != 2 {
		t.Errorf("pruned %d, want the delivered and the failed (%v)", pruned, err)
	}
	if log, _ := ws.WebhookDeliveries(ctx, c, all.ID, 100); len(log) != 7 {
		t.Errorf("%d deliveries left, want the 7 pending", len(log))
	}
	// ... unless its endpoint is disabled: they would wait for ever, and
	// all go at once were it enabled again.
	stopped := memstore.WebhookDisabled
	if _, err := ws.UpdateWebhook(ctx, c, all.ID, memstore.WebhookUpdate{State: &stopped}); err != nil {
		t.Fatal(err)
	}
	pruned, err = b.PruneWebhookDeliveries(ctx, now.Add(time.Hour))
	if err != nil || pruned != 7 {
		t.Errorf("pruned %d of a disabled endpoint's 7 pending deliveries (%v)", pruned, err)
	}
	// Deleting an endpoint deletes its deliveries.
	if err := ws.DeleteWebhook(ctx, c, all.ID); err != nil {
		t.Fatal(err)
	}
	rest, err := b.ClaimWebhookDeliveries(ctx, memstore.WebhookClaim{Now: later.Add(time.Hour), Until: later.Add(2 * time.Hour), N: 100, PerEndpoint: 100, AllFeeds: true})
	if err != nil || len(rest) != 1 || rest[0].EndpointID != theirs.ID {
		t.Errorf("after the deletion, claimed %+v (%v)", rest, err)
	}
}

// testWebhookFeeds checks the claims that read the stores' feeds: which
// feeds a claim reads, the room it fills, and where an endpoint's
// cursors start.
func testWebhookFeeds(t *testing.T, b memstore.Database) {
	ctx, co, ws, c := context.Background(), memstore.NewCore(b), memstore.NewWebhooks(b, memstore.WebhooksAllowPrivate(true)), webhookWorkspace(t, b, "feeds")
	mustStore := func(name string) *memstore.Store { t.Helper(); return coreStore(t, co, c, name) }
	write := func(s *memstore.Store, paths ...string) {
		t.Helper()
		for _, p := range paths {
			if _, err := co.CreateMemory(ctx, c, s.ID, memstore.MemoryCreate{Path: p, Content: p}); err != nil {
				t.Fatal(err)
			}
		}
	}
	claim := func(perEndpoint int, all bool, changed ...string) []string {
		t.Helper()
		now := time.Now()
		ds, err := b.ClaimWebhookDeliveries(ctx, memstore.WebhookClaim{Now: now, Until: now.Add(time.Minute), N: 100, PerEndpoint: perEndpoint,
			AllFeeds: all, Changed: changed})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range ds {
			got = append(got, d.Event.StoreID+" "+d.Event.Type)
		}
		slices.Sort(got)
		return got
	}
	memoryEvents := []string{memstore.WebhookMemoryCreated, memstore.WebhookMemoryDeleted}
	a, z := mustStore("a"), mustStore("z")
	write(a, "/before.md") // before the endpoint: never delivered
	w, err := ws.CreateWebhook(ctx, c, memstore.WebhookCreate{URL: hookURL, EnabledEvents: memoryEvents})
	if err != nil {
		t.Fatal(err)
	}
	if got := claim(100, true); len(got) != 0 {
		t.Errorf("changes made before the endpoint were delivered: %v", got)
	}

	// A claim reads the feeds it is told of, or all of them.
	write(a, "/a1.md", "/a2.md", "/a3.md")
	write(z, "/z1.md")
	if got := claim(100, false, z.ID); !slices.Equal(got, []string{z.ID + " " + memstore.WebhookMemoryCreated}) {
		t.Errorf("a claim of store z's feed took %v", got)
	}
	// The endpoint's room: two now, the third at the next claim, none
	// twice.
	if got := claim(2, false, a.ID, z.ID); len(got) != 2 {
		t.Errorf("a claim with room for 2 took %v", got)
	}
	if got := claim(2, true); !slices.Equal(got, []string{a.ID + " " + memstore.WebhookMemoryCreated}) {
		t.Errorf("the next claim took %v, want the third of store a", got)
	}
	if got := claim(100, true); len(got) != 0 {
		t.Errorf("a claim with nothing new took %v", got)
	}

	// Types the endpoint does not ask for are passed over, even more
	// than one claim reads of a feed.
	for i := range memstore.FeedScan + 5 {
		m, err := co.CreateMemory(ctx, c, z.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/m%d.md", i), Content: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if i < memstore.FeedScan {
			continue
		}
		if err := co.DeleteMemory(ctx, c, z.ID, m.ID, ""); err != nil {
			t.Fatal(err)
		}
	}
	only := []string{memstore.WebhookMemoryDeleted}
	if _, err := ws.UpdateWebhook(ctx, c, w.ID, memstore.WebhookUpdate{EnabledEvents: only}); err != nil {
		t.Fatal(err)
	}
	var deleted int
	for range 3 {
		deleted += len(claim(100, true))
	}
	if deleted != 5 {
		t.Errorf("%d deletions delivered, want 5", deleted)
	}

	// Disabled, an endpoint hears nothing, and nothing of that time once
	// enabled again; it hears what follows.
	off, on := memstore.WebhookDisabled, memstore.WebhookEnabled
	if _, err := ws.UpdateWebhook(ctx, c, w.ID, memstore.WebhookUpdate{State: &off, EnabledEvents: memoryEvents}); err != nil {
		t.Fatal(err)
	}
	write(a, "/while-off.md")
	if got := claim(100, true); len(got) != 0 {
		t.Errorf("a disabled endpoint got %v", got)
	}
	if _, err := ws.UpdateWebhook(ctx, c, w.ID, memstore.WebhookUpdate{State: &on}); err != nil {
		t.Fatal(err)
	}
	if got := claim(100, true); len(got) != 0 {
		t.Errorf("an endpoint enabled again got what changed while it was disabled: %v", got)
	}
	write(a, "/after.md")
	if got := claim(100, true); !slices.Equal(got, []string{a.ID + " " + memstore.WebhookMemoryCreated}) {
		t.Errorf("an endpoint enabled again got %v", got)
	}

	// An endpoint that starts asking for memstore's own events hears of
	// the changes from then on; a new store's from its first.
	stores := []string{memstore.WebhookStoreCreated}
	if _, err := ws.UpdateWebhook(ctx, c, w.ID, memstore.WebhookUpdate{EnabledEvents: stores}); err != nil {
		t.Fatal(err)
	}
	write(a, "/unasked.md")
	if _, err := ws.UpdateWebhook(ctx, c, w.ID, memstore.WebhookUpdate{EnabledEvents: memoryEvents}); err != nil {
		t.Fatal(err)
	}
	n := mustStore("new")
	write(n, "/first.md")
	if got := claim(100, true); !slices.Equal(got, []string{n.ID + " " + memstore.WebhookMemoryCreated}) {
		t.Errorf("after asking for memory events again, got %v, want only the new store's", got)
	}
}

// testWebhookFeedsOwed checks what a feed owes: an endpoint disabled and
// enabled again gets the changes made before, not those made while it
// was disabled; a store's deletion leaves every change it owed delivered,
// however many; a store written faster than its endpoint is served does
// not keep another store's change waiting.
func testWebhookFeedsOwed(t *testing.T, b memstore.Database) {
	ctx, co, ws, c := context.Background(), memstore.NewCore(b), memstore.NewWebhooks(b, memstore.WebhooksAllowPrivate(true)), webhookWorkspace(t, b, "owed")
	mustStore := func(name string) *memstore.Store { t.Helper(); return coreStore(t, co, c, name) }
	write := func(s *memstore.Store, prefix string, n int) {
		t.Helper()
		for i := range n {
			if _, err := co.CreateMemory(ctx, c, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/%s%d.md", prefix, i), Content: "x"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	claim := func(perEndpoint int, changed ...string) []memstore.WebhookDelivery {
		t.Helper()
		now := time.Now()
		ds, err := b.ClaimWebhookDeliveries(ctx, memstore.WebhookClaim{Now: now, Until: now.Add(time.Minute), N: 1000, PerEndpoint: perEndpoint,
			AllFeeds: changed == nil, Changed: changed})
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	claimAllDue := func() int {
		t.Helper()
		n := 0
		for {
			ds := claim(1000)
			if len(ds) == 0 {
				return n
			}
			n += len(ds)
		}
	}
	w, err := ws.CreateWebhook(ctx, c, memstore.WebhookCreate{URL: hookURL, EnabledEvents: []string{memstore.WebhookMemoryCreated}})
	if err != nil {
		t.Fatal(err)
	}
	a := mustStore("a")
	write(a, "before", 3)
	off, on := memstore.WebhookDisabled, memstore.WebhookEnabled
	if _, err := ws.UpdateWebhook(ctx, c, w.ID, memstore.WebhookUpdate{State: &off}); err != nil {
		t.Fatal(err)
	}
	write(a, "while-off", 2)
	if got := claimAllDue(); got != 0 {
		t.Errorf("a disabled endpoint got %d deliveries", got)
	}
	if _, err := ws.UpdateWebhook(ctx, c, w.ID, memstore.WebhookUpdate{State: &on}); err != nil {
		t.Fatal(err)
	}
	write(a, "after", 1)
	var paths []string
	for _, d := range claim(1000) {
		paths = append(paths, d.Event.MemoryID)
	}
	if len(paths) != 4 {
		t.Errorf("enabled again, the endpoint got %d deliveries, want the 3 before and the 1 after", len(paths))
	}

	// A store's deletion makes every delivery its feed owed, in pages.
	big := mustStore("big")
	owed := 2*memstore.FeedScan + 7
	write(big, "m", owed)
	if err := co.DeleteStore(ctx, c, big.ID); err != nil {
		t.Fatal(err)
	}
	if got := claimAllDue(); got != owed {
		t.Errorf("the deleted store's feed gave %d deliveries, want %d", got, owed)
	}

	// A busy store does not keep another's change waiting.
	busy, quiet := mustStore("busy"), mustStore("quiet")
	write(quiet, "q", 1)
	got := false
	for round := range 3 {
		write(busy, fmt.Sprintf("r%d-", round), 3)
		for _, d := range claim(2, busy.ID, quiet.ID) {
			got = got || d.Event.StoreID == quiet.ID
		}
		if got {
			break
		}
		if round == 1 {
			t.Errorf("two claims passed over the quiet store's change")
		}
	}
}

// coreStore makes a store of c's workspace through co.
func coreStore(t *testing.T, co *memstore.Core, c *memstore.Caller, name string) *memstore.Store {
	t.Helper()
	s, err := co.CreateStore(context.Background(), c, memstore.StoreCreate{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testWebhookFairClaims checks that a claim of due deliveries is fair: a
// workspace whose deliveries are the oldest does not take a small claim
// whole, each of its endpoints getting one before any gets a second; a
// workspace without room is passed over, however many it has due; and
// an endpoint's cap (a paused one's 0, a probed one's 1) holds, the
// probe being its most attempted delivery.
func testWebhookFairClaims(t *testing.T, b memstore.Database) {
	ctx, co := context.Background(), memstore.NewCore(b)
	ws := memstore.NewWebhooks(b, memstore.WebhooksAllowPrivate(true))
	busy, quiet := webhookWorkspace(t, b, "busy"), webhookWorkspace(t, b, "quiet")
	hook := func(c *memstore.Caller) *memstore.WebhookEndpoint {
		t.Helper()
		w, err := ws.CreateWebhook(ctx, c, memstore.WebhookCreate{URL: hookURL, EnabledEvents: []string{memstore.WebhookStoreCreated}})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	e1, e2, q := hook(busy), hook(busy), hook(quiet)
	stores := func(c *memstore.Caller, prefix string, n int) {
		for i := range n {
			coreStore(t, co, c, fmt.Sprint(prefix, i))
		}
	}
	stores(busy, "b", 2) // two due to each of e1 and e2, the oldest
	stores(quiet, "q", 2)
	now := time.Now().Add(time.Second)
	claim := func(c memstore.WebhookClaim) map[string][]memstore.WebhookDelivery {
		t.Helper()
		c.Now, c.Until = now, now.Add(time.Minute)
		ds, err := b.ClaimWebhookDeliveries(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		by := map[string][]memstore.WebhookDelivery{}
		for _, d := range ds {
			by[d.EndpointID] = append(by[d.EndpointID], d)
		}
		return by
	}
	// Three of the six due: one of each endpoint.
	got := claim(memstore.WebhookClaim{N: 3, PerEndpoint: 10, PerWorkspace: 10})
	if len(got[e1.ID]) != 1 || len(got[e2.ID]) != 1 || len(got[q.ID]) != 1 {
		t.Errorf("a claim of 3: %d and %d of the busy workspace's endpoints, %d of the quiet one's; want one each", len(got[e1.ID]), len(got[e2.ID]), len(got[q.ID]))
	}
	// A workspace whose share is held is passed over, its backlog of
	// older deliveries however large.
	stores(busy, "more", 20)
	stores(quiet, "last", 1)
	got = claim(memstore.WebhookClaim{N: 2, PerEndpoint: 100, PerWorkspace: 10, WorkspaceHolds: map[string]int{busy.WorkspaceID: 10}})
	if len(got) != 1 || len(got[q.ID]) != 2 {
		t.Errorf("with the busy workspace's share held: claimed of %d endpoints, %d of the quiet one's 2", len(got), len(got[q.ID]))
	}
	// A failed attempt of e2's, due again now: the probe of e2, whose
	// cap is 1, is that one; e1, paused, gives none.
	first := claim(memstore.WebhookClaim{N: 1, PerEndpoint: 100, Holds: map[string]int{e1.ID: 100}})[e2.ID]
	if len(first) != 1 {
		t.Fatalf("claimed %d of e2", len(first))
	}
	tried := first[0]
	tried.Attempted(now.Add(-time.Minute), 0, "connection refused", memstore.RetryPolicy{MinBackoff: time.Second, MaxBackoff: time.Second, MaxAttempts: 10})
	if _, err := b.RecordWebhookAttempts(ctx, []memstore.WebhookAttempt{{Delivery: &tried}}, now, nil); err != nil {
		t.Fatal(err)
	}
	got = claim(memstore.WebhookClaim{N: 100, PerEndpoint: 100, Caps: map[string]int{e1.ID: 0, e2.ID: 1}})
	if len(got[e1.ID]) != 0 || len(got[e2.ID]) != 1 || got[e2.ID][0].Event.ID != tried.Event.ID || got[e2.ID][0].Attempts != 1 {
		t.Errorf("e1 paused, e2 probed: %d of e1, %+v of e2; want none, and e2's attempted delivery", len(got[e1.ID]), got[e2.ID])
	}
}

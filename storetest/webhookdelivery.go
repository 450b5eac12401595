package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
)

// WebhookDeliveryBackend is what RunWebhookDeliveries needs: a backend
// with its keys, endpoints, outbox and deliveries.
type WebhookDeliveryBackend interface {
	memstore.Backend
	memstore.KeyService
	memstore.WebhookStorage
	memstore.WebhookDeliveryStorage
}

// RunWebhookDeliveries runs the tests of the outbox and the deliveries:
// every change an enabled endpoint asks for reaches it, once, with its
// type and IDs; claims lease; attempts are recorded; a final failure
// disables the endpoint. open returns a fresh, empty backend.
func RunWebhookDeliveries(t *testing.T, open func(t *testing.T) WebhookDeliveryBackend) {
	t.Run("Outbox", func(t *testing.T) { testWebhookOutbox(t, open(t)) })
}

// fanOutAll empties the outbox into deliveries, claimed until until,
// and returns them and how many events the outbox held.
func fanOutAll(t *testing.T, b WebhookDeliveryBackend, until time.Time) ([]memstore.WebhookDelivery, int) {
	t.Helper()
	var all []memstore.WebhookDelivery
	total := 0
	for {
		ds, n, err := b.FanOutWebhookEvents(context.Background(), until, 3) // small batches, to page
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return all, total
		}
		all, total = append(all, ds...), total+n
	}
}

func testWebhookOutbox(t *testing.T, b WebhookDeliveryBackend) {
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
	mustStore(c, "before")
	if _, n := fanOutAll(t, b, time.Now()); n != 0 {
		t.Errorf("%d events with no endpoint", n)
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
	claimed, n := fanOutAll(t, b, now.Add(time.Minute))
	if n != 9 {
		t.Errorf("the outbox held %d events, want 8 of one workspace and 1 of the other", n)
	}
	by := map[string][]memstore.WebhookDelivery{}
	for _, d := range claimed {
		by[d.EndpointID] = append(by[d.EndpointID], d)
		if d.State != memstore.DeliveryPending || d.Attempts != 0 || d.URL != hookURL || !strings.HasPrefix(d.Secret, memstore.WebhookSecretPrefix) ||
			!strings.HasPrefix(d.Event.ID, "wevt_") || d.LastAttemptAt != nil {
			t.Errorf("claimed %+v", d)
		}
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

	// Deliveries are claimed as they are made: no one claims them again
	// before the lease ends.
	again, err := b.ClaimWebhookDeliveries(ctx, now.Add(30*time.Second), now.Add(2*time.Minute), 100, nil)
	if err != nil || len(again) != 0 {
		t.Errorf("claimed %d leased deliveries (%v)", len(again), err)
	}
	later := now.Add(time.Minute)
	// A claim passes over the endpoints it is told to skip.
	skipping, err := b.ClaimWebhookDeliveries(ctx, later, later.Add(time.Minute), 100, []string{all.ID, theirs.ID})
	if err != nil || len(skipping) != 1 || skipping[0].EndpointID != created.ID {
		t.Errorf("claimed %+v, skipping all endpoints but one (%v)", skipping, err)
	}
	again, err = b.ClaimWebhookDeliveries(ctx, later, later.Add(time.Minute), 2, nil)
	if err != nil || len(again) != 2 {
		t.Fatalf("claimed %d of 2 after the lease (%v)", len(again), err)
	}

	// Attempts: one delivered; one failing its last attempt disables its endpoint.
	policy := memstore.RetryPolicy{MinBackoff: time.Second, MaxBackoff: time.Second, MaxAttempts: 1}
	ok := mine[0]
	ok.Attempted(later, 204, "", policy)
	bad := by[created.ID][0]
	reason := bad.Attempted(later, 500, "HTTP 500: down", policy)
	if reason == "" || bad.State != memstore.DeliveryFailed {
		t.Fatalf("a last failed attempt: %+v, reason %q", bad, reason)
	}
	if err := b.RecordWebhookAttempts(ctx, []memstore.WebhookAttempt{{Delivery: &ok}, {Delivery: &bad, Disable: reason}}, later); err != nil {
		t.Fatal(err)
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
	rest, err := b.ClaimWebhookDeliveries(ctx, later.Add(time.Hour), later.Add(2*time.Hour), 100, nil)
	if err != nil || len(rest) != 1 || rest[0].EndpointID != theirs.ID {
		t.Errorf("after the deletion, claimed %+v (%v)", rest, err)
	}
}

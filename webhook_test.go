package memstore

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRetryPolicyBackoff(t *testing.T) {
	p := RetryPolicy{MinBackoff: time.Second, MaxBackoff: 5 * time.Second, MaxAttempts: 4}
	var got []time.Duration
	for n := 1; n <= 5; n++ {
		got = append(got, p.Backoff(n))
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("backoffs %v, want %v", got, want)
	}
	if d := DefaultRetryPolicy.Backoff(1000); d != DefaultRetryPolicy.MaxBackoff {
		t.Errorf("a late retry waits %v", d)
	}
}

func TestDeliveryAttempted(t *testing.T) {
	p := RetryPolicy{MinBackoff: time.Second, MaxBackoff: time.Minute, MaxAttempts: 3}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := WebhookDelivery{State: DeliveryPending, Event: WebhookEvent{ID: "wevt_1"}}
	if r := d.Attempted(at, 0, "connection refused", p); r != "" || d.Event.ID != "wevt_1" || d.State != DeliveryPending || !d.NextAttemptAt.Equal(at.Add(time.Second)) {
		t.Errorf("after a first failure: %+v, %q", d, r)
	}
	if r := d.Attempted(at, 503, strings.Repeat("é", MaxDeliveryError), p); r != "" || !d.NextAttemptAt.Equal(at.Add(2*time.Second)) ||
		len(d.LastError) > MaxDeliveryError || !strings.HasPrefix(d.LastError, "é") {
		t.Errorf("after a second failure: next %v, error of %d bytes, %q", d.NextAttemptAt, len(d.LastError), r)
	}
	r := d.Attempted(at, 500, "down", p)
	if d.State != DeliveryFailed || !strings.Contains(r, "wevt_1") || !strings.Contains(r, "3") {
		t.Errorf("after the last failure: %+v, %q", d, r)
	}
	ok := WebhookDelivery{State: DeliveryPending}
	if r := ok.Attempted(at, 200, "", p); r != "" || ok.State != DeliveryDelivered || ok.Attempts != 1 || ok.LastStatus != 200 {
		t.Errorf("a success: %+v", ok)
	}
}

func TestFeedWebhookType(t *testing.T) {
	for _, e := range []EventType{EventMemoryCreated, EventMemoryModified, EventMemoryRenamed, EventMemoryDeleted, EventVersionRedacted} {
		if typ, ok := FeedWebhookType(e); !ok || !slices.Contains(WebhookEventTypes, typ) {
			t.Errorf("%s gives %q, not an event type", e, typ)
		}
	}
	if typ, _ := FeedWebhookType(EventMemoryCreated); typ != "memstore.memory.created" {
		t.Errorf("the names differ from the documented ones")
	}
	if _, ok := FeedWebhookType(EventStoreArchived); ok {
		t.Errorf("an archive is delivered from the feed; the triggers deliver it")
	}
}

func TestFeedDelivery(t *testing.T) {
	at := time.Date(2026, 11, 25, 1, 2, 3, 456789, time.UTC)
	until := at.Add(time.Minute)
	w := &WebhookEndpoint{ID: "webhook_1", URL: "https://example.com/h", Secret: "whsec_x", EnabledEvents: []string{WebhookMemoryCreated}}
	e := &Event{Seq: 7, StoreID: "memstore_a", Type: EventMemoryCreated, MemoryID: "mem_1", VersionID: "memver_1", CreatedAt: at}
	d, ok := FeedDelivery(w, "wrkspc_1", e, "wevt_1", until)
	if !ok || d.EndpointID != w.ID || d.Event.Type != WebhookMemoryCreated || d.Event.MemoryID != "mem_1" || d.Event.WorkspaceID != "wrkspc_1" ||
		d.Event.ID != "wevt_1" || d.State != DeliveryPending || !d.Lease.Equal(until) || !d.NextAttemptAt.Equal(until) || d.URL != w.URL {
		t.Fatalf("FeedDelivery = %+v, %v", d, ok)
	}
	e.Type = EventMemoryDeleted
	if _, ok := FeedDelivery(w, "wrkspc_1", e, "wevt_1", until); ok {
		t.Errorf("an endpoint got a type it did not ask for")
	}
}

func TestCheckWebhookAddr(t *testing.T) {
	for _, a := range []string{"127.0.0.1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "::1", "fe80::1", "fc00::1", "0.0.0.0", "100.64.0.1", "::ffff:127.0.0.1", "224.0.0.1",
		"64:ff9b::a00:5", "64:ff9b::7f00:1", "::7f00:1", "2002:a00:5::1", "2001:0:4136:e378::1", "64:ff9b:1::1",
		"198.18.0.1", "240.0.0.1", "192.0.0.8", "0.1.2.3", "fec0::1"} {
		if CheckWebhookAddr(netip.MustParseAddr(a)) == nil {
			t.Errorf("%s is allowed", a)
		}
	}
	for _, a := range []string{"93.184.215.14", "2606:4700::1111", "8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"} {
		if err := CheckWebhookAddr(netip.MustParseAddr(a)); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
}

func TestFeedFill(t *testing.T) {
	d := func(endpoint string) WebhookDelivery { return WebhookDelivery{EndpointID: endpoint} }
	c := WebhookClaim{N: 5, PerEndpoint: 3, Holds: map[string]int{"a": 2, "b": 3}, AllFeeds: true}
	f := c.Fill([]WebhookDelivery{d("c")})
	if f.Done() || f.Room("a") != 1 || f.Room("b") != 0 || f.Room("c") != 2 || f.Room("z") != 3 {
		t.Fatalf("rooms a %d, b %d, c %d, z %d", f.Room("a"), f.Room("b"), f.Room("c"), f.Room("z"))
	}
	f.Take([]WebhookDelivery{d("a"), d("c"), d("c")})
	full := f.Full()
	slices.Sort(full)
	if !slices.Equal(full, []string{"a", "b", "c"}) {
		t.Errorf("full: %v", full)
	}
	if f.Room("z") != 1 || f.Done() { // 4 of the claim's 5 taken
		t.Errorf("room for z %d, done %v", f.Room("z"), f.Done())
	}
	f.Take([]WebhookDelivery{d("z")})
	if !f.Done() || len(f.Claimed) != 5 {
		t.Errorf("a full claim: done %v, %d claimed", f.Done(), len(f.Claimed))
	}
	if (WebhookClaim{N: 5}).Fill(nil).Done() != true {
		t.Errorf("a claim naming no feed reads one")
	}
}

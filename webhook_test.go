package memstore

import (
	"fmt"
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
		"198.18.0.1", "240.0.0.1", "192.0.0.8", "0.1.2.3", "fec0::1",
		// IPv4 carried in IPv6: mapped, compatible, translated (SIIT),
		// NAT64, 6to4 and ISATAP, each of a private address; Teredo and
		// local-use NAT64, whatever they carry; discard-only and
		// documentation ranges.
		"::ffff:10.0.0.1", "::ffff:169.254.169.254", "::10.0.0.1", "::ffff:0:127.0.0.1", "::ffff:0:10.0.0.1",
		"::ffff:0:169.254.169.254", "::ffff:0:0:1", "::ffff:0:192.168.1.1", "64:ff9b::192.168.0.1", "64:ff9b::169.254.169.254",
		"2002:a9fe:a9fe::1", "2002:c0a8:101::1", "2001:0:5ef5:79fb::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2",
		"64:ff9b:1::808:808", "2a00:1450::5efe:10.0.0.1", "2a00:1450::200:5efe:192.168.1.1", "100::1", "2001:db8::1",
		"::ffff:127.0.0.1%lo", "fe80::1%eth0"} {
		if CheckWebhookAddr(netip.MustParseAddr(a)) == nil {
			t.Errorf("%s is allowed", a)
		}
	}
	// The same forms carrying a public address reach it, as an
	// IPv6-only network's NAT64 does.
	for _, a := range []string{"93.184.215.14", "2606:4700::1111", "8.8.8.8", "64:ff9b::808:808", "2002:808:808::1",
		"::ffff:0:8.8.8.8", "2a00:1450::5efe:8.8.8.8", "2a00:1450:4001:81c::200e"} {
		if err := CheckWebhookAddr(netip.MustParseAddr(a)); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
}

func TestFeedFill(t *testing.T) {
	d := func(endpoint string) WebhookDelivery {
		return WebhookDelivery{EndpointID: endpoint, Event: WebhookEvent{WorkspaceID: "w" + endpoint}}
	}
	c := WebhookClaim{N: 5, PerEndpoint: 3, Holds: map[string]int{"a": 2, "b": 3}, Caps: map[string]int{"p": 0, "q": 1}, AllFeeds: true}
	f := c.Fill([]WebhookDelivery{d("c")})
	room := func(e string) int { return f.Room(e, "w"+e) }
	if f.Done() || room("a") != 1 || room("b") != 0 || room("c") != 2 || room("z") != 3 || room("p") != 0 || room("q") != 1 {
		t.Fatalf("rooms a %d, b %d, c %d, z %d, p %d, q %d", room("a"), room("b"), room("c"), room("z"), room("p"), room("q"))
	}
	f.Take([]WebhookDelivery{d("a"), d("c"), d("c")})
	full := f.Full()
	slices.Sort(full)
	if !slices.Equal(full, []string{"a", "b", "c", "p"}) {
		t.Errorf("full: %v", full)
	}
	if room("z") != 1 || f.Done() { // 4 of the claim's 5 taken
		t.Errorf("room for z %d, done %v", room("z"), f.Done())
	}
	f.Take([]WebhookDelivery{d("z")})
	if !f.Done() || len(f.Claimed) != 5 {
		t.Errorf("a full claim: done %v, %d claimed", f.Done(), len(f.Claimed))
	}
	if (WebhookClaim{N: 5}).Fill(nil).Done() != true {
		t.Errorf("a claim naming no feed reads one")
	}
	// A workspace's room: its share less what is held and taken of it.
	c = WebhookClaim{N: 100, PerEndpoint: 10, PerWorkspace: 4, WorkspaceHolds: map[string]int{"wa": 3}}
	f = c.Fill(nil)
	if f.Room("a", "wa") != 1 || f.Room("b", "wb") != 4 {
		t.Errorf("workspace rooms: %d, %d", f.Room("a", "wa"), f.Room("b", "wb"))
	}
	if got := c.EndpointRooms(); len(got) != 0 {
		t.Errorf("endpoint rooms of a claim holding none: %v", got)
	}
	c.Holds, c.Caps = map[string]int{"a": 4, "b": 12}, map[string]int{"a": 5, "p": 0}
	if got := c.EndpointRooms(); got["a"] != 1 || got["b"] != 0 || got["p"] != 0 || len(got) != 3 {
		t.Errorf("endpoint rooms %v", got)
	}
	if got := c.WorkspaceRooms(); got["wa"] != 1 || len(got) != 1 {
		t.Errorf("workspace rooms %v", got)
	}
}

// TestFeedFillPull: the cursors of a busy workspace, read first (their
// events the oldest), take no more than their share of a small claim
// in its first round, so that the other workspaces' cursors are served
// too; the second round gives out what is left.
func TestFeedFillPull(t *testing.T) {
	var cursors []FeedCursor
	for i := range 10 { // a busy workspace's, read first
		cursors = append(cursors, FeedCursor{Endpoint: fmt.Sprint("a", i), Workspace: "busy"})
	}
	cursors = append(cursors, FeedCursor{Endpoint: "b", Workspace: "quiet"}, FeedCursor{Endpoint: "c", Workspace: "other"})
	for _, tc := range []struct {
		n, perWorkspace  int
		busy, quiet, oth int
	}{
		{n: 6, perWorkspace: 0, busy: 2, quiet: 2, oth: 2},   // a third each
		{n: 100, perWorkspace: 8, busy: 8, quiet: 2, oth: 2}, // the busy one's share
		{n: 30, perWorkspace: 0, busy: 26, quiet: 2, oth: 2}, // the second round gives the busy one what the others leave
	} {
		c := WebhookClaim{N: tc.n, PerEndpoint: 100, PerWorkspace: tc.perWorkspace, AllFeeds: true}
		f := c.Fill(nil)
		var order []string
		err := f.Pull(cursors, func(i, n int) ([]WebhookDelivery, bool, error) {
			cur := cursors[i]
			order = append(order, cur.Endpoint)
			if cur.Workspace != "busy" {
				n = min(n, 2) // the quiet feeds hold two events each
			}
			var ds []WebhookDelivery
			for range n {
				ds = append(ds, WebhookDelivery{EndpointID: cur.Endpoint, Event: WebhookEvent{WorkspaceID: cur.Workspace}})
			}
			return ds, cur.Workspace == "busy", nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, d := range f.Claimed {
			got[d.Event.WorkspaceID]++
		}
		if got["busy"] != tc.busy || got["quiet"] != tc.quiet || got["other"] != tc.oth {
			t.Errorf("N %d, per workspace %d: took %v (pulls %v)", tc.n, tc.perWorkspace, got, order)
		}
		// Each workspace's first cursor is read before any second.
		if len(order) < 3 || !slices.Equal(order[:3], []string{"a0", "b", "c"}) {
			t.Errorf("N %d: pulls in the order %v", tc.n, order)
		}
	}
}

// TestCheckURLWithoutDNS: an endpoint's URL is checked, when it is made,
// for what can be known without DNS (this test runs offline): a name
// that does not resolve yet is accepted, to be checked on every
// connection; a private address written in any form, a localhost name
// and http are refused, saying why.
func TestCheckURLWithoutDNS(t *testing.T) {
	ws := NewWebhooks(nil)
	for _, u := range []string{"https://example.com/hooks", "https://hooks.invalid/x", "https://EXAMPLE.com./x", "https://93.184.215.14/x",
		"https://[2606:4700::1111]:8443/x", "https://[::ffff:0:8.8.8.8]/x", "https://123.example.com/x", "https://bücher.example/x"} {
		if err := ws.CheckURL(t.Context(), u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	for u, why := range map[string]string{
		"https://[::ffff:0:127.0.0.1]/x":               "loopback",
		"https://[::ffff:0:a00:1]/x":                   "private",
		"https://[::ffff:127.0.0.1]/x":                 "loopback",
		"https://[64:ff9b::a9fe:a9fe]/x":               "link-local",
		"https://[fe80::1%25eth0]/x":                   "link-local",
		"https://127.0.0.1/x":                          "loopback",
		"https://10.1.2.3/x":                           "private",
		"https://169.254.169.254/latest":               "link-local",
		"https://127.1/x":                              "dotted",
		"https://2130706433/x":                         "dotted",
		"https://0x7f000001/x":                         "dotted",
		"https://0177.0.0.1/x":                         "dotted",
		"https://example.0x10/x":                       "dotted",
		"https://localhost/x":                          "localhost",
		"https://LocalHost./x":                         "localhost",
		"https://api.localhost/x":                      "localhost",
		"http://example.com/x":                         "https",
		"https://example.com:0/x":                      "port",
		"https://example.com:70000/x":                  "port",
		"https://user:pw@example.com/x":                "user name",
		"https:///x":                                   "absolute",
		"https://exa mple.com/x":                       "absolute",
		"https://example..com/x":                       "host name",
		"https://-example.com/x":                       "host name",
		"https://" + strings.Repeat("a", 64) + ".com/": "host name",
	} {
		err := ws.CheckURL(t.Context(), u)
		if ErrorCode(err) != EInvalid || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want an invalid-request error saying %q", u, err, why)
		}
	}
	// With the allowance, private addresses, localhost and http pass.
	open := NewWebhooks(nil, WebhooksAllowPrivate(true))
	for _, u := range []string{"http://localhost:8080/x", "http://127.0.0.1/x", "https://[::ffff:0:127.0.0.1]/x"} {
		if err := open.CheckURL(t.Context(), u); err != nil {
			t.Errorf("with the allowance, %s: %v", u, err)
		}
	}
}

package memstore

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Delivery of webhooks. A change of a store itself (created, archived,
// deleted) writes, in its own transaction, one pending delivery for each
// enabled endpoint of its workspace that asks for its type, all with the
// same event ID and due at once. A change of a memory writes nothing
// more than its event in the store's feed (feed.go), which is the outbox
// of memstore's own events: each enabled endpoint keeps a cursor in the
// feed of every store of its workspace, and a deliverer's claim turns
// the events past a cursor that the endpoint asks for into deliveries,
// and moves the cursor past them, in one transaction. Either way a
// committed change is never lost to its webhooks and an uncommitted one
// never sent, and a change of a memory costs its writer nothing for
// webhooks. An endpoint is owed the changes made while it is enabled: its
// cursors start at the end of the feeds when it is made, and when it
// starts asking for memstore's own events; disabled, it keeps where each
// feed then ended (WebhookCursor.OwedTo), and is given the deliveries of
// the changes up to there before it is enabled again, its cursors then
// passing those made meanwhile. A store's deletion first makes the
// deliveries its feed still owes. The types an endpoint asks for are
// matched as its cursor passes an event.
//
// A deliverer claims due deliveries and posts each, retrying with
// exponential backoff by a RetryPolicy until it is delivered or has
// failed every attempt. Each attempt's outcome and the next attempt's
// time are stored, so retries survive restarts; a claimed delivery is
// leased, so that deliverers of several replicas do not routinely send it
// twice. The contract is at least once: a receiver deduplicates by the
// event's ID.

// FeedWebhookType is the webhook event type of a change of the feed that
// a claim delivers from the feed: "memstore." and the feed's type. An
// archive is not (false): it is the hosted API's memory_store.archived,
// which the backends' triggers deliver with the store's other events.
func FeedWebhookType(e EventType) (string, bool) {
	if e == EventStoreArchived {
		return "", false
	}
	return WebhookOwnPrefix + string(e), true
}

// A WebhookCursor is where an endpoint stands in the feed of one store of
// its workspace: the events up to Seq are delivered or no concern of it.
// OwedTo, of a disabled endpoint, is where the feed ended when it was
// disabled: the events up to there are still owed to it (0 for none).
type WebhookCursor struct {
	EndpointID string
	StoreID    string
	Seq        int64
	OwedTo     int64
}

// FeedDelivery is the delivery to endpoint w of event e of a store of
// workspace workspaceID (e's Path and hash are not needed), with event
// ID id, claimed until until; false when w does not ask for e's type.
// The backends derive the ID from the store and the event's number
// (ids.FeedEvent), so that every endpoint, replica and attempt gives the
// same.
func FeedDelivery(w *WebhookEndpoint, workspaceID string, e *Event, id string, until time.Time) (WebhookDelivery, bool) {
	typ, ok := FeedWebhookType(e.Type)
	if !ok || !slices.Contains(w.EnabledEvents, typ) {
		return WebhookDelivery{}, false
	}
	return WebhookDelivery{
		EndpointID: w.ID,
		Event: WebhookEvent{ID: id,
			Type: typ, WorkspaceID: workspaceID, StoreID: e.StoreID, MemoryID: e.MemoryID, VersionID: e.VersionID, CreatedAt: e.CreatedAt},
		State: DeliveryPending, NextAttemptAt: until, URL: w.URL, Secret: w.Secret, Lease: until,
	}, true
}

// FeedScan bounds the events of one store's feed that a claim reads for
// one endpoint: a feed of changes the endpoint does not ask for is
// passed over a page at a time.
const FeedScan = 256

// A WebhookEvent is what a delivery tells of.
type WebhookEvent struct {
	ID          string // wevt_..., the same for every attempt and endpoint
	Type        string // of WebhookEventTypes
	WorkspaceID string
	StoreID     string
	MemoryID    string // "" for the events of stores
	VersionID   string // "" for the events of stores
	CreatedAt   time.Time
}

// DeliveryState is where a delivery stands.
type DeliveryState string

// The states of a delivery.
const (
	DeliveryPending   DeliveryState = "pending"   // to be attempted at NextAttemptAt
	DeliveryDelivered DeliveryState = "delivered" // a 2xx answer came
	DeliveryFailed    DeliveryState = "failed"    // every attempt failed
)

// A WebhookDelivery is one event to one endpoint, and its log.
type WebhookDelivery struct {
	EndpointID    string
	Event         WebhookEvent
	State         DeliveryState
	Attempts      int
	NextAttemptAt time.Time
	LastAttemptAt *time.Time // nil before the first attempt
	// LastStatus is the HTTP status of the last attempt's answer, 0 when
	// none came; LastError says why it failed ("" when it did not).
	LastStatus int
	LastError  string
	// URL and Secret are the endpoint's, set by ClaimWebhookDeliveries
	// only, for the attempt.
	URL    string
	Secret string
	// Lease is the end of the claim, set by ClaimWebhookDeliveries: an
	// attempt is recorded only while the delivery is still pending under
	// this claim, so that one recorded late (its deliverer stalled past
	// the lease, and another claimed it since) changes nothing.
	Lease time.Time
}

// A RetryPolicy spaces the attempts of a delivery: the nth retry waits
// MinBackoff·2ⁿ⁻¹, at most MaxBackoff, and a delivery whose MaxAttempts
// attempts all failed disables its endpoint.
type RetryPolicy struct {
	MinBackoff  time.Duration
	MaxBackoff  time.Duration
	MaxAttempts int
}

// DefaultRetryPolicy retries for about four hours (30s, 1m, 2m, ... 1h,
// 1h) before it gives up on a delivery and disables its endpoint.
var DefaultRetryPolicy = RetryPolicy{MinBackoff: 30 * time.Second, MaxBackoff: time.Hour, MaxAttempts: 10}

// The limits of delivery.
const (
	// MaxDeliveryError bounds the LastError kept, in bytes.
	MaxDeliveryError = 512
	// DeliveryLogRetention is how long delivered and failed deliveries
	// stay in their endpoint's log.
	DeliveryLogRetention = 7 * 24 * time.Hour
)

// Backoff is how long the retry after attempt n (from 1) waits.
func (p RetryPolicy) Backoff(n int) time.Duration {
	d := p.MinBackoff
	for i := 1; i < n && d < p.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, p.MaxBackoff)
}

// Attempted records the outcome of an attempt made at at: the HTTP
// status of its answer (0 for none) and, when it failed, why, which may
// hold anything the receiver answered and is kept as StorableText makes
// it, within MaxDeliveryError. A 2xx
// answer delivers; otherwise the delivery waits for its next attempt or,
// when it has had them all, fails, and Attempted returns why its endpoint
// is to be disabled ("" otherwise).
func (d *WebhookDelivery) Attempted(at time.Time, status int, why string, p RetryPolicy) (disable string) {
	d.Attempts++
	d.LastAttemptAt, d.LastStatus = &at, status
	if status >= 200 && status < 300 {
		d.State, d.LastError = DeliveryDelivered, ""
		return ""
	}
	d.LastError = StorableText(why, MaxDeliveryError)
	if d.Attempts < p.MaxAttempts {
		d.NextAttemptAt = at.Add(p.Backoff(d.Attempts))
		return ""
	}
	d.State = DeliveryFailed
	return fmt.Sprintf("event %s failed all %d delivery attempts, the last at %s: %s",
		d.Event.ID, d.Attempts, at.UTC().Format(time.RFC3339), d.LastError)
}

// A WebhookAttempt is a delivery after an attempt (Attempted), and the
// reason to disable its endpoint, "" for none.
type WebhookAttempt struct {
	Delivery *WebhookDelivery
	Disable  string
}

// A WebhookClaim asks for up to N deliveries due at Now, leased until
// Until, oldest due first, but no more of one endpoint than
// PerEndpoint less the deliveries of it the caller already Holds: a slow
// endpoint holds only its own share of a deliverer, never the others'.
type WebhookClaim struct {
	Now, Until  time.Time
	N           int
	PerEndpoint int
	Holds       map[string]int // by endpoint ID
	// The feeds a claim reads once the due deliveries leave it room:
	// those of the Changed stores, or of every store when AllFeeds, so
	// that a claim pays for the stores that changed since the last, and
	// a sweep now and then finds the rest.
	Changed  []string
	AllFeeds bool
}

// Scan bounds the due deliveries a claim looks at, the oldest N, so that
// its cost does not grow with a backlog: an endpoint with no room is
// passed over, one with some takes no more than that of them, and the
// rest wait for the next claim.
func (c WebhookClaim) Scan() int { return c.N }

// A FeedFill shares the room that a claim's due deliveries left among
// the feeds' cursors, as a backend reads them: no more in all than the
// claim's N, nor of an endpoint than its PerEndpoint less what the
// caller holds.
type FeedFill struct {
	c       WebhookClaim
	took    map[string]int // by endpoint, in this claim
	Claimed []WebhookDelivery
}

// Fill starts sharing the room that claimed, the due deliveries c took,
// left.
func (c WebhookClaim) Fill(claimed []WebhookDelivery) *FeedFill {
	f := &FeedFill{c: c, took: map[string]int{}}
	f.Take(claimed)
	return f
}

// Done reports that no feed is to be read: the claim is full, or names
// none.
func (f *FeedFill) Done() bool {
	return len(f.Claimed) >= f.c.N || (!f.c.AllFeeds && len(f.c.Changed) == 0)
}

// Full lists the endpoints with no room left, whose cursors need not be
// read.
func (f *FeedFill) Full() []string {
	full := []string{}
	for id := range f.c.Holds {
		if f.Room(id) <= 0 {
			full = append(full, id)
		}
	}
	for id := range f.took {
		if _, held := f.c.Holds[id]; !held && f.Room(id) <= 0 {
			full = append(full, id)
		}
	}
	return full
}

// Room is how many more deliveries of endpoint the claim may take.
func (f *FeedFill) Room(endpoint string) int {
	return min(f.c.N-len(f.Claimed), f.c.PerEndpoint-f.c.Holds[endpoint]-f.took[endpoint])
}

// Take adds ds to the claim.
func (f *FeedFill) Take(ds []WebhookDelivery) {
	for _, d := range ds {
		f.took[d.EndpointID]++
	}
	f.Claimed = append(f.Claimed, ds...)
}

// WebhookDeliveryStorage keeps the deliveries, which the backend's
// changes add. Like the other storage it trusts its caller.
type WebhookDeliveryStorage interface {
	// ClaimWebhookDeliveries returns the pending deliveries of enabled
	// endpoints that c asks for, with their endpoints' URL and secret,
	// and moves their next attempt to c.Until, so that no other
	// deliverer claims them before. In the room that leaves, it turns
	// the events of the feeds c names past the cursors of enabled
	// endpoints into deliveries (FeedDelivery), kept as claimed, and
	// moves the cursors past them; no two claims take the same events.
	ClaimWebhookDeliveries(ctx context.Context, c WebhookClaim) ([]WebhookDelivery, error)
	// RecordWebhookAttempts stores, in one transaction, the state of
	// each attempt's delivery and, for an attempt with Disable set,
	// disables its endpoint, if still enabled, with that reason, at now.
	// When next is not nil, the same transaction then claims as
	// ClaimWebhookDeliveries does, and returns what it claimed: a
	// deliverer pays one transaction for both.
	// An attempt whose delivery no longer holds its Lease is not
	// recorded, nor does it disable its endpoint.
	RecordWebhookAttempts(ctx context.Context, attempts []WebhookAttempt, now time.Time, next *WebhookClaim) ([]WebhookDelivery, error)
	// WebhookDeliveries returns up to n of an endpoint's deliveries,
	// newest event first (ENotFound for an endpoint not of the
	// workspace).
	WebhookDeliveries(ctx context.Context, workspaceID, endpointID string, n int) ([]WebhookDelivery, error)
	// PruneWebhookDeliveries removes the deliveries of events made before
	// before that are delivered, failed, or pending for an endpoint that
	// is disabled (which would otherwise wait for ever, and all go at
	// once if it were enabled again), and returns how many.
	PruneWebhookDeliveries(ctx context.Context, before time.Time) (int64, error)
}

// WebhookDeliveries returns the log of one of the caller's workspace's
// endpoints, newest event first, a page of limit (1-100, 0 for the
// default) at most. The deliveries never hold the secret.
func (ws *Webhooks) WebhookDeliveries(ctx context.Context, c *Caller, endpointID string, limit int) ([]WebhookDelivery, error) {
	if err := c.CanAdminister(manageWebhooks); err != nil {
		return nil, err
	}
	n, err := PageSize(limit, false)
	if err != nil {
		return nil, err
	}
	if err := ValidateID(webhookIDField, endpointID); err != nil {
		return nil, err
	}
	ds, ok := ws.s.(WebhookDeliveryStorage)
	if !ok {
		return nil, Errorf(EInvalid, "this server keeps no webhook deliveries")
	}
	return ds.WebhookDeliveries(ctx, c.WorkspaceID, endpointID, n)
}

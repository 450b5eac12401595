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
//
// The rules above that follow from a write to a store or an endpoint are
// kept by triggers of both schemas, because every statement that makes
// such a write, a restore's insert included, must make their rows in its
// own transaction (the cursors' triggers are named alike in SQLite and
// PostgreSQL):
//   - an endpoint's cursors start at the end of the feeds when it is made
//     (webhook_cursors_of_endpoint), and again when it is enabled or
//     starts asking for memstore's own events (webhook_cursors_at_end);
//   - a new store's cursors start at its first event
//     (webhook_cursors_of_store);
//   - an endpoint disabled while asking for memstore's own events keeps
//     where each feed ended in OwedTo (webhook_cursors_owed);
//   - a store's creation, archive and deletion write their deliveries
//     (SQLite: webhook_events_store_created, webhook_events_store_deleted
//     and webhook_events_of_archive, through webhook_events_deliveries;
//     PostgreSQL: webhook_events_of_stores and webhook_events_of_archive,
//     through webhook_event_add).
//
// storetest.RunWebhookDeliveries proves each on both backends: Deliveries
// the stores' own events, Feeds and FeedsOwed the cursors.

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

// DrainCursors bounds the cursors that one transaction of a drain moves
// (the deliveries still owed of a store being deleted, or to an endpoint
// enabled again), each past at most FeedScan events, so that the
// transaction stays small whatever the backlog.
const DrainCursors = 16

// A WebhookEvent is what a delivery tells of.
type WebhookEvent struct {
	ID          string // wevt_..., the same for every attempt and endpoint
	Type        string // of WebhookEventTypes
	WorkspaceID string
	StoreID     string
	MemoryID    string // "" for the events of stores
	VersionID   string // "" for the events of stores
	DreamID     string // of the events of dreams, whose StoreID is the output store (the input when none was made)
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

// EndpointDown reports whether the outcome of an attempt, the status of
// its answer (0 for none), says that its endpoint is down or overloaded
// rather than that it refused this one delivery: no answer (the
// connection refused or reset, the timeout, an address refused), 408,
// 429 or a 5xx. A deliverer pauses such an endpoint (EndpointPause).
func EndpointDown(status int) bool {
	return status == 0 || status == 408 || status == 429 || status >= 500
}

// EndpointPause is how long a deliverer leaves an endpoint alone after
// failures attempts in a row found it down (EndpointDown), before it
// probes it with one delivery; it sends it more only once one succeeds.
// So a dead endpoint costs a deliverer one attempt now and then, and
// delays no other. After p.MaxAttempts such failures in a row it is
// disabled (EndpointDisable), as it would be by a delivery failing
// every attempt: its pause spaces its probes as a delivery's retries
// are spaced.
func (p RetryPolicy) EndpointPause(failures int) time.Duration { return p.Backoff(failures) }

// EndpointDisable is why an endpoint found down by failures attempts in
// a row, the last at at for why, is to be disabled: "" while failures
// is below p.MaxAttempts.
func (p RetryPolicy) EndpointDisable(failures int, at time.Time, why string) string {
	if failures < p.MaxAttempts {
		return ""
	}
	return fmt.Sprintf("%d delivery attempts in a row failed, the last at %s: %s",
		failures, at.UTC().Format(time.RFC3339), StorableText(why, MaxDeliveryError))
}

// A WebhookAttempt is a delivery after an attempt (Attempted), and the
// reason to disable its endpoint, "" for none.
type WebhookAttempt struct {
	Delivery *WebhookDelivery
	Disable  string
}

// A WebhookClaim asks for up to N deliveries due at Now, leased until
// Until, oldest due first but fairly: no more of one endpoint than its
// cap (PerEndpoint, or its Caps entry) less the deliveries of it the
// caller already Holds, nor of one workspace than PerWorkspace less what
// the caller holds of it (WorkspaceHolds), and round by round, each
// endpoint of a workspace, and each workspace, taking one before any
// takes a second. A slow endpoint holds only its own share of a
// deliverer, a workspace only its own, never the others'.
type WebhookClaim struct {
	Now, Until  time.Time
	N           int
	PerEndpoint int
	Holds       map[string]int // by endpoint ID
	// Caps lowers the cap of the endpoints it lists, below PerEndpoint:
	// 0 for one that is paused, 1 for one that is probed.
	Caps map[string]int
	// PerWorkspace caps a workspace's deliveries held (0: N).
	PerWorkspace   int
	WorkspaceHolds map[string]int // by workspace ID
	// The feeds a claim reads once the due deliveries leave it room:
	// those of the Changed stores, or of every store when AllFeeds, so
	// that a claim pays for the stores that changed since the last, and
	// a sweep now and then finds the rest.
	Changed  []string
	AllFeeds bool
}

// Scan bounds the due deliveries a claim looks at, the oldest 2N of the
// endpoints and workspaces with room, so that its cost does not grow
// with a backlog: one with some room takes no more than that of them,
// and the rest wait for the next claim. Twice N, so that a workspace
// whose backlog is the oldest leaves room in the claim for the others'
// that come next; a workspace whose share is full is passed over by the
// scan itself, so the others' deliveries come at the next claim at the
// latest, however large its backlog.
func (c WebhookClaim) Scan() int { return 2 * c.N }

// EndpointRooms is how many more deliveries the claim may take of each
// endpoint that the caller holds or caps; any other may take
// PerEndpoint. A backend passes it to its claim's statement.
func (c WebhookClaim) EndpointRooms() map[string]int {
	rooms := map[string]int{}
	for id := range c.Holds {
		rooms[id] = max(0, c.endpointCap(id)-c.Holds[id])
	}
	for id := range c.Caps {
		rooms[id] = max(0, c.endpointCap(id)-c.Holds[id])
	}
	return rooms
}

// WorkspaceRooms is how many more deliveries the claim may take of each
// workspace the caller holds some of; any other may take
// c.WorkspaceCap().
func (c WebhookClaim) WorkspaceRooms() map[string]int {
	rooms := map[string]int{}
	for id, n := range c.WorkspaceHolds {
		rooms[id] = max(0, c.WorkspaceCap()-n)
	}
	return rooms
}

// WorkspaceCap is the most a claim takes of one workspace that the
// caller holds nothing of.
func (c WebhookClaim) WorkspaceCap() int {
	if c.PerWorkspace <= 0 {
		return c.N
	}
	return c.PerWorkspace
}

func (c WebhookClaim) endpointCap(id string) int {
	if n, ok := c.Caps[id]; ok {
		return min(n, c.PerEndpoint)
	}
	return c.PerEndpoint
}

// A FeedFill shares the room that a claim's due deliveries left among
// the feeds' cursors, as a backend reads them: no more in all than the
// claim's N, nor of an endpoint or a workspace than its room.
type FeedFill struct {
	c         WebhookClaim
	took      map[string]int // by endpoint, in this claim
	tookSpace map[string]int // by workspace, in this claim
	Claimed   []WebhookDelivery
}

// Fill starts sharing the room that claimed, the due deliveries c took,
// left.
func (c WebhookClaim) Fill(claimed []WebhookDelivery) *FeedFill {
	f := &FeedFill{c: c, took: map[string]int{}, tookSpace: map[string]int{}}
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
	seen := map[string]bool{}
	for _, m := range []map[string]int{f.c.Holds, f.c.Caps, f.took} {
		for id := range m {
			if !seen[id] && f.endpointRoom(id) <= 0 {
				full = append(full, id)
			}
			seen[id] = true
		}
	}
	return full
}

// Room is how many more deliveries of endpoint, of workspace, the claim
// may take.
func (f *FeedFill) Room(endpoint, workspace string) int {
	return min(f.c.N-len(f.Claimed), f.endpointRoom(endpoint), f.workspaceRoom(workspace))
}

func (f *FeedFill) endpointRoom(id string) int {
	return f.c.endpointCap(id) - f.c.Holds[id] - f.took[id]
}

func (f *FeedFill) workspaceRoom(id string) int {
	return f.c.WorkspaceCap() - f.c.WorkspaceHolds[id] - f.tookSpace[id]
}

// Take adds ds to the claim.
func (f *FeedFill) Take(ds []WebhookDelivery) {
	for _, d := range ds {
		f.took[d.EndpointID]++
		f.tookSpace[d.Event.WorkspaceID]++
	}
	f.Claimed = append(f.Claimed, ds...)
}

// A FeedCursor is what a FeedFill needs to know of a cursor a backend
// read: whose it is.
type FeedCursor struct {
	Endpoint, Workspace string
}

// Pull shares the claim's room among cursors, which a backend read in
// the order it serves them (the cursor whose next event has waited
// longest first), and makes their deliveries by pull, which makes up to
// n of cursor i's and reports whether its feed may hold more for it. It
// goes in two rounds. In the first, the workspaces' first cursors go
// before their second, and so on, each workspace taking no more than an
// equal part of the claim's room, shared equally among its cursors; in
// the second, the cursors take what room is left, in the same order. So
// a busy workspace, or a busy endpoint, cannot take a claim's room from
// the others, and a feed is read at most twice by a claim.
func (f *FeedFill) Pull(cursors []FeedCursor, pull func(i, n int) (ds []WebhookDelivery, more bool, err error)) error {
	rank, count := make([]int, len(cursors)), map[string]int{}
	for i, cur := range cursors {
		if f.Room(cur.Endpoint, cur.Workspace) > 0 {
			count[cur.Workspace]++
			rank[i] = count[cur.Workspace]
		}
	}
	if len(count) == 0 {
		return nil
	}
	order := make([]int, len(cursors))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return rank[a] - rank[b] })
	share := ceilDiv(f.c.N-len(f.Claimed), len(count)) // a workspace's in the first round
	part := map[string]int{}                           // a cursor's in the first round, by workspace
	for ws, n := range count {
		part[ws] = ceilDiv(min(share, f.workspaceRoom(ws)), n)
	}
	more := make([]bool, len(cursors))
	for round := range 2 {
		for _, i := range order {
			cur := cursors[i]
			n := f.Room(cur.Endpoint, cur.Workspace)
			if round == 0 {
				n = min(n, part[cur.Workspace])
			} else if !more[i] {
				continue
			}
			if n <= 0 {
				more[i] = round == 0 && rank[i] > 0
				continue
			}
			ds, m, err := pull(i, n)
			if err != nil {
				return err
			}
			f.Take(ds)
			more[i] = m
		}
	}
	return nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

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
	if err := c.CanAdminister(ManageWebhooks); err != nil {
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

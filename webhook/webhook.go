// Package webhook delivers memstore's webhooks: it claims the due
// deliveries, which changes of stores write and its claims make from the
// stores' change feeds, posts each to its endpoint signed by the
// Standard Webhooks scheme (webhook-id, webhook-timestamp,
// webhook-signature), which the official SDKs' webhooks.unwrap verifies,
// and records every attempt, retrying by a memstore.RetryPolicy (see
// memstore's webhook_delivery.go for the guarantees).
//
// A delivery is safe to aim at the internet: unless private addresses
// are allowed, it dials only public addresses, checked on the address
// actually dialled, whatever the name resolved to when the endpoint was
// made; it has a timeout, reads at most MaxResponseBytes of the answer,
// uses no proxy and follows redirects on the same host only.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/origin"
)

// The defaults and limits of delivery.
const (
	// DefaultPoll is how often a deliverer looks for work when it has
	// none. It is also how often a deliverer reads the feeds of every
	// store, beside those it hears have changed.
	DefaultPoll = time.Second
	// DefaultTimeout bounds one attempt, from dialling to the end of the
	// answer.
	DefaultTimeout = 10 * time.Second
	// MaxResponseBytes is how much of an answer is read.
	MaxResponseBytes = 64 << 10
	// MaxInFlightPerEndpoint bounds the attempts a deliverer makes to one
	// endpoint at once: a slow or hanging endpoint holds that many of
	// its attempts, never the others'.
	MaxInFlightPerEndpoint = 4
	// MaxHeldPerEndpoint bounds the deliveries of one endpoint a
	// deliverer holds: those in flight, and more claimed to follow them
	// at once, so that a claim, a transaction, serves many attempts.
	MaxHeldPerEndpoint = 8 * MaxInFlightPerEndpoint
	// maxRedirects bounds the redirects followed, on the same host.
	maxRedirects = 3
	// Pool is how many deliveries a deliverer holds at once unless
	// Options.MaxHeld says otherwise: attempts in flight, and claimed
	// ones waiting for their endpoint. Eight times as many as one
	// endpoint may hold, so that a workspace's default share (an eighth,
	// DefaultMaxHeldPerWorkspace) lets a workspace with one busy endpoint
	// be delivered as fast as ever.
	Pool = 8 * MaxHeldPerEndpoint
	// workspaceShares is how many default shares of a workspace a
	// deliverer's pool holds (DefaultMaxHeldPerWorkspace).
	workspaceShares = 8
	// pruneEvery spaces the removal of old deliveries from the logs.
	pruneEvery = time.Hour
	// claimGap spaces the claims that news of changes asks for: a burst
	// of changes is read by one claim, not one claim each.
	claimGap = 10 * time.Millisecond
	// recordDelay and recordBatch bound how long and how many finished
	// attempts wait to be recorded together: the transaction that
	// records them and claims the next competes with the writes.
	recordDelay = 10 * time.Millisecond
	recordBatch = MaxHeldPerEndpoint
)

// DefaultMaxHeldPerWorkspace is a workspace's share of a deliverer's
// pool of maxHeld deliveries when Options.MaxHeldPerWorkspace is 0: an
// eighth, at least one. A workspace whose endpoints all hang holds this
// many attempts, and the pool leaves room for seven such workspaces and
// the others' deliveries beside them.
func DefaultMaxHeldPerWorkspace(maxHeld int) int { return max(1, maxHeld/workspaceShares) }

// Options configure a Deliverer; the zero value is the defaults.
type Options struct {
	// AllowPrivate lets deliveries reach loopback, link-local and
	// private addresses: for tests and closed networks.
	AllowPrivate bool
	// MaxHeld bounds the deliveries the deliverer holds at once, its
	// pool (0: Pool); MaxHeldPerWorkspace those of one workspace's
	// endpoints, its share (0: DefaultMaxHeldPerWorkspace(MaxHeld)).
	MaxHeld             int
	MaxHeldPerWorkspace int
	Policy              memstore.RetryPolicy // zero: memstore.DefaultRetryPolicy
	Poll                time.Duration        // zero: DefaultPoll
	Timeout             time.Duration        // zero: DefaultTimeout
	// Logger hears of each attempt (endpoint, event, status: never a
	// URL, a secret or content); nil discards.
	Logger *slog.Logger
	Now    func() time.Time // nil: time.Now
}

// A Deliverer delivers the webhooks of a storage. Several, in several
// processes, may share one storage: each claims different deliveries.
type Deliverer struct {
	s      memstore.WebhookDeliveryStorage
	o      Options
	client *http.Client
	pruned time.Time
	lease  time.Duration
}

// New returns a deliverer of s's webhooks.
func New(s memstore.WebhookDeliveryStorage, o Options) *Deliverer {
	if o.Policy == (memstore.RetryPolicy{}) {
		o.Policy = memstore.DefaultRetryPolicy
	}
	if o.MaxHeld <= 0 {
		o.MaxHeld = Pool
	}
	if o.MaxHeldPerWorkspace <= 0 {
		o.MaxHeldPerWorkspace = DefaultMaxHeldPerWorkspace(o.MaxHeld)
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	dialer := &net.Dialer{Timeout: o.Timeout}
	if !o.AllowPrivate {
		dialer.Control = publicOnly
	}
	transport := &http.Transport{
		Proxy:               nil, // a proxy would dial for us, past the check
		DialContext:         dialer.DialContext,
		TLSHandshakeTimeout: o.Timeout,
		MaxIdleConnsPerHost: MaxInFlightPerEndpoint, // an endpoint's attempts reuse its connections
		IdleConnTimeout:     time.Minute,
	}
	return &Deliverer{
		s: s, o: o,
		client: &http.Client{Transport: transport, Timeout: o.Timeout, CheckRedirect: sameHost},
		// A claimed delivery that waits for its endpoint starts only
		// while its claim outlasts an attempt (startWaiting): the lease
		// bounds how long a delivery held by a deliverer that stopped
		// waits for another's.
		lease: 3 * o.Timeout,
	}
}

// errCrossHost refuses a redirect to another host.
var errCrossHost = errors.New("redirected to another host, which webhook deliveries do not follow")

// sameHost follows a few redirects that stay on the first request's
// server: its scheme, host and port (origin.Same), as the command-line
// client's redirects do.
func sameHost(req *http.Request, via []*http.Request) error {
	if !origin.Same(req.URL, via[0].URL) {
		return errCrossHost
	}
	if len(via) > maxRedirects {
		return fmt.Errorf("more than %d redirects", maxRedirects)
	}
	return nil
}

// publicOnly refuses to connect to an address that
// memstore.CheckWebhookAddr refuses: checked on the address dialled, so a
// name that resolves elsewhere since the endpoint was made gains nothing.
func publicOnly(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return err
	}
	if err := memstore.CheckWebhookAddr(a); err != nil {
		return errors.New("the endpoint's host " + err.Error())
	}
	return nil
}

// Run delivers until ctx ends. It holds up to Options.MaxHeld deliveries
// at once, at most Options.MaxHeldPerWorkspace of one workspace's
// endpoints and MaxHeldPerEndpoint of any one endpoint, of which at most
// MaxInFlightPerEndpoint are in flight while the others wait for their
// endpoint (so that a finished attempt's successor starts without
// waiting for the database). It records the attempts that finish
// together and claims the next deliveries in one transaction. When it
// has no work it looks for some every Poll. Failures of the storage are
// logged and tried again.
//
// An endpoint that an attempt finds down (memstore.EndpointDown) is
// paused: its deliveries waiting for it are let go, due when the pause
// ends, and none of it is claimed until then; then it is probed with
// one delivery at a time until one succeeds, each failure pausing it
// longer (memstore.RetryPolicy.EndpointPause). The pause is this
// deliverer's own, kept in memory: another deliverer, or this one
// restarted, finds the endpoint down by its own first attempts.
//
// When ctx ends it claims nothing more and waits for the attempts in
// flight, which it stops: an attempt that got its answer is recorded,
// one stopped before is not (neither failed nor counted), and it and the
// claimed deliveries not yet attempted are attempted again once their
// lease ends.
func (d *Deliverer) Run(ctx context.Context) {
	r := &run{d: d, held: map[string]int{}, heldSpace: map[string]int{}, inFlight: map[string]int{}, waiting: map[string][]*memstore.WebhookDelivery{},
		down: map[string]*downState{}, done: make(chan result, d.o.MaxHeld), changed: map[string]bool{}, wake: make(chan struct{}, 1)}
	defer r.stop(ctx)
	if n, ok := d.s.(memstore.EventNotifier); ok {
		kick := make(chan struct{}, 1)
		stop := n.NotifyEvents(func(storeID string) {
			r.mu.Lock()
			r.changed[storeID] = true
			r.mu.Unlock()
			select {
			case kick <- struct{}{}:
			default:
			}
		})
		defer stop()
		go r.spaceWakes(ctx, kick)
	}
	look := true               // for due deliveries; else an attempt's end is awaited
	var flush <-chan time.Time // armed while finished attempts wait to be recorded
	for {
		err := r.prune(ctx)
		if err == nil && look {
			if len(r.finished) > 0 {
				r.flush(ctx) // records and claims in one transaction
				flush = nil
			} else {
				err = r.claim(ctx)
			}
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			r.warn(ctx, err)
		}
		look = false
		select {
		case res := <-r.done:
			r.finish(ctx, res)
			// Idle, or enough to record: at once. Else a little later,
			// with those that finish meanwhile, in one transaction.
			if r.running == 0 || len(r.finished) >= recordBatch {
				r.flush(ctx)
				flush = nil
			} else if flush == nil {
				flush = time.After(recordDelay)
			}
		case <-flush:
			r.flush(ctx)
			flush = nil
		case <-r.wake:
			look = true
		case <-ctx.Done():
			return
		case <-time.After(d.o.Poll):
			look = true
		}
	}
}

// spaceWakes passes each kick, news of changes, on to Run as a wake, at
// most one each claimGap.
func (r *run) spaceWakes(ctx context.Context, kick <-chan struct{}) {
	for {
		select {
		case <-kick:
		case <-ctx.Done():
			return
		}
		select {
		case r.wake <- struct{}{}:
		default:
		}
		select {
		case <-time.After(claimGap):
		case <-ctx.Done():
			return
		}
	}
}

// A run is the state of Run, kept by its goroutine alone.
type run struct {
	d         *Deliverer
	held      map[string]int                         // claimed and not yet finished, by endpoint
	heldSpace map[string]int                         // the same, by workspace
	total     int                                    // claimed and not yet finished, in all
	inFlight  map[string]int                         // attempts in flight, by endpoint
	waiting   map[string][]*memstore.WebhookDelivery // claimed, by endpoint, until it has room
	down      map[string]*downState                  // the endpoints found down, by ID
	running   int                                    // attempts in flight in all
	done      chan result                            // the attempts' outcomes, never full
	finished  []memstore.WebhookAttempt              // the attempts to record
	swept     time.Time                              // when a claim last read every store's feed
	wake      chan struct{}                          // news of changes, spaced by spaceWakes

	mu      sync.Mutex
	changed map[string]bool // the stores whose feeds the next claim reads
}

// A result is the outcome of an attempt of a delivery, started at
// started.
type result struct {
	del     *memstore.WebhookDelivery
	started time.Time
	attempt memstore.WebhookAttempt // zero when stopped before an answer
}

// A downState is what a deliverer knows of an endpoint that its attempts
// found down.
type downState struct {
	failures int       // attempts in a row that found it down, those made together counted once
	since    time.Time // when the last of them was counted: an attempt started before is not another
	until    time.Time // the end of its pause; after it, one probe at a time
}

// prune removes the old deliveries from the logs when due.
func (r *run) prune(ctx context.Context) error {
	d := r.d
	now := d.o.Now()
	if now.Sub(d.pruned) < pruneEvery {
		return nil
	}
	if _, err := d.s.PruneWebhookDeliveries(ctx, now.Add(-memstore.DeliveryLogRetention)); err != nil {
		return err
	}
	d.pruned = now
	return nil
}

// next is the claim that fills the pool: as many as it has room for, of
// each endpoint as many as it may hold. nil when the pool is full.
func (r *run) next() *memstore.WebhookClaim {
	o := r.d.o
	if r.total >= o.MaxHeld {
		return nil
	}
	now := o.Now()
	c := &memstore.WebhookClaim{Now: now, Until: now.Add(r.d.lease), N: o.MaxHeld - r.total,
		PerEndpoint: MaxHeldPerEndpoint, Holds: r.held, Caps: r.caps(now),
		PerWorkspace: o.MaxHeldPerWorkspace, WorkspaceHolds: r.heldSpace}
	if now.Sub(r.swept) >= r.d.o.Poll {
		c.AllFeeds, r.swept = true, now
	}
	r.mu.Lock()
	for id := range r.changed {
		c.Changed = append(c.Changed, id)
	}
	clear(r.changed)
	r.mu.Unlock()
	return c
}

// caps are the claim's caps of the endpoints found down: none while
// paused, one, a probe, after. An endpoint not probed for long after its
// pause (it has nothing due, or is gone) is forgotten.
func (r *run) caps(now time.Time) map[string]int {
	caps := map[string]int{}
	for id, ds := range r.down {
		switch {
		case now.Before(ds.until):
			caps[id] = 0
		case now.Sub(ds.until) > r.d.o.Policy.MaxBackoff:
			delete(r.down, id)
		default:
			caps[id] = 1
		}
	}
	return caps
}

// health notes what the outcome of an attempt to endpoint, started at
// started, tells of it: an answer that says it is up ends what was known
// of it being down; one that says it is down counts a failure in a row,
// unless the attempt was made together with one already counted, pauses
// it, and lets go the deliveries waiting for it. At the policy's count
// of failures in a row, the attempt disables the endpoint.
func (r *run) health(endpoint string, started time.Time, a *memstore.WebhookAttempt) {
	del := a.Delivery
	if del.State == memstore.DeliveryDelivered || !memstore.EndpointDown(del.LastStatus) {
		delete(r.down, endpoint)
		return
	}
	p, now := r.d.o.Policy, r.d.o.Now()
	ds := r.down[endpoint]
	if ds == nil {
		ds = &downState{}
		r.down[endpoint] = ds
	}
	if ds.failures == 0 || started.After(ds.since) {
		ds.failures++
		ds.since, ds.until = now, now.Add(p.EndpointPause(ds.failures))
		r.d.o.Logger.LogAttrs(context.Background(), slog.LevelInfo, "webhook endpoint down, paused",
			slog.String("endpoint", endpoint), slog.Int("failures", ds.failures), slog.Time("until", ds.until))
		if a.Disable == "" {
			if a.Disable = p.EndpointDisable(ds.failures, now, del.LastError); a.Disable != "" {
				r.d.o.Logger.LogAttrs(context.Background(), slog.LevelWarn, "webhook endpoint disabled after failing deliveries", slog.String("endpoint", endpoint))
			}
		}
	}
	r.release(endpoint, ds.until)
}

// release lets go the deliveries waiting for endpoint, recorded as they
// were claimed but due at at.
func (r *run) release(endpoint string, at time.Time) {
	for _, del := range r.waiting[endpoint] {
		del.NextAttemptAt = at
		r.finished = append(r.finished, memstore.WebhookAttempt{Delivery: del})
		r.drop(del)
	}
	delete(r.waiting, endpoint)
}

// drop forgets a claimed delivery, which no longer holds room.
func (r *run) drop(del *memstore.WebhookDelivery) {
	r.total--
	if r.held[del.EndpointID]--; r.held[del.EndpointID] == 0 {
		delete(r.held, del.EndpointID)
	}
	if ws := del.Event.WorkspaceID; r.heldSpace[ws] > 1 {
		r.heldSpace[ws]--
	} else {
		delete(r.heldSpace, ws)
	}
}

// unread marks again the feeds a claim c that failed was to read.
func (r *run) unread(c *memstore.WebhookClaim) {
	if c == nil {
		return
	}
	r.mu.Lock()
	for _, id := range c.Changed {
		r.changed[id] = true
	}
	r.mu.Unlock()
}

// claim claims due deliveries into the pool's room.
func (r *run) claim(ctx context.Context) error {
	c := r.next()
	if c == nil {
		return nil
	}
	claimed, err := r.d.s.ClaimWebhookDeliveries(ctx, *c)
	if err != nil {
		r.unread(c)
		return err // what it claimed was not committed
	}
	r.add(ctx, claimed)
	return nil
}

// add attempts claimed deliveries now if their endpoints have room, the
// others once they have. The store of a delivery of memstore's own
// events is read again by the next claim: its feed may hold more.
func (r *run) add(ctx context.Context, claimed []memstore.WebhookDelivery) {
	r.mu.Lock()
	for _, del := range claimed {
		if strings.HasPrefix(del.Event.Type, memstore.WebhookOwnPrefix) {
			r.changed[del.Event.StoreID] = true
		}
	}
	r.mu.Unlock()
	for i := range claimed {
		del := &claimed[i]
		r.held[del.EndpointID]++
		r.heldSpace[del.Event.WorkspaceID]++
		r.total++
		if r.inFlight[del.EndpointID] < MaxInFlightPerEndpoint {
			r.start(ctx, del)
		} else {
			r.waiting[del.EndpointID] = append(r.waiting[del.EndpointID], del)
		}
	}
}

func (r *run) start(ctx context.Context, del *memstore.WebhookDelivery) {
	r.inFlight[del.EndpointID]++
	r.running++
	started := r.d.o.Now()
	go func() { r.done <- result{del, started, r.d.attempt(ctx, del)} }()
}

// startWaiting starts the next delivery that waited for endpoint. One
// whose claim would end before its attempt could be recorded is let go:
// a claim after its lease attempts it, so that no two deliverers send it
// at once.
func (r *run) startWaiting(ctx context.Context, endpoint string) {
	for next := r.waiting[endpoint]; len(next) > 0; next = r.waiting[endpoint] {
		del := next[0]
		if r.waiting[endpoint] = next[1:]; len(next) == 1 {
			delete(r.waiting, endpoint)
		}
		if r.d.o.Now().Add(2 * r.d.o.Timeout).Before(del.Lease) { // an attempt, and as long again to record it
			r.start(ctx, del)
			return
		}
		r.drop(del)
	}
}

// finish takes the outcome res and every other already in, to be
// recorded, and starts the deliveries that waited for their endpoints.
func (r *run) finish(ctx context.Context, res result) {
	for {
		endpoint := res.del.EndpointID
		r.running--
		r.drop(res.del)
		if r.inFlight[endpoint]--; r.inFlight[endpoint] == 0 {
			delete(r.inFlight, endpoint)
		}
		if res.attempt.Delivery != nil {
			r.health(endpoint, res.started, &res.attempt)
			r.finished = append(r.finished, res.attempt)
		}
		if ctx.Err() == nil {
			r.startWaiting(ctx, endpoint) // the endpoint has room again
		}
		select {
		case res = <-r.done:
			continue
		default:
		}
		return
	}
}

// flush records the finished attempts and, unless stopping, claims what
// the room they left takes, in one transaction.
func (r *run) flush(ctx context.Context) {
	var next *memstore.WebhookClaim
	if ctx.Err() == nil {
		next = r.next()
	}
	claimed, err := r.record(ctx, r.finished, next)
	r.finished = nil
	if err != nil {
		r.warn(ctx, err) // neither recorded nor claimed: the leases hand them back
		r.unread(next)
		return
	}
	r.add(ctx, claimed)
}

// record stores attempts, even when stopping, and claims by next. None
// means that ctx ended, and nothing is claimed. Should it fail, their
// deliveries are attempted again once their lease ends.
func (r *run) record(ctx context.Context, attempts []memstore.WebhookAttempt, next *memstore.WebhookClaim) ([]memstore.WebhookDelivery, error) {
	if len(attempts) == 0 {
		return nil, nil
	}
	ctx = context.WithoutCancel(ctx)
	claimed, err := r.d.s.RecordWebhookAttempts(ctx, attempts, r.d.o.Now(), next)
	if err == nil || len(attempts) == 1 {
		return claimed, err
	}
	return r.recordEach(ctx, attempts, next)
}

// recordEach records attempts one at a time, then claims by next: an
// attempt the storage refuses to record, of whichever endpoint, must not
// cost the others recorded with it theirs. Those refused again are
// logged, and attempted again once their lease ends.
func (r *run) recordEach(ctx context.Context, attempts []memstore.WebhookAttempt, next *memstore.WebhookClaim) ([]memstore.WebhookDelivery, error) {
	for _, a := range attempts {
		if _, err := r.d.s.RecordWebhookAttempts(ctx, []memstore.WebhookAttempt{a}, r.d.o.Now(), nil); err != nil {
			r.d.o.Logger.LogAttrs(ctx, slog.LevelWarn, "webhook delivery: an attempt could not be recorded",
				slog.String("endpoint", a.Delivery.EndpointID), slog.String("event", a.Delivery.Event.ID), slog.String("error", err.Error()))
		}
	}
	if next == nil {
		return nil, nil
	}
	return r.d.s.ClaimWebhookDeliveries(ctx, *next)
}

// warn logs a failure of the storage.
func (r *run) warn(ctx context.Context, err error) {
	r.d.o.Logger.LogAttrs(ctx, slog.LevelWarn, "webhook delivery", slog.String("error", err.Error()))
}

// stop waits for the attempts in flight, stopped with ctx, and records
// those that got an answer; the deliveries still waiting are left to
// their lease.
func (r *run) stop(ctx context.Context) {
	attempts := r.finished
	for ; r.running > 0; r.running-- {
		if res := <-r.done; res.attempt.Delivery != nil {
			attempts = append(attempts, res.attempt)
		}
	}
	if _, err := r.record(ctx, attempts, nil); err != nil {
		r.warn(ctx, err)
	}
}

// attempt posts one delivery and returns its outcome; a zero
// WebhookAttempt when it was stopped before an answer.
func (d *Deliverer) attempt(ctx context.Context, del *memstore.WebhookDelivery) memstore.WebhookAttempt {
	status, why := d.post(ctx, del)
	if status == 0 && ctx.Err() != nil {
		return memstore.WebhookAttempt{}
	}
	disable := del.Attempted(d.o.Now(), status, why, d.o.Policy)
	d.o.Logger.LogAttrs(ctx, slog.LevelInfo, "webhook delivery",
		slog.String("endpoint", del.EndpointID), slog.String("event", del.Event.ID), slog.String("type", del.Event.Type),
		slog.Int("status", status), slog.Int("attempts", del.Attempts), slog.String("state", string(del.State)))
	if disable != "" {
		d.o.Logger.LogAttrs(ctx, slog.LevelWarn, "webhook endpoint disabled after failing deliveries", slog.String("endpoint", del.EndpointID))
	}
	return memstore.WebhookAttempt{Delivery: del, Disable: disable}
}

// post makes one attempt: the HTTP status of the answer (0 for none) and
// why it failed ("" when it did not).
func (d *Deliverer) post(ctx context.Context, del *memstore.WebhookDelivery) (int, string) {
	body, err := Envelope(del.Event)
	if err != nil {
		return 0, err.Error()
	}
	ts := d.o.Now()
	sig, err := Sign(del.Secret, del.Event.ID, ts, body)
	if err != nil {
		return 0, err.Error()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, del.URL, bytes.NewReader(body))
	if err != nil {
		return 0, "the endpoint's url is not usable: " + reason(err)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "memstore-webhooks")
	h.Set("webhook-id", del.Event.ID)
	h.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	h.Set("webhook-signature", sig)
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, reason(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, ""
	}
	why := "HTTP " + strconv.Itoa(resp.StatusCode)
	if len(answer) > 0 {
		why += ": " + string(answer)
	}
	return resp.StatusCode, why
}

// reason is err without the URL that net/http wraps it in: the URL may
// hold a token of the receiver's.
func reason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// Sign returns the webhook-signature of a delivery by the Standard
// Webhooks scheme: "v1," and the base64 HMAC-SHA256, keyed with the
// secret's base64 part, of "id.timestamp.body".
func Sign(secret, id string, ts time.Time, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, memstore.WebhookSecretPrefix))
	if err != nil || !strings.HasPrefix(secret, memstore.WebhookSecretPrefix) {
		return "", errors.New("the endpoint's signing secret is malformed; regenerate it")
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, ts.Unix())
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// eventJSON is the hosted API's envelope of an event.
type eventJSON struct {
	Type      string   `json:"type"` // always "event"
	ID        string   `json:"id"`
	CreatedAt string   `json:"created_at"`
	Data      dataJSON `json:"data"`
}

// dataJSON is what an event tells of. memstore has no organizations:
// organization_id repeats workspace_id. The memory_* fields are
// memstore's, on its own events.
type dataJSON struct {
	Type            string `json:"type"`
	ID              string `json:"id"`
	OrganizationID  string `json:"organization_id"`
	WorkspaceID     string `json:"workspace_id"`
	MemoryStoreID   string `json:"memory_store_id,omitempty"`
	MemoryID        string `json:"memory_id,omitempty"`
	MemoryVersionID string `json:"memory_version_id,omitempty"`
}

// Envelope is the body of a delivery of e: the same for every attempt.
// data.id names what the event is about: the store for memory_store.*,
// the memory for memstore.memory.*, the version for
// memstore.version.redacted, the dream for memstore.dream.* (whose
// memory_store_id is the dream's output store, or its input when it
// stopped before making one).
func Envelope(e memstore.WebhookEvent) ([]byte, error) {
	data := dataJSON{Type: e.Type, ID: e.StoreID, OrganizationID: e.WorkspaceID, WorkspaceID: e.WorkspaceID}
	switch {
	case e.DreamID != "":
		data.ID = e.DreamID
	case e.Type == memstore.WebhookVersionRedacted:
		data.ID = e.VersionID
	case e.MemoryID != "":
		data.ID = e.MemoryID
	}
	if strings.HasPrefix(e.Type, memstore.WebhookOwnPrefix) {
		data.MemoryStoreID, data.MemoryID, data.MemoryVersionID = e.StoreID, e.MemoryID, e.VersionID
	}
	return json.Marshal(eventJSON{Type: "event", ID: e.ID, CreatedAt: e.CreatedAt.UTC().Format(time.RFC3339Nano), Data: data})
}

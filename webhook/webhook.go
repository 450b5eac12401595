// Package webhook delivers memstore's webhooks: it claims the due
// deliveries, which changes write, posts each to its endpoint signed by the
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
	"syscall"
	"time"

	"github.com/memstore/memstore"
)

// The defaults and limits of delivery.
const (
	// DefaultPoll is how often a deliverer looks for work when it has
	// none.
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
	// deliverer holds: those in flight, and as many claimed to follow
	// them at once, each within one attempt's Timeout.
	MaxHeldPerEndpoint = 2 * MaxInFlightPerEndpoint
	// maxRedirects bounds the redirects followed, on the same host.
	maxRedirects = 3
	// Pool bounds the deliveries a deliverer holds at once: attempts in
	// flight, and claimed ones waiting for their endpoint.
	Pool = 64
	// pruneEvery spaces the removal of old deliveries from the logs.
	pruneEvery = time.Hour
)

// Options configure a Deliverer; the zero value is the defaults.
type Options struct {
	// AllowPrivate lets deliveries reach loopback, link-local and
	// private addresses: for tests and closed networks.
	AllowPrivate bool
	Policy       memstore.RetryPolicy // zero: memstore.DefaultRetryPolicy
	Poll         time.Duration        // zero: DefaultPoll
	Timeout      time.Duration        // zero: DefaultTimeout
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
		// A claimed delivery waits at most for the attempts in flight to
		// its endpoint when it was claimed (MaxHeldPerEndpoint leaves no
		// more waiting than are in flight, each done within Timeout),
		// then is attempted within Timeout and recorded: its claim
		// outlives all that.
		lease: 3 * o.Timeout,
	}
}

// errCrossHost refuses a redirect to another host.
var errCrossHost = errors.New("redirected to another host, which webhook deliveries do not follow")

// sameHost follows a few redirects that stay on the first request's
// scheme and host.
func sameHost(req *http.Request, via []*http.Request) error {
	if req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme {
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

// Run delivers until ctx ends. It holds up to Pool deliveries at once,
// at most MaxHeldPerEndpoint of any one endpoint, of which at most
// MaxInFlightPerEndpoint are in flight while the others wait for their
// endpoint (so that a finished attempt's successor starts without
// waiting for the database). It records the attempts that finish
// together and claims the next deliveries in one transaction. When it
// has no work it looks for some every Poll. Failures of the storage are
// logged and tried again.
//
// When ctx ends it claims nothing more and waits for the attempts in
// flight, which it stops: an attempt that got its answer is recorded,
// one stopped before is not (neither failed nor counted), and it and the
// claimed deliveries not yet attempted are attempted again once their
// lease ends.
func (d *Deliverer) Run(ctx context.Context) {
	r := &run{d: d, held: map[string]int{}, inFlight: map[string]int{}, waiting: map[string][]*memstore.WebhookDelivery{}, done: make(chan result, Pool)}
	defer r.stop(ctx)
	look := true // for due deliveries; else an attempt's end is awaited
	for {
		err := r.prune(ctx)
		if err == nil && look {
			err = r.claim(ctx)
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			r.warn(ctx, err)
		}
		select {
		case res := <-r.done:
			r.finish(ctx, res)
			look = false
		case <-ctx.Done():
			return
		case <-time.After(d.o.Poll):
			look = true
		}
	}
}

// A run is the state of Run, kept by its goroutine alone.
type run struct {
	d        *Deliverer
	held     map[string]int                         // claimed and not yet finished, by endpoint
	total    int                                    // claimed and not yet finished, in all
	inFlight map[string]int                         // attempts in flight, by endpoint
	waiting  map[string][]*memstore.WebhookDelivery // claimed, by endpoint, until it has room
	running  int                                    // attempts in flight in all
	done     chan result                            // the attempts' outcomes, never full
}

// A result is the outcome of an attempt to an endpoint.
type result struct {
	endpoint string
	attempt  memstore.WebhookAttempt // zero when stopped before an answer
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
	if r.total >= Pool {
		return nil
	}
	now := r.d.o.Now()
	return &memstore.WebhookClaim{Now: now, Until: now.Add(r.d.lease), N: Pool - r.total,
		PerEndpoint: MaxHeldPerEndpoint, Holds: r.held}
}

// claim claims due deliveries into the pool's room.
func (r *run) claim(ctx context.Context) error {
	c := r.next()
	if c == nil {
		return nil
	}
	claimed, err := r.d.s.ClaimWebhookDeliveries(ctx, *c)
	r.add(ctx, claimed)
	return err
}

// add attempts claimed deliveries now if their endpoints have room, the
// others once they have.
func (r *run) add(ctx context.Context, claimed []memstore.WebhookDelivery) {
	for i := range claimed {
		del := &claimed[i]
		r.held[del.EndpointID]++
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
	go func() { r.done <- result{del.EndpointID, r.d.attempt(ctx, del)} }()
}

// finish takes the outcome res and every other already in, starts the
// deliveries that waited for their endpoints, and in one transaction
// records the attempts and, unless stopping, claims what the room they
// left takes.
func (r *run) finish(ctx context.Context, res result) {
	var attempts []memstore.WebhookAttempt
	for {
		r.total--
		r.running--
		if r.held[res.endpoint]--; r.held[res.endpoint] == 0 {
			delete(r.held, res.endpoint)
		}
		if r.inFlight[res.endpoint]--; r.inFlight[res.endpoint] == 0 {
			delete(r.inFlight, res.endpoint)
		}
		if res.attempt.Delivery != nil {
			attempts = append(attempts, res.attempt)
		}
		// The endpoint has room again for one that waited.
		if next := r.waiting[res.endpoint]; len(next) > 0 && ctx.Err() == nil {
			r.start(ctx, next[0])
			if r.waiting[res.endpoint] = next[1:]; len(next) == 1 {
				delete(r.waiting, res.endpoint)
			}
		}
		select {
		case res = <-r.done:
			continue
		default:
		}
		break
	}
	var next *memstore.WebhookClaim
	if ctx.Err() == nil {
		next = r.next()
	}
	claimed, err := r.record(ctx, attempts, next)
	r.add(ctx, claimed)
	if err != nil {
		r.warn(ctx, err)
	}
}

// record stores attempts, even when stopping, and claims by next. None
// means that ctx ended, and nothing is claimed. Should it fail, their
// deliveries are attempted again once their lease ends.
func (r *run) record(ctx context.Context, attempts []memstore.WebhookAttempt, next *memstore.WebhookClaim) ([]memstore.WebhookDelivery, error) {
	if len(attempts) == 0 {
		return nil, nil
	}
	return r.d.s.RecordWebhookAttempts(context.WithoutCancel(ctx), attempts, r.d.o.Now(), next)
}

// warn logs a failure of the storage.
func (r *run) warn(ctx context.Context, err error) {
	r.d.o.Logger.LogAttrs(ctx, slog.LevelWarn, "webhook delivery", slog.String("error", err.Error()))
}

// stop waits for the attempts in flight, stopped with ctx, and records
// those that got an answer; the deliveries still waiting are left to
// their lease.
func (r *run) stop(ctx context.Context) {
	var attempts []memstore.WebhookAttempt
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
// memstore.version.redacted.
func Envelope(e memstore.WebhookEvent) ([]byte, error) {
	data := dataJSON{Type: e.Type, ID: e.StoreID, OrganizationID: e.WorkspaceID, WorkspaceID: e.WorkspaceID}
	switch {
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

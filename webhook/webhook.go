// Package webhook delivers memstore's webhooks: it turns the outbox's
// events into deliveries, posts each to its endpoint signed by the
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
	"slices"
	"strconv"
	"strings"
	"sync"
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
	// maxRedirects bounds the redirects followed, on the same host.
	maxRedirects = 3
	// batch is how many deliveries a deliverer attempts at once, and how
	// many outbox events it fans out per transaction.
	batch = 64
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
		MaxIdleConnsPerHost: batch, // a batch to one receiver reuses its connections
		IdleConnTimeout:     time.Minute,
	}
	return &Deliverer{
		s: s, o: o,
		client: &http.Client{Transport: transport, Timeout: o.Timeout, CheckRedirect: sameHost},
		// A claim outlives every attempt of its batch, which run at once.
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

// Run delivers until ctx ends, looking for work every Poll when it has
// none. Failures of the storage are logged and tried again.
func (d *Deliverer) Run(ctx context.Context) {
	for {
		busy, err := d.step(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			d.o.Logger.LogAttrs(ctx, slog.LevelWarn, "webhook delivery", slog.String("error", err.Error()))
		}
		if busy && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(d.o.Poll):
		}
	}
}

// step prunes the logs when due, fans out a batch of the outbox's events,
// and attempts their deliveries and a batch of due retries, then records
// every attempt in one transaction. busy says that more may be due at
// once.
func (d *Deliverer) step(ctx context.Context) (busy bool, err error) {
	now := d.o.Now()
	if now.Sub(d.pruned) >= pruneEvery {
		if _, err := d.s.PruneWebhookDeliveries(ctx, now.Add(-memstore.DeliveryLogRetention)); err != nil {
			return false, err
		}
		d.pruned = now
	}
	// New events first, claimed as they are fanned out, then retries
	// that are due.
	claimed, took, err := d.s.FanOutWebhookEvents(ctx, now.Add(d.lease), batch)
	if err != nil {
		return false, err
	}
	more := took == batch
	if len(claimed) < batch {
		retries, err := d.s.ClaimWebhookDeliveries(ctx, now, now.Add(d.lease), batch-len(claimed))
		if err != nil {
			return false, err
		}
		more = more || len(retries) == batch-len(claimed)
		claimed = append(claimed, retries...)
	}
	// At most batch attempts at once: an event may go to many endpoints.
	attempts := make([]memstore.WebhookAttempt, len(claimed))
	var wg sync.WaitGroup
	sem := make(chan struct{}, batch)
	for i := range claimed {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			attempts[i] = d.attempt(ctx, &claimed[i])
		}()
	}
	wg.Wait()
	// Attempts stopped before an answer are left to their lease, to be
	// made again; every other is recorded, even when stopping.
	attempts = slices.DeleteFunc(attempts, func(a memstore.WebhookAttempt) bool { return a.Delivery == nil })
	if len(attempts) > 0 {
		if err := d.s.RecordWebhookAttempts(context.WithoutCancel(ctx), attempts, d.o.Now()); err != nil {
			return false, err
		}
	}
	return more, nil
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

package webhook_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/webhook"
)

// A receiver is a real HTTP endpoint that keeps what it is sent and
// answers with status(n), n counting its requests from 1.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []delivery
	status func(n int) int
}

type delivery struct {
	body   []byte
	header http.Header
}

func newReceiver(t *testing.T, status func(n int) int) *receiver {
	r := &receiver{status: status}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, delivery{b, req.Header.Clone()})
		n := len(r.got)
		r.mu.Unlock()
		w.WriteHeader(r.status(n))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

func always(code int) func(int) int { return func(int) int { return code } }

// env is a database at a file of its own, with a workspace and its API
// key's caller, and the webhooks service over it.
type env struct {
	path string
	db   *sqlite.DB
	co   *memstore.Core
	ws   *memstore.Webhooks
	c    *memstore.Caller
}

func newEnv(t testing.TB) *env {
	e := &env{path: filepath.Join(t.TempDir(), "m.db")}
	e.open(t)
	w, err := e.db.CreateWorkspace(t.Context(), "hooks")
	if err != nil {
		t.Fatal(err)
	}
	e.c = &memstore.Caller{WorkspaceID: w.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_test"}}
	return e
}

// open opens the database file, as a restarted server does.
func (e *env) open(t testing.TB) {
	db, err := sqlite.Open(context.Background(), e.path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e.db, e.co = db, memstore.NewCore(db)
	e.ws = memstore.NewWebhooks(db, memstore.WebhooksAllowPrivate(true))
}

func (e *env) hook(t testing.TB, url string, events ...string) *memstore.WebhookEndpoint {
	t.Helper()
	w, err := e.ws.CreateWebhook(t.Context(), e.c, memstore.WebhookCreate{URL: url, EnabledEvents: events})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (e *env) store(t testing.TB, name string) *memstore.Store {
	t.Helper()
	s, err := e.co.CreateStore(t.Context(), e.c, memstore.StoreCreate{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// run runs a deliverer of the database until the test ends or stop is
// called.
func (e *env) run(t testing.TB, o webhook.Options) (stop func()) {
	if o.Poll == 0 {
		o.Poll = 10 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		webhook.New(e.db, o).Run(ctx)
	}()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// waitFor waits until cond holds, for at most ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (e *env) log(t *testing.T, id string) []memstore.WebhookDelivery {
	t.Helper()
	l, err := e.ws.WebhookDeliveries(t.Context(), e.c, id, 100)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestDeliveriesUnwrap checks that what memstore sends is verified and
// parsed by the Go SDK's Beta.Webhooks.Unwrap with the endpoint's secret,
// in the hosted API's envelope, and that a body changed on the way is
// refused.
func TestDeliveriesUnwrap(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t, always(200))
	w := e.hook(t, r.URL+"/hooks", memstore.WebhookEventTypes...)
	s := e.store(t, "notes")
	m, err := e.co.CreateMemory(t.Context(), e.c, s.ID, memstore.MemoryCreate{Path: "/a.md", Content: "secret content"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.co.ArchiveStore(t.Context(), e.c, s.ID); err != nil {
		t.Fatal(err)
	}
	e.run(t, webhook.Options{AllowPrivate: true})
	waitFor(t, "three deliveries", func() bool { return len(r.deliveries()) >= 3 })

	client := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithAPIKey("unused"), option.WithWebhookKey(w.Secret))
	var types []string
	for _, d := range r.deliveries() {
		if strings.Contains(string(d.body), "secret content") {
			t.Errorf("a delivery holds the memory's content: %s", d.body)
		}
		ev, err := client.Beta.Webhooks.Unwrap(d.body, d.header)
		if err != nil {
			t.Fatalf("Unwrap: %v\n%s", err, d.body)
		}
		if ev.Type != "event" || ev.ID != d.header.Get("webhook-id") || !strings.HasPrefix(ev.ID, "wevt_") || ev.CreatedAt.IsZero() ||
			ev.Data.WorkspaceID != e.c.WorkspaceID {
			t.Errorf("envelope %s", d.body)
		}
		types = append(types, ev.Data.Type)
		switch ev.Data.Type {
		case memstore.WebhookStoreCreated:
			if got := ev.Data.AsMemoryStoreCreated(); got.ID != s.ID {
				t.Errorf("memory_store.created names %q, want %s", got.ID, s.ID)
			}
		case memstore.WebhookStoreArchived:
			if ev.Data.AsMemoryStoreArchived().ID != s.ID {
				t.Errorf("memory_store.archived: %s", d.body)
			}
		case memstore.WebhookMemoryCreated:
			if ev.Data.ID != m.ID || !strings.Contains(ev.RawJSON(), `"memory_store_id":"`+s.ID+`"`) || !strings.Contains(ev.RawJSON(), m.VersionID) {
				t.Errorf("memstore.memory.created: %s", d.body)
			}
		}
		tampered := []byte(strings.Replace(string(d.body), s.ID, "memstore_other", 1))
		if _, err := client.Beta.Webhooks.Unwrap(tampered, d.header); err == nil {
			t.Errorf("Unwrap accepted a changed body")
		}
	}
	slices.Sort(types) // sent at once, they arrive in any order
	if strings.Join(types, " ") != "memory_store.archived memory_store.created memstore.memory.created" {
		t.Errorf("delivered %v", types)
	}
	wrong := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithAPIKey("unused"), option.WithWebhookKey(memstore.NewWebhookSecret()))
	if _, err := wrong.Beta.Webhooks.Unwrap(r.deliveries()[0].body, r.deliveries()[0].header); err == nil {
		t.Errorf("Unwrap accepted another secret's signature")
	}
	// The answers are recorded just after they come.
	waitFor(t, "the log of three deliveries", func() bool {
		l := e.log(t, w.ID)
		return len(l) == 3 && !slices.ContainsFunc(l, func(d memstore.WebhookDelivery) bool { return d.State == memstore.DeliveryPending })
	})
	for _, d := range e.log(t, w.ID) {
		if d.State != memstore.DeliveryDelivered || d.Attempts != 1 || d.LastStatus != 200 {
			t.Errorf("log: %+v", d)
		}
	}
}

// TestRetryAcrossRestart checks that a failed delivery is retried with
// backoff, under the same webhook-id, by a deliverer of a reopened
// database after the first stopped: the retry is kept in the file.
func TestRetryAcrossRestart(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	code := http.StatusServiceUnavailable
	r := newReceiver(t, func(int) int { mu.Lock(); defer mu.Unlock(); return code })
	w := e.hook(t, r.URL, memstore.WebhookStoreCreated)
	e.store(t, "notes")
	policy := memstore.RetryPolicy{MinBackoff: 50 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, MaxAttempts: 100}
	stop := e.run(t, webhook.Options{AllowPrivate: true, Policy: policy})
	waitFor(t, "two failed attempts", func() bool {
		l := e.log(t, w.ID)
		return len(l) == 1 && l[0].Attempts >= 2
	})
	stop()
	l := e.log(t, w.ID)[0]
	if l.State != memstore.DeliveryPending || l.LastStatus != 503 || !strings.Contains(l.LastError, "HTTP 503") || l.LastAttemptAt == nil {
		t.Errorf("after failures: %+v", l)
	}
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	code = http.StatusNoContent
	mu.Unlock()
	e.open(t)
	e.run(t, webhook.Options{AllowPrivate: true, Policy: policy})
	waitFor(t, "the delivery after the restart", func() bool { return e.log(t, w.ID)[0].State == memstore.DeliveryDelivered })
	got := r.deliveries()
	first, last := got[0], got[len(got)-1]
	if len(got) < 3 || first.header.Get("webhook-id") != last.header.Get("webhook-id") || string(first.body) != string(last.body) {
		t.Errorf("%d attempts; the first and last differ: %s %s", len(got), first.header.Get("webhook-id"), last.header.Get("webhook-id"))
	}
	if d := e.log(t, w.ID)[0]; d.LastStatus != 204 || d.LastError != "" || d.Attempts != len(got) {
		t.Errorf("the log after delivery: %+v, %d attempts received", d, len(got))
	}
}

// TestDisableAfterFailures checks that an endpoint whose delivery fails
// every attempt is disabled, saying why, and that its deliveries wait
// until it is enabled again.
func TestDisableAfterFailures(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	code := http.StatusInternalServerError
	r := newReceiver(t, func(int) int { mu.Lock(); defer mu.Unlock(); return code })
	w := e.hook(t, r.URL, memstore.WebhookStoreCreated)
	e.store(t, "one")
	policy := memstore.RetryPolicy{MinBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond, MaxAttempts: 3}
	e.run(t, webhook.Options{AllowPrivate: true, Policy: policy})
	waitFor(t, "the endpoint disabled", func() bool {
		got, _ := e.ws.Webhook(t.Context(), e.c, w.ID)
		return got.State == memstore.WebhookDisabled
	})
	got, _ := e.ws.Webhook(t.Context(), e.c, w.ID)
	if !strings.Contains(got.DisabledReason, "failed all 3 delivery attempts") || !strings.Contains(got.DisabledReason, "HTTP 500") {
		t.Errorf("disabled_reason %q", got.DisabledReason)
	}
	if l := e.log(t, w.ID); len(l) != 1 || l[0].State != memstore.DeliveryFailed || l[0].Attempts != 3 || len(r.deliveries()) != 3 {
		t.Errorf("log %+v after %d requests", l, len(r.deliveries()))
	}
	// Enabling it again takes new events, and clears the reason.
	mu.Lock()
	code = http.StatusOK
	mu.Unlock()
	enabled := memstore.WebhookEnabled
	up, err := e.ws.UpdateWebhook(t.Context(), e.c, w.ID, memstore.WebhookUpdate{State: &enabled})
	if err != nil || up.DisabledReason != "" {
		t.Fatalf("enable: %+v %v", up, err)
	}
	e.store(t, "two")
	waitFor(t, "a delivery after enabling", func() bool {
		l := e.log(t, w.ID)
		return len(l) == 2 && l[0].State == memstore.DeliveryDelivered
	})
}

// TestPrivateRefusedAtDelivery checks that without the allowance a
// delivery never reaches a loopback address, whatever the endpoint was
// made with: the address dialled is checked, whether the URL names it,
// names it in its IPv4-translated IPv6 form, or names a host that
// resolves to it.
func TestPrivateRefusedAtDelivery(t *testing.T) {
	e := newEnv(t)
	loop := newReceiver(t, always(200))
	_, port, _ := strings.Cut(strings.TrimPrefix(loop.URL, "http://"), ":")
	var hooks []*memstore.WebhookEndpoint
	for _, u := range []string{loop.URL, "http://localhost:" + port, "http://[::ffff:0:7f00:1]:" + port} {
		hooks = append(hooks, e.hook(t, u, memstore.WebhookStoreCreated))
	}
	e.store(t, "notes")
	e.run(t, webhook.Options{Timeout: 2 * time.Second, Policy: memstore.RetryPolicy{MinBackoff: time.Hour, MaxBackoff: time.Hour, MaxAttempts: 5}})
	for _, w := range hooks {
		d := attempted(t, e, w.ID)
		if !strings.Contains(d.LastError, "loopback") || d.LastStatus != 0 || len(loop.deliveries()) != 0 {
			t.Errorf("to %s: %+v, %d received", w.URL, d, len(loop.deliveries()))
		}
	}
}

// attempted waits for the first attempt of the one delivery of endpoint
// id, and returns it.
func attempted(t *testing.T, e *env, id string) memstore.WebhookDelivery {
	t.Helper()
	var d memstore.WebhookDelivery
	waitFor(t, "an attempt to "+id, func() bool {
		l := e.log(t, id)
		if len(l) == 1 && l[0].Attempts == 1 {
			d = l[0]
			return true
		}
		return false
	})
	return d
}

// TestDeliveryLimits checks that a delivery follows no redirect to
// another host, gives up on a receiver slower than its timeout, and keeps
// only the start of a long answer in the log.
func TestDeliveryLimits(t *testing.T) {
	e := newEnv(t)
	other := newReceiver(t, always(200))
	redirect := httptest.NewServer(http.RedirectHandler(strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/x", http.StatusTemporaryRedirect))
	t.Cleanup(redirect.Close)
	moved := e.hook(t, redirect.URL, memstore.WebhookStoreCreated)

	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(4 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	late := e.hook(t, slow.URL, memstore.WebhookStoreCreated)

	long := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(strings.Repeat("x", 1<<20)))
	}))
	t.Cleanup(long.Close)
	chatty := e.hook(t, long.URL, memstore.WebhookStoreCreated)

	e.store(t, "notes")
	policy := memstore.RetryPolicy{MinBackoff: time.Hour, MaxBackoff: time.Hour, MaxAttempts: 5}
	e.run(t, webhook.Options{AllowPrivate: true, Policy: policy, Timeout: 2 * time.Second})
	if d := attempted(t, e, moved.ID); !strings.Contains(d.LastError, "another host") || len(other.deliveries()) != 0 {
		t.Errorf("the redirect to another host: %+v, %d received there", d, len(other.deliveries()))
	}
	if d := attempted(t, e, late.ID); d.LastStatus != 0 || !strings.Contains(d.LastError, "Timeout") {
		t.Errorf("the slow receiver: %+v", d)
	}
	if d := attempted(t, e, chatty.ID); d.LastStatus != 400 || len(d.LastError) > memstore.MaxDeliveryError || !strings.HasPrefix(d.LastError, "HTTP 400: xxx") {
		t.Errorf("the long answer: status %d, error of %d bytes", d.LastStatus, len(d.LastError))
	}
}

// TestDeliveryFollowsRedirectOnSameServer checks that a redirect to the
// endpoint's own server, however its host's case or default port is
// written, is followed as the client's redirects are: a server is its
// scheme, host and port.
func TestDeliveryFollowsRedirectOnSameServer(t *testing.T) {
	e := newEnv(t)
	var moved atomic.Int32
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			moved.Add(1)
			return
		}
		http.Redirect(w, r, "http://LOCALHOST:"+srv.URL[strings.LastIndex(srv.URL, ":")+1:]+"/moved", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	hook := e.hook(t, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)+"/", memstore.WebhookStoreCreated)
	e.store(t, "notes")
	e.run(t, webhook.Options{AllowPrivate: true, Policy: memstore.RetryPolicy{MinBackoff: time.Hour, MaxBackoff: time.Hour, MaxAttempts: 5}})
	if d := attempted(t, e, hook.ID); d.LastStatus != http.StatusOK || d.State != memstore.DeliveryDelivered || moved.Load() != 1 {
		t.Errorf("a redirect to the same server in other letters: %+v, %d received there", d, moved.Load())
	}
}

// TestSlowEndpointHoldsOnlyItsOwn checks that an endpoint that hangs
// until the timeout delays its own deliveries only: the many deliveries
// of a fast endpoint, due after the hanging one's, all arrive long before
// the hanging attempts time out, and the hanging endpoint is sent no more
// than MaxInFlightPerEndpoint at once.
func TestSlowEndpointHoldsOnlyItsOwn(t *testing.T) {
	e := newEnv(t)
	var hanging atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hanging.Add(1)
		io.Copy(io.Discard, r.Body) // so that the server sees the client go
		<-r.Context().Done()        // until the deliverer gives up
	}))
	t.Cleanup(slow.Close)
	hung := e.hook(t, slow.URL, memstore.WebhookStoreCreated)
	fast := newReceiver(t, always(200))
	e.hook(t, fast.URL, memstore.WebhookMemoryCreated)
	for i := range 20 {
		e.store(t, fmt.Sprint("s", i))
	}
	s := e.store(t, "notes")
	const memories = 100
	for i := range memories {
		if _, err := e.co.CreateMemory(t.Context(), e.c, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/m%d.md", i), Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	const timeout = 4 * time.Second
	start := time.Now()
	e.run(t, webhook.Options{AllowPrivate: true, Timeout: timeout, Policy: memstore.RetryPolicy{MinBackoff: time.Hour, MaxBackoff: time.Hour, MaxAttempts: 5}})
	waitFor(t, "the fast endpoint's deliveries", func() bool { return len(fast.deliveries()) >= memories })
	if took := time.Since(start); took > timeout/2 {
		t.Errorf("the fast endpoint's %d deliveries took %v, held up by the hanging endpoint (timeout %v)", memories, took, timeout)
	}
	if n := hanging.Load(); n == 0 || n > webhook.MaxInFlightPerEndpoint {
		t.Errorf("the hanging endpoint got %d attempts at once, want 1 to %d", n, webhook.MaxInFlightPerEndpoint)
	}
	// Its other deliveries wait unclaimed, but for those held to follow.
	leased := 0
	for _, d := range e.log(t, hung.ID) {
		if d.NextAttemptAt.After(start.Add(timeout)) {
			leased++
		}
	}
	if leased < int(hanging.Load()) || leased > webhook.MaxHeldPerEndpoint {
		t.Errorf("the hanging endpoint has %d deliveries claimed, want %d to %d", leased, hanging.Load(), webhook.MaxHeldPerEndpoint)
	}
}

// TestStopDuringAttempt checks that an attempt in flight when the
// deliverer stops is not recorded as failed, nor counted: it is left to
// its lease and made again by the next deliverer, which delivers it.
func TestStopDuringAttempt(t *testing.T) {
	e := newEnv(t)
	var hang atomic.Bool
	hang.Store(true)
	arrived := make(chan struct{}, 10)
	r := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		arrived <- struct{}{}
		if hang.Load() {
			<-req.Context().Done()
		}
	}))
	t.Cleanup(r.Close)
	w := e.hook(t, r.URL, memstore.WebhookStoreCreated)
	e.store(t, "notes")
	o := webhook.Options{AllowPrivate: true, Timeout: time.Second}
	stop := e.run(t, o)
	<-arrived
	stop()
	if l := e.log(t, w.ID); len(l) != 1 || l[0].State != memstore.DeliveryPending || l[0].Attempts != 0 || l[0].LastError != "" || l[0].LastAttemptAt != nil {
		t.Fatalf("after stopping during the attempt: %+v", l)
	}
	hang.Store(false)
	e.run(t, o)
	waitFor(t, "the delivery after its lease", func() bool { return e.log(t, w.ID)[0].State == memstore.DeliveryDelivered })
	if d := e.log(t, w.ID)[0]; d.Attempts != 1 || d.LastStatus != 200 {
		t.Errorf("the log: %+v", d)
	}
}

// TestWaitingPastLeaseLetGo: a deliverer holds more of an endpoint than
// it attempts at once; those that would start too late to finish within
// their claim are let go and claimed again, never sent while another
// claim may hold them, so each event goes once.
func TestWaitingPastLeaseLetGo(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	seen := map[string]int{}
	r := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		time.Sleep(150 * time.Millisecond)
		if req.Context().Err() != nil {
			// The deliverer gave up first (its timeout, on a loaded
			// machine): to it this attempt failed, and it tries again.
			return
		}
		mu.Lock()
		seen[req.Header.Get("webhook-id")]++
		mu.Unlock()
	}))
	t.Cleanup(r.Close)
	e.hook(t, r.URL, memstore.WebhookMemoryCreated)
	s := e.store(t, "notes")
	const memories = 24 // a claim's worth: more than fit in one lease
	for i := range memories {
		if _, err := e.co.CreateMemory(t.Context(), e.c, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/m%d.md", i), Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	// A lease of 600 ms: four at a time, each 150 ms, the last of the 24
	// would start 900 ms after its claim.
	e.run(t, webhook.Options{AllowPrivate: true, Timeout: 200 * time.Millisecond, Poll: 50 * time.Millisecond})
	waitFor(t, "every event", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == memories
	})
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for id, n := range seen {
		if n != 1 {
			t.Errorf("event %s sent %d times", id, n)
		}
	}
}

// TestChangeWakesDeliverer: a change of a memory is delivered at once,
// the deliverer hearing of it, not at its next look (an hour away here).
func TestChangeWakesDeliverer(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t, always(204))
	e.hook(t, r.URL, memstore.WebhookMemoryCreated)
	s := e.store(t, "notes")
	e.run(t, webhook.Options{AllowPrivate: true, Poll: time.Hour})
	time.Sleep(100 * time.Millisecond) // past its first look
	start := time.Now()
	if _, err := e.co.CreateMemory(t.Context(), e.c, s.ID, memstore.MemoryCreate{Path: "/a.md", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delivery", func() bool { return len(r.deliveries()) == 1 })
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("delivered after %v", took)
	}
}

package webhook_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/postgres"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/webhook"
)

// A backend is what the fairness tests need of a database: its core,
// its webhooks and their deliveries, and workspaces.
type backend interface {
	memstore.Backend
	memstore.WebhookStorage
	memstore.WebhookDeliveryStorage
	CreateWorkspace(ctx context.Context, name string) (*memstore.Workspace, error)
}

// onBackends runs f on a fresh SQLite file and a fresh PostgreSQL
// database.
func onBackends(t *testing.T, f func(t *testing.T, db backend)) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) { f(t, openBackend(t, kind)) })
	}
}

// openBackend opens a fresh database of kind ("sqlite" or "postgres"),
// closed when the test ends.
func openBackend(t *testing.T, kind string) backend {
	t.Helper()
	ctx := context.Background()
	var (
		db  backend
		err error
	)
	switch kind {
	case "sqlite":
		db, err = sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"), sqlite.Options{})
	case "postgres":
		url := pgtest.DB(t, func(ctx context.Context, url string) error {
			db, err := postgres.Open(ctx, url, postgres.Options{})
			if err != nil {
				return err
			}
			return db.Close()
		})
		db, err = postgres.Open(ctx, url, postgres.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.(io.Closer).Close() })
	return db
}

// A tenant is a workspace of the database, with a store, as its API
// key's caller sees it.
type tenant struct {
	co    *memstore.Core
	hooks *memstore.Webhooks
	c     *memstore.Caller
	store string
	n     int // memories written
}

func newTenant(t *testing.T, db backend, name string) *tenant {
	t.Helper()
	w, err := db.CreateWorkspace(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	tn := &tenant{co: memstore.NewCore(db), hooks: memstore.NewWebhooks(db, memstore.WebhooksAllowPrivate(true)),
		c: &memstore.Caller{WorkspaceID: w.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_" + name}}}
	s, err := tn.co.CreateStore(t.Context(), tn.c, memstore.StoreCreate{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	tn.store = s.ID
	return tn
}

func (tn *tenant) hook(t *testing.T, url string) *memstore.WebhookEndpoint {
	t.Helper()
	w, err := tn.hooks.CreateWebhook(t.Context(), tn.c, memstore.WebhookCreate{URL: url, EnabledEvents: []string{memstore.WebhookMemoryCreated}})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// write creates n memories, each an event for every endpoint.
func (tn *tenant) write(t *testing.T, n int) {
	t.Helper()
	for range n {
		tn.n++
		if _, err := tn.co.CreateMemory(t.Context(), tn.c, tn.store, memstore.MemoryCreate{Path: fmt.Sprintf("/m%d.md", tn.n), Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
}

// A hostile receiver takes connections and answers as an attacker's
// endpoint would: never (hang), a byte at a time (trickle), or not at
// all (refuse: its port is closed). It counts the connections it holds.
type hostile struct {
	URL  string
	open atomic.Int32 // connections held now
	seen atomic.Int32 // connections taken in all
	g    *group
}

// A group counts the connections that the receivers of one workspace
// hold at once.
type group struct {
	open, most atomic.Int32
}

func (g *group) add(n int32) {
	if g == nil {
		return
	}
	v := g.open.Add(n)
	for m := g.most.Load(); v > m && !g.most.CompareAndSwap(m, v); m = g.most.Load() {
	}
}

type behaviour int

const (
	hang    behaviour = iota // takes the request, never answers
	trickle                  // answers a byte a second
	refuse                   // its port is closed
	reset                    // closes each connection as it comes
)

func newHostile(t *testing.T, how behaviour, g *group) *hostile {
	if how == refuse {
		return &hostile{URL: "http://" + closedPort(t) + "/hooks", g: g}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hostile{URL: "http://" + ln.Addr().String() + "/hooks", g: g}
	var wg sync.WaitGroup
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				h.seen.Add(1)
				if how == reset {
					return
				}
				h.open.Add(1)
				h.g.add(1)
				defer func() { h.open.Add(-1); h.g.add(-1) }()
				go func() { <-done; conn.Close() }()
				r := bufio.NewReader(conn)
				req, err := http.ReadRequest(r)
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				if how == trickle {
					for _, b := range []byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n") {
						select {
						case <-done:
							return
						case <-time.After(time.Second):
						}
						if _, err := conn.Write([]byte{b}); err != nil {
							return
						}
					}
					return
				}
				io.Copy(io.Discard, r) // hang: until the deliverer gives up
			}()
		}
	}()
	return h
}

// runDeliverer runs a deliverer of db until the test ends or stop is
// called.
func runDeliverer(t *testing.T, db memstore.WebhookDeliveryStorage, o webhook.Options) (stop func()) {
	o.AllowPrivate = true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		webhook.New(db, o).Run(ctx)
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// fairDeadline is how soon a healthy workspace's delivery must arrive
// while others saturate their shares: far below one attempt's timeout,
// generous for a loaded machine.
const fairDeadline = 5 * time.Second

// deliveredWithin waits for r's first delivery, for at most fairDeadline
// from start.
func deliveredWithin(t *testing.T, r *receiver, start time.Time, what string) {
	t.Helper()
	for len(r.deliveries()) == 0 {
		if time.Since(start) > fairDeadline {
			t.Fatalf("%s not delivered within %v", what, fairDeadline)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("%s delivered after %v", what, time.Since(start).Round(time.Millisecond))
}

// TestFairShareHangingEndpoints: a workspace with 16 endpoints that
// accept and never answer, and 60 writes, does not delay another
// workspace's delivery, made after them, beyond a few seconds: not until
// the hanging attempts (10 seconds each) time out.
func TestFairShareHangingEndpoints(t *testing.T) {
	onBackends(t, func(t *testing.T, db backend) {
		a, b := newTenant(t, db, "a"), newTenant(t, db, "b")
		var hung []*hostile
		for range 16 {
			h := newHostile(t, hang, nil)
			hung = append(hung, h)
			a.hook(t, h.URL)
		}
		ok := newReceiver(t, always(200))
		b.hook(t, ok.URL)
		runDeliverer(t, db, webhook.Options{})
		a.write(t, 60)
		waitFor(t, "the hanging endpoints' first attempts", func() bool { return held(hung) > 0 })
		start := time.Now()
		b.write(t, 1)
		deliveredWithin(t, ok, start, "the healthy workspace's event")
	})
}

// held is how many connections the receivers hold now.
func held(hs []*hostile) int {
	n := 0
	for _, h := range hs {
		n += int(h.open.Load())
	}
	return n
}

// TestFairShareHostileWorkspaces: three workspaces, each with the most
// endpoints a workspace may have, all hostile (hanging, answering a byte
// a second, refusing connections) but one, and 60 writes, hold no more
// than their shares of the deliverer: another workspace's delivery, and
// each hostile workspace's own healthy endpoint's, arrive within a few
// seconds, long before the hostile attempts time out.
func TestFairShareHostileWorkspaces(t *testing.T) {
	onBackends(t, func(t *testing.T, db backend) {
		const hostileWorkspaces = 3
		share := webhook.DefaultMaxHeldPerWorkspace(webhook.Pool) // of the default options
		var groups []*group
		var healthy []*receiver
		var tenants []*tenant
		for i := range hostileWorkspaces {
			a := newTenant(t, db, fmt.Sprint("hostile", i))
			g := &group{}
			for j := range memstore.MaxWebhookEndpoints - 1 {
				a.hook(t, newHostile(t, []behaviour{hang, trickle, refuse}[j%3], g).URL)
			}
			ok := newReceiver(t, always(200))
			a.hook(t, ok.URL)
			groups, healthy, tenants = append(groups, g), append(healthy, ok), append(tenants, a)
		}
		b := newTenant(t, db, "b")
		ok := newReceiver(t, always(200))
		b.hook(t, ok.URL)
		runDeliverer(t, db, webhook.Options{Timeout: 20 * time.Second})
		start := time.Now()
		for _, a := range tenants {
			a.write(t, 60)
		}
		for i, r := range healthy {
			deliveredWithin(t, r, start, fmt.Sprintf("the hostile workspace %d's healthy endpoint's first event", i))
		}
		waitFor(t, "the hostile endpoints' attempts", func() bool { return groups[len(groups)-1].open.Load() > 0 })
		start = time.Now()
		b.write(t, 1)
		deliveredWithin(t, ok, start, "the healthy workspace's event")
		for i, g := range groups {
			if n := int(g.most.Load()); n > share {
				t.Errorf("hostile workspace %d held %d connections at once, more than its share of %d", i, n, share)
			}
		}
	})
}

// TestDeadEndpointBacksOff: an endpoint that closes every connection is
// paused after its first failed attempts, then probed one delivery at a
// time, waiting longer after each failure, while another endpoint of its
// workspace is delivered at once; once it answers again, its backlog
// goes out. An endpoint that never answers is disabled after the
// policy's attempts, as a delivery failing every attempt disables it.
func TestDeadEndpointBacksOff(t *testing.T) {
	onBackends(t, func(t *testing.T, db backend) {
		a := newTenant(t, db, "a")
		var mu sync.Mutex
		var got int
		down := true
		dead := httptestServer(t, func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			mu.Lock()
			got++
			d := down
			mu.Unlock()
			if d {
				panic(http.ErrAbortHandler) // the connection is closed, no answer
			}
		})
		deadHook := a.hook(t, dead.URL)
		ok := newReceiver(t, always(200))
		a.hook(t, ok.URL)
		requests := func() int { mu.Lock(); defer mu.Unlock(); return got }
		policy := memstore.RetryPolicy{MinBackoff: time.Second, MaxBackoff: time.Second, MaxAttempts: 100}
		stop := runDeliverer(t, db, webhook.Options{Policy: policy, Poll: 20 * time.Millisecond})
		const writes = 30
		start := time.Now()
		a.write(t, writes)
		waitFor(t, "the healthy endpoint's events", func() bool { return len(ok.deliveries()) == writes })
		took := time.Since(start)
		if took > fairDeadline {
			t.Errorf("the healthy endpoint's %d events took %v", writes, took)
		}
		// Its first attempts (at most MaxInFlightPerEndpoint at once) came
		// with the first writes; from then on, a probe after each pause
		// of a second, however long the healthy endpoint took.
		first := requests()
		if first == 0 || first > webhook.MaxInFlightPerEndpoint+int(took/time.Second)+1 {
			t.Errorf("the dead endpoint got %d requests for its %d events while the healthy one's were delivered in %v; want its first attempts and a probe a second", first, writes, took)
		}
		time.Sleep(2500 * time.Millisecond) // two pauses of a second, and more
		t.Logf("the dead endpoint got %d requests, then %d in 2.5 s, for %d events", first, requests()-first, writes)
		if n := requests() - first; n > 3 {
			t.Errorf("the dead endpoint got %d requests in 2.5 s; want a probe a second, at most 3", n)
		}
		mu.Lock()
		down = false
		mu.Unlock()
		waitFor(t, "the dead endpoint's backlog once it answers", func() bool {
			n := 0
			for _, d := range logOf(t, a, deadHook.ID) {
				if d.State == memstore.DeliveryDelivered {
					n++
				}
			}
			return n == writes
		})

		stop()

		// Never answering, it is disabled after the policy's attempts.
		b := newTenant(t, db, "b")
		var never atomic.Int32
		gone := httptestServer(t, func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			never.Add(1)
			panic(http.ErrAbortHandler)
		})
		goneHook := b.hook(t, gone.URL)
		runDeliverer(t, db, webhook.Options{Poll: 20 * time.Millisecond,
			Policy: memstore.RetryPolicy{MinBackoff: 100 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, MaxAttempts: 3}})
		b.write(t, writes)
		waitFor(t, "the endpoint that never answers disabled", func() bool {
			w, err := b.hooks.Webhook(t.Context(), b.c, goneHook.ID)
			return err == nil && w.State == memstore.WebhookDisabled
		})
		t.Logf("%d requests before the endpoint was disabled", never.Load())
		if n := never.Load(); n > 2*webhook.MaxInFlightPerEndpoint+3 {
			t.Errorf("%d requests before the endpoint was disabled, for %d events with 3 attempts each", n, writes)
		}
		w, _ := b.hooks.Webhook(t.Context(), b.c, goneHook.ID)
		if !strings.Contains(w.DisabledReason, "3 delivery attempts") {
			t.Errorf("disabled_reason %q", w.DisabledReason)
		}
	})
}

func httptestServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func logOf(t *testing.T, tn *tenant, id string) []memstore.WebhookDelivery {
	t.Helper()
	l, err := tn.hooks.WebhookDeliveries(t.Context(), tn.c, id, 100)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

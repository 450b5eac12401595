package webhook_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/webhook"
)

// A hookTenant is a workspace with an endpoint to a receiver of its own, and
// a store made once the deliverer runs: one event for the endpoint.
type hookTenant struct {
	c        *memstore.Caller
	endpoint *memstore.WebhookEndpoint
	got      atomic.Int32 // requests received
}

// twoTenants makes a hostile tenant whose receiver answers 500 with a
// body that holds NUL and bytes that are not UTF-8, and a good one whose
// receiver answers 204. Each receiver holds its first answer until both
// have their first request (or a few seconds have passed), so that the
// two attempts finish together and are recorded together.
func twoTenants(t *testing.T, db backend) (hostile, good *hookTenant) {
	ctx := t.Context()
	ws := memstore.NewWebhooks(db, memstore.WebhooksAllowPrivate(true))
	var first sync.WaitGroup
	first.Add(2)
	both := make(chan struct{})
	go func() { first.Wait(); close(both) }()
	mk := func(name string, answer func(w http.ResponseWriter)) *hookTenant {
		w, err := db.CreateWorkspace(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		tn := &hookTenant{c: &memstore.Caller{WorkspaceID: w.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_" + name}}}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			if tn.got.Add(1) == 1 {
				first.Done()
				select {
				case <-both:
				case <-time.After(3 * time.Second):
				}
			}
			answer(w)
		}))
		t.Cleanup(srv.Close)
		if tn.endpoint, err = ws.CreateWebhook(ctx, tn.c, memstore.WebhookCreate{URL: srv.URL, EnabledEvents: []string{memstore.WebhookStoreCreated}}); err != nil {
			t.Fatal(err)
		}
		return tn
	}
	hostile = mk("hostile", func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte("no\x00pe \xff\xfe\xc3( " + strings.Repeat("\x00", 2000)))
	})
	good = mk("good", func(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
	return hostile, good
}

// log is the delivery log of tn's endpoint.
func (tn *hookTenant) log(t *testing.T, db backend) []memstore.WebhookDelivery {
	t.Helper()
	l, err := memstore.NewWebhooks(db).WebhookDeliveries(t.Context(), tn.c, tn.endpoint.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// createStores creates a store in each tenant's workspace, each an event
// for its endpoint, and waits until the good tenant's delivery is recorded
// delivered.
func createStores(t *testing.T, db backend, hostile, good *hookTenant) {
	t.Helper()
	co := memstore.NewCore(db)
	for _, tn := range []*hookTenant{hostile, good} {
		if _, err := co.CreateStore(t.Context(), tn.c, memstore.StoreCreate{Name: "notes"}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the good delivery recorded", func() bool {
		l := good.log(t, db)
		return len(l) == 1 && l[0].State == memstore.DeliveryDelivered
	})
}

// quick is how these tests run a deliverer: attempts 10 ms apart, 3 at
// most.
var quick = webhook.Options{Poll: 10 * time.Millisecond, Timeout: 2 * time.Second,
	Policy: memstore.RetryPolicy{MinBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond, MaxAttempts: 3}}

// TestHostileAnswerIsRecorded: a receiver that answers 500 with NUL and
// invalid UTF-8 in its body, on either backend, has each failure
// recorded (its answer kept as text, within MaxDeliveryError) until its
// endpoint is disabled by the retry policy, and stops no other
// workspace's delivery, recorded together with its own, from being
// recorded delivered, once.
func TestHostileAnswerIsRecorded(t *testing.T) {
	onBackends(t, func(t *testing.T, db backend) {
		hostile, good := twoTenants(t, db)
		runDeliverer(t, db, quick)
		createStores(t, db, hostile, good)
		waitFor(t, "the hostile endpoint disabled", func() bool {
			w, err := memstore.NewWebhooks(db).Webhook(t.Context(), hostile.c, hostile.endpoint.ID)
			return err == nil && w.State == memstore.WebhookDisabled
		})
		l := hostile.log(t, db)
		if len(l) != 1 || l[0].State != memstore.DeliveryFailed || l[0].Attempts != 3 || l[0].LastStatus != 500 || hostile.got.Load() != 3 {
			t.Errorf("the hostile log: %+v after %d requests", l, hostile.got.Load())
		}
		if e := l[0].LastError; !strings.HasPrefix(e, "HTTP 500: nope \ufffd") || !utf8.ValidString(e) || strings.Contains(e, "\x00") || len(e) > memstore.MaxDeliveryError {
			t.Errorf("the hostile answer kept as %q", e)
		}
		w, _ := memstore.NewWebhooks(db).Webhook(t.Context(), hostile.c, hostile.endpoint.ID)
		if !strings.Contains(w.DisabledReason, "failed all 3 delivery attempts") || strings.Contains(w.DisabledReason, "\x00") {
			t.Errorf("disabled for %q", w.DisabledReason)
		}
		if n := good.got.Load(); n != 1 {
			t.Errorf("the good receiver got %d requests, want 1", n)
		}
	})
}

// refusing is a database that refuses to record any batch of attempts
// holding one of an endpoint's, as a database would a row it cannot
// store.
type refusing struct {
	backend
	endpoint string
	refused  atomic.Int32
}

func (r *refusing) RecordWebhookAttempts(ctx context.Context, attempts []memstore.WebhookAttempt, now time.Time, next *memstore.WebhookClaim) ([]memstore.WebhookDelivery, error) {
	for _, a := range attempts {
		if a.Delivery.EndpointID == r.endpoint {
			r.refused.Add(1)
			return nil, errors.New("a row the database refuses")
		}
	}
	return r.backend.RecordWebhookAttempts(ctx, attempts, now, next)
}

// TestUnrecordableAttemptFailsNoOther: an attempt that the database
// refuses to record, whatever the reason, costs the attempts recorded
// with it nothing: they are recorded each on its own.
func TestUnrecordableAttemptFailsNoOther(t *testing.T) {
	db := openBackend(t, "sqlite")
	hostile, good := twoTenants(t, db)
	r := &refusing{backend: db, endpoint: hostile.endpoint.ID}
	runDeliverer(t, r, quick)
	createStores(t, db, hostile, good)
	if r.refused.Load() == 0 || good.got.Load() != 1 {
		t.Errorf("%d batches refused, %d good requests; want some, and 1", r.refused.Load(), good.got.Load())
	}
}

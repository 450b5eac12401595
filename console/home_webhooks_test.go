package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/webhook"
)

// TestHomeFailingWebhooks: the home page lists as failing an endpoint
// still enabled whose latest delivery attempt failed, with that
// attempt's error escaped and a link to its log, beside one memstore
// disabled; not one whose deliveries succeed, nor one a person disabled.
func TestHomeFailingWebhooks(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "x")
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte(`<script>window.pwned=1</script>`))
	}))
	t.Cleanup(failing.Close)
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(healthy.Close)
	hooks := memstore.NewWebhooks(f.db, memstore.WebhooksAllowPrivate(true))
	create := func(name, target string) *memstore.WebhookEndpoint {
		e, err := hooks.CreateWebhook(ctx, f.op, memstore.WebhookCreate{Name: name, URL: target, EnabledEvents: []string{memstore.WebhookMemoryCreated}})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	bad, good, off := create("<b>flaky</b>", failing.URL+"/in"), create("steady", healthy.URL+"/in"), create("paused", failing.URL+"/off")
	off.State = memstore.WebhookDisabled
	if _, err := hooks.UpdateWebhook(ctx, f.op, off.ID, memstore.WebhookUpdate{State: &off.State}); err != nil {
		t.Fatal(err)
	}
	admin := f.signIn(t, "admin")
	if page := mustGet(t, f, admin, "/console/"); !strings.Contains(page, `<p id="failing">No endpoint is failing.</p>`) {
		t.Errorf("failing endpoints before any delivery:\n%s", page)
	}

	// A retry an hour away: the failing endpoint stays enabled.
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		webhook.New(f.db, webhook.Options{AllowPrivate: true, Poll: 10 * time.Millisecond, Timeout: 5 * time.Second,
			Policy: memstore.RetryPolicy{MinBackoff: time.Hour, MaxBackoff: time.Hour, MaxAttempts: 10}}).Run(runCtx)
	}()
	t.Cleanup(func() { stop(); <-done })
	if _, err := f.core.CreateMemory(ctx, f.op, f.storeID, memstore.MemoryCreate{Path: "/new.md", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	attempted := func(id string) bool {
		log, err := hooks.WebhookDeliveries(ctx, f.op, id, 0)
		return err == nil && len(log) > 0 && log[0].Attempts > 0
	}
	for deadline := time.Now().Add(30 * time.Second); !attempted(bad.ID) || !attempted(good.ID); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the deliveries were not attempted within 30 s")
		}
	}
	page := mustGet(t, f, admin, "/console/")
	i := strings.Index(page, `<ul class="failing" id="failing">`)
	if i < 0 {
		t.Fatalf("no failing endpoint listed:\n%s", page)
	}
	list := page[i:]
	list = list[:strings.Index(list, "</ul>")]
	for _, want := range []string{
		`<a href="/console/webhooks/` + bad.ID + `"><strong>&lt;b&gt;flaky&lt;/b&gt;</strong></a>`,
		`<span class="tag bad">failing</span>`, "HTTP 502", "&lt;script&gt;window.pwned=1&lt;/script&gt;",
	} {
		if !strings.Contains(list, want) {
			t.Errorf("the failing endpoints lack %s:\n%s", want, list)
		}
	}
	for _, bad := range []string{good.ID, off.ID, "<script>", "<b>flaky"} {
		if strings.Contains(list, bad) {
			t.Errorf("the failing endpoints hold %s:\n%s", bad, list)
		}
	}
}

package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/webhook"
)

var secretRE = regexp.MustCompile(`<pre id="secret">(whsec_[^<]+)</pre>`)

// webhookForm is the form of an endpoint with the given fields.
func webhookForm(csrf, name, target string, events ...string) url.Values {
	return url.Values{"csrf": {csrf}, "name": {name}, "url": {target}, "description": {"d"}, "events": events}
}

// TestWebhooksPages: an administrator makes an endpoint (its secret shown
// once), sees it listed with its name escaped, changes it, has a bad
// change refused with the core's reason and the form kept, disables and
// enables it, regenerates its secret, and deletes it after a
// confirmation page.
func TestWebhooksPages(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "x")
	hooks := memstore.NewWebhooks(f.db)
	admin := f.signIn(t, "admin")
	_, page := f.get(t, admin, "/console/webhooks/new")
	csrf := csrfOf(t, page)
	if !strings.Contains(page, `value="memstore.memory.created" checked`) {
		t.Errorf("a new endpoint's form does not offer every event, checked:\n%s", page)
	}

	resp, body := f.post(t, admin, "/console/webhooks", f.srv.URL, webhookForm(csrf, "<b>hook</b>", "http://127.0.0.1:9/in", memstore.WebhookMemoryCreated))
	m := secretRE.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil || !strings.Contains(body, "&lt;b&gt;hook&lt;/b&gt;") || strings.Contains(body, "<b>hook") {
		t.Fatalf("create: %d\n%s", resp.StatusCode, body)
	}
	first := m[1]
	list, _, err := hooks.Webhooks(ctx, f.op, memstore.WebhookFilter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("the endpoints: %+v %v", list, err)
	}
	e := list[0]
	page = mustGet(t, f, admin, "/console/webhooks")
	if !strings.Contains(page, `href="/console/webhooks/`+e.ID+`"`) || !strings.Contains(page, "http://127.0.0.1:9/in") || strings.Contains(page, "<b>hook") || strings.Contains(page, "whsec_") {
		t.Errorf("the list:\n%s", page)
	}
	ep := "/console/webhooks/" + e.ID
	if page := mustGet(t, f, admin, ep); strings.Contains(page, "whsec_") || !strings.Contains(page, `id="state">enabled`) {
		t.Errorf("the endpoint's page shows its secret, or not its state:\n%s", page)
	}

	// A change.
	resp, _ = f.post(t, admin, ep, f.srv.URL, webhookForm(csrf, "notifier", "http://127.0.0.1:9/other", memstore.WebhookMemoryCreated, memstore.WebhookMemoryDeleted))
	if got, err := hooks.Webhook(ctx, f.op, e.ID); resp.StatusCode != http.StatusSeeOther || err != nil || got.Name != "notifier" || got.URL != "http://127.0.0.1:9/other" || len(got.EnabledEvents) != 2 {
		t.Errorf("save: %d, %+v %v", resp.StatusCode, got, err)
	}
	// Changes the core refuses: shown with its reason, the form as sent,
	// nothing changed.
	for _, bad := range []struct {
		form url.Values
		says string
	}{
		{webhookForm(csrf, "kept name", "ftp://example.com/x", memstore.WebhookMemoryCreated), "ftp"},
		{webhookForm(csrf, "kept name", "http://127.0.0.1:9/other"), "at least one event"},
		{webhookForm(csrf, "kept name", "http://127.0.0.1:9/other", "memory.exploded"), "memory.exploded"},
	} {
		resp, body := f.post(t, admin, ep, f.srv.URL, bad.form)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, bad.says) || !strings.Contains(body, `value="kept name"`) {
			t.Errorf("a bad change (%s): %d\n%s", bad.says, resp.StatusCode, body)
		}
	}
	if got, _ := hooks.Webhook(ctx, f.op, e.ID); got.Name != "notifier" {
		t.Errorf("a refused change changed the endpoint: %+v", got)
	}
	resp, body = f.post(t, admin, "/console/webhooks", f.srv.URL, webhookForm(csrf, "second", "javascript:alert(1)", memstore.WebhookMemoryCreated))
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `value="second"`) {
		t.Errorf("a bad new endpoint: %d\n%s", resp.StatusCode, body)
	}

	// Disable, enable.
	for _, state := range []memstore.WebhookState{memstore.WebhookDisabled, memstore.WebhookEnabled} {
		resp, _ := f.post(t, admin, ep+"/state", f.srv.URL, url.Values{"csrf": {csrf}, "state": {string(state)}})
		got, err := hooks.Webhook(ctx, f.op, e.ID)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != ep+"?done="+string(state) || err != nil || got.State != state {
			t.Errorf("%s: %d %s, %+v %v", state, resp.StatusCode, resp.Header.Get("Location"), got, err)
		}
		if page := mustGet(t, f, admin, resp.Header.Get("Location")); !strings.Contains(page, `id="state">`+string(state)) {
			t.Errorf("after %s the page shows:\n%s", state, page)
		}
	}
	if resp, body := f.post(t, admin, ep+"/state", f.srv.URL, url.Values{"csrf": {csrf}, "state": {"paused"}}); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "paused") {
		t.Errorf("a bad state: %d\n%s", resp.StatusCode, body)
	}

	// A new secret, shown once.
	resp, body = f.post(t, admin, ep+"/secret", f.srv.URL, url.Values{"csrf": {csrf}})
	if m := secretRE.FindStringSubmatch(body); resp.StatusCode != http.StatusOK || m == nil || m[1] == first {
		t.Errorf("regenerate: %d\n%s", resp.StatusCode, body)
	}
	if resp, _ := f.get(t, admin, "/console/webhooks/webhook_nosuch"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown endpoint: %d", resp.StatusCode)
	}

	// Deleting asks first.
	if page := mustGet(t, f, admin, ep+"/delete"); !strings.Contains(page, "Delete notifier?") || !strings.Contains(page, `action="`+ep+`/delete"`) {
		t.Errorf("the confirmation:\n%s", page)
	}
	if _, err := hooks.Webhook(ctx, f.op, e.ID); err != nil {
		t.Fatalf("the confirmation page deleted the endpoint: %v", err)
	}
	resp, _ = f.post(t, admin, ep+"/delete", f.srv.URL, url.Values{"csrf": {csrf}})
	if _, err := hooks.Webhook(ctx, f.op, e.ID); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/webhooks?done=deleted" || memstore.ErrorCode(err) != memstore.ENotFound {
		t.Errorf("delete: %d %s, then %v", resp.StatusCode, resp.Header.Get("Location"), err)
	}
}

// TestWebhooksAdminsOnly: as in the API, only administrators reach the
// webhooks: an auditor or a member is refused every page and form, with
// a good token, by the core; a form without the token or from another
// site is refused first; nothing changes.
func TestWebhooksAdminsOnly(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "x")
	hooks := memstore.NewWebhooks(f.db, memstore.WebhooksAllowPrivate(true))
	e, err := hooks.CreateWebhook(ctx, f.op, memstore.WebhookCreate{URL: "http://127.0.0.1:9/in", Name: "kept", EnabledEvents: []string{memstore.WebhookMemoryCreated}})
	if err != nil {
		t.Fatal(err)
	}
	ep := "/console/webhooks/" + e.ID
	for _, role := range []string{"auditor", "member"} {
		c := f.signIn(t, role)
		for _, path := range []string{"/console/webhooks", "/console/webhooks/new", ep, ep + "/delete"} {
			if resp, body := f.get(t, c, path); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, role+" role cannot manage webhooks") {
				t.Errorf("%s GET %s: %d\n%s", role, path, resp.StatusCode, body)
			}
		}
		_, page := f.get(t, c, "/console/stores")
		csrf := csrfOf(t, page)
		for path, form := range map[string]url.Values{
			"/console/webhooks": webhookForm(csrf, "x", "http://127.0.0.1:9/x", memstore.WebhookMemoryCreated),
			ep:                  webhookForm(csrf, "x", "http://127.0.0.1:9/x", memstore.WebhookMemoryCreated),
			ep + "/state":       {"csrf": {csrf}, "state": {"disabled"}},
			ep + "/secret":      {"csrf": {csrf}},
			ep + "/delete":      {"csrf": {csrf}},
		} {
			if resp, body := f.post(t, c, path, f.srv.URL, form); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, role+" role cannot manage webhooks") {
				t.Errorf("%s POST %s: %d\n%s", role, path, resp.StatusCode, body)
			}
		}
	}
	admin := f.signIn(t, "admin")
	_, page := f.get(t, admin, ep)
	csrf := csrfOf(t, page)
	if resp, _ := f.post(t, admin, ep+"/state", f.srv.URL, url.Values{"state": {"disabled"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("without the token: %d", resp.StatusCode)
	}
	if resp, _ := f.post(t, admin, ep+"/secret", "https://evil.example", url.Values{"csrf": {csrf}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("from another site: %d", resp.StatusCode)
	}
	got, err := hooks.Webhook(ctx, f.op, e.ID)
	if err != nil || got.State != memstore.WebhookEnabled || got.Name != "kept" || got.UpdatedAt != e.UpdatedAt {
		t.Errorf("the endpoint after the refusals: %+v %v", got, err)
	}
}

// TestWebhookDeliveryLog: a receiver that keeps failing, with a hostile
// answer, has each delivery's state, attempts, status and last error on
// its endpoint's page, escaped, and the reason memstore disabled the
// endpoint; enabling it again clears the reason.
func TestWebhookDeliveryLog(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "x")
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`<script>window.pwned=1</script>`))
	}))
	t.Cleanup(receiver.Close)
	hooks := memstore.NewWebhooks(f.db, memstore.WebhooksAllowPrivate(true))
	e, err := hooks.CreateWebhook(ctx, f.op, memstore.WebhookCreate{URL: receiver.URL + "/in", EnabledEvents: []string{memstore.WebhookMemoryCreated}})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		webhook.New(f.db, webhook.Options{AllowPrivate: true, Poll: 10 * time.Millisecond, Timeout: 5 * time.Second,
			Policy: memstore.RetryPolicy{MinBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond, MaxAttempts: 3}}).Run(runCtx)
	}()
	t.Cleanup(func() { stop(); <-done })
	if _, err := f.core.CreateMemory(ctx, f.op, f.storeID, memstore.MemoryCreate{Path: "/new.md", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		w, err := hooks.Webhook(ctx, f.op, e.ID)
		if err == nil && w.State == memstore.WebhookDisabled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the endpoint is not disabled after its failures: %+v %v", w, err)
		}
	}
	admin := f.signIn(t, "admin")
	ep := "/console/webhooks/" + e.ID
	page := mustGet(t, f, admin, ep)
	log := page[strings.Index(page, `<table id="deliveries">`):]
	log = log[:strings.Index(log, "</table>")]
	for _, want := range []string{memstore.WebhookMemoryCreated, "failed", `<td class="num">3</td>`, `<td class="num">500</td>`, "&lt;script&gt;window.pwned=1&lt;/script&gt;"} {
		if !strings.Contains(log, want) {
			t.Errorf("the delivery log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(page, "<script>") || !strings.Contains(page, `id="disabled-reason"`) || !strings.Contains(page, "failed all 3 delivery attempts") {
		t.Errorf("the endpoint's page:\n%s", page)
	}
	if list := mustGet(t, f, admin, "/console/webhooks"); !strings.Contains(list, "failed all 3 delivery attempts") {
		t.Errorf("the list does not say why the endpoint is disabled:\n%s", list)
	}
	resp, _ := f.post(t, admin, ep+"/state", f.srv.URL, url.Values{"csrf": {csrfOf(t, page)}, "state": {"enabled"}})
	if page := mustGet(t, f, admin, ep); resp.StatusCode != http.StatusSeeOther || strings.Contains(page, `id="disabled-reason"`) || !strings.Contains(page, `id="state">enabled`) {
		t.Errorf("enabled again: %d\n%s", resp.StatusCode, page)
	}
}

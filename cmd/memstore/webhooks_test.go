package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/syncbuf"
	"github.com/memstore/memstore/webhook"
)

// TestServeDeliversWebhooks checks that serve delivers the webhooks of
// its changes, signed with the endpoint's secret, and that a change made
// while no server runs (here by the command line on the database file)
// is delivered by the next server: the deliveries are in the database.
func TestServeDeliversWebhooks(t *testing.T) {
	var mu sync.Mutex
	type got struct {
		body   []byte
		header http.Header
	}
	var received []got
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		received = append(received, got{b, r.Header.Clone()})
		mu.Unlock()
	}))
	defer rcv.Close()
	waitFor := func(n int) []got {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			out := append([]got(nil), received...)
			mu.Unlock()
			if len(out) >= n {
				return out
			}
		}
		t.Fatalf("fewer than %d deliveries within 10s", n)
		return nil
	}

	db := filepath.Join(t.TempDir(), "m.db")
	s1 := startServer(t, "--db", db, "--webhook-allow-private")
	a := s1.api(t)
	var hook httpapi.WebhookEndpointJSON
	a.must(t, "POST", "/v1/organizations/webhooks", map[string]any{"url": rcv.URL + "/in", "enabled_events": []string{"memory_store.created"}}, &hook)
	store := a.createStore(t, "online")
	d := waitFor(1)[0]
	ts, err := strconv.ParseInt(d.header.Get("webhook-timestamp"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	want, err := webhook.Sign(hook.SigningSecret, d.header.Get("webhook-id"), time.Unix(ts, 0), d.body)
	if err != nil || d.header.Get("webhook-signature") != want || !strings.Contains(string(d.body), store) {
		t.Errorf("delivery %s with signature %q, want %q (%v)", d.body, d.header.Get("webhook-signature"), want, err)
	}
	if strings.Contains(s1.stderr.String(), hook.SigningSecret) {
		t.Errorf("the log shows the signing secret")
	}
	s1.wait(t)

	// A store made while no server runs.
	out, errOut := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	if code := Main(t.Context(), []string{"stores", "create", "--db", db, "offline"}, strings.NewReader(""), out, errOut); code != 0 {
		t.Fatalf("stores create: %d %s", code, errOut)
	}
	s2 := startServer(t, "--db", db, "--webhook-allow-private")
	d = waitFor(2)[1]
	if !strings.Contains(string(d.body), `"memory_store.created"`) || strings.Contains(string(d.body), store) {
		t.Errorf("the offline store's delivery: %s", d.body)
	}
	var log struct {
		Data []httpapi.WebhookDeliveryJSON `json:"data"`
	}
	// The answer is recorded just after it comes.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		newAPI(s2.url, s1.key).must(t, "GET", "/v1/organizations/webhooks/"+hook.ID+"/deliveries", nil, &log)
		if len(log.Data) == 2 && log.Data[0].State == "delivered" && log.Data[1].State == "delivered" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log: %+v", log.Data)
		}
	}
	if n := len(waitFor(2)); n != 2 {
		t.Errorf("%d deliveries, want one of each store", n)
	}
}

// hookReceiver is a real HTTP endpoint that answers its nth request (from
// 1) with status(n) and keeps each request's body and headers.
type hookReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []hookRequest
}

type hookRequest struct {
	body   []byte
	header http.Header
}

func newHookReceiver(t *testing.T, status func(n int) int) *hookReceiver {
	r := &hookReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, hookRequest{b, req.Header.Clone()})
		n := len(r.got)
		r.mu.Unlock()
		w.WriteHeader(status(n))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *hookReceiver) requests() []hookRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hookRequest(nil), r.got...)
}

// received is the webhook-id of each request.
func (r *hookReceiver) received() []string {
	var ids []string
	for _, q := range r.requests() {
		ids = append(ids, q.header.Get("webhook-id"))
	}
	return ids
}

// signedBy reports whether q's webhook-signature is secret's.
func (q hookRequest) signedBy(secret string) bool {
	ts, err := strconv.ParseInt(q.header.Get("webhook-timestamp"), 10, 64)
	if err != nil {
		return false
	}
	want, err := webhook.Sign(secret, q.header.Get("webhook-id"), time.Unix(ts, 0), q.body)
	return err == nil && q.header.Get("webhook-signature") == want
}

// deliveryLog is an endpoint's log, read through the API.
func deliveryLog(t *testing.T, a *api, hook string) []httpapi.WebhookDeliveryJSON {
	t.Helper()
	var log struct {
		Data []httpapi.WebhookDeliveryJSON `json:"data"`
	}
	a.must(t, "GET", "/v1/organizations/webhooks/"+hook+"/deliveries", nil, &log)
	return log.Data
}

// cli runs memstore with args and returns its standard output.
func cli(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	if code := Main(t.Context(), args, strings.NewReader(""), out, errOut); code != 0 {
		t.Fatalf("memstore %q: exit status %d\n%s", args, code, errOut)
	}
	return out.String()
}

// TestServeWebhookRetriesAcrossRestart checks, on real serve processes,
// that a delivery whose retry is pending when serve stops on SIGTERM is
// retried by the next serve, under the same webhook-id, with its attempts
// counted across the restart, as the API's log and 'memstore webhooks
// deliveries' show, and that the retry flags space the attempts.
func TestServeWebhookRetriesAcrossRestart(t *testing.T) {
	rcv := newHookReceiver(t, func(n int) int {
		if n <= 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	db := filepath.Join(t.TempDir(), "m.db")
	flags := []string{"--webhook-allow-private", "--webhook-retry-min", "1500ms", "--webhook-retry-max", "1500ms", "--webhook-attempts", "5"}
	s1 := startChild(t, db, flags...)
	a := newAPI(s1.url, s1.key)
	var hook httpapi.WebhookEndpointJSON
	a.must(t, "POST", "/v1/organizations/webhooks", map[string]any{"url": rcv.URL, "enabled_events": []string{"memory_store.created"}}, &hook)
	a.createStore(t, "notes")
	waitUntil(t, "the first failed attempt in the log", func() bool {
		l := deliveryLog(t, a, hook.ID)
		return len(l) == 1 && l[0].Attempts == 1
	})
	s1.stop(t, syscall.SIGTERM)
	if s1.err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", s1.err, s1.stderr)
	}
	if got := len(rcv.received()); got != 1 {
		t.Fatalf("%d attempts before the restart, want 1: the retry waits --webhook-retry-min", got)
	}

	s2 := startChild(t, db, flags...)
	a = newAPI(s2.url, s1.key)
	waitUntil(t, "the delivery after the restart", func() bool {
		l := deliveryLog(t, a, hook.ID)
		return len(l) == 1 && l[0].State == "delivered"
	})
	ids := rcv.received()
	if len(ids) != 3 || ids[0] != ids[1] || ids[1] != ids[2] || !strings.HasPrefix(ids[0], "wevt_") {
		t.Errorf("attempts with webhook-ids %q, want three of one event", ids)
	}
	if l := deliveryLog(t, a, hook.ID)[0]; l.Attempts != 3 || l.LastStatusCode != 204 || l.LastError != "" || l.EventID != ids[0] {
		t.Errorf("the API's log: %+v", l)
	}
	s2.stop(t, syscall.SIGTERM)
	var cliLog []httpapi.WebhookDeliveryJSON
	if err := json.Unmarshal([]byte(cli(t, "webhooks", "deliveries", "--db", db, "--json", hook.ID)), &cliLog); err != nil {
		t.Fatal(err)
	}
	if len(cliLog) != 1 || cliLog[0].State != "delivered" || cliLog[0].Attempts != 3 || cliLog[0].EventID != ids[0] {
		t.Errorf("memstore webhooks deliveries: %+v", cliLog)
	}
	if table := cli(t, "webhooks", "deliveries", "--db", db, hook.ID); !strings.Contains(table, ids[0]) || !strings.Contains(table, "delivered") {
		t.Errorf("memstore webhooks deliveries:\n%s", table)
	}
}

// TestServeWebhookDisables checks that with --webhook-attempts 2 an
// endpoint whose delivery fails twice is disabled, saying why, as
// 'memstore webhooks ls' and 'deliveries' show, and that 'memstore
// webhooks enable' enables it again.
func TestServeWebhookDisables(t *testing.T) {
	rcv := newHookReceiver(t, func(int) int { return http.StatusInternalServerError })
	db := filepath.Join(t.TempDir(), "m.db")
	s := startServer(t, "--db", db, "--webhook-allow-private", "--webhook-retry-min", "50ms", "--webhook-retry-max", "50ms", "--webhook-attempts", "2")
	a := s.api(t)
	var hook httpapi.WebhookEndpointJSON
	a.must(t, "POST", "/v1/organizations/webhooks", map[string]any{"url": rcv.URL, "enabled_events": []string{"memory_store.created"}}, &hook)
	a.createStore(t, "notes")
	waitUntil(t, "the endpoint disabled", func() bool {
		var got httpapi.WebhookEndpointJSON
		a.must(t, "GET", "/v1/organizations/webhooks/"+hook.ID, nil, &got)
		return got.State == "disabled"
	})
	s.wait(t)
	var hooks []httpapi.WebhookEndpointJSON
	if err := json.Unmarshal([]byte(cli(t, "webhooks", "ls", "--db", db, "--json")), &hooks); err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 1 || hooks[0].State != "disabled" || !strings.Contains(hooks[0].DisabledReason, "failed all 2 delivery attempts") ||
		!strings.Contains(hooks[0].DisabledReason, "HTTP 500") {
		t.Errorf("memstore webhooks ls: %+v", hooks)
	}
	var log []httpapi.WebhookDeliveryJSON
	if err := json.Unmarshal([]byte(cli(t, "webhooks", "deliveries", "--db", db, "--json", hook.ID)), &log); err != nil {
		t.Fatal(err)
	}
	if len(log) != 1 || log[0].State != "failed" || log[0].Attempts != 2 || log[0].LastStatusCode != 500 || len(rcv.received()) != 2 {
		t.Errorf("memstore webhooks deliveries: %+v, %d requests received", log, len(rcv.received()))
	}
	// Enabled again from the command line, without its reason.
	cli(t, "webhooks", "enable", "--db", db, hook.ID)
	if err := json.Unmarshal([]byte(cli(t, "webhooks", "ls", "--db", db, "--json")), &hooks); err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 1 || hooks[0].State != "enabled" || hooks[0].DisabledReason != "" {
		t.Errorf("memstore webhooks ls after enable: %+v", hooks)
	}
}

// TestWebhooksCreateOffline checks that an endpoint is made before its
// host's name resolves (this test runs offline), by the command of
// docs/webhooks.md on the database file and through a server's API, on SQLite
// and PostgreSQL, while a private address in any form, a localhost name
// and http are still refused, saying why; delivery then checks the name
// on every connection.
func TestWebhooksCreateOffline(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "m.db")
			if backend == "postgres" {
				db = postgresDB(t, "pw")
			}
			s := startServer(t, "--db", db)
			a := s.api(t)
			out := cli(t, "webhooks", "create", "--db", db, "--json", "--endpoint-url", "https://example.com/hooks",
				"--event", "memory_store.created", "--event", "memstore.memory.created")
			var made httpapi.WebhookEndpointJSON
			if err := json.Unmarshal([]byte(out), &made); err != nil || made.URL != "https://example.com/hooks" || made.State != "enabled" {
				t.Fatalf("webhooks create: %s (%v)", out, err)
			}
			for u, why := range map[string]string{
				"https://localhost/x":            "localhost",
				"https://[::ffff:0:127.0.0.1]/x": "loopback",
				"https://[::ffff:0:10.0.0.1]/x":  "private",
				"https://169.254.169.254/latest": "link-local",
				"http://example.com/x":           "https",
				"https://0x7f000001/x":           "dotted decimal",
			} {
				stdout, stderr := &syncbuf.Buffer{}, &syncbuf.Buffer{}
				code := Main(t.Context(), []string{"webhooks", "create", "--db", db, "--endpoint-url", u, "--event", "memory_store.created"}, strings.NewReader(""), stdout, stderr)
				if code == 0 || !strings.Contains(stderr.String(), why) {
					t.Errorf("webhooks create --endpoint-url %s: exit %d, %q; want a refusal saying %q", u, code, stderr, why)
				}
			}

			var hook httpapi.WebhookEndpointJSON
			a.must(t, "POST", "/v1/organizations/webhooks", map[string]any{"url": "https://hooks.example.com/in", "enabled_events": []string{"memory_store.created"}}, &hook)
			for _, u := range []string{"https://[::ffff:0:a00:1]/x", "https://api.localhost/x", "https://[64:ff9b::7f00:1]/x"} {
				status, body, err := a.call("POST", "/v1/organizations/webhooks", map[string]any{"url": u, "enabled_events": []string{"memory_store.created"}}, nil)
				if err != nil || status != http.StatusBadRequest || !strings.Contains(string(body), "may not reach") {
					t.Errorf("POST %s: %d %s %v", u, status, body, err)
				}
			}
			// The server tries the names when it delivers, and logs why
			// it could not.
			a.createStore(t, "notes")
			waitUntil(t, "an attempt to the name that does not resolve", func() bool {
				l := deliveryLog(t, a, hook.ID)
				return len(l) == 1 && l[0].Attempts == 1
			})
			if l := deliveryLog(t, a, hook.ID)[0]; l.LastStatusCode != 0 || !strings.Contains(l.LastError, "hooks.example.com") {
				t.Errorf("the attempt: %+v", l)
			}
		})
	}
}

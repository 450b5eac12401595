package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/syncbuf"
	"github.com/memstore/memstore/webhook"
)

// TestServeDeliversWebhooks checks that serve delivers the webhooks of
// its changes, signed with the endpoint's secret, and that a change made
// while no server runs (here by the command line on the database file)
// is delivered by the next server: the outbox is in the database.
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

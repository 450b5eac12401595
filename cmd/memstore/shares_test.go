package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore/httpapi"
)

// sharesClient speaks to a test server's /mcp and change feed as the
// share tests need.
type sharesClient struct {
	t   *testing.T
	ctx context.Context
	s   *testServer
}

func newSharesClient(t *testing.T, s *testServer) *sharesClient {
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	return &sharesClient{t, ctx, s}
}

// token makes a session of a's workspace attaching store and returns its
// token.
func (c *sharesClient) token(a *api, store string) string {
	c.t.Helper()
	var sess httpapi.SessionJSON
	a.must(c.t, "POST", "/v1/sessions", map[string]any{"resources": []any{map[string]any{"type": "memory_store", "memory_store_id": store}}}, &sess)
	return sess.Token
}

const (
	mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	mcpPing       = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
)

// mcp posts body to /mcp as token, within MCP session sid if not "".
func (c *sharesClient) mcp(token, sid, body string) (int, string, string) {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(c.ctx, "POST", c.s.url+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Mcp-Session-Id"), string(b)
}

// openMCP opens an MCP session as token and returns its ID.
func (c *sharesClient) openMCP(token string) string {
	c.t.Helper()
	status, sid, body := c.mcp(token, "", mcpInitialize)
	if status != 200 || sid == "" {
		c.t.Fatalf("initialize: %d %.200s", status, body)
	}
	return sid
}

// stream opens an event stream of store as secret, held open until the
// test ends; the body of a refusal.
func (c *sharesClient) stream(secret, store string) (int, string) {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(c.ctx, "GET", c.s.url+"/v1/memory_stores/"+store+"/events", nil)
	req.Header.Set("X-Api-Key", secret)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode == 200 {
		return 200, ""
	}
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// otherWorkspace makes the workspace name in the server's database file
// db and returns an API client of a key of it.
func (c *sharesClient) otherWorkspace(db, name string) *api {
	c.t.Helper()
	code, out, errOut := run(c.t, "", "keys", "create", "--db", db, "--workspace", name, "--json")
	var key struct{ Secret string }
	if code != 0 || json.Unmarshal([]byte(out), &key) != nil {
		c.t.Fatalf("keys create: %d %s %s", code, out, errOut)
	}
	return newAPI(c.s.url, key.Secret)
}

// hangingReceiver is a webhook endpoint that answers nothing until the
// test ends, and counts the deliveries it holds at once.
type hangingReceiver struct {
	*httptest.Server
	mu        sync.Mutex
	now, most int
}

func newHangingReceiver(t *testing.T) *hangingReceiver {
	r := &hangingReceiver{}
	release := make(chan struct{})
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.now++
		r.most = max(r.most, r.now)
		r.mu.Unlock()
		select {
		case <-release:
		case <-req.Context().Done():
		}
		r.mu.Lock()
		r.now--
		r.mu.Unlock()
	}))
	t.Cleanup(func() {
		close(release)
		r.Close()
	})
	return r
}

// holds waits until the receiver holds n deliveries at once, then a
// second more, and fails if it ever held more than n.
func (r *hangingReceiver) holds(t *testing.T, what string, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		r.mu.Lock()
		now := r.now
		r.mu.Unlock()
		if now >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: after 10s, %d deliveries held at once; want %d", what, now, n)
			return
		}
	}
	time.Sleep(time.Second)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.most != n {
		t.Errorf("%s: %d deliveries held at once; want %d", what, r.most, n)
	}
}

// hook registers a webhook endpoint at url for a's created stores.
func hook(t *testing.T, a *api, url string) {
	t.Helper()
	a.must(t, "POST", "/v1/organizations/webhooks", map[string]any{"url": url, "enabled_events": []string{"memory_store.created"}}, nil)
}

// holdsDeliveries registers a hanging endpoint for a's created stores,
// creates four, and checks that the server holds n deliveries to it at
// once; what names the case.
func holdsDeliveries(t *testing.T, a *api, what string, n int) {
	t.Helper()
	hanging := newHangingReceiver(t)
	hook(t, a, hanging.URL)
	for i := range 4 {
		a.createStore(t, fmt.Sprint("hook ", i))
	}
	hanging.holds(t, what, n)
}

// TestServeFairShares checks the flags of the shares of the server's MCP
// sessions, change-feed streams and webhook deliveries, from the
// environment and the command line: one workspace, from several
// credentials, holds no more than its share, and another workspace's MCP
// session, stream and webhook delivery go through at once.
func TestServeFairShares(t *testing.T) {
	clearEnv(t)
	db := filepath.Join(t.TempDir(), "m.db")
	t.Setenv("MEMSTORE_MCP_MAX_SESSIONS_PER_WORKSPACE", "2")
	t.Setenv("MEMSTORE_FEED_MAX_STREAMS_PER_WORKSPACE", "99") // the flag wins
	t.Setenv("MEMSTORE_WEBHOOK_MAX_DELIVERIES_PER_WORKSPACE", "1")
	s := startServer(t, "--db", db, "--webhook-allow-private", "--mcp-max-sessions", "4",
		"--feed-max-streams", "3", "--feed-max-streams-per-workspace", "2", "--feed-max-streams-per-credential", "1")
	c := newSharesClient(t, s)
	mine := s.api(t)
	store := mine.createStore(t, "notes")

	// MCP: at the workspace's share (MEMSTORE_MCP_MAX_SESSIONS_PER_WORKSPACE),
	// a memstore session closes its own least recently used; another that
	// holds none is refused, and closes none of the first's.
	one, two := c.token(mine, store), c.token(mine, store)
	first := c.openMCP(one)
	second := c.openMCP(one)
	third := c.openMCP(one)
	if status, _, body := c.mcp(one, first, mcpPing); status != http.StatusNotFound {
		t.Errorf("the session's least recently used MCP session, beyond the workspace's share of 2: %d %.200s; want 404", status, body)
	}
	status, sid, body := c.mcp(two, "", mcpInitialize)
	if status != http.StatusTooManyRequests || sid != "" || !strings.Contains(body, "--mcp-max-sessions-per-workspace") {
		t.Errorf("another memstore session of the workspace at its share: %d %.200s; want 429 naming the flag", status, body)
	}
	for _, sid := range []string{second, third} {
		if status, _, body := c.mcp(one, sid, mcpPing); status != 200 {
			t.Errorf("an MCP session within the share: %d %.200s", status, body)
		}
	}

	// Streams: one per credential, two per workspace, three in all (the
	// flags).
	if status, _ := c.stream(s.key, store); status != 200 {
		t.Fatalf("a stream: %d", status)
	}
	if status, body := c.stream(s.key, store); status != http.StatusTooManyRequests || !strings.Contains(body, "--feed-max-streams-per-credential") {
		t.Errorf("a second stream of one key: %d %s; want 429 naming the flag", status, body)
	}
	if status, _ := c.stream(one, store); status != 200 {
		t.Fatalf("a stream of a session token: %d", status)
	}
	if status, body := c.stream(two, store); status != http.StatusTooManyRequests || !strings.Contains(body, "--feed-max-streams-per-workspace") {
		t.Errorf("a third stream of the workspace: %d %s; want 429 naming the flag", status, body)
	}

	// Webhooks: the workspace's endpoint hangs, and holds one delivery
	// (MEMSTORE_WEBHOOK_MAX_DELIVERIES_PER_WORKSPACE), not four.
	holdsDeliveries(t, mine, "the workspace's hanging endpoint", 1)

	// Another workspace opens an MCP session and a stream at once, and is
	// delivered at once; the server's third stream is its last.
	theirs := c.otherWorkspace(db, "other")
	theirStore := theirs.createStore(t, "theirs")
	c.openMCP(c.token(theirs, theirStore))
	if status, body := c.stream(theirs.key, theirStore); status != 200 {
		t.Errorf("another workspace's stream: %d %s", status, body)
	}
	if status, body := c.stream(c.token(theirs, theirStore), theirStore); status != 529 || !strings.Contains(body, "--feed-max-streams") {
		t.Errorf("a fourth stream of the server: %d %s; want 529 naming the flag", status, body)
	}
	rcv := newHookReceiver(t, func(int) int { return 200 })
	hook(t, theirs, rcv.URL)
	theirs.createStore(t, "delivered")
	for deadline := time.Now().Add(10 * time.Second); len(rcv.received()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("another workspace's webhook was not delivered within 10s while the first held its share")
		}
	}
}

// TestServeSharesFromPools: without their flags, each workspace's share
// is a part of the pool its flag sets: a quarter of --mcp-max-sessions
// and --feed-max-streams, an eighth of --webhook-max-deliveries.
func TestServeSharesFromPools(t *testing.T) {
	clearEnv(t)
	db := filepath.Join(t.TempDir(), "m.db")
	t.Setenv("MEMSTORE_WEBHOOK_MAX_DELIVERIES", "16")
	s := startServer(t, "--db", db, "--webhook-allow-private", "--mcp-max-sessions", "8", "--feed-max-streams", "8")
	c := newSharesClient(t, s)
	mine := s.api(t)
	store := mine.createStore(t, "notes")

	one, two, three := c.token(mine, store), c.token(mine, store), c.token(mine, store)
	c.openMCP(one)
	c.openMCP(two)
	if status, _, body := c.mcp(three, "", mcpInitialize); status != http.StatusTooManyRequests || !strings.Contains(body, "its share") {
		t.Errorf("a third MCP session of the workspace, with --mcp-max-sessions 8: %d %.200s; want 429, a share of 2", status, body)
	}
	c.stream(one, store)
	c.stream(two, store)
	if status, body := c.stream(three, store); status != http.StatusTooManyRequests || !strings.Contains(body, "its share") {
		t.Errorf("a third stream of the workspace, with --feed-max-streams 8: %d %s; want 429, a share of 2", status, body)
	}

	holdsDeliveries(t, mine, "a hanging endpoint, with MEMSTORE_WEBHOOK_MAX_DELIVERIES=16", 2)
}

// TestServeSharesZero: 0 lifts a share, as it lifts a quota: one
// memstore session holds every MCP session of the server, one key every
// stream, one workspace every webhook delivery.
func TestServeSharesZero(t *testing.T) {
	clearEnv(t)
	db := filepath.Join(t.TempDir(), "m.db")
	t.Setenv("MEMSTORE_MCP_MAX_PER_SESSION", "0")
	const pool = 20 // above the default shares of memstore sessions (16) and credentials (16)
	n := fmt.Sprint(pool)
	s := startServer(t, "--db", db, "--webhook-allow-private",
		"--mcp-max-sessions", n, "--mcp-max-sessions-per-workspace", "0",
		"--feed-max-streams", n, "--feed-max-streams-per-workspace", "0", "--feed-max-streams-per-credential", "0",
		"--webhook-max-deliveries", "3", "--webhook-max-deliveries-per-workspace", "0")
	c := newSharesClient(t, s)
	mine := s.api(t)
	store := mine.createStore(t, "notes")

	token := c.token(mine, store)
	var sids []string
	for range pool {
		sids = append(sids, c.openMCP(token))
	}
	if status, _, body := c.mcp(token, sids[0], mcpPing); status != 200 {
		t.Errorf("the first of %d MCP sessions of one memstore session, with no share: %d %.200s; want it still open", pool, status, body)
	}
	for i := range pool {
		if status, body := c.stream(s.key, store); status != 200 {
			t.Fatalf("stream %d of one key, with no share: %d %s", i, status, body)
		}
	}

	holdsDeliveries(t, mine, "a hanging endpoint, with no share of 3 deliveries", 3)
}

package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore/httpapi"
)

// TestServeFairShares checks the flags of the shares of the server's MCP
// sessions and change-feed streams, from the environment and the command
// line: one workspace, from several sessions, holds no more than its
// share, and another workspace's MCP session and stream open at once.
func TestServeFairShares(t *testing.T) {
	clearEnv(t)
	db := filepath.Join(t.TempDir(), "m.db")
	t.Setenv("MEMSTORE_MCP_MAX_PER_WORKSPACE", "2")
	t.Setenv("MEMSTORE_FEED_MAX_PER_WORKSPACE", "99") // the flag wins
	s := startServer(t, "--db", db, "--mcp-max-sessions", "4", "--feed-max-per-workspace", "2", "--feed-max-per-credential", "1")
	mine := s.api(t)
	store := mine.createStore(t, "notes")
	token := func(a *api, store string) string {
		t.Helper()
		var sess httpapi.SessionJSON
		a.must(t, "POST", "/v1/sessions", map[string]any{"resources": []any{map[string]any{"type": "memory_store", "memory_store_id": store}}}, &sess)
		return sess.Token
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// mcp posts body to /mcp as token, within MCP session sid if not "".
	mcp := func(token, sid, body string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "POST", s.url+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header.Get("Mcp-Session-Id"), string(b)
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	openMCP := func(token string) string {
		t.Helper()
		status, sid, body := mcp(token, "", initialize)
		if status != 200 || sid == "" {
			t.Fatalf("initialize: %d %.200s", status, body)
		}
		return sid
	}
	// stream opens an event stream of store as secret, held open.
	stream := func(secret, store string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/v1/memory_stores/"+store+"/events", nil)
		req.Header.Set("X-Api-Key", secret)
		req.Header.Set("Accept", "text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		if res.StatusCode == 200 {
			return 200, ""
		}
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}

	// MCP: at the workspace's share (MEMSTORE_MCP_MAX_PER_WORKSPACE), a
	// memstore session closes its own least recently used; another that
	// holds none is refused, and closes none of the first's.
	one, two := token(mine, store), token(mine, store)
	first := openMCP(one)
	second := openMCP(one)
	third := openMCP(one)
	if status, _, body := mcp(one, first, ping); status != http.StatusNotFound {
		t.Errorf("the session's least recently used MCP session, beyond the workspace's share of 2: %d %.200s; want 404", status, body)
	}
	if status, sid, body := mcp(two, "", initialize); status != http.StatusTooManyRequests || sid != "" || !strings.Contains(body, "--mcp-max-per-workspace") {
		t.Errorf("another memstore session of the workspace at its share: %d %.200s; want 429 naming the flag", status, body)
	}
	for _, sid := range []string{second, third} {
		if status, _, body := mcp(one, sid, ping); status != 200 {
			t.Errorf("an MCP session within the share: %d %.200s", status, body)
		}
	}
	// Streams: one per credential, two per workspace (the flags).
	if status, _ := stream(s.key, store); status != 200 {
		t.Fatalf("a stream: %d", status)
	}
	if status, body := stream(s.key, store); status != http.StatusTooManyRequests || !strings.Contains(body, "--feed-max-per-credential") {
		t.Errorf("a second stream of one key: %d %s; want 429 naming the flag", status, body)
	}
	if status, _ := stream(one, store); status != 200 {
		t.Fatalf("a stream of a session token: %d", status)
	}
	if status, body := stream(two, store); status != http.StatusTooManyRequests || !strings.Contains(body, "--feed-max-per-workspace") {
		t.Errorf("a third stream of the workspace: %d %s; want 429 naming the flag", status, body)
	}

	// Another workspace opens both at once.
	code, out, errOut := run(t, "", "keys", "create", "--db", db, "--workspace", "other", "--json")
	var key struct{ Secret string }
	if code != 0 || json.Unmarshal([]byte(out), &key) != nil {
		t.Fatalf("keys create: %d %s %s", code, out, errOut)
	}
	theirs := newAPI(s.url, key.Secret)
	theirStore := theirs.createStore(t, "theirs")
	openMCP(token(theirs, theirStore))
	if status, body := stream(key.Secret, theirStore); status != 200 {
		t.Errorf("another workspace's stream: %d %s", status, body)
	}
}

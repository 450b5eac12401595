package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memstore/memstore/httpapi"
)

// endedWithin bounds how long a stream of a credential revoked by
// another process on the same database file may go on: heard within a
// second or two, with room for a loaded machine.
const endedWithin = 3 * time.Second

// feedStream is an open change-feed stream (Server-Sent Events) of one
// store, read in the background.
type feedStream struct {
	name   string
	ids    chan string   // the id of each event received
	ended  chan struct{} // closed when the server ends the stream
	cancel context.CancelFunc
}

// openFeed opens a stream of store's feed on server base, from its end,
// with the credential sent as header.
func openFeed(t *testing.T, name, base, header, credential, store string) *feedStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/v1/memory_stores/"+store+"/events?after=now", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(header, credential)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		t.Fatalf("%s: the stream answered %s: %s", name, res.Status, b)
	}
	f := &feedStream{name: name, ids: make(chan string, 100), ended: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(f.ended)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
				f.ids <- id
			}
		}
	}()
	return f
}

// receives waits for an event on f.
func (f *feedStream) receives(t *testing.T) {
	t.Helper()
	select {
	case <-f.ids:
	case <-f.ended:
		t.Fatalf("%s: the stream ended before its event", f.name)
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no event within 10s", f.name)
	}
}

// endsWithin fails unless the server ends f within d of since.
func (f *feedStream) endsWithin(t *testing.T, since time.Time, d time.Duration) {
	t.Helper()
	select {
	case <-f.ended:
	case <-time.After(time.Until(since.Add(d))):
		t.Errorf("%s: the stream still runs %v after the revocation by another process", f.name, d)
		f.cancel()
	}
}

// revoke runs a command of memstore in this process, on the database
// file of the server, as another process would (with a handle of its
// own), and returns when it finished: the revocation's commit.
func revoke(t *testing.T, args ...string) time.Time {
	t.Helper()
	cli(t, args...)
	return time.Now()
}

var mcpSessionsMetric = regexp.MustCompile(`(?m)^memstore_mcp_sessions (\d+)$`)

// mcpSessions reads the number of open MCP sessions from the server's
// metrics.
func mcpSessions(t *testing.T, base string) string {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	m := mcpSessionsMetric.FindSubmatch(b)
	if m == nil {
		t.Fatalf("the metrics have no memstore_mcp_sessions:\n%s", b)
	}
	return string(m[1])
}

// TestRevokedByAnotherProcessEndsStreams: on a database file, a key or a
// token revoked, a session ended or deleted, or a store detached by the
// command line, in another process, ends the running server's change-feed
// streams and MCP sessions that stood on it within a second or two, as
// the server's own revocations do; the streams of other credentials go
// on.
func TestRevokedByAnotherProcessEndsStreams(t *testing.T) {
	clearEnv(t)
	testRevokedByAnotherProcess(t, filepath.Join(t.TempDir(), "m.db"))
}

// TestRevokedByAnotherProcessEndsStreamsPostgres: the same on PostgreSQL.
func TestRevokedByAnotherProcessEndsStreamsPostgres(t *testing.T) {
	clearEnv(t)
	testRevokedByAnotherProcess(t, postgresDB(t, "unused"))
}

func testRevokedByAnotherProcess(t *testing.T, db string) {
	srv := startChild(t, db)
	admin := newAPI(srv.url, srv.key)
	notes, prefs := admin.createStore(t, "notes"), admin.createStore(t, "prefs")
	write := func(path string) {
		t.Helper()
		admin.must(t, "POST", "/v1/memory_stores/"+notes+"/memories", map[string]any{"path": path, "content": "x"}, nil)
	}
	session := func() httpapi.SessionJSON {
		t.Helper()
		var s httpapi.SessionJSON
		admin.must(t, "POST", "/v1/sessions", map[string]any{"resources": []any{
			map[string]any{"type": "memory_store", "memory_store_id": notes},
			map[string]any{"type": "memory_store", "memory_store_id": prefs},
		}}, &s)
		return s
	}
	control := openFeed(t, "the server's own key", srv.url, "X-Api-Key", srv.key, notes)

	// An API key, made and revoked by the command line.
	out := cli(t, "keys", "create", "--db", db, "--name", "laptop", "--json")
	var key struct{ ID, Secret string }
	if err := json.Unmarshal([]byte(out), &key); err != nil {
		t.Fatalf("keys create: %v: %s", err, out)
	}
	keyed := openFeed(t, "a revoked key", srv.url, "X-Api-Key", key.Secret, notes)

	// A session with two tokens, the first revoked, then the stream's
	// store detached from it.
	two := session()
	var second struct{ ID, Token string }
	admin.must(t, "POST", "/v1/sessions/"+two.ID+"/tokens", map[string]any{}, &second)
	first := openFeed(t, "a revoked token", srv.url, "X-Api-Key", two.Token, notes)
	detached := openFeed(t, "a token whose store was detached", srv.url, "X-Api-Key", second.Token, notes)
	// A session ended, and one deleted.
	ended, deleted := session(), session()
	endedFeed := openFeed(t, "a token of an ended session", srv.url, "X-Api-Key", ended.Token, notes)
	deletedFeed := openFeed(t, "a token of a deleted session", srv.url, "X-Api-Key", deleted.Token, notes)

	write("/live.md")
	for _, f := range []*feedStream{control, keyed, first, detached, endedFeed, deletedFeed} {
		f.receives(t)
	}

	at := revoke(t, "keys", "revoke", "--yes", "--db", db, key.ID)
	keyed.endsWithin(t, at, endedWithin)
	at = revoke(t, "sessions", "revoke", "--yes", "--db", db, two.TokenID)
	first.endsWithin(t, at, endedWithin)
	at = revoke(t, "sessions", "detach", "--db", db, two.ID, "--store", notes)
	detached.endsWithin(t, at, endedWithin)
	at = revoke(t, "sessions", "revoke", "--yes", "--db", db, ended.ID)
	endedFeed.endsWithin(t, at, endedWithin)
	at = revoke(t, "sessions", "rm", "--yes", "--db", db, deleted.ID)
	deletedFeed.endsWithin(t, at, endedWithin)

	// The stream of a credential that still works goes on.
	write("/after.md")
	control.receives(t)

	// An MCP session whose token is revoked by the command line is
	// closed.
	mcpOwner := session()
	cs := mcpConnect(t, &mcp.StreamableClientTransport{Endpoint: srv.url + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport(mcpOwner.Token)}, MaxRetries: -1})
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if n := mcpSessions(t, srv.url); n != "1" {
		t.Fatalf("open MCP sessions: %s, want 1", n)
	}
	at = revoke(t, "sessions", "revoke", "--yes", "--db", db, mcpOwner.TokenID)
	for mcpSessions(t, srv.url) != "0" {
		if time.Since(at) > endedWithin {
			t.Fatalf("the MCP session of a token revoked by another process is still open %v after", endedWithin)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/mcpserver"
	"github.com/memstore/memstore/storetest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveMCP serves the handler of c over e's database, closed at the end
// of the test; c.Sessions, when not set, is a Core over it.
func serveMCP(t testing.TB, e *env, c mcpserver.HandlerConfig) (*mcpserver.HTTPHandler, *httptest.Server) {
	t.Helper()
	return serveMCPOn(t, e, c, (*httptest.Server).Start)
}

// serveMCPOn is serveMCP with the server started by start, which may set
// its config first.
func serveMCPOn(t testing.TB, e *env, c mcpserver.HandlerConfig, start func(*httptest.Server)) (*mcpserver.HTTPHandler, *httptest.Server) {
	t.Helper()
	if c.Sessions == nil {
		c.Sessions = memstore.NewCore(e.db)
	}
	c.Services, c.Version = e.services(), "test"
	h := mcpserver.Handler(c)
	srv := httptest.NewUnstartedServer(h)
	start(srv)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return h, srv
}

// answer is an HTTP answer of /mcp.
type answer struct {
	status    int
	header    http.Header
	body      string
	sessionID string
}

// post sends one JSON-RPC message to /mcp as token, within MCP session
// sid if not empty; edit changes the request before it goes.
func post(t testing.TB, url, token, sid, body string, edit ...func(*http.Request)) answer {
	t.Helper()
	return postWith(t, http.DefaultClient, url, token, sid, body, edit...)
}

// postWith is post through client hc.
func postWith(t testing.TB, hc *http.Client, url, token, sid, body string, edit ...func(*http.Request)) answer {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	for _, f := range edit {
		f(req)
	}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{res.StatusCode, res.Header, string(b), res.Header.Get("Mcp-Session-Id")}
}

// initialize is an initialize request whose client is named name.
func initialize(name string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":%q,"version":"1"}}}`, name)
}

const toolsList = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

// open opens an MCP session with raw requests, as a client that never
// opens a GET stream, and returns its ID.
func open(t testing.TB, url, token string) string {
	t.Helper()
	return openWith(t, http.DefaultClient, url, token)
}

// openWith is open through client hc.
func openWith(t testing.TB, hc *http.Client, url, token string) string {
	t.Helper()
	a := postWith(t, hc, url, token, "", initialize("raw"))
	if a.status != 200 || a.sessionID == "" {
		t.Fatalf("initialize: %d %s", a.status, a.body)
	}
	if a := postWith(t, hc, url, token, a.sessionID, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); a.status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", a.status, a.body)
	}
	return a.sessionID
}

// rpcError decodes the JSON-RPC error of a refused request.
func rpcError(t *testing.T, a answer) (int, string) {
	t.Helper()
	var m struct {
		ID    any
		Error struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal([]byte(a.body), &m); err != nil || m.Error.Message == "" || m.ID != nil {
		t.Fatalf("%d %q is no JSON-RPC error (%v)", a.status, a.body, err)
	}
	if ct := a.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("content type %q", ct)
	}
	return m.Error.Code, m.Error.Message
}

// eventually waits up to 5s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 5s, still not %s", what)
		}
	}
}

// TestSessionsPerSessionCap opens one MCP session more than a memstore
// session may hold: its least recently used one is closed, and the
// sessions of another memstore session are left alone.
func TestSessionsPerSessionCap(t *testing.T) {
	e := newEnv(t)
	h, srv := serveMCP(t, e, mcpserver.HandlerConfig{MaxSessionsPerSession: 2})
	_, otherToken := e.session(t, memstore.AttachmentCreate{StoreID: e.notes})
	other := open(t, srv.URL, otherToken)

	first, err := connectHTTP(t.Context(), srv.URL, e.secret)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second := open(t, srv.URL, e.secret)
	if _, err := first.ListTools(t.Context(), nil); err != nil { // first is now the most recently used
		t.Fatal(err)
	}
	third := open(t, srv.URL, e.secret)
	if n := h.OpenSessions(); n != 3 {
		t.Errorf("%d MCP sessions open; want 3: two of the session, one of the other", n)
	}
	if a := post(t, srv.URL, e.secret, second, toolsList); a.status != http.StatusNotFound || !strings.Contains(a.body, "not open") {
		t.Errorf("the least recently used session after a third was opened: %d %s; want 404", a.status, a.body)
	}
	if _, err := first.ListTools(t.Context(), nil); err != nil {
		t.Errorf("the official client's session, used since: %v", err)
	}
	for _, s := range []struct{ sid, token string }{{third, e.secret}, {other, otherToken}} {
		if a := post(t, srv.URL, s.token, s.sid, toolsList); a.status != 200 || !strings.Contains(a.body, "memory_read") {
			t.Errorf("tools/list: %d %s", a.status, a.body)
		}
	}
}

// TestSessionsCap opens one MCP session more than the server may hold:
// initialize is refused with a message naming the limit, and works again
// once a session has been ended.
func TestSessionsCap(t *testing.T) {
	e := newEnv(t)
	// One workspace, whose share is the whole server's: its cap decides.
	h, srv := serveMCP(t, e, mcpserver.HandlerConfig{MaxSessions: 2, MaxSessionsPerWorkspace: 2})
	open(t, srv.URL, e.secret)
	_, otherToken := e.session(t, memstore.AttachmentCreate{StoreID: e.notes})
	sid := open(t, srv.URL, otherToken)

	a := post(t, srv.URL, e.secret, "", initialize("one too many"))
	if a.status != http.StatusServiceUnavailable {
		t.Fatalf("initialize beyond the cap: %d %s; want 503", a.status, a.body)
	}
	if _, msg := rpcError(t, a); !strings.Contains(msg, "the server is at its limit of 2 open MCP sessions;") || !strings.HasSuffix(msg, "(memstore serve --mcp-max-sessions)") || !strings.Contains(msg, "DELETE /mcp") {
		t.Errorf("message %q", msg)
	}
	if h.OpenSessions() != 2 {
		t.Errorf("%d sessions open", h.OpenSessions())
	}

	req, _ := http.NewRequest("DELETE", srv.URL, nil)
	req.Header.Set("Authorization", "Bearer "+otherToken)
	req.Header.Set("Mcp-Session-Id", sid)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	eventually(t, "one session after DELETE", func() bool { return h.OpenSessions() == 1 })
	open(t, srv.URL, e.secret)
}

// TestIdleSessionsAreClosed leaves a session of the official client,
// with its GET stream open, without requests for longer than the idle
// timeout.
func TestIdleSessionsAreClosed(t *testing.T) {
	e := newEnv(t)
	h, srv := serveMCP(t, e, mcpserver.HandlerConfig{IdleTimeout: 300 * time.Millisecond})
	cs, err := connectHTTP(t.Context(), srv.URL, e.secret)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if h.OpenSessions() != 1 {
		t.Fatalf("%d sessions open", h.OpenSessions())
	}
	eventually(t, "closed when idle", func() bool { return h.OpenSessions() == 0 })
	if a := post(t, srv.URL, e.secret, cs.ID(), toolsList); a.status != http.StatusNotFound {
		t.Errorf("a request of the idle session: %d %s; want 404", a.status, a.body)
	}
}

// settledGoroutines is the number of goroutines once those that earlier
// tests left ending (closing connections, timers) are gone: the same
// count five readings in a row, 20 ms apart, or the last after 2 s.
func settledGoroutines() int {
	n, same := -1, 0
	for deadline := time.Now().Add(2 * time.Second); same < 5 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		runtime.GC()
		if m := runtime.NumGoroutine(); m == n {
			same++
		} else {
			n, same = m, 0
		}
	}
	return n
}

// TestRevocationClosesSessions checks that the MCP sessions of a memstore
// session end, and their goroutines with them, as soon as it is archived,
// its token revoked, or its token expires.
func TestRevocationClosesSessions(t *testing.T) {
	e := newEnv(t)
	h, srv := serveMCP(t, e, mcpserver.HandlerConfig{MaxSessionsPerSession: 50})
	before := settledGoroutines()

	// Archive: 20 sessions, each holding goroutines.
	var sids []string
	for range 20 {
		sids = append(sids, open(t, srv.URL, e.secret))
	}
	if n := runtime.NumGoroutine(); n < before+20 {
		t.Fatalf("%d goroutines with 20 sessions open, %d before: the test counts nothing", n, before)
	}
	if _, err := e.core.ArchiveSession(t.Context(), e.admin, e.caller.Session.ID); err != nil {
		t.Fatal(err)
	}
	if n := h.OpenSessions(); n != 0 {
		t.Errorf("%d MCP sessions open right after the archive", n)
	}
	eventually(t, "the sessions' goroutines gone", func() bool {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		return runtime.NumGoroutine() <= before+2
	})
	// A new token of the session is refused; so the session ID is unknown
	// even to a token that would be accepted.
	_, other := e.session(t, memstore.AttachmentCreate{StoreID: e.notes})
	if a := post(t, srv.URL, other, sids[0], toolsList); a.status != http.StatusNotFound {
		t.Errorf("a request of a session closed by the archive: %d %s", a.status, a.body)
	}

	// Revoke the token that opened a session.
	c, token := e.session(t, memstore.AttachmentCreate{StoreID: e.notes})
	open(t, srv.URL, token)
	if n := h.OpenSessions(); n != 1 {
		t.Fatalf("%d sessions open", n)
	}
	if _, err := e.core.RevokeSessionToken(t.Context(), e.admin, c.TokenID); err != nil {
		t.Fatal(err)
	}
	if n := h.OpenSessions(); n != 0 {
		t.Errorf("%d MCP sessions open right after the token's revocation", n)
	}

	// A token that expires in a second.
	_, _, secret, err := e.core.CreateSession(t.Context(), e.admin, memstore.SessionCreate{
		Stores: []memstore.AttachmentCreate{{StoreID: e.notes}}, TokenTTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	open(t, srv.URL, secret)
	if n := h.OpenSessions(); n != 1 {
		t.Fatalf("%d sessions open", n)
	}
	eventually(t, "closed at the token's expiry", func() bool { return h.OpenSessions() == 0 })
}

// TestGETStreamOutlivesWriteTimeout: a GET stream stays open past the
// server's read and write timeouts, sending heartbeats, over HTTP/1.1 and
// over HTTP/2 (where the write timeout is a timer of each stream).
func TestGETStreamOutlivesWriteTimeout(t *testing.T) {
	for _, http2 := range []bool{false, true} {
		t.Run(fmt.Sprint("http2=", http2), func(t *testing.T) {
			e := newEnv(t)
			_, srv := serveMCPOn(t, e, mcpserver.HandlerConfig{StreamHeartbeat: 50 * time.Millisecond}, func(s *httptest.Server) {
				s.Config.WriteTimeout, s.Config.ReadTimeout = 300*time.Millisecond, 300*time.Millisecond
				if http2 {
					s.EnableHTTP2 = true
					s.StartTLS()
				} else {
					s.Start()
				}
			})
			sid := openWith(t, srv.Client(), srv.URL, e.secret)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Authorization", "Bearer "+e.secret)
			req.Header.Set("Mcp-Session-Id", sid)
			res, err := srv.Client().Do(req)
			if err != nil || res.StatusCode != http.StatusOK {
				t.Fatalf("the GET stream: %v %v", res, err)
			}
			defer res.Body.Close()
			if http2 != (res.ProtoMajor == 2) {
				t.Fatalf("the stream is %s", res.Proto)
			}
			lines := make(chan string)
			go func() {
				defer close(lines)
				sc := bufio.NewScanner(res.Body)
				for sc.Scan() {
					lines <- sc.Text()
				}
			}()
			time.Sleep(500 * time.Millisecond) // past both timeouts
			for heartbeats := 0; heartbeats < 3; {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("the stream ended after %d heartbeats past the write timeout", heartbeats)
					}
					if l == ": heartbeat" {
						heartbeats++
					}
				case <-ctx.Done():
					t.Fatal("no heartbeat in time")
				}
			}
		})
	}
}

// TestUnheardRevocationsAreRechecked: a token revoked while the handler
// heard nothing of it (a lost notice) keeps its MCP session and GET stream
// open, until the handler learns that notices went unheard: it then reads
// each session's token again and closes those that no longer work, with
// their GET streams. A session whose token still works stays open.
func TestUnheardRevocationsAreRechecked(t *testing.T) {
	e := newEnv(t)
	deaf := &storetest.DeafSessions{SessionService: memstore.NewCore(e.db)}
	h, srv := serveMCP(t, e, mcpserver.HandlerConfig{Sessions: deaf})
	revoked, token := e.session(t, memstore.AttachmentCreate{StoreID: e.notes})
	sid := open(t, srv.URL, token)
	open(t, srv.URL, e.secret)

	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", sid)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the GET stream: %v %v", res, err)
	}
	defer res.Body.Close()
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		io.Copy(io.Discard, res.Body)
	}()

	if _, err := e.core.RevokeSessionToken(t.Context(), e.admin, revoked.TokenID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if n := h.OpenSessions(); n != 2 {
		t.Fatalf("%d MCP sessions open after a revocation the handler should not have heard, want 2", n)
	}
	deaf.Notices.Revoked(memstore.Revocation{Unheard: true})
	eventually(t, "the revoked token's session closed", func() bool { return h.OpenSessions() == 1 })
	select {
	case <-ended:
	case <-time.After(2 * time.Second):
		t.Error("the GET stream of the revoked token goes on")
	}
	if a := post(t, srv.URL, e.secret, "", initialize("still")); a.status != http.StatusOK {
		t.Errorf("the valid token after the re-check: %d %s", a.status, a.body)
	}
}

// TestBodyLimit sends an initialize with a client name over the body
// limit: 413, and no session is opened.
func TestBodyLimit(t *testing.T) {
	e := newEnv(t)
	h, srv := serveMCP(t, e, mcpserver.HandlerConfig{MaxBodyBytes: 4096})
	a := post(t, srv.URL, e.secret, "", initialize(strings.Repeat("x", 5000)))
	if a.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("a 5 kB initialize with a limit of 4096 bytes: %d %s; want 413", a.status, a.body)
	}
	if code, msg := rpcError(t, a); code != -32600 || !strings.Contains(msg, "larger than 4096 bytes") {
		t.Errorf("error %d %q", code, msg)
	}
	if n := h.OpenSessions(); n != 0 {
		t.Errorf("%d sessions open", n)
	}
	sid := open(t, srv.URL, e.secret)
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_write","arguments":{"path":"/mnt/memory/notes/big.md","content":"` + strings.Repeat("x", 5000) + `"}}}`
	if a := post(t, srv.URL, e.secret, sid, call); a.status != http.StatusRequestEntityTooLarge {
		t.Errorf("a 5 kB tool call: %d %s; want 413", a.status, a.body)
	}
	if a := post(t, srv.URL, e.secret, sid, toolsList); a.status != 200 {
		t.Errorf("the session after a refused request: %d %s", a.status, a.body)
	}
}

// TestOrigin checks the Origin header of browsers: a foreign one is
// refused, the server's own and those allowed are let in, as are requests
// without one.
func TestOrigin(t *testing.T) {
	e := newEnv(t)
	_, srv := serveMCP(t, e, mcpserver.HandlerConfig{AllowedOrigins: []string{"https://App.example.com/"}})
	origin := func(o string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Origin", o) }
	}
	for _, o := range []string{"https://evil.example", "null", "https://app.example.com.evil.example", "http://app.example.com"} {
		a := post(t, srv.URL, e.secret, "", initialize("browser"), origin(o))
		if a.status != http.StatusForbidden {
			t.Errorf("origin %s: %d %s; want 403", o, a.status, a.body)
			continue
		}
		want := "allow it with memstore serve --allowed-origins " + o
		if o == "null" {
			want = "it cannot be allowed"
		}
		if _, msg := rpcError(t, a); !strings.Contains(msg, fmt.Sprintf("%q", o)) || !strings.Contains(msg, want) {
			t.Errorf("origin %s: message %q, want %q", o, msg, want)
		}
	}
	own := "http://" + strings.TrimPrefix(srv.URL, "http://")
	for _, o := range []string{"", "https://app.example.com", own} {
		var edit []func(*http.Request)
		if o != "" {
			edit = append(edit, origin(o))
		}
		if a := post(t, srv.URL, e.secret, "", initialize("browser"), edit...); a.status != 200 || a.sessionID == "" {
			t.Errorf("origin %q: %d %s; want 200", o, a.status, a.body)
		}
	}
	if _, err := mcpserver.NormalizeOrigin("app.example.com"); err == nil || !strings.Contains(err.Error(), "SCHEME://HOST[:PORT]") {
		t.Errorf("an origin without a scheme: %v", err)
	}
}

// TestUnauthenticated checks that every request without a valid session
// token gets a 401 with a challenge and a JSON-RPC error saying what to
// send instead.
func TestUnauthenticated(t *testing.T) {
	e := newEnv(t)
	_, srv := serveMCP(t, e, mcpserver.HandlerConfig{})
	for _, tt := range []struct{ auth, want string }{
		{"", "missing session token"},
		{"Basic dXNlcjpwYXNz", "missing session token"},
		{"Bearer sk-memstore-0123456789abcdef", "/mcp needs a session token (st-memstore-...)"},
		{"Bearer opaque", "not a session token"},
		{"Bearer st-memstore-forged", "invalid session token"},
	} {
		a := post(t, srv.URL, "", "", toolsList, func(r *http.Request) { r.Header.Set("Authorization", tt.auth) })
		if a.status != http.StatusUnauthorized || !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Bearer ") {
			t.Errorf("%q: %d, WWW-Authenticate %q", tt.auth, a.status, a.header.Get("WWW-Authenticate"))
			continue
		}
		if _, msg := rpcError(t, a); !strings.Contains(msg, tt.want) {
			t.Errorf("%q: message %q, want %q", tt.auth, msg, tt.want)
		}
	}
	a := post(t, srv.URL, "sk-memstore-0123456789abcdef", "", toolsList)
	if _, msg := rpcError(t, a); !strings.Contains(msg, "API keys (sk-memstore-...) are for the /v1 API") || !strings.Contains(msg, "memstore sessions create") {
		t.Errorf("an API key: %q", msg)
	}
}

// TestOpeningRequestsAreCounted sends requests without an MCP session
// that the SDK takes as an initialize however they are spelled (trailing
// bytes after the message, a second "method" key in other letters): each
// session it opens is counted, capped and closed with its memstore
// session. A request that opens nothing is forgotten at once.
func TestOpeningRequestsAreCounted(t *testing.T) {
	e := newEnv(t)
	h, srv := serveMCP(t, e, mcpserver.HandlerConfig{MaxSessions: 2, MaxSessionsPerWorkspace: 2})
	trailing := initialize("trailing") + " x"
	caseVariant := strings.Replace(initialize("case"), `"method":"initialize",`, `"method":"initialize","METHOD":"ping",`, 1)
	var sids []string
	for i, body := range []string{trailing, caseVariant} {
		a := post(t, srv.URL, e.secret, "", body)
		if a.status != 200 || a.sessionID == "" {
			t.Fatalf("%q: %d %s; want a session", body, a.status, a.body)
		}
		if n := h.OpenSessions(); n != i+1 {
			t.Errorf("after %q, %d MCP sessions counted; want %d", body, n, i+1)
		}
		sids = append(sids, a.sessionID)
	}
	if a := post(t, srv.URL, e.secret, "", trailing); a.status != http.StatusServiceUnavailable {
		t.Errorf("a third session with a cap of 2: %d %s (session %q); want 503", a.status, a.body, a.sessionID)
	}
	for _, sid := range sids {
		if a := post(t, srv.URL, e.secret, sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); a.status != 200 {
			t.Errorf("a ping of session %s: %d %s", sid, a.status, a.body)
		}
	}
	if _, err := e.core.ArchiveSession(t.Context(), e.admin, e.caller.Session.ID); err != nil {
		t.Fatal(err)
	}
	if n := h.OpenSessions(); n != 0 {
		t.Errorf("%d MCP sessions open right after the archive", n)
	}

	_, token := e.session(t, memstore.AttachmentCreate{StoreID: e.notes})
	for _, body := range []string{toolsList, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "not json"} {
		if a := post(t, srv.URL, token, "", body); a.sessionID != "" {
			t.Errorf("%q opened session %s: %d %s", body, a.sessionID, a.status, a.body)
		}
		eventually(t, "no session counted after "+body, func() bool { return h.OpenSessions() == 0 })
	}
}

// TestOpeningBodyLimit sends requests without an MCP session, which may
// open one, over MaxOpeningBodyBytes: 413 naming the limit, and nothing
// opened; a request of the same size within a session is served.
func TestOpeningBodyLimit(t *testing.T) {
	e := newEnv(t)
	h, srv := serveMCP(t, e, mcpserver.HandlerConfig{MaxBodyBytes: 1 << 20})
	big := strings.Repeat("x", mcpserver.MaxOpeningBodyBytes)
	for _, body := range []string{initialize(big), initialize(big) + " x", toolsList + strings.Repeat(" ", mcpserver.MaxOpeningBodyBytes)} {
		a := post(t, srv.URL, e.secret, "", body)
		if a.status != http.StatusRequestEntityTooLarge {
			t.Errorf("a %d-byte request without a session: %d %.200s; want 413", len(body), a.status, a.body)
			continue
		}
		if code, msg := rpcError(t, a); code != -32600 || !strings.Contains(msg, "larger than 65536 bytes, the limit of a request that opens an MCP session") {
			t.Errorf("error %d %q", code, msg)
		}
	}
	if n := h.OpenSessions(); n != 0 {
		t.Errorf("%d sessions open", n)
	}
	sid := open(t, srv.URL, e.secret)
	ping := `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"pad":"` + big + `"}}}`
	if a := post(t, srv.URL, e.secret, sid, ping); a.status != 200 || !strings.Contains(a.body, `"id":5`) {
		t.Errorf("a %d-byte ping within a session: %d %.200s; want 200", len(ping), a.status, a.body)
	}
}

// TestOpeningWaitsForOpening checks that a request opening an MCP session
// at the server's cap waits for the requests opening others to end, as
// most open nothing: clients such as the official one probe the server
// before they initialize, and the probe's place is free once it ends. It
// is refused as soon as the one awaited keeps its place.
func TestOpeningWaitsForOpening(t *testing.T) {
	e := newEnv(t)
	h, srv := serveMCP(t, e, mcpserver.HandlerConfig{MaxSessions: 1})
	// The next request that may open a session is held in progress until
	// the channel sent on hold is closed.
	hold, entered := make(chan chan struct{}, 1), make(chan struct{})
	mcpserver.OnOpening(h, func(*mcp.Server) {
		select {
		case release := <-hold:
			entered <- struct{}{}
			<-release
		default:
		}
	})
	for _, first := range []struct {
		body string
		want int // of the second request, an initialize
	}{
		{toolsList, 200}, // opens nothing
		{initialize("first"), http.StatusServiceUnavailable}, // keeps the place
	} {
		release := make(chan struct{})
		hold <- release
		answered := make(chan answer, 1)
		go func() { answered <- post(t, srv.URL, e.secret, "", first.body) }()
		<-entered
		second := make(chan answer, 1)
		go func() { second <- post(t, srv.URL, e.secret, "", initialize("second")) }()
		select {
		case a := <-second:
			close(release)
			t.Fatalf("after %s: an initialize at the cap, while a request that may open a session is in progress: %d %s; want it to wait", first.body, a.status, a.body)
		case <-time.After(200 * time.Millisecond):
		}
		began := time.Now()
		close(release)
		<-answered
		if a := <-second; a.status != first.want {
			t.Errorf("after %s: the initialize that waited: %d %s; want %d", first.body, a.status, a.body, first.want)
		}
		if d := time.Since(began); d > 2*time.Second {
			t.Errorf("after %s: the initialize was answered %s after the request awaited ended", first.body, d)
		}
		if first.want == 200 {
			// Make room for the next round.
			if _, err := e.core.ArchiveSession(t.Context(), e.admin, e.caller.Session.ID); err != nil {
				t.Fatal(err)
			}
			e.caller, e.secret = e.session(t, memstore.AttachmentCreate{StoreID: e.notes})
		}
	}
}

// TestOfficialClientAtSessionCap connects the official client for a
// memstore session at its cap: its probe and its initialize close one MCP
// session between them, the least recently used.
func TestOfficialClientAtSessionCap(t *testing.T) {
	e := newEnv(t)
	h, srv := serveMCP(t, e, mcpserver.HandlerConfig{MaxSessionsPerSession: 2})
	older, newer := open(t, srv.URL, e.secret), open(t, srv.URL, e.secret)
	cs, err := connectHTTP(t.Context(), srv.URL, e.secret)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if a := post(t, srv.URL, e.secret, older, toolsList); a.status != http.StatusNotFound {
		t.Errorf("the least recently used session: %d %s; want 404", a.status, a.body)
	}
	if a := post(t, srv.URL, e.secret, newer, toolsList); a.status != 200 {
		t.Errorf("the other session: %d %s; want it still open", a.status, a.body)
	}
	if n := h.OpenSessions(); n != 2 {
		t.Errorf("%d MCP sessions open; want 2", n)
	}
}

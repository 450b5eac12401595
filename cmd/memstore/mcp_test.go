package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/mcpserver"
)

// mcpCall calls a tool and returns its text and whether it is an error.
func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// mcpConnect connects the official MCP client to a transport.
func mcpConnect(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "memstore-test"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func memstoreBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("memstore") // the test binary, see TestMain
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestMCPStdioLocal runs 'memstore mcp --db' as a real subprocess: it
// makes a session of its own with the given stores, its writes are that
// session's, and the session ends with the process.
func TestMCPStdioLocal(t *testing.T) {
	clearEnv(t)
	db := filepath.Join(t.TempDir(), "m.db")
	var notes, prefs httpapi.StoreJSON
	for _, s := range []struct {
		name string
		into *httpapi.StoreJSON
	}{{"notes", &notes}, {"prefs", &prefs}} {
		code, out, errs := run(t, "", "--db", db, "stores", "create", s.name, "--json")
		if code != 0 || json.Unmarshal([]byte(out), s.into) != nil {
			t.Fatalf("stores create: %d %s %s", code, out, errs)
		}
	}
	cmd := exec.Command(memstoreBin(t), "mcp", "--db", db, "--store", notes.ID, "--instructions", "Project notes.", "--store", "prefs:ro") // by ID and by name
	cs := mcpConnect(t, &mcp.CommandTransport{Command: cmd})

	ins := cs.InitializeResult().Instructions
	for _, want := range []string{"/mnt/memory/notes", "Project notes.", "/mnt/memory/prefs", "read-only"} {
		if !strings.Contains(ins, want) {
			t.Errorf("instructions lack %q:\n%s", want, ins)
		}
	}
	if text, isErr := mcpCall(t, cs, "memory_write", map[string]any{"path": "/mnt/memory/notes/todo.md", "content": "ship it\n"}); isErr {
		t.Fatal(text)
	}
	if text, isErr := mcpCall(t, cs, "memory_write", map[string]any{"path": "/mnt/memory/prefs/x.md", "content": "no"}); !isErr || !strings.Contains(text, "read-only") {
		t.Errorf("write to a read-only store: %v %s", isErr, text)
	}
	if text, isErr := mcpCall(t, cs, "memory_search", map[string]any{"query": "ship"}); isErr || !strings.Contains(text, "/mnt/memory/notes/todo.md") {
		t.Errorf("search: %v %s", isErr, text)
	}
	cs.Close()
	cmd.Wait()

	code, out, errs := run(t, "", "--db", db, "log", "--store", notes.ID, "/todo.md")
	if code != 0 || !strings.Contains(out, "session_actor:sesn_") {
		t.Errorf("log: %d %s %s", code, out, errs)
	}
	code, out, _ = run(t, "", "--db", db, "sessions", "ls", "--archived", "--json")
	var ss []httpapi.SessionJSON
	if code != 0 || json.Unmarshal([]byte(out), &ss) != nil || len(ss) != 1 || ss[0].ArchivedAt == nil || ss[0].Title != "memstore mcp" {
		t.Errorf("the local session after exit: %s", out)
	}
}

// TestMCPAgainstServer runs 'memstore mcp --url --token' as a subprocess
// against a real server, and the server's own /mcp endpoint over
// streamable HTTP, both with a session token.
func TestMCPAgainstServer(t *testing.T) {
	clearEnv(t)
	srv := startChild(t, filepath.Join(t.TempDir(), "m.db"))
	a := newAPI(srv.url, srv.key)
	notes, prefs := a.createStore(t, "Notes"), a.createStore(t, "Prefs")
	a.must(t, "POST", "/v1/memory_stores/"+prefs+"/memories", map[string]any{"path": "/style.md", "content": "Tabs.\n"}, nil)
	var sess httpapi.SessionJSON
	a.must(t, "POST", "/v1/sessions", map[string]any{"resources": []any{
		map[string]any{"type": "memory_store", "memory_store_id": notes},
		map[string]any{"type": "memory_store", "memory_store_id": prefs, "access": "read_only"},
	}}, &sess)

	stdio := mcpConnect(t, &mcp.CommandTransport{Command: exec.Command(memstoreBin(t), "mcp", "--url", srv.url, "--token", sess.Token)})
	hc := &http.Client{Transport: bearerTransport(sess.Token)}
	streamable := mcpConnect(t, &mcp.StreamableClientTransport{Endpoint: srv.url + "/mcp", HTTPClient: hc, MaxRetries: -1})

	for name, cs := range map[string]*mcp.ClientSession{"stdio": stdio, "streamable": streamable} {
		path := "/mnt/memory/notes/" + name + ".md"
		if text, isErr := mcpCall(t, cs, "memory_write", map[string]any{"path": path, "content": "written over " + name + "\n"}); isErr {
			t.Errorf("%s: write: %s", name, text)
		}
		if text, isErr := mcpCall(t, cs, "memory_read", map[string]any{"path": "/mnt/memory/prefs/style.md"}); isErr || !strings.Contains(text, "Tabs.") {
			t.Errorf("%s: read: %s", name, text)
		}
		if text, isErr := mcpCall(t, cs, "memory_edit", map[string]any{"path": "/mnt/memory/prefs/style.md", "old_str": "Tabs", "new_str": "Spaces"}); !isErr {
			t.Errorf("%s: edit of a read-only store: %s", name, text)
		}
		if text, isErr := mcpCall(t, cs, "memory_search", map[string]any{"query": "written"}); isErr || !strings.Contains(text, path) {
			t.Errorf("%s: search across the session's stores: %s", name, text)
		}
	}
	var versions httpapi.PageJSON[httpapi.VersionJSON]
	a.must(t, "GET", "/v1/memory_stores/"+notes+"/memory_versions?session_id="+sess.ID, nil, &versions)
	if len(versions.Data) != 2 {
		t.Errorf("versions by the session: %d, want 2", len(versions.Data))
	}

	// An API key is not a session token.
	if _, err := mcp.NewClient(&mcp.Implementation{Name: "x"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: srv.url + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport(srv.key)}, MaxRetries: -1}, nil); err == nil {
		t.Error("/mcp accepted an API key")
	}
	code, _, errs := run(t, "", "mcp", "--url", srv.url, "--token", srv.key)
	if code == 0 || !strings.Contains(errs, "did not accept the session token") {
		t.Errorf("mcp with an API key: %d %s", code, errs)
	}
}

// bearerTransport sends token as a bearer token on every request.
type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession makes a session attaching a new store, notes, with the first
// key of s, and returns its token.
func mcpSession(t *testing.T, s *testServer) string {
	t.Helper()
	a := s.api(t)
	notes := a.createStore(t, "notes")
	var sess httpapi.SessionJSON
	a.must(t, "POST", "/v1/sessions", map[string]any{"resources": []any{
		map[string]any{"type": "memory_store", "memory_store_id": notes},
	}}, &sess)
	return sess.Token
}

// TestServeMCP checks /mcp in 'memstore serve': the body limit, the
// request log and the metrics, and a shutdown while a client holds its
// GET stream open and a tool call is in progress: the call is answered,
// and the server stops without waiting out its shutdown timeout.
func TestServeMCP(t *testing.T) {
	clearEnv(t)
	s := startServer(t, "--db", filepath.Join(t.TempDir(), "m.db"), "--log-level", "info", "--log-format", "json",
		"--mcp-max-sessions", "1", "--allowed-origins", "https://ok.example", "--max-body-bytes", "6000000")
	token := mcpSession(t, s)
	hc := &http.Client{Transport: bearerTransport(token)}
	// send posts body to /mcp, from a page of origin and within MCP
	// session sid when not empty.
	send := func(body, origin, sid string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", s.url+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	initializeBody := func(name string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":%q,"version":"1"}}}`, name)
	}
	initialize := func(name, origin string) (int, string) {
		t.Helper()
		return send(initializeBody(name), origin, "")
	}

	// A request that opens an MCP session is capped at 64 KiB. It is one
	// byte over, as the request within a session below: the server then
	// answers only once it has read the whole body, so the client is not
	// still writing when the server closes the connection (and the reset
	// of a close with unread data does not cut off the answer).
	longName := strings.Repeat("x", mcpserver.MaxOpeningBodyBytes+1-len(initializeBody("")))
	if status, body := initialize(longName, ""); status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than 65536 bytes") {
		t.Errorf("an initialize one byte over 64 KiB: %d %.200s; want 413", status, body)
	}

	cs := mcpConnect(t, &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", HTTPClient: hc, MaxRetries: -1})
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	// --max-body-bytes holds within a session, above the MCP SDK's own
	// default of 4 MiB too.
	ping := func(n int) string {
		return `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("x", n) + `"}}}`
	}
	if status, body := send(ping(5<<20), "", cs.ID()); status != http.StatusOK {
		t.Errorf("a 5 MiB request within a session: %d %.200s; want 200", status, body)
	}
	// One byte over the limit: a client still writing a larger body when
	// the server refuses it and closes the connection may not read the
	// answer.
	over := ping(6000000 + 1 - len(ping(0)))
	if status, body := send(over, "", cs.ID()); status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than 6000000 bytes") {
		t.Errorf("a request of %d bytes within a session: %d %.200s; want 413", len(over), status, body)
	}
	// --allowed-origins and --mcp-max-sessions 1: a foreign origin is
	// refused, an allowed one passes but finds the server full.
	if status, body := initialize("page", "https://evil.example"); status != http.StatusForbidden {
		t.Errorf("a foreign origin: %d %s; want 403", status, body)
	}
	if status, body := initialize("page", "https://ok.example"); status != http.StatusServiceUnavailable || !strings.Contains(body, "the server is at its limit of 1 open MCP sessions;") {
		t.Errorf("a second session with --mcp-max-sessions 1: %d %s; want 503", status, body)
	}
	res, err := http.Get(s.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`memstore_http_requests_total{method="POST",route="/mcp",status="200"}`, `memstore_http_requests_total{method="POST",route="/mcp",status="413"} 2`, "memstore_mcp_sessions 1"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	time.Sleep(200 * time.Millisecond) // the client opens its GET stream after initialize

	// A tool call whose body is half sent when the server is told to stop.
	call := `{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"memory_write","arguments":{"path":"/mnt/memory/notes/slow.md","content":"written while the server was stopping"}}}`
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\n"+
		"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
		strings.TrimPrefix(s.url, "http://"), token, cs.ID(), cs.InitializeResult().ProtocolVersion, len(call), call[:40])
	time.Sleep(100 * time.Millisecond)
	stopped := time.Now()
	s.stop()
	time.Sleep(300 * time.Millisecond)
	if _, err := io.WriteString(conn, call[40:]); err != nil {
		t.Fatal(err)
	}
	res, err = http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the tool call in progress got no answer: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), `"id":77`) || !strings.Contains(string(body), "/mnt/memory/notes/slow.md") {
		t.Errorf("the tool call in progress got %s %s", res.Status, body)
	}
	select {
	case code := <-s.done:
		s.done <- code
		if code != 0 {
			t.Errorf("exit status %d", code)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the server did not stop")
	}
	if d := time.Since(stopped); d > 3*time.Second {
		t.Errorf("the server took %s to stop, with an MCP client connected; want well under its shutdown timeout of %s", d, shutdownTimeout)
	}
	logs := s.stderr.String()
	if strings.Contains(logs, "cut off") {
		t.Errorf("requests were cut off:\n%s", logs)
	}
	for _, want := range []string{`"method":"POST","route":"/mcp","status":200`, `"method":"GET","route":"/mcp","status":200`, `"route":"/mcp","status":413`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the request log lacks %s:\n%s", want, logs)
		}
	}
}

// TestMCPStdioMalformedAndEarlyEOF pipes lines into 'memstore mcp' and
// closes its input at once: malformed lines get JSON-RPC errors and the
// session goes on, and every request sent is answered before it exits.
func TestMCPStdioMalformedAndEarlyEOF(t *testing.T) {
	clearEnv(t)
	db := filepath.Join(t.TempDir(), "m.db")
	var notes httpapi.StoreJSON
	if code, out, errs := run(t, "", "--db", db, "stores", "create", "notes", "--json"); code != 0 || json.Unmarshal([]byte(out), &notes) != nil {
		t.Fatalf("stores create: %d %s %s", code, out, errs)
	}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`this is not JSON`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"id":"no version"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_write","arguments":{"path":"/mnt/memory/notes/piped.md","content":"sent before the end of input\n"}}}`,
		`[{"jsonrpc":"2.0","id":4,"method":"ping"}]`,
	}, "\n") + "\n"
	cmd := exec.Command(memstoreBin(t), "mcp", "--db", db, "--store", notes.ID)
	cmd.Stdin = strings.NewReader(in)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("memstore mcp: %v\n%s", err, stderr.String())
	}
	answers := map[string]string{} // by id, "null" for errors without one
	var errorCodes []float64
	for line := range strings.Lines(string(out)) {
		var m struct {
			ID     json.RawMessage
			Result json.RawMessage
			Error  *struct{ Code float64 }
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON-RPC line: %q", line)
		}
		answers[string(m.ID)] = line
		if m.Error != nil && string(m.ID) == "null" {
			errorCodes = append(errorCodes, m.Error.Code)
		}
	}
	for _, id := range []string{"1", "2", "3"} {
		if answers[id] == "" || strings.Contains(answers[id], `"error"`) {
			t.Errorf("request %s: answer %q", id, answers[id])
		}
	}
	if !strings.Contains(answers["3"], "/mnt/memory/notes/piped.md") {
		t.Errorf("the write's answer: %s", answers["3"])
	}
	if want := []float64{-32700, -32600, -32600}; fmt.Sprint(errorCodes) != fmt.Sprint(want) {
		t.Errorf("errors without id: %v, want %v (parse error, invalid request, batch):\n%s", errorCodes, want, out)
	}
}

package main

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memstore/memstore/httpapi"
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
	cmd := exec.Command(memstoreBin(t), "mcp", "--db", db, "--store", notes.ID, "--instructions", "Project notes.", "--store", prefs.ID+":ro")
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

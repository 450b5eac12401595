package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/agenttool"
	"github.com/memstore/memstore/embed/embedtest"
	"github.com/memstore/memstore/embedindex"
	"github.com/memstore/memstore/mcpserver"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// env is a database with a session attaching two stores: notes, read-write,
// and prefs, read-only, holding /style.md.
type env struct {
	db     *sqlite.DB
	core   *memstore.Core   // over db
	admin  *memstore.Caller // an API key of ws
	ws     string
	notes  string
	prefs  string
	caller *memstore.Caller
	secret string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	db := sqlitetest.Open(t, sqlite.Options{})
	ws := sqlitetest.Workspace(t, db, "default")
	e := &env{db: db, core: memstore.NewCore(db), ws: ws.ID}
	e.admin = &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_test"}}
	e.notes = sqlitetest.Store(t, db, ws.ID, memstore.StoreCreate{Name: "Notes"}).ID
	e.prefs = sqlitetest.Store(t, db, ws.ID, memstore.StoreCreate{Name: "Prefs"}).ID
	sqlitetest.Create(t, db, ws.ID, e.prefs, "/style.md", "Tabs, not spaces.\n", memstore.Actor{Type: memstore.ActorUser, ID: "user_test"})
	e.caller, e.secret = e.session(t, memstore.AttachmentCreate{StoreID: e.notes},
		memstore.AttachmentCreate{StoreID: e.prefs, Access: memstore.AccessReadOnly, Instructions: "The user's style."})
	return e
}

func (e *env) session(t testing.TB, stores ...memstore.AttachmentCreate) (*memstore.Caller, string) {
	t.Helper()
	_, _, secret, err := e.core.CreateSession(t.Context(), e.admin, memstore.SessionCreate{Stores: stores})
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.core.AuthenticateSession(t.Context(), secret)
	if err != nil {
		t.Fatal(err)
	}
	return c, secret
}

func (e *env) services() agenttool.Services {
	core := memstore.NewCore(e.db)
	return agenttool.Services{Memories: core, Search: core}
}

// call calls a tool and returns its text.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d contents", name, len(res.Content))
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// exercise runs the checks every transport must pass, on a connected
// client session of e's session.
func exercise(t *testing.T, e *env, cs *mcp.ClientSession) {
	t.Helper()
	ctx := t.Context()
	if got, want := cs.InitializeResult().Instructions, agenttool.Prompt(e.caller.Session); got != want {
		t.Errorf("instructions:\n%s\nwant the memory prompt:\n%s", got, want)
	}
	if info := cs.InitializeResult().ServerInfo; info.Name != "memstore" {
		t.Errorf("server %+v", info)
	}

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		a := tl.Annotations
		readOnly := slices.Contains([]string{"memory_list", "memory_search", "memory_read"}, tl.Name)
		if a == nil || a.ReadOnlyHint != readOnly || a.DestructiveHint == nil {
			t.Fatalf("%s: annotations %+v", tl.Name, a)
		}
		if readOnly && *a.DestructiveHint {
			t.Errorf("%s is read-only but marked destructive", tl.Name)
		}
		if tl.Name == "memory_delete" && !*a.DestructiveHint {
			t.Errorf("memory_delete is not marked destructive")
		}
		schema, _ := json.Marshal(tl.InputSchema)
		if !strings.Contains(string(schema), `"additionalProperties":false`) || tl.Description == "" {
			t.Errorf("%s: schema %s, description %q", tl.Name, schema, tl.Description)
		}
		if tl.Name == "memory_search" {
			var props struct {
				Properties struct {
					Mode struct {
						Type string
						Enum []string
					}
					Conversation struct{ Type string }
				}
			}
			json.Unmarshal(schema, &props)
			if p := props.Properties; p.Mode.Type != "string" || !slices.Equal(p.Mode.Enum, []string{"lexical", "semantic", "hybrid"}) || p.Conversation.Type != "boolean" {
				t.Errorf("memory_search: schema %s, want mode (lexical, semantic, hybrid) and conversation (boolean)", schema)
			}
		}
	}
	slices.Sort(names) // the SDK lists tools by name
	if want := []string{"memory_delete", "memory_edit", "memory_list", "memory_read", "memory_search", "memory_write"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}

	// Read the read-only store; writing to it is refused and changes nothing.
	if text, isErr := call(t, cs, "memory_read", map[string]any{"path": "/mnt/memory/prefs/style.md"}); isErr || !strings.Contains(text, "Tabs, not spaces.") {
		t.Errorf("read: %v %s", isErr, text)
	}
	if text, isErr := call(t, cs, "memory_write", map[string]any{"path": "/mnt/memory/prefs/style.md", "content": "Spaces."}); !isErr || !strings.Contains(text, "read-only") {
		t.Errorf("write to a read-only store: %v %s", isErr, text)
	}
	m, err := memstore.FindMemory(ctx, memstore.NewCore(e.db), &memstore.Caller{WorkspaceID: e.ws}, e.prefs, "/style.md")
	if err == nil {
		m, err = e.db.Memory(ctx, e.ws, e.prefs, m.ID)
	}
	if err != nil || m.Content != "Tabs, not spaces.\n" {
		t.Errorf("the read-only memory changed: %+v %v", m, err)
	}

	// A write to the read-write store is the session's.
	text, isErr := call(t, cs, "memory_write", map[string]any{"path": "/mnt/memory/notes/progress.md", "content": "Step 1 done.\n"})
	if isErr || !strings.Contains(text, "/mnt/memory/notes/progress.md") {
		t.Fatalf("write: %v %s", isErr, text)
	}
	w, err := memstore.FindMemory(ctx, memstore.NewCore(e.db), &memstore.Caller{WorkspaceID: e.ws}, e.notes, "/progress.md")
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.db.Version(ctx, e.ws, e.notes, w.VersionID)
	if err != nil || v.CreatedBy != (memstore.Actor{Type: memstore.ActorSession, ID: e.caller.Session.ID}) {
		t.Errorf("written by %+v (%v), want the session %s", v.CreatedBy, err, e.caller.Session.ID)
	}
	if !strings.Contains(text, w.ContentSHA256) {
		t.Errorf("write result lacks the new content_sha256: %s", text)
	}
	if text, isErr := call(t, cs, "memory_search", map[string]any{"query": "step done"}); isErr || !strings.Contains(text, "/mnt/memory/notes/progress.md") {
		t.Errorf("search: %v %s", isErr, text)
	}
	if text, isErr := call(t, cs, "memory_search", map[string]any{"query": "step done", "mode": "lexical", "conversation": true}); isErr || !strings.Contains(text, "/mnt/memory/notes/progress.md") {
		t.Errorf("lexical search with conversation context: %v %s", isErr, text)
	}
	if text, isErr := call(t, cs, "memory_search", map[string]any{"query": "step done", "mode": "semantic"}); !isErr || !strings.Contains(text, "--embed-url") {
		t.Errorf("semantic search without a model: %v %s, want an error saying how to configure one", isErr, text)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_frobnicate"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("unknown tool: %v", err)
	}
}

func TestInMemory(t *testing.T) {
	e := newEnv(t)
	exercise(t, e, connectInMemory(t, e, e.services()))
}

// connectInMemory connects a client to a server of e's session over svc,
// in memory.
func connectInMemory(t *testing.T, e *env, svc agenttool.Services) *mcp.ClientSession {
	t.Helper()
	ts, err := agenttool.New(svc, e.caller)
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.New(ts, e.caller.Session, "test", nil)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// memory_search's modes over MCP, on a server with an embedding model:
// semantic finds by the vectors, the default is hybrid, and an unknown
// mode is refused with the three named.
func TestSearchModes(t *testing.T) {
	e := newEnv(t)
	for path, text := range map[string]string{"/deploy.md": "deploy on fridays after the freeze", "/pets.md": "a beagle called biscuit"} {
		sqlitetest.Create(t, e.db, e.ws, e.notes, path, text, memstore.Actor{Type: memstore.ActorUser, ID: "user_test"})
	}
	emb := embedtest.New(t, 128).Embedder(t, "word-hash")
	if err := embedindex.New(embedindex.Config{Storage: e.db, Embedder: emb}).Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	core := memstore.NewCore(e.db, memstore.WithEmbedder(emb))
	cs := connectInMemory(t, e, agenttool.Services{Memories: core, Search: core})
	text, isErr := call(t, cs, "memory_search", map[string]any{"query": "beagle biscuit", "mode": "semantic", "limit": 1})
	if isErr || !strings.Contains(text, "1. /mnt/memory/notes/pets.md") {
		t.Errorf("semantic search: %v %s", isErr, text)
	}
	text, isErr = call(t, cs, "memory_search", map[string]any{"query": "fridays"})
	if isErr || !strings.Contains(text, "1. /mnt/memory/notes/deploy.md") || !strings.Contains(text, "/mnt/memory/prefs/style.md") {
		t.Errorf("default (hybrid) search: %v %s, want the deploy first and the memories found by meaning after it", isErr, text)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "memory_search", Arguments: map[string]any{"query": "x", "mode": "fuzzy"}})
	if err == nil && (!res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "lexical, semantic, hybrid")) {
		t.Errorf("an unknown mode: %+v", res)
	}
}

// bearer adds a session token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func connectHTTP(ctx context.Context, url, token string) (*mcp.ClientSession, error) {
	hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
	return mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
}

func TestStreamableHTTP(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(mcpserver.Handler(mcpserver.HandlerConfig{Sessions: memstore.NewCore(e.db), Services: e.services(), Version: "test"}))
	defer srv.Close()

	cs, err := connectHTTP(t.Context(), srv.URL, e.secret)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	exercise(t, e, cs)

	// Without a token, or with a forged one: 401 with a challenge.
	for _, auth := range []string{"", "Bearer st-memstore-forged", "Bearer sk-memstore-notasessiontoken"} {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 401 || res.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%q: %d, WWW-Authenticate %q", auth, res.StatusCode, res.Header.Get("WWW-Authenticate"))
		}
	}

	// Another session's token cannot take over this MCP session.
	_, other := e.session(t, memstore.AttachmentCreate{StoreID: e.prefs})
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+other)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode < 400 {
		t.Errorf("another session's token on this MCP session: %d", res.StatusCode)
	}

	// Once the token is revoked, the next call fails.
	toks, err := e.db.SessionTokens(t.Context(), e.ws, e.caller.Session.ID, memstore.SessionTokenFilter{})
	if err != nil || len(toks.Items) != 1 {
		t.Fatal(toks, err)
	}
	if _, err := e.core.RevokeSessionToken(t.Context(), e.admin, toks.Items[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "memory_list"}); err == nil {
		t.Error("a revoked token still calls tools")
	}
}

// TestAttachmentChangesReachOpenSessions checks that an open MCP session
// follows its memstore session's attachments: a store attached after it
// opened is reachable on the next tool call, one made read-only refuses
// writes, and one detached is out of reach.
func TestAttachmentChangesReachOpenSessions(t *testing.T) {
	e := newEnv(t)
	core := memstore.NewCore(e.db)
	srv := httptest.NewServer(mcpserver.Handler(mcpserver.HandlerConfig{Sessions: core, Services: e.services(), Version: "test"}))
	defer srv.Close()
	cs, err := connectHTTP(t.Context(), srv.URL, e.secret)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	admin := &memstore.Caller{WorkspaceID: e.ws, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_test"}}
	sid := e.caller.Session.ID
	later := sqlitetest.Store(t, e.db, e.ws, memstore.StoreCreate{Name: "Later"}).ID
	const path = "/mnt/memory/later/a.md"

	if text, isErr := call(t, cs, "memory_write", map[string]any{"path": path, "content": "x"}); !isErr {
		t.Fatalf("write to a store not yet attached: %s", text)
	}
	if _, err := core.AttachStore(t.Context(), admin, sid, memstore.AttachmentCreate{StoreID: later}); err != nil {
		t.Fatal(err)
	}
	if text, isErr := call(t, cs, "memory_write", map[string]any{"path": path, "content": "x"}); isErr {
		t.Errorf("write to a store attached since: %s", text)
	}
	ro := memstore.AccessReadOnly
	if _, err := core.UpdateAttachment(t.Context(), admin, sid, later, memstore.AttachmentUpdate{Access: &ro}); err != nil {
		t.Fatal(err)
	}
	if text, isErr := call(t, cs, "memory_write", map[string]any{"path": path, "content": "y"}); !isErr || !strings.Contains(text, "read-only") {
		t.Errorf("write to a store made read-only since: %v %s", isErr, text)
	}
	if text, isErr := call(t, cs, "memory_read", map[string]any{"path": path}); isErr || !strings.Contains(text, "x") {
		t.Errorf("read of a store made read-only: %v %s", isErr, text)
	}
	if _, err := core.DetachStore(t.Context(), admin, sid, later); err != nil {
		t.Fatal(err)
	}
	if text, isErr := call(t, cs, "memory_read", map[string]any{"path": path}); !isErr {
		t.Errorf("read of a store detached since: %s", text)
	}
}

package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/postgres"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
	"github.com/memstore/memstore/storetest"
)

// apiHarness is a memstore server over a fresh database, behind a real
// HTTP listener: what the client and the SDK contract tests talk to.
type apiHarness struct {
	URL  string
	DB   memstore.Database
	Keys memstore.KeyService // the server's core, over DB
	srv  *httptest.Server
}

// A harnessBackend is the kind of database a harness serves.
type harnessBackend string

const (
	onSQLite   harnessBackend = "sqlite"
	onPostgres harnessBackend = "postgres" // skipped where pgtest finds no PostgreSQL
)

// harnessBackends are every backend a contract test runs against.
var harnessBackends = []harnessBackend{onSQLite, onPostgres}

// onEachBackend runs test once per backend, as a subtest named after it.
func onEachBackend(t *testing.T, test func(t *testing.T, backend harnessBackend)) {
	for _, b := range harnessBackends {
		t.Run(string(b), func(t *testing.T) { test(t, b) })
	}
}

// harnessOptions adjust an apiHarness; the zero value is the default
// server over SQLite.
type harnessOptions struct {
	backend   harnessBackend                  // "" for SQLite
	db        memstore.Database               // the database to serve, instead of a new one of backend
	now       func() time.Time                // the database's clock; nil for the real one
	configure func(*httpapi.Config)           // adjusts the server's config
	wrap      func(http.Handler) http.Handler // wraps the server's handler
	http2     bool                            // serve HTTP/2 over TLS, to srv.Client()
	server    func(*http.Server)              // adjusts the HTTP server before it starts
	core      []memstore.CoreOption           // options of the server's core
}

// newAPIHarness starts a server, stopped at the end of the test.
func newAPIHarness(tb testing.TB, o harnessOptions) *apiHarness {
	tb.Helper()
	db := o.db
	switch {
	case db != nil:
	case o.backend == "" || o.backend == onSQLite:
		db = sqlitetest.Open(tb, sqlite.Options{Now: o.now})
	case o.backend == onPostgres:
		db = openPostgres(tb, postgres.Options{Now: o.now})
	default:
		tb.Fatalf("no backend %q", o.backend)
	}
	core := memstore.NewCore(db, o.core...)
	cfg := httpapi.Config{Stores: core, Memories: core, Versions: core, Keys: core, Sessions: core, Search: core, Feed: core, Counts: db.Counts,
		Webhooks: memstore.NewWebhooks(db, memstore.WebhooksAllowPrivate(true)), APIKeys: memstore.NewKeys(core), Users: memstore.NewUsers(db), Dreams: core}
	if o.configure != nil {
		o.configure(&cfg)
	}
	api := httpapi.New(cfg)
	var h http.Handler = api
	if o.wrap != nil {
		h = o.wrap(h)
	}
	srv := httptest.NewUnstartedServer(h)
	if o.server != nil {
		o.server(srv.Config)
	}
	if o.http2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	tb.Cleanup(func() { // before the database closes
		srv.Close()
		api.Close()
	})
	return &apiHarness{URL: srv.URL, DB: db, Keys: core, srv: srv}
}

// newKey makes a workspace with a key in it and returns both and the
// key's secret.
func (h *apiHarness) newKey(tb testing.TB, workspace string) (*memstore.Workspace, *memstore.APIKey, string) {
	tb.Helper()
	ws, err := h.DB.CreateWorkspace(tb.Context(), workspace)
	if err != nil {
		tb.Fatal(err)
	}
	key, secret := h.newAPIKey(tb, ws.ID, "test key")
	return ws, key, secret
}

// newAPIKey makes a key called name in a workspace and returns it with
// its secret.
func (h *apiHarness) newAPIKey(tb testing.TB, workspaceID, name string) (*memstore.APIKey, string) {
	tb.Helper()
	key, secret, err := h.Keys.CreateAPIKey(tb.Context(), workspaceID, name)
	if err != nil {
		tb.Fatal(err)
	}
	return key, secret
}

// client returns a Client of the harness's server with secret.
func (h *apiHarness) client(secret string) *httpapi.Client {
	c := httpapi.NewClient(h.URL, secret)
	c.HTTPClient = h.srv.Client()
	return c
}

// --- The conformance suite, through the client.

// conformanceKeys is the key service of the conformance run: the
// core's, except that Authenticate takes, besides session tokens, a secret
// "storetest|<workspace>|<actor type>|<actor ID>" to stand for that
// caller. The suite uses fixed workspace and actor IDs
// (wrkspc_storetest..., apikey_storetest1, sesn_storetest1, user_...,
// svac_...) that real keys cannot have, and checks that each version
// records the actor that wrote it; over HTTP the actor is the request's
// credential, so every call of the suite goes out with a secret standing
// for its workspace and actor.
type conformanceKeys struct{ memstore.KeyService }

func conformanceSecret(workspaceID string, by memstore.Actor) string {
	return strings.Join([]string{"storetest", workspaceID, string(by.Type), by.ID}, "|")
}

func (k conformanceKeys) Authenticate(ctx context.Context, secret string) (*memstore.Caller, error) {
	f := strings.Split(secret, "|")
	if memstore.CredentialOf(secret) == memstore.SessionTokenCredential {
		return k.KeyService.Authenticate(ctx, secret)
	}
	if len(f) != 4 || f[0] != "storetest" {
		return nil, memstore.Errorf(memstore.EUnauthenticated, "not a conformance-test secret")
	}
	return &memstore.Caller{WorkspaceID: f[1], Actor: memstore.Actor{Type: memstore.ActorType(f[2]), ID: f[3]}}, nil
}

// clients is the caller-facing services of Clients in front of a server:
// each call goes to client(caller), a client whose credential stands for
// its caller.
type clients struct {
	client func(c *memstore.Caller) *httpapi.Client
}

// conformanceClient is a client of h whose credential stands for c, an
// API key's caller of the suite, and which knows it.
func conformanceClient(h *apiHarness, c *memstore.Caller) *httpapi.Client {
	if c == nil {
		return h.client("")
	}
	cl := h.client(conformanceSecret(c.WorkspaceID, c.Actor))
	cl.Caller = c
	return cl
}

func (b clients) CreateStore(ctx context.Context, c *memstore.Caller, sc memstore.StoreCreate) (*memstore.Store, error) {
	return b.client(c).CreateStore(ctx, c, sc)
}

func (b clients) Store(ctx context.Context, c *memstore.Caller, id string) (*memstore.Store, error) {
	return b.client(c).Store(ctx, c, id)
}

func (b clients) Stores(ctx context.Context, c *memstore.Caller, f memstore.StoreFilter) (memstore.Page[memstore.Store], error) {
	return b.client(c).Stores(ctx, c, f)
}

func (b clients) UpdateStore(ctx context.Context, c *memstore.Caller, id string, u memstore.StoreUpdate) (*memstore.Store, error) {
	return b.client(c).UpdateStore(ctx, c, id, u)
}

func (b clients) ArchiveStore(ctx context.Context, c *memstore.Caller, id string) (*memstore.Store, error) {
	return b.client(c).ArchiveStore(ctx, c, id)
}

func (b clients) DeleteStore(ctx context.Context, c *memstore.Caller, id string) error {
	return b.client(c).DeleteStore(ctx, c, id)
}

func (b clients) CreateMemory(ctx context.Context, c *memstore.Caller, storeID string, mc memstore.MemoryCreate) (*memstore.Memory, error) {
	return b.client(c).CreateMemory(ctx, c, storeID, mc)
}

func (b clients) Memory(ctx context.Context, c *memstore.Caller, storeID, id string) (*memstore.Memory, error) {
	return b.client(c).Memory(ctx, c, storeID, id)
}

func (b clients) Memories(ctx context.Context, c *memstore.Caller, storeID string, f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
	return b.client(c).Memories(ctx, c, storeID, f)
}

func (b clients) UpdateMemory(ctx context.Context, c *memstore.Caller, storeID, id string, u memstore.MemoryUpdate) (*memstore.Memory, error) {
	return b.client(c).UpdateMemory(ctx, c, storeID, id, u)
}

func (b clients) DeleteMemory(ctx context.Context, c *memstore.Caller, storeID, id, ifSHA256 string) error {
	return b.client(c).DeleteMemory(ctx, c, storeID, id, ifSHA256)
}

func (b clients) Versions(ctx context.Context, c *memstore.Caller, storeID string, f memstore.VersionFilter) (memstore.Page[memstore.Version], error) {
	return b.client(c).Versions(ctx, c, storeID, f)
}

func (b clients) Version(ctx context.Context, c *memstore.Caller, storeID, id string) (*memstore.Version, error) {
	return b.client(c).Version(ctx, c, storeID, id)
}

func (b clients) RedactVersion(ctx context.Context, c *memstore.Caller, storeID, id string) (*memstore.Version, error) {
	return b.client(c).RedactVersion(ctx, c, storeID, id)
}

func (b clients) CreateDream(ctx context.Context, c *memstore.Caller, dc memstore.DreamCreate) (*memstore.Dream, error) {
	return b.client(c).CreateDream(ctx, c, dc)
}

func (b clients) Dream(ctx context.Context, c *memstore.Caller, id string) (*memstore.Dream, error) {
	return b.client(c).Dream(ctx, c, id)
}

func (b clients) Dreams(ctx context.Context, c *memstore.Caller, f memstore.DreamFilter) (memstore.Page[memstore.Dream], error) {
	return b.client(c).Dreams(ctx, c, f)
}

func (b clients) ArchiveDream(ctx context.Context, c *memstore.Caller, id string) (*memstore.Dream, error) {
	return b.client(c).ArchiveDream(ctx, c, id)
}

func (b clients) CancelDream(ctx context.Context, c *memstore.Caller, id string) (*memstore.Dream, error) {
	return b.client(c).CancelDream(ctx, c, id)
}

func (b clients) CreateSession(ctx context.Context, c *memstore.Caller, sc memstore.SessionCreate) (*memstore.Session, *memstore.SessionToken, string, error) {
	return b.client(c).CreateSession(ctx, c, sc)
}

func (b clients) Session(ctx context.Context, c *memstore.Caller, id string) (*memstore.Session, error) {
	return b.client(c).Session(ctx, c, id)
}

func (b clients) Sessions(ctx context.Context, c *memstore.Caller, f memstore.SessionFilter) (memstore.Page[memstore.Session], error) {
	return b.client(c).Sessions(ctx, c, f)
}

func (b clients) ArchiveSession(ctx context.Context, c *memstore.Caller, id string) (*memstore.Session, error) {
	return b.client(c).ArchiveSession(ctx, c, id)
}

func (b clients) UpdateSession(ctx context.Context, c *memstore.Caller, id string, u memstore.SessionUpdate) (*memstore.Session, error) {
	return b.client(c).UpdateSession(ctx, c, id, u)
}

func (b clients) DeleteSession(ctx context.Context, c *memstore.Caller, id string) error {
	return b.client(c).DeleteSession(ctx, c, id)
}

func (b clients) AttachStore(ctx context.Context, c *memstore.Caller, id string, a memstore.AttachmentCreate) (*memstore.Session, error) {
	return b.client(c).AttachStore(ctx, c, id, a)
}

func (b clients) UpdateAttachment(ctx context.Context, c *memstore.Caller, id, storeID string, u memstore.AttachmentUpdate) (*memstore.Session, error) {
	return b.client(c).UpdateAttachment(ctx, c, id, storeID, u)
}

func (b clients) DetachStore(ctx context.Context, c *memstore.Caller, id, storeID string) (*memstore.Session, error) {
	return b.client(c).DetachStore(ctx, c, id, storeID)
}

func (b clients) CreateSessionToken(ctx context.Context, c *memstore.Caller, id string, ttl time.Duration) (*memstore.SessionToken, string, error) {
	return b.client(c).CreateSessionToken(ctx, c, id, ttl)
}

func (b clients) SessionTokens(ctx context.Context, c *memstore.Caller, id string, f memstore.SessionTokenFilter) (memstore.Page[memstore.SessionToken], error) {
	return b.client(c).SessionTokens(ctx, c, id, f)
}

func (b clients) SessionToken(ctx context.Context, c *memstore.Caller, id string) (*memstore.SessionToken, error) {
	return b.client(c).SessionToken(ctx, c, id)
}

func (b clients) RevokeSessionToken(ctx context.Context, c *memstore.Caller, id string) (*memstore.SessionToken, error) {
	return b.client(c).RevokeSessionToken(ctx, c, id)
}

// AuthenticateSession asks the server who a session token is.
func (b clients) AuthenticateSession(ctx context.Context, secret string) (*memstore.Caller, error) {
	return b.client(nil).AuthenticateSession(ctx, secret)
}

func (b clients) Events(ctx context.Context, c *memstore.Caller, storeID string, f memstore.EventFilter) (memstore.EventPage, error) {
	return b.client(c).Events(ctx, c, storeID, f)
}

func (b clients) SendSessionEvents(ctx context.Context, c *memstore.Caller, id string, events []json.RawMessage) ([]memstore.SessionEvent, error) {
	return b.client(c).SendSessionEvents(ctx, c, id, events)
}

func (b clients) AppendSessionTurn(ctx context.Context, c *memstore.Caller, id string, turn memstore.Turn) ([]memstore.SessionEvent, error) {
	return b.client(c).AppendSessionTurn(ctx, c, id, turn)
}

func (b clients) ListSessionEvents(ctx context.Context, c *memstore.Caller, id string, f memstore.SessionEventFilter) (memstore.Page[memstore.SessionEvent], error) {
	return b.client(c).ListSessionEvents(ctx, c, id, f)
}

func (b clients) SearchMemories(ctx context.Context, c *memstore.Caller, storeIDs []string, q memstore.SearchQuery) (memstore.Page[memstore.SearchResult], error) {
	return b.client(c).SearchMemories(ctx, c, storeIDs, q)
}

// clientServices are the services of Clients in front of two servers on
// one database, which the conformance suite holds to the contract of a
// core: an API key's caller calls with its conformance secret, a
// session's with the token the server authenticated it by, and the keys
// are a core's over the database. One server creates memories in the default
// conflict mode, one in upsert mode: the wire has no way to ask for an
// upsert (the Client refuses MemoryCreate.Upsert, see TestClientRefuses),
// it is the server's choice, so the suite's upserts go to the server that
// makes that choice, with Upsert cleared.
type clientServices struct {
	clients
	upsert clients
	memstore.KeyService
	mu     sync.Mutex
	tokens map[string]string // session ID: the secret of a token of it
}

// openClients opens a fresh database with two servers on it, whose cores
// have limits l and whose clock is now, and returns the services of
// Clients in front of them.
func openClients(t *testing.T, l memstore.Limits, now func() time.Time) storetest.Services {
	b, _ := openClientsOver(t, l, now)
	return b
}

// openClientsOver is openClients, the cores with options extra, and
// returns the database too.
func openClientsOver(t *testing.T, l memstore.Limits, now func() time.Time, extra ...memstore.CoreOption) (storetest.Services, *sqlite.DB) {
	db := sqlitetest.Open(t, sqlite.Options{Now: now})
	core := slices.Clone(extra)
	if l != (memstore.Limits{}) {
		core = append(core, memstore.WithLimits(l))
	}
	if now != nil {
		core = append(core, memstore.CoreClock(now))
	}
	core = append(core, memstore.WithDreams(true))
	b := &clientServices{KeyService: memstore.NewCore(db, core...), tokens: map[string]string{}}
	serve := func(mode string) clients {
		h := newAPIHarness(t, harnessOptions{db: db, core: core, configure: func(c *httpapi.Config) {
			c.Keys, c.AuthCacheTTL, c.CreateExisting = conformanceKeys{c.Keys}, -1, mode
		}})
		return clients{func(c *memstore.Caller) *httpapi.Client { return b.client(h, c) }}
	}
	b.clients, b.upsert = serve(httpapi.CreateConflict), serve(httpapi.CreateUpsert)
	return b, db
}

// client is a client of h that calls as c.
func (b *clientServices) client(h *apiHarness, c *memstore.Caller) *httpapi.Client {
	if c == nil || c.Session == nil {
		return conformanceClient(h, c)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	cl := h.client(b.tokens[c.Session.ID])
	cl.Caller = c
	return cl
}

// StoreTotalsOmitted: the API's store object carries no count or size of
// its memories.
func (*clientServices) StoreTotalsOmitted() {}

// KeySearchesOneStore: the API searches several stores only as a session.
func (*clientServices) KeySearchesOneStore() {}

func (b *clientServices) CreateMemory(ctx context.Context, c *memstore.Caller, storeID string, mc memstore.MemoryCreate) (*memstore.Memory, error) {
	if mc.Upsert {
		mc.Upsert = false
		return b.upsert.CreateMemory(ctx, c, storeID, mc)
	}
	return b.clients.CreateMemory(ctx, c, storeID, mc)
}

// AuthenticateSession asks the server who secret is, and keeps secret
// for the calls as that session.
func (b *clientServices) AuthenticateSession(ctx context.Context, secret string) (*memstore.Caller, error) {
	c, err := b.clients.AuthenticateSession(ctx, secret)
	if err == nil {
		b.mu.Lock()
		b.tokens[c.Session.ID] = secret
		b.mu.Unlock()
	}
	return c, err
}

// TestClientConformance runs the conformance suite through the Client,
// the server and SQLite: every behaviour of the services survives the
// trip over HTTP.
func TestClientConformance(t *testing.T) {
	storetest.RunAll(t, storetest.Target{Services: openClients, Admin: openAdminClients,
		Semantic: func(t *testing.T, e memstore.Embedder) (storetest.Services, memstore.VectorStorage) {
			return openClientsOver(t, memstore.Limits{}, nil, memstore.WithEmbedder(e))
		}})
}

// --- What the client sends.

// recordedRequest is one request as the server received it.
type recordedRequest struct {
	Method, Path string
	Query        url.Values
	Header       http.Header
	Body         string
}

// requestRecorder wraps a handler and keeps every request it passes on.
type requestRecorder struct {
	mu   sync.Mutex
	reqs []recordedRequest
}

func (rec *requestRecorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, recordedRequest{r.Method, r.URL.EscapedPath(), r.URL.Query(), r.Header.Clone(), string(body)})
		rec.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (rec *requestRecorder) count() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.reqs)
}

func (rec *requestRecorder) last(tb testing.TB) recordedRequest {
	tb.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.reqs) == 0 {
		tb.Fatal("no request reached the server")
	}
	return rec.reqs[len(rec.reqs)-1]
}

func ptrTo[T any](v T) *T { return &v }

// wantRequest checks the last request the server received: method,
// escaped path, query, JSON body ("" for none, compared as JSON) and the
// headers every request carries.
func wantRequest(t *testing.T, rec *requestRecorder, secret, workspace, method, path string, query url.Values, body string) {
	t.Helper()
	got := rec.last(t)
	if got.Method != method || got.Path != path {
		t.Errorf("request %s %s, want %s %s", got.Method, got.Path, method, path)
	}
	if query == nil {
		query = url.Values{}
	}
	if diff := cmp.Diff(query, got.Query); diff != "" {
		t.Errorf("%s %s: query (-want +got):\n%s", method, path, diff)
	}
	switch {
	case body == "" && got.Body != "":
		t.Errorf("%s %s: body %q, want none", method, path, got.Body)
	case body != "":
		var want, have any
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatalf("bad expected body %s: %v", body, err)
		}
		if err := json.Unmarshal([]byte(got.Body), &have); err != nil {
			t.Errorf("%s %s: body %q is not JSON: %v", method, path, got.Body, err)
		} else if diff := cmp.Diff(want, have); diff != "" {
			t.Errorf("%s %s: body (-want +got):\n%s", method, path, diff)
		}
	}
	wantHeader := map[string]string{
		"X-Api-Key":              secret,
		"Anthropic-Version":      "2023-06-01",
		"Anthropic-Beta":         "agent-memory-2026-07-22",
		"Anthropic-Workspace-Id": workspace,
		"Content-Type":           "",
		"Authorization":          "",
	}
	if body != "" {
		wantHeader["Content-Type"] = "application/json"
	}
	for k, v := range wantHeader {
		if g := got.Header.Get(k); g != v {
			t.Errorf("%s %s: header %s = %q, want %q", method, path, k, g, v)
		}
	}
}

// TestClientRequests checks the request of each method as the server
// receives it (method, path, query, body, headers) and that the server,
// in strict-header mode, accepts it.
func TestClientRequests(t *testing.T) {
	rec := &requestRecorder{}
	h := newAPIHarness(t, harnessOptions{
		wrap:      rec.wrap,
		configure: func(c *httpapi.Config) { c.StrictHeaders = true },
	})
	ws, key, secret := h.newKey(t, "requests")
	c := h.client(secret)
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	zone := time.FixedZone("UTC+7", 7*3600)
	gte := time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, zone)
	lte := time.Date(2099, 1, 2, 3, 4, 5, 0, time.UTC)
	const gteWire, lteWire = "2026-01-02T03:04:05.6+07:00", "2099-01-02T03:04:05Z"

	// The workspace of a known caller becomes the header; the Client's
	// field stands in for it.
	c.Caller = &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: key.ID}}
	store, err := c.CreateStore(ctx, c.Caller, memstore.StoreCreate{Name: "n", Description: "d", Metadata: map[string]string{"k": "v"}})
	must(err)
	wantRequest(t, rec, secret, ws.ID, "POST", "/v1/memory_stores", nil, `{"name":"n","description":"d","metadata":{"k":"v"}}`)
	if store.WorkspaceID != ws.ID || store.Name != "n" || store.Description != "d" || store.Metadata["k"] != "v" {
		t.Errorf("CreateStore = %+v", store)
	}
	sp := "/v1/memory_stores/" + store.ID
	c.Caller = nil

	c.WorkspaceID = ws.ID
	got, err := c.Store(ctx, nil, store.ID)
	must(err)
	wantRequest(t, rec, secret, ws.ID, "GET", sp, nil, "")
	if got.ID != store.ID || got.WorkspaceID != ws.ID {
		t.Errorf("Store = %+v", got)
	}
	c.WorkspaceID = ""

	// Without any workspace header, the store's workspace is the one the
	// server echoes.
	got, err = c.Store(ctx, nil, store.ID)
	must(err)
	wantRequest(t, rec, secret, "", "GET", sp, nil, "")
	if got.WorkspaceID != ws.ID {
		t.Errorf("Store without a workspace header: WorkspaceID %q, want %q", got.WorkspaceID, ws.ID)
	}

	page, err := c.Stores(ctx, nil, memstore.StoreFilter{IncludeArchived: true, CreatedAtGTE: &gte, CreatedAtLTE: &lte, Limit: 5})
	must(err)
	wantRequest(t, rec, secret, "", "GET", "/v1/memory_stores",
		url.Values{"include_archived": {"true"}, "created_at[gte]": {gteWire}, "created_at[lte]": {lteWire}, "limit": {"5"}}, "")
	if len(page.Items) != 1 || page.Items[0].ID != store.ID || page.Next != "" {
		t.Errorf("Stores = %+v", page)
	}
	_, err = c.Stores(ctx, nil, memstore.StoreFilter{})
	must(err)
	wantRequest(t, rec, secret, "", "GET", "/v1/memory_stores", nil, "")

	updated, err := c.UpdateStore(ctx, nil, store.ID, memstore.StoreUpdate{Name: ptrTo("m"), Metadata: map[string]*string{"k": nil, "j": ptrTo("w")}})
	must(err)
	wantRequest(t, rec, secret, "", "POST", sp, nil, `{"name":"m","metadata":{"j":"w","k":null}}`)
	if updated.Name != "m" || updated.Description != "d" || !cmp.Equal(updated.Metadata, map[string]string{"j": "w"}) {
		t.Errorf("UpdateStore = %+v", updated)
	}

	// IDs are escaped into the path; a path with a space and non-ASCII
	// letters travels in the body.
	mem, err := c.CreateMemory(ctx, nil, store.ID, memstore.MemoryCreate{Path: "/a b/ü.md", Content: "", IfNotExists: true})
	must(err)
	wantRequest(t, rec, secret, "", "POST", sp+"/memories", url.Values{"view": {"full"}},
		`{"path":"/a b/ü.md","content":"","precondition":{"type":"not_exists"}}`)
	if mem.Path != "/a b/ü.md" || mem.ContentSHA256 != sha256Hex("") || mem.StoreID != store.ID {
		t.Errorf("CreateMemory = %+v", mem)
	}
	mp := sp + "/memories/" + mem.ID

	_, err = c.CreateMemory(ctx, nil, store.ID, memstore.MemoryCreate{Path: "/plain.md", Content: "plain"})
	must(err)
	wantRequest(t, rec, secret, "", "POST", sp+"/memories", url.Values{"view": {"full"}}, `{"path":"/plain.md","content":"plain"}`)

	m, err := c.Memory(ctx, nil, store.ID, mem.ID)
	must(err)
	wantRequest(t, rec, secret, "", "GET", mp, url.Values{"view": {"full"}}, "")
	if m.ID != mem.ID || m.VersionID != mem.VersionID {
		t.Errorf("Memory = %+v", m)
	}

	m, err = c.UpdateMemory(ctx, nil, store.ID, mem.ID, memstore.MemoryUpdate{Content: ptrTo("hi"), IfSHA256: mem.ContentSHA256})
	must(err)
	wantRequest(t, rec, secret, "", "POST", mp, url.Values{"view": {"full"}},
		`{"content":"hi","precondition":{"type":"content_sha256","content_sha256":"`+mem.ContentSHA256+`"}}`)
	if m.Content != "hi" || m.ContentSHA256 != sha256Hex("hi") {
		t.Errorf("UpdateMemory = %+v", m)
	}

	m, err = c.UpdateMemory(ctx, nil, store.ID, mem.ID, memstore.MemoryUpdate{Path: ptrTo("/plain.md"), RenameIfFree: true})
	must(err)
	wantRequest(t, rec, secret, "", "POST", mp, url.Values{"view": {"full"}}, `{"path":"/plain.md","precondition":{"type":"not_exists"}}`)
	if m.Path != "/a b/ü.md" {
		t.Errorf("RenameIfFree onto a taken path moved the memory to %q", m.Path)
	}

	_, err = c.UpdateMemory(ctx, nil, store.ID, mem.ID, memstore.MemoryUpdate{})
	must(err)
	wantRequest(t, rec, secret, "", "POST", mp, url.Values{"view": {"full"}}, `{}`)

	items, err := c.Memories(ctx, nil, store.ID, memstore.MemoryFilter{PathPrefix: "/a b/", Depth: 1, Full: true, Limit: 7})
	must(err)
	wantRequest(t, rec, secret, "", "GET", sp+"/memories",
		url.Values{"path_prefix": {"/a b/"}, "depth": {"1"}, "view": {"full"}, "limit": {"7"}}, "")
	if len(items.Items) != 1 || items.Items[0].Memory == nil || items.Items[0].Memory.Content != "hi" {
		t.Errorf("Memories = %+v", items)
	}
	items, err = c.Memories(ctx, nil, store.ID, memstore.MemoryFilter{PathPrefix: "/", Depth: 1, Limit: 1})
	must(err)
	wantRequest(t, rec, secret, "", "GET", sp+"/memories", url.Values{"path_prefix": {"/"}, "depth": {"1"}, "limit": {"1"}}, "")
	if len(items.Items) != 1 || items.Items[0].Prefix != "/a b/" || items.Next == "" {
		t.Fatalf("Memories at depth 1 = %+v, want the prefix /a b/ and a cursor", items)
	}
	cursor := items.Next
	items, err = c.Memories(ctx, nil, store.ID, memstore.MemoryFilter{PathPrefix: "/", Depth: 1, Limit: 1, Page: cursor})
	must(err)
	wantRequest(t, rec, secret, "", "GET", sp+"/memories", url.Values{"path_prefix": {"/"}, "depth": {"1"}, "limit": {"1"}, "page": {cursor}}, "")
	if len(items.Items) != 1 || items.Items[0].Memory == nil || items.Items[0].Memory.Path != "/plain.md" || items.Next != "" {
		t.Errorf("second page = %+v, want /plain.md and no cursor", items)
	}

	vs, err := c.Versions(ctx, nil, store.ID, memstore.VersionFilter{
		MemoryID: mem.ID, Operation: memstore.OpCreated, APIKeyID: key.ID, CreatedAtGTE: &gte, CreatedAtLTE: &lte, Full: true, Limit: 3,
	})
	must(err)
	wantRequest(t, rec, secret, "", "GET", sp+"/memory_versions", url.Values{
		"memory_id": {mem.ID}, "operation": {"created"}, "api_key_id": {key.ID},
		"created_at[gte]": {gteWire}, "created_at[lte]": {lteWire}, "view": {"full"}, "limit": {"3"},
	}, "")
	if len(vs.Items) != 1 || vs.Items[0].ID != mem.VersionID || vs.Items[0].CreatedBy != (memstore.Actor{Type: memstore.ActorAPIKey, ID: key.ID}) {
		t.Fatalf("Versions = %+v, want the created version by %s", vs, key.ID)
	}
	vp := sp + "/memory_versions/" + mem.VersionID

	vs, err = c.Versions(ctx, nil, store.ID, memstore.VersionFilter{SessionID: "sesn_1", ServiceAccountID: "svac_1", Operation: memstore.OpDeleted})
	must(err)
	wantRequest(t, rec, secret, "", "GET", sp+"/memory_versions",
		url.Values{"session_id": {"sesn_1"}, "service_account_id": {"svac_1"}, "operation": {"deleted"}}, "")
	if len(vs.Items) != 0 || vs.Next != "" {
		t.Errorf("Versions of nobody = %+v", vs)
	}

	v, err := c.Version(ctx, nil, store.ID, mem.VersionID)
	must(err)
	wantRequest(t, rec, secret, "", "GET", vp, url.Values{"view": {"full"}}, "")
	if !v.HasContent || v.Path != "/a b/ü.md" || v.Operation != memstore.OpCreated {
		t.Errorf("Version = %+v", v)
	}

	v, err = c.RedactVersion(ctx, nil, store.ID, mem.VersionID)
	must(err)
	wantRequest(t, rec, secret, "", "POST", vp+"/redact", nil, "")
	if !v.Redacted() || v.HasContent || v.Path != "" || v.RedactedBy == nil || v.RedactedBy.ID != key.ID {
		t.Errorf("RedactVersion = %+v", v)
	}

	must(c.DeleteMemory(ctx, nil, store.ID, mem.ID, sha256Hex("hi")))
	wantRequest(t, rec, secret, "", "DELETE", mp, url.Values{"expected_content_sha256": {sha256Hex("hi")}}, "")

	a, err := c.ArchiveStore(ctx, nil, store.ID)
	must(err)
	wantRequest(t, rec, secret, "", "POST", sp+"/archive", nil, "")
	if a.ArchivedAt == nil {
		t.Error("ArchiveStore: ArchivedAt is nil")
	}

	must(c.DeleteStore(ctx, nil, store.ID))
	wantRequest(t, rec, secret, "", "DELETE", sp, nil, "")

	// An ID with characters that mean something in a path is escaped,
	// so it names nothing rather than another endpoint.
	_, err = c.Store(ctx, nil, "memstore_x/archive")
	if memstore.ErrorCode(err) != memstore.ENotFound {
		t.Errorf("Store(ID with a slash): %v, want %s", err, memstore.ENotFound)
	}
	wantRequest(t, rec, secret, "", "GET", "/v1/memory_stores/memstore_x%2Farchive", nil, "")
}

// TestClientRefuses checks what the client refuses without a request:
// what the wire cannot say, and empty IDs.
func TestClientRefuses(t *testing.T) {
	rec := &requestRecorder{}
	h := newAPIHarness(t, harnessOptions{wrap: rec.wrap})
	_, _, secret := h.newKey(t, "refuses")
	c := h.client(secret)
	ctx := t.Context()
	s, err := c.CreateStore(ctx, nil, memstore.StoreCreate{Name: "s"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.CreateMemory(ctx, nil, s.ID, memstore.MemoryCreate{Path: "/m.md", Content: "m"})
	if err != nil {
		t.Fatal(err)
	}
	bad := "bad \xff bytes"
	for _, tc := range []struct {
		name, code, msg string
		call            func() error
	}{
		{"Upsert", memstore.EInvalid, "upsert", func() error {
			_, err := c.CreateMemory(ctx, nil, s.ID, memstore.MemoryCreate{Path: "/m.md", Content: "x", Upsert: true})
			return err
		}},
		{"TwoPreconditions", memstore.EInvalid, "one precondition", func() error {
			_, err := c.UpdateMemory(ctx, nil, s.ID, m.ID, memstore.MemoryUpdate{Path: ptrTo("/n.md"), IfSHA256: m.ContentSHA256, RenameIfFree: true})
			return err
		}},
		{"ContentNotUTF8", memstore.EInvalid, "content is not valid UTF-8", func() error {
			_, err := c.CreateMemory(ctx, nil, s.ID, memstore.MemoryCreate{Path: "/u.md", Content: bad})
			return err
		}},
		{"PathNotUTF8", memstore.EInvalid, "path is not valid UTF-8", func() error {
			_, err := c.CreateMemory(ctx, nil, s.ID, memstore.MemoryCreate{Path: "/\xff.md", Content: "x"})
			return err
		}},
		{"UpdateContentNotUTF8", memstore.EInvalid, "content is not valid UTF-8", func() error {
			_, err := c.UpdateMemory(ctx, nil, s.ID, m.ID, memstore.MemoryUpdate{Content: &bad})
			return err
		}},
		{"UpdatePathNotUTF8", memstore.EInvalid, "path is not valid UTF-8", func() error {
			_, err := c.UpdateMemory(ctx, nil, s.ID, m.ID, memstore.MemoryUpdate{Path: &bad})
			return err
		}},
		{"StoreNameNotUTF8", memstore.EInvalid, "name is not valid UTF-8", func() error {
			_, err := c.CreateStore(ctx, nil, memstore.StoreCreate{Name: bad})
			return err
		}},
		{"MetadataNotUTF8", memstore.EInvalid, "metadata value is not valid UTF-8", func() error {
			_, err := c.UpdateStore(ctx, nil, s.ID, memstore.StoreUpdate{Metadata: map[string]*string{"k": &bad}})
			return err
		}},
		{"DescriptionNotUTF8", memstore.EInvalid, "description is not valid UTF-8", func() error {
			_, err := c.UpdateStore(ctx, nil, s.ID, memstore.StoreUpdate{Description: &bad})
			return err
		}},
		{"EmptyStoreID", memstore.ENotFound, "empty ID", func() error { _, err := c.Store(ctx, nil, ""); return err }},
		{"EmptyStoreIDOfMemory", memstore.ENotFound, "empty ID", func() error { _, err := c.Memory(ctx, nil, "", m.ID); return err }},
		{"EmptyMemoryID", memstore.ENotFound, "empty ID", func() error { _, err := c.Memory(ctx, nil, s.ID, ""); return err }},
		{"EmptyVersionID", memstore.ENotFound, "empty ID", func() error { _, err := c.RedactVersion(ctx, nil, s.ID, ""); return err }},
		{"EmptyIDDelete", memstore.ENotFound, "empty ID", func() error { return c.DeleteStore(ctx, nil, "") }},
	} {
		before := rec.count()
		err := tc.call()
		if memstore.ErrorCode(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v (code %q), want %s mentioning %q", tc.name, err, memstore.ErrorCode(err), tc.code, tc.msg)
		}
		if n := rec.count() - before; n != 0 {
			t.Errorf("%s: %d requests sent, want none", tc.name, n)
		}
	}
	got, err := c.Memory(ctx, nil, s.ID, m.ID)
	if err != nil || got.Content != "m" || got.Path != "/m.md" {
		t.Errorf("memory after refused calls: %+v, %v", got, err)
	}
}

// TestClientSessionSearchAsksTheServer: what a session reaches is the
// server's to decide, not the client's from the session it was told of.
// A store attached after the client's Caller was taken is searched with
// the others; a store never attached is refused by the server, with its
// EPermission.
func TestClientSessionSearchAsksTheServer(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	_, _, secret := h.newKey(t, "scope")
	admin := h.client(secret)
	ctx := t.Context()
	var stores []*memstore.Store
	for _, name := range []string{"one", "two", "never"} {
		s, err := admin.CreateStore(ctx, nil, memstore.StoreCreate{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admin.CreateMemory(ctx, nil, s.ID, memstore.MemoryCreate{Path: "/fruit.md", Content: "mango " + name}); err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	one, two, never := stores[0].ID, stores[1].ID, stores[2].ID
	sess, _, token, err := admin.CreateSession(ctx, nil, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: one}}})
	if err != nil {
		t.Fatal(err)
	}
	caller, err := admin.AuthenticateSession(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	agent := h.client(token)
	agent.Caller = caller
	if _, err := admin.AttachStore(ctx, nil, sess.ID, memstore.AttachmentCreate{StoreID: two}); err != nil {
		t.Fatal(err)
	}

	p, err := agent.SearchMemories(ctx, caller, []string{one, two}, memstore.SearchQuery{Text: "mango"})
	if err != nil {
		t.Fatalf("search of a store attached after the caller was taken: %v", err)
	}
	var found []string
	for _, r := range p.Items {
		found = append(found, r.Memory.StoreID)
	}
	want := []string{one, two}
	slices.Sort(found)
	slices.Sort(want)
	if !slices.Equal(found, want) {
		t.Errorf("found in %q, want %q", found, want)
	}
	_, err = agent.SearchMemories(ctx, caller, []string{one, never}, memstore.SearchQuery{Text: "mango"})
	if memstore.ErrorCode(err) != memstore.EPermission {
		t.Errorf("search of a store never attached: %v, want the server's EPermission", err)
	}
}

// TestClientActsAsItsCredential: a client calls only as its credential.
// A nil caller is the credential's own; another caller is refused before
// any request, unless it is the client's known Caller, whose workspace
// then goes as the header for the server to check.
func TestClientActsAsItsCredential(t *testing.T) {
	rec := &requestRecorder{}
	h := newAPIHarness(t, harnessOptions{wrap: rec.wrap})
	ws, key, secret := h.newKey(t, "credential")
	wsB, keyB, _ := h.newKey(t, "other")
	c := h.client(secret)
	ctx := t.Context()
	s, err := c.CreateStore(ctx, nil, memstore.StoreCreate{Name: "s"})
	if err != nil {
		t.Fatal(err)
	}
	own := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: key.ID}}
	refused := func(what string, caller *memstore.Caller, code string) {
		t.Helper()
		before := rec.count()
		_, err := c.Store(ctx, caller, s.ID)
		if memstore.ErrorCode(err) != code {
			t.Errorf("%s: %v, want %s", what, err, code)
		}
		if n := rec.count() - before; n != 0 {
			t.Errorf("%s: %d requests sent, want none", what, n)
		}
	}
	refused("a caller the client cannot know", own, memstore.EInvalid)
	c.Caller = own
	refused("another key's caller", &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_other"}}, memstore.EPermission)
	refused("a caller of another workspace", &memstore.Caller{WorkspaceID: wsB.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: keyB.ID}}, memstore.EPermission)
	refused("a session of the workspace", &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorSession, ID: "sesn_x"}}, memstore.EPermission)
	if got, err := c.Store(ctx, &memstore.Caller{WorkspaceID: ws.ID, Actor: own.Actor}, s.ID); err != nil || got.WorkspaceID != ws.ID {
		t.Fatalf("Store as the credential's caller: %+v, %v", got, err)
	}
	wantRequest(t, rec, secret, ws.ID, "GET", "/v1/memory_stores/"+s.ID, nil, "")
	if _, err := c.Store(ctx, nil, s.ID); err != nil {
		t.Fatalf("Store as nil: %v", err)
	}
	wantRequest(t, rec, secret, "", "GET", "/v1/memory_stores/"+s.ID, nil, "")

	// A Caller set wrongly cannot reach another workspace: the server
	// checks the header.
	c.Caller = &memstore.Caller{WorkspaceID: wsB.ID, Actor: own.Actor}
	if _, err := c.Store(ctx, c.Caller, s.ID); memstore.ErrorCode(err) != memstore.EPermission {
		t.Errorf("a Caller of another workspace than the key's: %v, want %s", err, memstore.EPermission)
	}
}

// TestClientErrors checks that the server's errors come back as
// *memstore.Error with their type, message and details.
func TestClientErrors(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	_, _, secretA := h.newKey(t, "a")
	wsB, _, secretB := h.newKey(t, "b")
	c := h.client(secretA)
	ctx := t.Context()
	s, err := c.CreateStore(ctx, nil, memstore.StoreCreate{Name: "s"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.CreateMemory(ctx, nil, s.ID, memstore.MemoryCreate{Path: "/dir/m.md", Content: "m"})
	if err != nil {
		t.Fatal(err)
	}
	archived, err := c.CreateStore(ctx, nil, memstore.StoreCreate{Name: "archived"})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := c.CreateMemory(ctx, nil, archived.ID, memstore.MemoryCreate{Path: "/kept.md", Content: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ArchiveStore(ctx, nil, archived.ID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call func() error
		want memstore.Error // Message is a substring to find
	}{
		{"UnknownKey", func() error {
			_, err := h.client("sk-memstore-unknown").Stores(ctx, nil, memstore.StoreFilter{})
			return err
		}, memstore.Error{Code: memstore.EUnauthenticated}},
		{"OtherWorkspaceHeader", func() error {
			other := *c
			other.WorkspaceID = wsB.ID
			_, err := other.Stores(ctx, nil, memstore.StoreFilter{})
			return err
		}, memstore.Error{Code: memstore.EPermission, Message: wsB.ID}},
		{"OtherWorkspaceStore", func() error {
			_, err := h.client(secretB).Store(ctx, nil, s.ID)
			return err
		}, memstore.Error{Code: memstore.ENotFound}},
		{"Invalid", func() error {
			_, err := c.CreateMemory(ctx, nil, s.ID, memstore.MemoryCreate{Path: "relative.md", Content: "x"})
			return err
		}, memstore.Error{Code: memstore.EInvalid, Message: "relative.md"}},
		{"PathTaken", func() error {
			_, err := c.CreateMemory(ctx, nil, s.ID, memstore.MemoryCreate{Path: "/dir/m.md", Content: "x"})
			return err
		}, memstore.Error{Code: memstore.EPathConflict, ConflictingMemoryID: m.ID, ConflictingPath: "/dir/m.md"}},
		{"PathAboveAMemory", func() error {
			_, err := c.CreateMemory(ctx, nil, s.ID, memstore.MemoryCreate{Path: "/dir", Content: "x"})
			return err
		}, memstore.Error{Code: memstore.EPathConflict, ConflictingMemoryID: m.ID, ConflictingPath: "/dir/m.md"}},
		{"NotExists", func() error {
			_, err := c.CreateMemory(ctx, nil, s.ID, memstore.MemoryCreate{Path: "/dir/m.md", Content: "x", IfNotExists: true})
			return err
		}, memstore.Error{Code: memstore.EPreconditionFailed, ConflictingMemoryID: m.ID, ConflictingPath: "/dir/m.md"}},
		{"StaleHash", func() error {
			_, err := c.UpdateMemory(ctx, nil, s.ID, m.ID, memstore.MemoryUpdate{Content: ptrTo("y"), IfSHA256: sha256Hex("old")})
			return err
		}, memstore.Error{Code: memstore.EPreconditionFailed}},
		{"StaleDelete", func() error {
			return c.DeleteMemory(ctx, nil, s.ID, m.ID, sha256Hex("old"))
		}, memstore.Error{Code: memstore.EPreconditionFailed}},
		{"Archived", func() error {
			_, err := c.CreateMemory(ctx, nil, archived.ID, memstore.MemoryCreate{Path: "/x.md", Content: "x"})
			return err
		}, memstore.Error{Code: memstore.EInvalid, Message: "cannot modify archived resource: memory store " + archived.ID + " is archived"}},
		{"ArchivedDelete", func() error {
			return c.DeleteMemory(ctx, nil, archived.ID, kept.ID, "")
		}, memstore.Error{Code: memstore.EInvalid, Message: "cannot modify archived resource"}},
		{"TooLong", func() error {
			_, err := c.CreateMemory(ctx, nil, s.ID, memstore.MemoryCreate{Path: "/" + strings.Repeat("p", memstore.MaxPathBytes), Content: "x"})
			return err
		}, memstore.Error{Code: memstore.EInvalid, Message: "path must be at most 1024 bytes", Detail: "path is 1025 bytes long; the limit is 1024"}},
		{"UnknownMemory", func() error {
			_, err := c.Memory(ctx, nil, s.ID, "mem_unknown")
			return err
		}, memstore.Error{Code: memstore.ENotFound}},
	} {
		err := tc.call()
		var e *memstore.Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %v (%T), want a *memstore.Error", tc.name, err, err)
			continue
		}
		if e.Code != tc.want.Code || e.ConflictingMemoryID != tc.want.ConflictingMemoryID || e.ConflictingPath != tc.want.ConflictingPath || e.Retry {
			t.Errorf("%s: %+v, want %+v", tc.name, *e, tc.want)
		}
		if e.Message == "" || !strings.Contains(e.Message, tc.want.Message) {
			t.Errorf("%s: message %q, want one mentioning %q", tc.name, e.Message, tc.want.Message)
		}
		if e.Detail != tc.want.Detail {
			t.Errorf("%s: detail %q, want %q", tc.name, e.Detail, tc.want.Detail)
		}
	}
	got, err := c.Memory(ctx, nil, s.ID, m.ID)
	if err != nil || got.Content != "m" {
		t.Errorf("memory after refused changes: %+v, %v", got, err)
	}
}

// TestClientBadServers checks the errors for answers that are not the
// API's, and for a server that is not there: they name the URL, never
// the key, and are not *memstore.Error.
func TestClientBadServers(t *testing.T) {
	const secret = "sk-memstore-do-not-print-me"
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    string // in the message
		retry   bool   // for an API error
	}{
		{"HTMLError", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "<html><body>Bad gateway</body></html>")
		}, "502 Bad Gateway without the memory stores API's error object (text/html: \"<html><body>Bad gateway", false},
		{"HTMLSuccess", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<html>a login page</html>")
		}, "200 OK with a body that is not the memory stores API's JSON (text/html", false},
		{"EmptySuccess", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNoContent)
		}, "204 No Content with a body that is not the memory stores API's JSON (no content-type, empty)", false},
		{"JSONWithoutType", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message":"no route"}`)
		}, "404 Not Found without the memory stores API's error object", false},
		{"JSONOfAnotherShape", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"data":"private memory content"}`)
		}, "200 OK with a body that is not the memory stores API's JSON (application/json, JSON of another shape)", false},
		{"RetryInvited", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Should-Retry", "true")
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"type":"error","error":{"type":"conflict_error","message":"busy, try again"}}`)
		}, "busy, try again", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			_, err := httpapi.NewClient(srv.URL+"/", secret).Stores(t.Context(), nil, memstore.StoreFilter{})
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "private memory content") {
				t.Errorf("error %q reveals the key or content", err)
			}
			var e *memstore.Error
			if isAPI := errors.As(err, &e); isAPI != tc.retry {
				t.Errorf("error %v: *memstore.Error %v, want %v", err, isAPI, tc.retry)
			} else if isAPI && (!e.Retry || e.Code != memstore.EConflict) {
				t.Errorf("error %+v, want a conflict_error with Retry", *e)
			}
			if !tc.retry && !strings.Contains(err.Error(), srv.URL+"/v1/memory_stores") {
				t.Errorf("error %q does not name the URL", err)
			}
		})
	}

	t.Run("Unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		u := srv.URL
		srv.Close()
		_, err := httpapi.NewClient(u, secret).Store(t.Context(), nil, "memstore_x")
		if err == nil || !strings.Contains(err.Error(), u) || strings.Contains(err.Error(), secret) {
			t.Errorf("error %v: want one naming %s and not the key", err, u)
		}
		var ue *url.Error
		if !errors.As(err, &ue) {
			t.Errorf("error %v does not wrap the *url.Error", err)
		}
	})

	t.Run("Canceled", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
		defer srv.Close()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := httpapi.NewClient(srv.URL, secret).Store(ctx, nil, "memstore_x")
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want one wrapping context.Canceled", err)
		}
	})
}

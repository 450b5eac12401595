package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/syncbuf"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// serverEnv is a memstore server over a fresh SQLite file behind a real
// HTTP listener, with one workspace and one key in it.
type serverEnv struct {
	db        *sqlite.DB
	handler   *httpapi.Server
	srv       *httptest.Server
	secret    string // the key's secret, sent by default
	keyID     string
	workspace string
	logs      *syncbuf.Buffer
}

// newServerEnv starts a server, stopped at the end of the test; configure
// adjusts its config.
func newServerEnv(tb testing.TB, configure ...func(*httpapi.Config)) *serverEnv {
	tb.Helper()
	return newServerEnvOn(tb, sqlitetest.Open(tb, sqlite.Options{}), configure...)
}

// newServerEnvOn is newServerEnv over a database of the test's own.
func newServerEnvOn(tb testing.TB, db *sqlite.DB, configure ...func(*httpapi.Config)) *serverEnv {
	tb.Helper()
	e := &serverEnv{db: db, logs: new(syncbuf.Buffer)}
	core := memstore.NewCore(db)
	cfg := httpapi.Config{
		Stores: core, Memories: core, Versions: core, Keys: core, Sessions: core, Search: core, Counts: db.Counts,
		Logger: slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, f := range configure {
		f(&cfg)
	}
	e.handler = httpapi.New(cfg)
	e.srv = httptest.NewServer(e.handler)
	tb.Cleanup(func() { // before the database closes
		e.srv.Close()
		e.handler.Close()
	})
	ws := sqlitetest.Workspace(tb, db, "default")
	key, secret := sqlitetest.APIKey(tb, db, ws.ID, "test")
	e.workspace, e.keyID, e.secret = ws.ID, key.ID, secret
	return e
}

// caller is the caller of the env's own key.
func (e *serverEnv) caller() *memstore.Caller {
	return &memstore.Caller{WorkspaceID: e.workspace, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: e.keyID}}
}

// otherKey makes another workspace with a key and returns the secret.
func (e *serverEnv) otherKey(tb testing.TB, workspace string) string {
	tb.Helper()
	ws := sqlitetest.Workspace(tb, e.db, workspace)
	_, secret := sqlitetest.APIKey(tb, e.db, ws.ID, "other")
	return secret
}

// apiResult is an answer of the server, read in full.
type apiResult struct {
	status int
	header http.Header
	body   []byte
}

// withHeader sets (or, with "", deletes) a request header.
func withHeader(name, value string) func(*http.Request) {
	return func(r *http.Request) {
		if value == "" {
			r.Header.Del(name)
		} else {
			r.Header.Set(name, value)
		}
	}
}

// call sends a request as the Go SDK would (x-api-key, the API version,
// the memory beta, ?beta=true) with body as it is ("" for none), after
// edit adjusts it.
func (e *serverEnv) call(tb testing.TB, method, target, body string, edit ...func(*http.Request)) apiResult {
	tb.Helper()
	if strings.Contains(target, "?") {
		target += "&beta=true"
	} else {
		target += "?beta=true"
	}
	res := sendAPI(tb, e.srv, e.secret, memoryBeta, method, target, body, edit...)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return apiResult{status: res.StatusCode, header: res.Header, body: b}
}

// The betas a request names: the memory stores beta the SDKs send, and
// the managed-agents beta of the research preview's guide.
const (
	memoryBeta        = "agent-memory-2026-07-22"
	managedAgentsBeta = "managed-agents-2026-04-01"
)

// sendAPI sends method to target below srv's URL with secret as
// x-api-key, API version 2023-06-01 and beta, and body as JSON when it is
// not "", after edit adjusts the request. The caller closes the body.
func sendAPI(tb testing.TB, srv *httptest.Server, secret, beta, method, target, body string, edit ...func(*http.Request)) *http.Response {
	tb.Helper()
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(tb.Context(), method, srv.URL+target, rd)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("X-Api-Key", secret)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	req.Header.Set("Anthropic-Beta", beta)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, f := range edit {
		f(req)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// ok calls and requires a 200, returning the JSON object answered.
func (e *serverEnv) ok(tb testing.TB, method, target, body string, edit ...func(*http.Request)) map[string]any {
	tb.Helper()
	res := e.call(tb, method, target, body, edit...)
	if res.status != http.StatusOK {
		tb.Fatalf("%s %s: status %d, want 200: %s", method, target, res.status, res.body)
	}
	return res.object(tb)
}

// object decodes the body as a JSON object.
func (res apiResult) object(tb testing.TB) map[string]any {
	tb.Helper()
	if ct := res.header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("content-type %q, want application/json", ct)
	}
	var m map[string]any
	if err := json.Unmarshal(res.body, &m); err != nil {
		tb.Fatalf("body %q: %v", res.body, err)
	}
	return m
}

// apiError checks that res is the error envelope with status and type,
// and returns its error object.
func (res apiResult) apiError(tb testing.TB, status int, typ string) map[string]any {
	tb.Helper()
	if res.status != status {
		tb.Fatalf("status %d, want %d: %s", res.status, status, res.body)
	}
	m := res.object(tb)
	e, _ := m["error"].(map[string]any)
	if m["type"] != "error" || e == nil || e["type"] != typ {
		tb.Fatalf("body %s: want an error of type %s", res.body, typ)
	}
	if msg, _ := e["message"].(string); msg == "" {
		tb.Errorf("error without a message: %s", res.body)
	}
	id := res.header.Get("Request-Id")
	if !strings.HasPrefix(id, "req_") || m["request_id"] != id {
		tb.Errorf("request-id header %q, body request_id %v", id, m["request_id"])
	}
	return e
}

// createStore makes a store through the API and returns its ID.
func (e *serverEnv) createStore(tb testing.TB, name string) string {
	tb.Helper()
	return e.ok(tb, "POST", "/v1/memory_stores", jsonOf(tb, map[string]any{"name": name}))["id"].(string)
}

// wantInvalid sends a request and wants a 400 invalid_request_error whose
// message contains msg, with x-should-retry: false.
func (e *serverEnv) wantInvalid(t *testing.T, method, target, body, msg string) {
	t.Helper()
	res := e.call(t, method, target, body)
	er := res.apiError(t, 400, "invalid_request_error")
	if !strings.Contains(er["message"].(string), msg) {
		t.Errorf("message %q lacks %q", er["message"], msg)
	}
	if res.header.Get("X-Should-Retry") != "false" {
		t.Errorf("x-should-retry %q", res.header.Get("X-Should-Retry"))
	}
}

// wantRetrieved gets target (a memory or a version), which must answer
// with keys and content in the full view, its default, and with a null
// content but content's hash in the basic view.
func (e *serverEnv) wantRetrieved(t *testing.T, target, content string, keys []string) {
	t.Helper()
	got := e.ok(t, "GET", target, "")
	wantKeys(t, got, keys...)
	if got["content"] != content {
		t.Errorf("retrieved %v", got)
	}
	if basic := e.ok(t, "GET", target+"?view=basic", ""); basic["content"] != nil || basic["content_sha256"] != sha256Hex(content) {
		t.Errorf("retrieved basic %v", basic)
	}
}

// storeMemories makes a store called "s" through the API and returns its
// ID and the path of its memories.
func (e *serverEnv) storeMemories(tb testing.TB) (store, base string) {
	tb.Helper()
	store = e.createStore(tb, "s")
	return store, "/v1/memory_stores/" + store + "/memories"
}

// createMemory makes a memory through the API and returns it (basic view).
func (e *serverEnv) createMemory(tb testing.TB, store, path, content string) map[string]any {
	tb.Helper()
	return e.ok(tb, "POST", "/v1/memory_stores/"+store+"/memories", jsonOf(tb, map[string]any{"path": path, "content": content}))
}

func jsonOf(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// wantKeys checks that obj has exactly keys, no more, no fewer.
func wantKeys(tb testing.TB, obj map[string]any, keys ...string) {
	tb.Helper()
	var got []string
	for k := range obj {
		got = append(got, k)
	}
	slices.Sort(got)
	slices.Sort(keys)
	if !slices.Equal(got, keys) {
		tb.Errorf("keys %v, want %v", got, keys)
	}
}

func TestHealthzNeedsNoKey(t *testing.T) {
	e := newServerEnv(t)
	res := e.call(t, "GET", "/healthz", "", withHeader("X-Api-Key", ""))
	if res.status != 200 || string(bytes.TrimSpace(res.body)) != `{"status":"ok"}` {
		t.Fatalf("%d %s", res.status, res.body)
	}
	if !strings.HasPrefix(res.header.Get("Request-Id"), "req_") {
		t.Errorf("request-id %q", res.header.Get("Request-Id"))
	}
}

// TestHealthzPingsTheDatabase: with a ping, /healthz says whether the
// database answers: 200 while it does, 503 with x-should-retry when it
// fails (a real database, closed), and the failure is logged. An outcome
// answers for HealthInterval, then the database is pinged again.
func TestHealthzPingsTheDatabase(t *testing.T) {
	db := sqlitetest.Open(t, sqlite.Options{})
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	e := newServerEnvOn(t, db, func(c *httpapi.Config) {
		c.Ping = db.Ping
		c.Now = func() time.Time { return time.Unix(0, clock.Load()) }
	})
	res := e.call(t, "GET", "/healthz", "", withHeader("X-Api-Key", ""))
	if res.status != 200 || string(bytes.TrimSpace(res.body)) != `{"status":"ok","database":"ok"}` {
		t.Fatalf("a database that answers: %d %s", res.status, res.body)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if res = e.call(t, "GET", "/healthz", "", withHeader("X-Api-Key", "")); res.status != 200 {
		t.Fatalf("within HealthInterval of the last ping: %d %s, want its outcome, 200", res.status, res.body)
	}
	clock.Add(int64(httpapi.HealthInterval))
	res = e.call(t, "GET", "/healthz", "", withHeader("X-Api-Key", ""))
	if res.status != 503 || string(bytes.TrimSpace(res.body)) != `{"status":"unavailable","database":"unreachable"}` || res.header.Get("X-Should-Retry") != "true" {
		t.Fatalf("a closed database: %d %s %v", res.status, res.body, res.header)
	}
	if !strings.Contains(e.logs.String(), "the database does not answer") {
		t.Errorf("the failed check is not logged:\n%s", e.logs)
	}
}

// TestHealthzPingsOnce: however many ask /healthz at once, without a key,
// the database is pinged once, so that asking cannot take its
// connections from the requests.
func TestHealthzPingsOnce(t *testing.T) {
	db := sqlitetest.Open(t, sqlite.Options{})
	var pings atomic.Int32
	e := newServerEnvOn(t, db, func(c *httpapi.Config) {
		c.Ping = func(ctx context.Context) error {
			pings.Add(1)
			time.Sleep(50 * time.Millisecond) // a slow database: the others wait for this ping
			return db.Ping(ctx)
		}
	})
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if res := e.call(t, "GET", "/healthz", "", withHeader("X-Api-Key", "")); res.status != 200 {
				t.Errorf("GET /healthz: %d %s", res.status, res.body)
			}
		})
	}
	wg.Wait()
	if n := pings.Load(); n != 1 {
		t.Errorf("50 health checks at once pinged the database %d times, want 1", n)
	}
}

// TestMetricsPool: with pool statistics, /metrics reports the database's
// connections.
func TestMetricsPool(t *testing.T) {
	db := sqlitetest.Open(t, sqlite.Options{})
	e := newServerEnvOn(t, db, func(c *httpapi.Config) { c.PoolStats = db.PoolStats })
	e.call(t, "GET", "/v1/memory_stores", "") // opens a connection
	res := e.call(t, "GET", "/metrics", "", withHeader("X-Api-Key", ""))
	max := db.PoolStats().Max
	for _, want := range []string{
		`memstore_db_connections{state="idle"} `, `memstore_db_connections{state="in_use"} `,
		fmt.Sprintf("memstore_db_connections_max %d\n", max), "memstore_db_connection_waits_total ", "memstore_db_connection_wait_seconds_total ",
	} {
		if !strings.Contains(string(res.body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if max < 2 {
		t.Errorf("the pools allow %d connections, want at least 2 (the writer and a reader)", max)
	}
}

func TestUnroutedIsJSON(t *testing.T) {
	e := newServerEnv(t)
	for _, tc := range []struct {
		method, target string
		status         int
		typ            string
		allow          []string
	}{
		{"GET", "/v1/nothing", 404, "not_found_error", nil},
		{"GET", "/", 404, "not_found_error", nil},
		{"GET", "/v1/memory_stores/", 404, "not_found_error", nil},
		{"GET", "/v1//memory_stores", 404, "not_found_error", nil}, // the mux would redirect
		{"DELETE", "/v1/memory_stores/memstore_1/archive", 405, "invalid_request_error", []string{"POST"}},
		{"PUT", "/v1/memory_stores", 405, "invalid_request_error", []string{"GET", "POST"}},
		{"POST", "/healthz", 405, "invalid_request_error", []string{"GET"}},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			res := e.call(t, tc.method, tc.target, "")
			res.apiError(t, tc.status, tc.typ)
			if res.header.Get("X-Should-Retry") != "false" {
				t.Errorf("x-should-retry %q", res.header.Get("X-Should-Retry"))
			}
			allow := res.header.Get("Allow")
			for _, m := range tc.allow {
				if !strings.Contains(allow, m) {
					t.Errorf("Allow %q lacks %s", allow, m)
				}
			}
			if tc.allow == nil && allow != "" {
				t.Errorf("Allow %q on a 404", allow)
			}
			if res.header.Get("Location") != "" {
				t.Errorf("Location %q", res.header.Get("Location"))
			}
		})
	}
}

func TestAuthentication(t *testing.T) {
	e := newServerEnv(t)
	const wrong = "sk-memstore-wrong"
	bearer := func(s string) func(*http.Request) { return withHeader("Authorization", "Bearer "+s) }
	for _, tc := range []struct {
		name   string
		edit   []func(*http.Request)
		status int
		typ    string
		msg    string
	}{
		{"x-api-key", nil, 200, "", ""},
		{"bearer", []func(*http.Request){withHeader("X-Api-Key", ""), bearer(e.secret)}, 200, "", ""},
		{"lowercase bearer", []func(*http.Request){withHeader("X-Api-Key", ""), withHeader("Authorization", "bearer "+e.secret)}, 200, "", ""},
		{"x-api-key wins over a bad bearer", []func(*http.Request){bearer(wrong)}, 200, "", ""},
		{"a bad x-api-key wins over a good bearer", []func(*http.Request){withHeader("X-Api-Key", wrong), bearer(e.secret)}, 401, "authentication_error", ""},
		{"missing", []func(*http.Request){withHeader("X-Api-Key", "")}, 401, "authentication_error", "missing API key: set the x-api-key header"},
		{"basic auth is no key", []func(*http.Request){withHeader("X-Api-Key", ""), withHeader("Authorization", "Basic "+e.secret)}, 401, "authentication_error", "missing API key"},
		{"unknown", []func(*http.Request){withHeader("X-Api-Key", wrong)}, 401, "authentication_error", ""},
		{"own workspace", []func(*http.Request){withHeader("Anthropic-Workspace-Id", e.workspace)}, 200, "", ""},
		{"other workspace", []func(*http.Request){withHeader("Anthropic-Workspace-Id", "wrkspc_other")}, 403, "permission_error", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.call(t, "GET", "/v1/memory_stores", "", tc.edit...)
			if tc.status == 200 {
				if res.status != 200 {
					t.Fatalf("status %d: %s", res.status, res.body)
				}
				if got := res.header.Get("Anthropic-Workspace-Id"); got != e.workspace {
					t.Errorf("anthropic-workspace-id %q, want %q", got, e.workspace)
				}
				return
			}
			er := res.apiError(t, tc.status, tc.typ)
			if msg := er["message"].(string); !strings.HasPrefix(msg, tc.msg) || strings.Contains(msg, e.secret) {
				t.Errorf("message %q", msg)
			}
			if res.header.Get("X-Should-Retry") != "false" {
				t.Errorf("x-should-retry %q", res.header.Get("X-Should-Retry"))
			}
		})
	}
}

func TestHealthzAndMetricsNeedNoHeaders(t *testing.T) {
	e := newServerEnv(t, func(c *httpapi.Config) { c.StrictHeaders = true })
	for _, p := range []string{"/healthz", "/metrics"} {
		res := e.call(t, "GET", p, "", withHeader("X-Api-Key", ""), withHeader("Anthropic-Version", ""), withHeader("Anthropic-Beta", ""))
		if res.status != 200 {
			t.Errorf("%s: %d %s", p, res.status, res.body)
		}
	}
}

func TestStrictHeaders(t *testing.T) {
	strict := newServerEnv(t, func(c *httpapi.Config) { c.StrictHeaders = true })
	lenient := newServerEnv(t)
	twoBetas := func(r *http.Request) {
		r.Header.Set("Anthropic-Beta", "some-beta")
		r.Header.Add("Anthropic-Beta", "other-beta , agent-memory-2026-07-22")
	}
	for _, tc := range []struct {
		name   string
		edit   []func(*http.Request)
		strict int // status in strict mode; lenient is always 200
	}{
		{"Go SDK", nil, 200},
		{"TS SDK version", []func(*http.Request){withHeader("Anthropic-Version", "2026-10-21")}, 200},
		{"no version", []func(*http.Request){withHeader("Anthropic-Version", "")}, 400},
		{"unknown version", []func(*http.Request){withHeader("Anthropic-Version", "2020-01-01")}, 400},
		{"no beta", []func(*http.Request){withHeader("Anthropic-Beta", "")}, 400},
		{"another beta only", []func(*http.Request){withHeader("Anthropic-Beta", "files-api-2025-04-14")}, 400},
		{"a beta that only contains the name", []func(*http.Request){withHeader("Anthropic-Beta", "xagent-memory-2026-07-22")}, 400},
		{"managed agents beta", []func(*http.Request){withHeader("Anthropic-Beta", "managed-agents-2026-04-01")}, 200},
		{"betas joined with spaces", []func(*http.Request){withHeader("Anthropic-Beta", "managed-agents-2026-04-01, agent-memory-2026-07-22")}, 200},
		{"beta in a second header", []func(*http.Request){twoBetas}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := strict.call(t, "GET", "/v1/memory_stores", "", tc.edit...)
			if tc.strict == 200 && res.status != 200 {
				t.Errorf("strict: %d %s", res.status, res.body)
			} else if tc.strict != 200 {
				res.apiError(t, tc.strict, "invalid_request_error")
			}
			if res := lenient.call(t, "GET", "/v1/memory_stores", "", tc.edit...); res.status != 200 {
				t.Errorf("lenient: %d %s", res.status, res.body)
			}
		})
	}
}

func TestAnotherWorkspaceSeesNothing(t *testing.T) {
	e := newServerEnv(t)
	store := e.createStore(t, "mine")
	mem := e.createMemory(t, store, "/a.md", "secret plans")
	ver := e.ok(t, "GET", "/v1/memory_stores/"+store+"/memory_versions", "")["data"].([]any)[0].(map[string]any)["id"].(string)
	other := e.otherKey(t, "other")
	as := withHeader("X-Api-Key", other)
	for _, tc := range []struct{ method, target, body string }{
		{"GET", "/v1/memory_stores/" + store, ""},
		{"POST", "/v1/memory_stores/" + store, `{"name":"theirs"}`},
		{"POST", "/v1/memory_stores/" + store + "/archive", ""},
		{"DELETE", "/v1/memory_stores/" + store, ""},
		{"GET", "/v1/memory_stores/" + store + "/memories", ""},
		{"POST", "/v1/memory_stores/" + store + "/memories", `{"path":"/b.md","content":"x"}`},
		{"GET", "/v1/memory_stores/" + store + "/memories/" + mem["id"].(string), ""},
		{"DELETE", "/v1/memory_stores/" + store + "/memories/" + mem["id"].(string), ""},
		{"GET", "/v1/memory_stores/" + store + "/memory_versions", ""},
		{"GET", "/v1/memory_stores/" + store + "/memory_versions/" + ver, ""},
		{"POST", "/v1/memory_stores/" + store + "/memory_versions/" + ver + "/redact", ""},
	} {
		e.call(t, tc.method, tc.target, tc.body, as).apiError(t, 404, "not_found_error")
	}
	if got := e.ok(t, "GET", "/v1/memory_stores", "", as)["data"].([]any); len(got) != 0 {
		t.Errorf("the other workspace lists %v", got)
	}
	// Everything is still there for its owner.
	if m := e.ok(t, "GET", "/v1/memory_stores/"+store+"/memories/"+mem["id"].(string), ""); m["content"] != "secret plans" {
		t.Errorf("memory after the other workspace's attempts: %v", m)
	}
}

func TestBodyLimits(t *testing.T) {
	e := newServerEnv(t, func(c *httpapi.Config) { c.MaxBodyBytes = 1000 })
	store := e.createStore(t, "s")
	big := jsonOf(t, map[string]any{"path": "/big.md", "content": strings.Repeat("x", 1000)})
	res := e.call(t, "POST", "/v1/memory_stores/"+store+"/memories", big)
	res.apiError(t, 413, "request_too_large")
	// Without a Content-Length, the cap applies while reading.
	chunked := func(r *http.Request) { r.ContentLength = -1; r.Body = io.NopCloser(strings.NewReader(big)) }
	e.call(t, "POST", "/v1/memory_stores/"+store+"/memories", big, chunked).apiError(t, 413, "request_too_large")
	// Just under the cap is fine.
	fits := jsonOf(t, map[string]any{"path": "/fits.md", "content": strings.Repeat("x", 900)})
	e.ok(t, "POST", "/v1/memory_stores/"+store+"/memories", fits)
	if got := e.ok(t, "GET", "/v1/memory_stores/"+store+"/memories", "")["data"].([]any); len(got) != 1 {
		t.Errorf("after a refused body the store holds %d memories, want 1", len(got))
	}
}

func TestBodyMustBeValidUnicode(t *testing.T) {
	e := newServerEnv(t)
	store := e.createStore(t, "s")
	for _, tc := range []struct {
		name    string
		content string // a JSON string literal, as sent
		want    string // the content stored, when accepted
		ok      bool
	}{
		{"plain", `"hi"`, "hi", true},
		{"a pair", `"\ud83d\ude00"`, "😀", true},
		{"a pair in capitals", `"\uD83D\uDE00"`, "😀", true},
		{"an escaped backslash before u", `"\\ud800"`, `\ud800`, true},
		{"two escaped backslashes", `"\\\\ud800"`, `\\ud800`, true},
		{"an escaped quote", `"a\"\u00e9"`, `a"é`, true},
		{"a lone high half", `"\ud800"`, "", false},
		{"a lone high half at the end", `"x\uDBFF"`, "", false},
		{"a lone low half", `"\udc00"`, "", false},
		{"a high half and a letter", `"\ud800\u0041"`, "", false},
		{"a high half then a high half", `"\ud800\ud800\udc00"`, "", false},
		{"an escaped backslash then a lone half", `"\\\ud800"`, "", false},
		{"a high half then an escaped low half", `"\ud800\\udc00"`, "", false},
		{"a low half then a high half", `"\udc00\ud800"`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "/" + strings.ReplaceAll(tc.name, " ", "-") + ".md"
			body := `{"path":` + jsonOf(t, path) + `,"content":` + tc.content + `}`
			res := e.call(t, "POST", "/v1/memory_stores/"+store+"/memories?view=full", body)
			if !tc.ok {
				er := res.apiError(t, 400, "invalid_request_error")
				if !strings.Contains(er["message"].(string), "surrogate") {
					t.Errorf("message %q", er["message"])
				}
				return
			}
			if res.status != 200 {
				t.Fatalf("%d %s", res.status, res.body)
			}
			m := res.object(t)
			if m["content"] != tc.want || m["content_sha256"] != sha256Hex(tc.want) {
				t.Errorf("stored %q (%v), want %q", m["content"], m["content_sha256"], tc.want)
			}
		})
	}
	t.Run("invalid UTF-8", func(t *testing.T) {
		res := e.call(t, "POST", "/v1/memory_stores/"+store+"/memories", "{\"path\":\"/u.md\",\"content\":\"\xff\xfe\"}")
		er := res.apiError(t, 400, "invalid_request_error")
		if !strings.Contains(er["message"].(string), "UTF-8") {
			t.Errorf("message %q", er["message"])
		}
	})
	if got := e.ok(t, "GET", "/v1/memory_stores/"+store+"/memories", "")["data"].([]any); len(got) != 6 {
		t.Errorf("the store holds %d memories, want the 6 accepted", len(got))
	}
}

func TestRequestHeadersOfAnswers(t *testing.T) {
	e := newServerEnv(t)
	seen := map[string]bool{}
	for _, tc := range []struct{ method, target string }{
		{"GET", "/v1/memory_stores"},
		{"GET", "/v1/memory_stores/memstore_none"},
		{"POST", "/v1/memory_stores"},
	} {
		res := e.call(t, tc.method, tc.target, "")
		id := res.header.Get("Request-Id")
		if !strings.HasPrefix(id, "req_") || seen[id] {
			t.Errorf("%s %s: request-id %q", tc.method, tc.target, id)
		}
		seen[id] = true
		if ct := res.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: content-type %q", tc.method, tc.target, ct)
		}
		if ws := res.header.Get("Anthropic-Workspace-Id"); ws != e.workspace {
			t.Errorf("%s %s: anthropic-workspace-id %q", tc.method, tc.target, ws)
		}
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newServerEnv(t, func(c *httpapi.Config) { c.Registry = reg })
	store := e.createStore(t, "s")
	mem := e.createMemory(t, store, "/a.md", "x")["id"].(string)
	e.ok(t, "GET", "/v1/memory_stores/"+store+"/memories/"+mem, "")
	e.call(t, "GET", "/v1/memory_stores/"+store+"/memories/mem_none", "")
	e.call(t, "GET", "/nowhere", "")
	e.call(t, "BREW", "/v1/memory_stores", "")

	res := e.call(t, "GET", "/metrics", "", withHeader("X-Api-Key", ""))
	if res.status != 200 || !strings.HasPrefix(res.header.Get("Content-Type"), "text/plain") {
		t.Fatalf("%d %q", res.status, res.header.Get("Content-Type"))
	}
	text := string(res.body)
	for _, want := range []string{
		`memstore_http_requests_total{method="GET",route="GET /v1/memory_stores/{memory_store_id}/memories/{memory_id}",status="200"} 1`,
		`memstore_http_requests_total{method="GET",route="GET /v1/memory_stores/{memory_store_id}/memories/{memory_id}",status="404"} 1`,
		`memstore_http_requests_total{method="POST",route="POST /v1/memory_stores",status="200"} 1`,
		`memstore_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`memstore_http_requests_total{method="other",route="unmatched",status="405"} 1`,
		`memstore_http_request_duration_seconds_count{route="POST /v1/memory_stores/{memory_store_id}/memories"} 1`,
		"memstore_stores 1\n",
		"memstore_memories 1\n",
		"memstore_workspaces 1\n",
		"memstore_memory_versions 1\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// The memory may or may not be indexed yet.
	if !regexp.MustCompile(`(?m)^memstore_search_backlog [01]$`).MatchString(text) {
		t.Errorf("metrics lack the search backlog:\n%s", text)
	}
	// The metrics went to the registry given, never the global one.
	if mfs, err := reg.Gather(); err != nil || len(mfs) == 0 {
		t.Errorf("registry: %d families, %v", len(mfs), err)
	}
	global, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range global {
		if strings.HasPrefix(mf.GetName(), "memstore_") {
			t.Errorf("global registry has %s", mf.GetName())
		}
	}
	// A second server on the same registry shares the metrics.
	core := memstore.NewCore(e.db)
	httpapi.New(httpapi.Config{Stores: core, Memories: core, Versions: core, Keys: core, Registry: reg})
}

func TestMetricsOfAPrivateRegistry(t *testing.T) {
	e := newServerEnv(t, func(c *httpapi.Config) { c.Counts = nil })
	e.ok(t, "GET", "/v1/memory_stores", "")
	text := string(e.call(t, "GET", "/metrics", "").body)
	for _, want := range []string{`route="GET /v1/memory_stores"`, "go_goroutines"} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(text, "memstore_stores") {
		t.Errorf("store gauge without a count function")
	}
}

// TestLogs serves requests directly, so that each log line is written
// when ServeHTTP returns.
func TestLogs(t *testing.T) {
	e := newServerEnv(t)
	const content, pathMark = "the-content-marker", "/path-marker/"
	do := func(method, target, body string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		req.Header.Set("X-Api-Key", e.secret)
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		return rec
	}
	rec := do("POST", "/v1/memory_stores", `{"name":"s"}`)
	var st map[string]any
	json.Unmarshal(rec.Body.Bytes(), &st)
	store := st["id"].(string)
	do("POST", "/v1/memory_stores/"+store+"/memories", jsonOf(t, map[string]any{"path": pathMark + "a.md", "content": content}))
	do("GET", "/v1/memory_stores/"+store+"/memories?path_prefix="+pathMark+"&view=full", "")
	do("GET", "/v1/memory_stores/"+store+"/memories/mem_none", "")
	bad := httptest.NewRequest("GET", "/v1/memory_stores", nil)
	bad.Header.Set("Authorization", "Bearer sk-memstore-not-a-key")
	e.handler.ServeHTTP(httptest.NewRecorder(), bad)

	// A database that is gone: an internal error, logged with its cause,
	// answered without it.
	e.db.Close()
	rec = do("GET", "/v1/memory_stores/"+store, "")
	if rec.Code != 500 {
		t.Fatalf("closed database: %d %s", rec.Code, rec.Body)
	}
	var env map[string]any
	json.Unmarshal(rec.Body.Bytes(), &env)
	if er := env["error"].(map[string]any); er["type"] != "api_error" || er["message"] != "internal server error" {
		t.Errorf("500 body %s", rec.Body)
	}

	logs := e.logs.String()
	for _, secret := range []string{e.secret, "sk-memstore-not-a-key", content, pathMark} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs contain %q:\n%s", secret, logs)
		}
	}
	var requests, errorsLogged int
	for line := range strings.Lines(logs) {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		switch l["msg"] {
		case "request":
			requests++
			for _, k := range []string{"method", "route", "status", "duration", "request_id", "workspace", "bytes"} {
				if _, ok := l[k]; !ok {
					t.Errorf("log line without %s: %s", k, line)
				}
			}
			if l["status"] == 200.0 && l["workspace"] != e.workspace {
				t.Errorf("workspace in %s", line)
			}
		case "request failed":
			errorsLogged++
			if l["level"] != "ERROR" || !strings.Contains(l["error"].(string), "closed") {
				t.Errorf("error line %s", line)
			}
		}
	}
	if requests != 6 || errorsLogged != 1 {
		t.Errorf("%d request lines and %d error lines, want 6 and 1:\n%s", requests, errorsLogged, logs)
	}
}

func TestPathParametersAreDecoded(t *testing.T) {
	e := newServerEnv(t)
	store := e.createStore(t, "s")
	escaped := strings.Replace(store, "_", "%5F", 1)
	if got := e.ok(t, "GET", "/v1/memory_stores/"+escaped, "")["id"]; got != store {
		t.Errorf("id %v", got)
	}
	e.call(t, "GET", "/v1/memory_stores/"+store+"%2Fx", "").apiError(t, 404, "not_found_error")
}

func TestMalformedQuery(t *testing.T) {
	e := newServerEnv(t)
	e.call(t, "GET", "/v1/memory_stores?limit=%zz", "").apiError(t, 400, "invalid_request_error")
}

// The stores and memories of the benchmarks, over a fresh server.
func benchEnv(b *testing.B) (e *serverEnv, store, mem string) {
	b.Helper()
	e = newServerEnv(b, func(c *httpapi.Config) { c.Logger = nil })
	store = e.createStore(b, "bench")
	for i := range 100 {
		m := e.createMemory(b, store, fmt.Sprintf("/notes/%03d.md", i), strings.Repeat("memory text ", 100))
		mem = m["id"].(string)
	}
	return e, store, mem
}

// serveDirect runs requests straight through ServeHTTP, in parallel, so
// that the per-request cost of the server and the database shows without
// the network.
func serveDirect(b *testing.B, e *serverEnv, target string) {
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("GET", target, nil)
			req.Header.Set("X-Api-Key", e.secret)
			rec := httptest.NewRecorder()
			e.handler.ServeHTTP(rec, req)
			if rec.Code != 200 {
				b.Fatalf("%d %s", rec.Code, rec.Body)
			}
		}
	})
}

func BenchmarkRetrieveMemory(b *testing.B) {
	e, store, mem := benchEnv(b)
	serveDirect(b, e, "/v1/memory_stores/"+store+"/memories/"+mem+"?beta=true")
}

func BenchmarkListMemoriesBasic100(b *testing.B) {
	e, store, _ := benchEnv(b)
	serveDirect(b, e, "/v1/memory_stores/"+store+"/memories?beta=true&limit=100")
}

func BenchmarkUnknownMemory(b *testing.B) {
	e, store, _ := benchEnv(b)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("GET", "/v1/memory_stores/"+store+"/memories/mem_none", nil)
			req.Header.Set("X-Api-Key", e.secret)
			e.handler.ServeHTTP(httptest.NewRecorder(), req)
		}
	})
}

// BenchmarkRetrieveMemoryHTTP adds a real loopback connection.
func BenchmarkRetrieveMemoryHTTP(b *testing.B) {
	e, store, mem := benchEnv(b)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("GET", e.srv.URL+"/v1/memory_stores/"+store+"/memories/"+mem+"?beta=true", nil)
			req.Header.Set("X-Api-Key", e.secret)
			res, err := e.srv.Client().Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				b.Fatal(res.Status)
			}
		}
	})
}

func TestErrorsWithoutACodeAreInternal(t *testing.T) {
	// A backend error that is not a memstore.Error must not leak.
	e := newServerEnv(t)
	store := e.createStore(t, "s")
	e.db.Close()
	res := e.call(t, "GET", "/v1/memory_stores/"+store, "")
	er := res.apiError(t, 500, "api_error")
	if er["message"] != "internal server error" {
		t.Errorf("message %q", er["message"])
	}
	if res.header.Get("X-Should-Retry") != "" {
		t.Errorf("x-should-retry %q on a 500", res.header.Get("X-Should-Retry"))
	}
}

func TestPanicIsA500(t *testing.T) {
	// A server without a version service: its routes panic, and the
	// panic is answered and logged like any internal error.
	e := newServerEnv(t, func(c *httpapi.Config) { c.Versions = nil })
	store := e.createStore(t, "s")
	er := e.call(t, "GET", "/v1/memory_stores/"+store+"/memory_versions", "").apiError(t, 500, "api_error")
	if er["message"] != "internal server error" {
		t.Errorf("message %q", er["message"])
	}
	e.ok(t, "GET", "/v1/memory_stores/"+store, "") // the server goes on
	if logs := e.logs.String(); !strings.Contains(logs, `"level":"ERROR","msg":"request failed"`) || !strings.Contains(logs, "panic") {
		t.Errorf("logs:\n%s", logs)
	}
}

func TestAbandonedRequestIsNoError(t *testing.T) {
	// A client that gives up before the answer makes the backend fail with
	// a cancelled context: logged as abandoned, not as a server error.
	e := newServerEnv(t)
	store := e.createStore(t, "s")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest("GET", "/v1/memory_stores/"+store, nil).WithContext(ctx)
	req.Header.Set("x-api-key", e.secret)
	w := httptest.NewRecorder()
	e.handler.ServeHTTP(w, req)
	logs := e.logs.String()
	if w.Code != 500 || strings.Contains(logs, `"level":"ERROR"`) || !strings.Contains(logs, "request abandoned by the client") {
		t.Errorf("status %d, logs:\n%s", w.Code, logs)
	}
}

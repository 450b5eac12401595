package httpapi_test

// The contract with the official Go SDK (github.com/anthropics/anthropic-sdk-go
// v1.84.0): the real server over real HTTP, driven through every method
// of client.Beta.MemoryStores, .Memories and .MemoryVersions with nothing
// but a base URL and an API key, once over a SQLite file and once over a
// PostgreSQL database (onEachBackend).

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/memstore/memstore"
)

// sdkEnv is a server with a workspace, a key, and an SDK client using that
// key, and counts the requests the server receives.
type sdkEnv struct {
	h      *apiHarness
	ws     *memstore.Workspace
	key    *memstore.APIKey
	secret string
	sdk    anthropic.Client
	svc    *anthropic.BetaMemoryStoreService
	mems   *anthropic.BetaMemoryStoreMemoryService // svc's memories

	mu       sync.Mutex
	requests int
}

// steppingClock is a clock that moves one second at each reading. The Go
// SDK sends created_at bounds in whole seconds (RFC 3339 without a
// fraction), so the database's clock gives every write a second of its
// own, which such bounds can name exactly.
func steppingClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 5, 11, 12, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

// newSDKEnv starts a server over backend, whose core has the options
// core.
func newSDKEnv(t *testing.T, backend harnessBackend, core ...memstore.CoreOption) *sdkEnv {
	t.Helper()
	e := &sdkEnv{}
	e.h = newAPIHarness(t, harnessOptions{backend: backend, now: steppingClock(), core: core, wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			e.mu.Lock()
			e.requests++
			e.mu.Unlock()
			next.ServeHTTP(w, r)
		})
	}})
	e.ws, e.key, e.secret = e.h.newKey(t, "sdk")
	e.sdk = e.client(e.secret)
	e.svc = &e.sdk.Beta.MemoryStores
	e.mems = &e.svc.Memories
	return e
}

// onEachSDKEnv runs test once per backend, as a subtest named after it,
// each over a server of its own.
func onEachSDKEnv(t *testing.T, test func(t *testing.T, e *sdkEnv)) {
	onEachBackend(t, func(t *testing.T, backend harnessBackend) { test(t, newSDKEnv(t, backend)) })
}

// client returns an SDK client of the server with secret, blind to the
// ANTHROPIC_* environment.
func (e *sdkEnv) client(secret string, opts ...option.RequestOption) anthropic.Client {
	return anthropic.NewClient(append([]option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(e.h.URL),
		option.WithAPIKey(secret),
		option.WithHTTPClient(e.h.srv.Client()),
	}, opts...)...)
}

// count returns the number of requests the server has received.
func (e *sdkEnv) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.requests
}

func (e *sdkEnv) newStore(t *testing.T, name string) *anthropic.BetaManagedAgentsMemoryStore {
	t.Helper()
	s, err := e.svc.New(t.Context(), anthropic.BetaMemoryStoreNewParams{Name: name})
	if err != nil {
		t.Fatalf("New store %q: %v", name, err)
	}
	return s
}

func (e *sdkEnv) newMemory(t *testing.T, storeID, path, content string) *anthropic.BetaManagedAgentsMemory {
	t.Helper()
	m, err := e.svc.Memories.New(t.Context(), storeID, anthropic.BetaMemoryStoreMemoryNewParams{Path: path, Content: anthropic.String(content)})
	if err != nil {
		t.Fatalf("New memory %q: %v", path, err)
	}
	return m
}

// sdkError checks that err is an *anthropic.Error with status and type,
// and returns the "error" object of its raw body.
func sdkError(t *testing.T, err error, status int, typ, what string) map[string]any {
	t.Helper()
	var ae *anthropic.Error
	if !errors.As(err, &ae) {
		t.Errorf("%s: %v (%T), want an *anthropic.Error", what, err, err)
		return nil
	}
	if ae.StatusCode != status || string(ae.Type()) != typ {
		t.Errorf("%s: %d %q, want %d %q (%s)", what, ae.StatusCode, ae.Type(), status, typ, ae.RawJSON())
	}
	var body struct {
		Type  string         `json:"type"`
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal([]byte(ae.RawJSON()), &body); err != nil || body.Type != "error" {
		t.Errorf("%s: body %s is not an error envelope (%v)", what, ae.RawJSON(), err)
	}
	if msg, _ := body.Error["message"].(string); msg == "" {
		t.Errorf("%s: no message in %s", what, ae.RawJSON())
	}
	if ae.RequestID == "" {
		t.Errorf("%s: no request-id", what)
	}
	return body.Error
}

// rawFields decodes an object's raw JSON, to see nulls the SDK's types
// turn into zero values.
func rawFields(t *testing.T, raw string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("raw JSON %q: %v", raw, err)
	}
	return m
}

func TestSDKStores(t *testing.T) { onEachSDKEnv(t, testSDKStores) }

func testSDKStores(t *testing.T, e *sdkEnv) {
	ctx := t.Context()
	s, err := e.svc.New(ctx, anthropic.BetaMemoryStoreNewParams{
		Name: "User Preferences", Description: anthropic.String("Per-user preferences."),
		Metadata: map[string]string{"owner": "alice", "tier": "1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.ID, "memstore_") || s.Type != "memory_store" || s.Name != "User Preferences" ||
		s.Description != "Per-user preferences." || s.Metadata["owner"] != "alice" || !s.ArchivedAt.IsZero() {
		t.Errorf("New = %s", s.RawJSON())
	}
	if raw := rawFields(t, s.RawJSON()); raw["archived_at"] != nil {
		t.Errorf("archived_at = %v, want null", raw["archived_at"])
	}
	got, err := e.svc.Get(ctx, s.ID, anthropic.BetaMemoryStoreGetParams{})
	if err != nil || got.RawJSON() != s.RawJSON() {
		t.Errorf("Get = %v, %v; want %s", got, err, s.RawJSON())
	}
	// Defaults: an empty description and metadata are "" and {}, never
	// null.
	plain := e.newStore(t, "plain")
	if raw := rawFields(t, plain.RawJSON()); raw["description"] != "" || fmt.Sprint(raw["metadata"]) != "map[]" {
		t.Errorf("store without description and metadata: %s", plain.RawJSON())
	}

	u, err := e.svc.Update(ctx, s.ID, anthropic.BetaMemoryStoreUpdateParams{
		Name: anthropic.String("Prefs"), Metadata: map[string]string{"tier": "2", "new": "x"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if u.Name != "Prefs" || u.Description != "Per-user preferences." || len(u.Metadata) != 3 || u.Metadata["tier"] != "2" || u.Metadata["owner"] != "alice" {
		t.Errorf("Update = %s", u.RawJSON())
	}
	if !u.UpdatedAt.After(s.UpdatedAt) || !u.CreatedAt.Equal(s.CreatedAt) {
		t.Errorf("Update: updated_at %v (was %v), created_at %v (was %v)", u.UpdatedAt, s.UpdatedAt, u.CreatedAt, s.CreatedAt)
	}
	u, err = e.svc.Update(ctx, s.ID, anthropic.BetaMemoryStoreUpdateParams{Description: anthropic.String("")})
	if err != nil || u.Description != "" || u.Name != "Prefs" {
		t.Errorf("clearing the description: %v, %v", u, err)
	}

	// Auto-paging: 45 more stores, newest first, over pages of 20.
	want := []string{}
	for i := range 45 {
		want = append(want, e.newStore(t, fmt.Sprintf("store %02d", i)).ID)
	}
	want = append(want, plain.ID, s.ID)
	slices.Reverse(want[:45])
	before := e.count()
	var ids []string
	pager := e.svc.ListAutoPaging(ctx, anthropic.BetaMemoryStoreListParams{})
	for pager.Next() {
		ids = append(ids, pager.Current().ID)
	}
	if err := pager.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, want) {
		t.Errorf("ListAutoPaging: %d stores\n%v\nwant newest first\n%v", len(ids), ids, want)
	}
	if n := e.count() - before; n != 3 {
		t.Errorf("ListAutoPaging made %d requests for 47 stores at the default 20 a page, want 3", n)
	}
	page, err := e.svc.List(ctx, anthropic.BetaMemoryStoreListParams{Limit: anthropic.Int(10)})
	if err != nil || len(page.Data) != 10 || page.NextPage == "" {
		t.Fatalf("List(limit 10): %v, %v", page, err)
	}
	next, err := page.GetNextPage()
	if err != nil || len(next.Data) != 10 || next.Data[0].ID != want[10] {
		t.Errorf("second page: %v, %v", next, err)
	}

	// created_at bounds are inclusive instants, in any zone.
	first, err := e.svc.Get(ctx, want[44], anthropic.BetaMemoryStoreGetParams{}) // the first of the 45
	if err != nil {
		t.Fatal(err)
	}
	last, err := e.svc.Get(ctx, want[0], anthropic.BetaMemoryStoreGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	zone := time.FixedZone("UTC+7", 7*3600)
	ids = nil
	pager = e.svc.ListAutoPaging(ctx, anthropic.BetaMemoryStoreListParams{
		CreatedAtGte: anthropic.Time(first.CreatedAt.In(zone)), CreatedAtLte: anthropic.Time(last.CreatedAt), Limit: anthropic.Int(100),
	})
	for pager.Next() {
		ids = append(ids, pager.Current().ID)
	}
	if err := pager.Err(); err != nil || !slices.Equal(ids, want[:45]) {
		t.Errorf("created_at range: %d stores, %v; want the 45", len(ids), err)
	}

	// Archive hides a store from lists unless asked.
	a, err := e.svc.Archive(ctx, s.ID, anthropic.BetaMemoryStoreArchiveParams{})
	if err != nil || a.ArchivedAt.IsZero() || a.ID != s.ID {
		t.Fatalf("Archive: %v, %v", a, err)
	}
	again, err := e.svc.Archive(ctx, s.ID, anthropic.BetaMemoryStoreArchiveParams{})
	if err != nil || !again.ArchivedAt.Equal(a.ArchivedAt) || !again.UpdatedAt.Equal(a.UpdatedAt) {
		t.Errorf("second Archive: %v, %v; want it unchanged", again, err)
	}
	listed := func(p anthropic.BetaMemoryStoreListParams) bool {
		p.Limit = anthropic.Int(100)
		page, err := e.svc.List(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(page.Data, func(x anthropic.BetaManagedAgentsMemoryStore) bool { return x.ID == s.ID })
	}
	if listed(anthropic.BetaMemoryStoreListParams{}) {
		t.Error("archived store listed by default")
	}
	if !listed(anthropic.BetaMemoryStoreListParams{IncludeArchived: anthropic.Bool(true)}) {
		t.Error("archived store not listed with include_archived")
	}
	_, err = e.svc.Update(ctx, s.ID, anthropic.BetaMemoryStoreUpdateParams{Name: anthropic.String("x")})
	sdkArchived(t, err, "update of an archived store")

	d, err := e.svc.Delete(ctx, s.ID, anthropic.BetaMemoryStoreDeleteParams{})
	if err != nil || d.ID != s.ID || d.Type != "memory_store_deleted" {
		t.Errorf("Delete: %v, %v", d, err)
	}
	_, err = e.svc.Get(ctx, s.ID, anthropic.BetaMemoryStoreGetParams{})
	sdkError(t, err, 404, memstore.ENotFound, "Get after Delete")
	_, err = e.svc.Delete(ctx, s.ID, anthropic.BetaMemoryStoreDeleteParams{})
	sdkError(t, err, 404, memstore.ENotFound, "second Delete")
}

func TestSDKMemories(t *testing.T) { onEachSDKEnv(t, testSDKMemories) }

func testSDKMemories(t *testing.T, e *sdkEnv) {
	ctx := t.Context()
	sid := e.newStore(t, "memories").ID

	content := "Always use tabs.\r\nNot spaces: \u00e9\u0301 \U0001F600"
	m, err := e.mems.New(ctx, sid, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/preferences/formatting.md", Content: anthropic.String(content)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.ID, "mem_") || m.MemoryStoreID != sid || m.Path != "/preferences/formatting.md" || m.Type != "memory" ||
		m.ContentSha256 != sha256Hex(content) || m.ContentSizeBytes != int64(len(content)) || !strings.HasPrefix(m.MemoryVersionID, "memver_") {
		t.Errorf("New = %s", m.RawJSON())
	}
	// The basic view sends "content": null, not an absent key.
	if v, ok := rawFields(t, m.RawJSON())["content"]; !ok || v != nil {
		t.Errorf("New in the basic view: %s", m.RawJSON())
	}
	full, err := e.mems.New(ctx, sid, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/empty.md", Content: anthropic.String(""), View: anthropic.BetaManagedAgentsMemoryViewFull})
	if err != nil || full.Content != "" || rawFields(t, full.RawJSON())["content"] != "" || full.ContentSha256 != sha256Hex("") {
		t.Errorf("New empty in the full view: %v, %v", full, err)
	}

	got, err := e.mems.Get(ctx, m.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: sid})
	if err != nil || got.Content != content || got.MemoryVersionID != m.MemoryVersionID {
		t.Errorf("Get (full by default) = %v, %v", got, err)
	}
	basic, err := e.mems.Get(ctx, m.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: sid, View: anthropic.BetaManagedAgentsMemoryViewBasic})
	if err != nil || rawFields(t, basic.RawJSON())["content"] != nil || basic.ContentSha256 != m.ContentSha256 {
		t.Errorf("Get basic = %v, %v", basic, err)
	}

	u, err := e.mems.Update(ctx, m.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{
		MemoryStoreID: sid, Content: anthropic.String("Use 2 spaces."),
		Precondition: anthropic.BetaManagedAgentsPreconditionParam{Type: "content_sha256", ContentSha256: anthropic.String(m.ContentSha256)},
		View:         anthropic.BetaManagedAgentsMemoryViewFull,
	})
	if err != nil || u.Content != "Use 2 spaces." || u.ContentSha256 != sha256Hex("Use 2 spaces.") || u.MemoryVersionID == m.MemoryVersionID || u.ID != m.ID {
		t.Fatalf("Update content = %v, %v", u, err)
	}
	r, err := e.mems.Update(ctx, m.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: sid, Path: anthropic.String("/archive/2026_q1_formatting.md")})
	if err != nil || r.Path != "/archive/2026_q1_formatting.md" || r.ID != m.ID || r.ContentSha256 != u.ContentSha256 || rawFields(t, r.RawJSON())["content"] != nil {
		t.Errorf("rename = %v, %v", r, err)
	}

	// 250 memories more: auto-paging in the basic view at 100 a page, and
	// in the full view at 20 a page (the sync helper's listing).
	var want []string
	for i := range 250 {
		p := fmt.Sprintf("/bulk/%03d.md", i)
		e.newMemory(t, sid, p, "content of "+p)
		want = append(want, p)
	}
	want = append(want, "/empty.md")
	want = slices.Insert(want, 0, "/archive/2026_q1_formatting.md")
	for _, c := range []struct {
		name  string
		p     anthropic.BetaMemoryStoreMemoryListParams
		pages int
	}{
		{"Basic100", anthropic.BetaMemoryStoreMemoryListParams{Limit: anthropic.Int(100)}, 3},
		{"Full20", anthropic.BetaMemoryStoreMemoryListParams{Limit: anthropic.Int(20), View: anthropic.BetaManagedAgentsMemoryViewFull}, 13},
		{"FullCapped", anthropic.BetaMemoryStoreMemoryListParams{Limit: anthropic.Int(100), View: anthropic.BetaManagedAgentsMemoryViewFull}, 13},
	} {
		before := e.count()
		var paths []string
		pager := e.mems.ListAutoPaging(ctx, sid, c.p)
		for pager.Next() {
			it := pager.Current()
			mm := it.AsMemory()
			if it.Type != "memory" || mm.ID == "" {
				t.Fatalf("%s: item %s", c.name, it.RawJSON())
			}
			hasContent := rawFields(t, it.RawJSON())["content"] != nil
			if hasContent != (c.p.View == anthropic.BetaManagedAgentsMemoryViewFull) {
				t.Fatalf("%s: item %s: content present %v", c.name, it.RawJSON(), hasContent)
			}
			if hasContent && sha256Hex(mm.Content) != mm.ContentSha256 {
				t.Errorf("%s: %s: content does not hash to content_sha256", c.name, mm.Path)
			}
			paths = append(paths, mm.Path)
		}
		if err := pager.Err(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(paths, want) {
			t.Errorf("%s: %d paths, want %d in byte order", c.name, len(paths), len(want))
		}
		if n := e.count() - before; n != c.pages {
			t.Errorf("%s: %d requests, want %d pages", c.name, n, c.pages)
		}
	}

	// Depth 1 rolls folders up into memory_prefix items.
	page, err := e.mems.List(ctx, sid, anthropic.BetaMemoryStoreMemoryListParams{PathPrefix: anthropic.String("/"), Depth: anthropic.Int(1)})
	if err != nil {
		t.Fatal(err)
	}
	var items []string
	for _, it := range page.Data {
		switch v := it.AsAny().(type) {
		case anthropic.BetaManagedAgentsMemory:
			items = append(items, "memory "+v.Path)
		case anthropic.BetaManagedAgentsMemoryPrefix:
			items = append(items, "prefix "+v.Path)
		default:
			t.Errorf("unknown item %s", it.RawJSON())
		}
	}
	if want := []string{"prefix /archive/", "prefix /bulk/", "memory /empty.md"}; !slices.Equal(items, want) || page.NextPage != "" {
		t.Errorf("depth 1: %v (next %q), want %v", items, page.NextPage, want)
	}
	page, err = e.mems.List(ctx, sid, anthropic.BetaMemoryStoreMemoryListParams{PathPrefix: anthropic.String("/bulk/"), Limit: anthropic.Int(3)})
	if err != nil || len(page.Data) != 3 || page.Data[0].Path != "/bulk/000.md" || page.NextPage == "" {
		t.Errorf("path_prefix /bulk/ limit 3: %v, %v", page, err)
	}

	d, err := e.mems.Delete(ctx, m.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: sid})
	if err != nil || d.ID != m.ID || d.Type != "memory_deleted" {
		t.Errorf("Delete = %v, %v", d, err)
	}
	_, err = e.mems.Get(ctx, m.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: sid})
	sdkError(t, err, 404, memstore.ENotFound, "Get after Delete")
	_, err = e.mems.Delete(ctx, m.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: sid})
	sdkError(t, err, 404, memstore.ENotFound, "second Delete")
	// A memory is reachable only through its own store.
	other := e.newStore(t, "other")
	_, err = e.mems.Get(ctx, full.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: other.ID})
	sdkError(t, err, 404, memstore.ENotFound, "memory through another store")
}

// TestSDKErrors checks every error type the API uses, as the SDK reports
// it, and that a 409 is not retried: the server says x-should-retry:
// false, and the SDK, which retries 409s by default, makes one request.
func TestSDKErrors(t *testing.T) { onEachSDKEnv(t, testSDKErrors) }

func testSDKErrors(t *testing.T, e *sdkEnv) {
	ctx := t.Context()
	s := e.newStore(t, "errors")
	m := e.newMemory(t, s.ID, "/notes/todo.md", "todo")
	archived := e.newStore(t, "archived")
	if _, err := e.svc.Archive(ctx, archived.ID, anthropic.BetaMemoryStoreArchiveParams{}); err != nil {
		t.Fatal(err)
	}
	wsB, _, secretB := e.h.newKey(t, "other-workspace")
	stranger := e.client("sk-memstore-not-a-key")
	for _, c := range []struct {
		name   string
		call   func() error
		status int
		typ    string
		extra  map[string]any // fields expected inside "error"
	}{
		{"InvalidPath", func() error {
			_, err := e.mems.New(ctx, s.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "notes/relative.md", Content: anthropic.String("x")})
			return err
		}, 400, memstore.EInvalid, nil},
		{"ContentTooLarge", func() error {
			_, err := e.mems.New(ctx, s.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/big.md", Content: anthropic.String(strings.Repeat("x", memstore.MaxContentBytes+1))})
			return err
		}, 400, memstore.EInvalid, nil},
		{"LimitTooLarge", func() error {
			_, err := e.svc.List(ctx, anthropic.BetaMemoryStoreListParams{Limit: anthropic.Int(101)})
			return err
		}, 400, memstore.EInvalid, nil},
		{"UnknownKey", func() error {
			_, err := stranger.Beta.MemoryStores.List(ctx, anthropic.BetaMemoryStoreListParams{})
			return err
		}, 401, memstore.EUnauthenticated, nil},
		{"WorkspaceMismatch", func() error {
			_, err := e.svc.Get(ctx, s.ID, anthropic.BetaMemoryStoreGetParams{WorkspaceID: anthropic.String(wsB.ID)})
			return err
		}, 403, memstore.EPermission, nil},
		{"OtherWorkspacesKey", func() error {
			_, err := e.svc.Get(ctx, s.ID, anthropic.BetaMemoryStoreGetParams{WorkspaceID: anthropic.String(e.ws.ID)}, option.WithAPIKey(secretB))
			return err
		}, 403, memstore.EPermission, nil},
		{"UnknownStore", func() error {
			_, err := e.svc.Get(ctx, "memstore_01jzzzzzzzzzzzzzzzzzzzzzzz", anthropic.BetaMemoryStoreGetParams{})
			return err
		}, 404, memstore.ENotFound, nil},
		{"UnknownVersion", func() error {
			_, err := e.svc.MemoryVersions.Get(ctx, "memver_01jzzzzzzzzzzzzzzzzzzzzzzz", anthropic.BetaMemoryStoreMemoryVersionGetParams{MemoryStoreID: s.ID})
			return err
		}, 404, memstore.ENotFound, nil},
		{"StalePrecondition", func() error {
			_, err := e.mems.Update(ctx, m.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{
				MemoryStoreID: s.ID, Content: anthropic.String("lost"),
				Precondition: anthropic.BetaManagedAgentsPreconditionParam{Type: "content_sha256", ContentSha256: anthropic.String(sha256Hex("stale"))},
			})
			return err
		}, 409, memstore.EPreconditionFailed, nil},
		{"StaleDelete", func() error {
			_, err := e.mems.Delete(ctx, m.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: s.ID, ExpectedContentSha256: anthropic.String(sha256Hex("stale"))})
			return err
		}, 409, memstore.EPreconditionFailed, nil},
		{"PathTaken", func() error {
			_, err := e.mems.New(ctx, s.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/notes/todo.md", Content: anthropic.String("again")})
			return err
		}, 409, memstore.EPathConflict, map[string]any{"conflicting_memory_id": m.ID, "conflicting_path": "/notes/todo.md"}},
		{"ArchivedStore", func() error {
			_, err := e.mems.New(ctx, archived.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/x.md", Content: anthropic.String("x")})
			return err
		}, 400, memstore.EInvalid, nil},
		{"NotExistsTaken", func() error {
			// Claude Code's create; the Go SDK's params have no
			// precondition, so it is set on the body.
			_, err := e.mems.New(ctx, s.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/notes", Content: anthropic.String("again")},
				option.WithJSONSet("precondition", map[string]string{"type": "not_exists"}))
			return err
		}, 409, memstore.EPreconditionFailed, map[string]any{"conflicting_memory_id": m.ID, "conflicting_path": "/notes/todo.md"}},
		{"PathTooDeep", func() error {
			_, err := e.mems.New(ctx, s.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: strings.Repeat("/d", memstore.MaxPathSegments+1), Content: anthropic.String("x")})
			return err
		}, 400, memstore.EInvalid, map[string]any{"message": "path must be at most 20 segments deep"}},
	} {
		before := e.count()
		errBody := sdkError(t, c.call(), c.status, c.typ, c.name)
		for k, v := range c.extra {
			if errBody[k] != v {
				t.Errorf("%s: error.%s = %v, want %v", c.name, k, errBody[k], v)
			}
		}
		if n := e.count() - before; n != 1 {
			t.Errorf("%s: %d requests, want 1 (x-should-retry: false on every 4xx)", c.name, n)
		}
	}
	got, err := e.mems.Get(ctx, m.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: s.ID})
	if err != nil || got.Content != "todo" || got.MemoryVersionID != m.MemoryVersionID {
		t.Errorf("memory after refused changes: %v, %v", got, err)
	}
}

func TestSDKPreconditions(t *testing.T) { onEachSDKEnv(t, testSDKPreconditions) }

func testSDKPreconditions(t *testing.T, e *sdkEnv) {
	ctx := t.Context()
	sid := e.newStore(t, "cas").ID
	m := e.newMemory(t, sid, "/cas.md", "v1")
	update := anthropic.BetaMemoryStoreMemoryUpdateParams{
		MemoryStoreID: sid, Content: anthropic.String("v2"),
		Precondition: anthropic.BetaManagedAgentsPreconditionParam{Type: "content_sha256", ContentSha256: anthropic.String(sha256Hex("v1"))},
	}
	u, err := e.mems.Update(ctx, m.ID, update)
	if err != nil || u.ContentSha256 != sha256Hex("v2") {
		t.Fatalf("guarded update: %v, %v", u, err)
	}
	// The same update again (a retry whose first answer was lost): its
	// hash is stale now, but it changes nothing, so it succeeds and writes
	// no version.
	again, err := e.mems.Update(ctx, m.ID, update)
	if err != nil {
		t.Fatalf("retried update: %v", err)
	}
	if again.MemoryVersionID != u.MemoryVersionID || !again.UpdatedAt.Equal(u.UpdatedAt) {
		t.Errorf("retried update wrote a version: %s, was %s", again.MemoryVersionID, u.MemoryVersionID)
	}
	// A different change with the stale hash is refused.
	update.Content = anthropic.String("v3")
	_, err = e.mems.Update(ctx, m.ID, update)
	sdkError(t, err, 409, memstore.EPreconditionFailed, "stale hash")
	// A rename guarded by the current hash.
	r, err := e.mems.Update(ctx, m.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{
		MemoryStoreID: sid, Path: anthropic.String("/moved.md"),
		Precondition: anthropic.BetaManagedAgentsPreconditionParam{Type: "content_sha256", ContentSha256: anthropic.String(u.ContentSha256)},
	})
	if err != nil || r.Path != "/moved.md" {
		t.Errorf("guarded rename: %v, %v", r, err)
	}
	page, err := e.svc.MemoryVersions.List(ctx, sid, anthropic.BetaMemoryStoreMemoryVersionListParams{MemoryID: anthropic.String(m.ID)})
	if err != nil || len(page.Data) != 3 {
		t.Errorf("versions: %v, %v; want created and two modified", page, err)
	}
	// Delete guarded by the hash; upper case hex is the same hash.
	_, err = e.mems.Delete(ctx, m.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: sid, ExpectedContentSha256: anthropic.String(sha256Hex("v1"))})
	sdkError(t, err, 409, memstore.EPreconditionFailed, "stale delete")
	if _, err := e.mems.Delete(ctx, m.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{
		MemoryStoreID: sid, ExpectedContentSha256: anthropic.String(strings.ToUpper(sha256Hex("v2"))),
	}); err != nil {
		t.Errorf("guarded delete: %v", err)
	}
	// An update of a memory deleted meanwhile is a 404, not a 409: the
	// sync helper re-creates it on 404.
	_, err = e.mems.Update(ctx, m.ID, update)
	sdkError(t, err, 404, memstore.ENotFound, "update of a deleted memory")
}

func TestSDKPaths(t *testing.T) { onEachSDKEnv(t, testSDKPaths) }

func testSDKPaths(t *testing.T, e *sdkEnv) {
	ctx := t.Context()
	sid := e.newStore(t, "paths").ID
	notes := e.newMemory(t, sid, "/notes", "a file named notes")
	deep := e.newMemory(t, sid, "/deep/a/b.md", "deep")
	free := e.newMemory(t, sid, "/free.md", "free")
	conflict := func(err error, blocker *anthropic.BetaManagedAgentsMemory, at, what string) {
		t.Helper()
		body := sdkError(t, err, 409, memstore.EPathConflict, what)
		if body["conflicting_memory_id"] != blocker.ID || body["conflicting_path"] != at {
			t.Errorf("%s: conflicting (%v, %v), want (%s, %s)", what, body["conflicting_memory_id"], body["conflicting_path"], blocker.ID, at)
		}
	}
	newAt := func(p string) error {
		_, err := e.mems.New(ctx, sid, anthropic.BetaMemoryStoreMemoryNewParams{Path: p, Content: anthropic.String("x")})
		return err
	}
	moveTo := func(m *anthropic.BetaManagedAgentsMemory, p string) (*anthropic.BetaManagedAgentsMemory, error) {
		return e.mems.Update(ctx, m.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: sid, Path: anthropic.String(p)})
	}
	conflict(newAt("/notes"), notes, "/notes", "same path")
	conflict(newAt("/notes/child.md"), notes, "/notes", "below a memory")
	conflict(newAt("/deep"), deep, "/deep/a/b.md", "above a memory")
	conflict(newAt("/deep/a"), deep, "/deep/a/b.md", "just above a memory")
	_, err := moveTo(free, "/notes")
	conflict(err, notes, "/notes", "rename onto a memory")
	_, err = moveTo(free, "/deep/a/b.md/c")
	conflict(err, deep, "/deep/a/b.md", "rename below a memory")
	for _, p := range []string{"/notes.md", "/notes-old/x", "/deep/a/bb", "/Notes"} {
		if err := newAt(p); err != nil {
			t.Errorf("create %s next to /notes and /deep/a/b.md: %v", p, err)
		}
	}

	// Rename frees the old path; delete frees the path too, and a new
	// memory there is a new lineage while the old one keeps its versions.
	moved, err := moveTo(notes, "/archive/notes")
	if err != nil || moved.ID != notes.ID {
		t.Fatalf("rename: %v, %v", moved, err)
	}
	if err := newAt("/notes/child.md"); err != nil {
		t.Errorf("create below the old path after the rename: %v", err)
	}
	if _, err := e.mems.Delete(ctx, free.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: sid}); err != nil {
		t.Fatal(err)
	}
	reborn := e.newMemory(t, sid, "/free.md", "reborn")
	if reborn.ID == free.ID {
		t.Error("a re-created path reuses the deleted memory's ID")
	}
	ops := func(memoryID string) []string {
		var ops []string
		pager := e.svc.MemoryVersions.ListAutoPaging(ctx, sid, anthropic.BetaMemoryStoreMemoryVersionListParams{MemoryID: anthropic.String(memoryID)})
		for pager.Next() {
			v := pager.Current()
			if v.MemoryID != memoryID {
				t.Errorf("version %s of %s listed for %s", v.ID, v.MemoryID, memoryID)
			}
			ops = append(ops, string(v.Operation)+" "+v.Path)
		}
		if err := pager.Err(); err != nil {
			t.Fatal(err)
		}
		return ops
	}
	if got, want := ops(free.ID), []string{"deleted /free.md", "created /free.md"}; !slices.Equal(got, want) {
		t.Errorf("versions of the deleted memory: %v, want %v", got, want)
	}
	if got, want := ops(reborn.ID), []string{"created /free.md"}; !slices.Equal(got, want) {
		t.Errorf("versions of the new memory: %v, want %v", got, want)
	}
	if got, want := ops(notes.ID), []string{"modified /archive/notes", "created /notes"}; !slices.Equal(got, want) {
		t.Errorf("versions of the renamed memory: %v, want %v", got, want)
	}
}

func TestSDKVersions(t *testing.T) { onEachSDKEnv(t, testSDKVersions) }

func testSDKVersions(t *testing.T, e *sdkEnv) {
	ctx := t.Context()
	vers := &e.svc.MemoryVersions
	sid := e.newStore(t, "versions").ID
	// A second key of the same workspace, to filter by api_key_id.
	key2, secret2 := e.h.newAPIKey(t, e.ws.ID, "second")
	other := e.client(secret2)

	m := e.newMemory(t, sid, "/secret.md", "password: hunter2")
	u, err := other.Beta.MemoryStores.Memories.Update(ctx, m.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: sid, Content: anthropic.String("password: [removed]")})
	if err != nil {
		t.Fatal(err)
	}
	n := e.newMemory(t, sid, "/other.md", "other")
	if _, err := other.Beta.MemoryStores.Memories.Delete(ctx, n.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: sid}); err != nil {
		t.Fatal(err)
	}
	all, err := vers.List(ctx, sid, anthropic.BetaMemoryStoreMemoryVersionListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, v := range all.Data {
		ids = append(ids, v.ID)
	}
	if len(ids) != 4 || ids[1] != n.MemoryVersionID || ids[2] != u.MemoryVersionID || ids[3] != m.MemoryVersionID || all.NextPage != "" {
		t.Fatalf("versions newest first: %v", ids)
	}
	at := map[string]time.Time{}
	for _, v := range all.Data {
		at[v.ID] = v.CreatedAt
		if raw := rawFields(t, v.RawJSON()); raw["content"] != nil || raw["redacted_at"] != nil || raw["redacted_by"] != nil {
			t.Errorf("listed version %s: %s", v.ID, v.RawJSON())
		}
	}
	del := all.Data[0]
	if raw := rawFields(t, del.RawJSON()); del.Operation != "deleted" || del.Path != "/other.md" || raw["content_sha256"] != nil || raw["content_size_bytes"] != nil {
		t.Errorf("deleted version: %s", del.RawJSON())
	}
	if all.Data[2].CreatedBy.APIKeyID != key2.ID || all.Data[3].CreatedBy.APIKeyID != e.key.ID || all.Data[3].CreatedBy.Type != "api_actor" {
		t.Errorf("created_by: %s / %s", all.Data[2].CreatedBy.RawJSON(), all.Data[3].CreatedBy.RawJSON())
	}

	for _, c := range []struct {
		name string
		p    anthropic.BetaMemoryStoreMemoryVersionListParams
		want []string
	}{
		{"MemoryID", anthropic.BetaMemoryStoreMemoryVersionListParams{MemoryID: anthropic.String(m.ID)}, []string{ids[2], ids[3]}},
		{"Deleted", anthropic.BetaMemoryStoreMemoryVersionListParams{Operation: anthropic.BetaManagedAgentsMemoryVersionOperationDeleted}, []string{ids[0]}},
		{"Created", anthropic.BetaMemoryStoreMemoryVersionListParams{Operation: anthropic.BetaManagedAgentsMemoryVersionOperationCreated}, []string{ids[1], ids[3]}},
		{"APIKeyID", anthropic.BetaMemoryStoreMemoryVersionListParams{APIKeyID: anthropic.String(key2.ID)}, []string{ids[0], ids[2]}},
		{"SessionID", anthropic.BetaMemoryStoreMemoryVersionListParams{SessionID: anthropic.String("sesn_nobody")}, nil},
		{"ServiceAccountID", anthropic.BetaMemoryStoreMemoryVersionListParams{ServiceAccountID: anthropic.String("svac_nobody")}, nil},
		{"CreatedAtRange", anthropic.BetaMemoryStoreMemoryVersionListParams{CreatedAtGte: anthropic.Time(at[ids[2]]), CreatedAtLte: anthropic.Time(at[ids[1]])}, []string{ids[1], ids[2]}},
		{"CreatedAtGte", anthropic.BetaMemoryStoreMemoryVersionListParams{CreatedAtGte: anthropic.Time(at[ids[0]].In(time.FixedZone("UTC-5", -5*3600)))}, []string{ids[0]}},
		{"CombinedPaged", anthropic.BetaMemoryStoreMemoryVersionListParams{APIKeyID: anthropic.String(e.key.ID), Limit: anthropic.Int(1)}, []string{ids[1], ids[3]}},
	} {
		var got []string
		pager := vers.ListAutoPaging(ctx, sid, c.p)
		for pager.Next() {
			got = append(got, pager.Current().ID)
		}
		if err := pager.Err(); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	_, err = vers.List(ctx, sid, anthropic.BetaMemoryStoreMemoryVersionListParams{Operation: "renamed"})
	sdkError(t, err, 400, memstore.EInvalid, "unknown operation")

	full, err := vers.List(ctx, sid, anthropic.BetaMemoryStoreMemoryVersionListParams{MemoryID: anthropic.String(m.ID), View: anthropic.BetaManagedAgentsMemoryViewFull})
	if err != nil || len(full.Data) != 2 || full.Data[1].Content != "password: hunter2" {
		t.Errorf("full view list: %v, %v", full, err)
	}
	v, err := vers.Get(ctx, m.MemoryVersionID, anthropic.BetaMemoryStoreMemoryVersionGetParams{MemoryStoreID: sid})
	if err != nil || v.Content != "password: hunter2" || v.Path != "/secret.md" || v.Operation != "created" || v.ContentSha256 != m.ContentSha256 {
		t.Fatalf("Get: %v, %v", v, err)
	}

	// Redaction by the second key clears path and content for good and
	// records who did it; the rest stays.
	r, err := other.Beta.MemoryStores.MemoryVersions.Redact(ctx, m.MemoryVersionID, anthropic.BetaMemoryStoreMemoryVersionRedactParams{MemoryStoreID: sid})
	if err != nil {
		t.Fatal(err)
	}
	raw := rawFields(t, r.RawJSON())
	for _, k := range []string{"path", "content", "content_sha256", "content_size_bytes"} {
		if v, ok := raw[k]; !ok || v != nil {
			t.Errorf("redacted version: %s = %v (present %v), want null", k, v, ok)
		}
	}
	if r.RedactedAt.IsZero() || r.RedactedBy.Type != "api_actor" || r.RedactedBy.APIKeyID != key2.ID ||
		r.ID != v.ID || r.MemoryID != m.ID || r.Operation != "created" || !r.CreatedAt.Equal(v.CreatedAt) || r.CreatedBy.APIKeyID != e.key.ID {
		t.Errorf("redacted version: %s", r.RawJSON())
	}
	got, err := vers.Get(ctx, m.MemoryVersionID, anthropic.BetaMemoryStoreMemoryVersionGetParams{MemoryStoreID: sid})
	if err != nil || got.RawJSON() != r.RawJSON() {
		t.Errorf("Get after redaction: %v, %v; want %s", got, err, r.RawJSON())
	}
	again, err := vers.Redact(ctx, m.MemoryVersionID, anthropic.BetaMemoryStoreMemoryVersionRedactParams{MemoryStoreID: sid})
	if err != nil || !again.RedactedAt.Equal(r.RedactedAt) || again.RedactedBy.APIKeyID != key2.ID {
		t.Errorf("second redaction: %v, %v; want the first unchanged", again, err)
	}
	live, err := e.svc.Memories.Get(ctx, m.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: sid})
	if err != nil || live.Content != "password: [removed]" {
		t.Errorf("live memory after redacting an old version: %v, %v", live, err)
	}
}

func TestSDKArchivedStore(t *testing.T) { onEachSDKEnv(t, testSDKArchivedStore) }

func testSDKArchivedStore(t *testing.T, e *sdkEnv) {
	ctx := t.Context()
	sid := e.newStore(t, "to archive").ID
	m := e.newMemory(t, sid, "/kept.md", "kept")
	gone := e.newMemory(t, sid, "/gone.md", "gone")
	if _, err := e.svc.Archive(ctx, sid, anthropic.BetaMemoryStoreArchiveParams{}); err != nil {
		t.Fatal(err)
	}

	// Writes, deletes included, are the hosted API's 400, each in one
	// request (x-should-retry: false).
	before := e.count()
	_, err := e.mems.New(ctx, sid, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/new.md", Content: anthropic.String("x")})
	sdkArchived(t, err, "create")
	_, err = e.mems.Update(ctx, m.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: sid, Content: anthropic.String("changed")})
	sdkArchived(t, err, "update")
	_, err = e.mems.Delete(ctx, gone.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: sid})
	sdkArchived(t, err, "delete")
	_, err = e.svc.Update(ctx, sid, anthropic.BetaMemoryStoreUpdateParams{Name: anthropic.String("renamed")})
	sdkArchived(t, err, "store update")
	if n := e.count() - before; n != 4 {
		t.Errorf("%d requests for 4 refused writes, want 4", n)
	}

	// Reads work.
	if s, err := e.svc.Get(ctx, sid, anthropic.BetaMemoryStoreGetParams{}); err != nil || s.ArchivedAt.IsZero() {
		t.Errorf("Get archived store: %v, %v", s, err)
	}
	if got, err := e.mems.Get(ctx, m.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: sid}); err != nil || got.Content != "kept" {
		t.Errorf("Get memory: %v, %v", got, err)
	}
	if got, err := e.mems.Get(ctx, gone.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: sid}); err != nil || got.Content != "gone" {
		t.Errorf("Get memory after a refused delete: %v, %v", got, err)
	}
	if page, err := e.mems.List(ctx, sid, anthropic.BetaMemoryStoreMemoryListParams{}); err != nil || len(page.Data) != 2 {
		t.Errorf("List memories: %v, %v", page, err)
	}
	if page, err := e.svc.MemoryVersions.List(ctx, sid, anthropic.BetaMemoryStoreMemoryVersionListParams{}); err != nil || len(page.Data) != 2 {
		t.Errorf("List versions: %v, %v", page, err)
	}

	// Redacting versions and deleting the store work.
	if r, err := e.svc.MemoryVersions.Redact(ctx, gone.MemoryVersionID, anthropic.BetaMemoryStoreMemoryVersionRedactParams{MemoryStoreID: sid}); err != nil || r.RedactedAt.IsZero() {
		t.Errorf("Redact in an archived store: %v, %v", r, err)
	}
	if _, err := e.svc.Delete(ctx, sid, anthropic.BetaMemoryStoreDeleteParams{}); err != nil {
		t.Errorf("Delete archived store: %v", err)
	}
}

// sdkArchived checks that err is the refusal of a write to an archived
// store: 400 invalid_request_error, "cannot modify archived resource"
// first.
func sdkArchived(t *testing.T, err error, what string) {
	t.Helper()
	body := sdkError(t, err, 400, memstore.EInvalid, what)
	if msg, _ := body["message"].(string); !strings.HasPrefix(msg, "cannot modify archived resource") {
		t.Errorf("%s: message %q", what, msg)
	}
}

func TestSDKWorkspaceIsolation(t *testing.T) { onEachSDKEnv(t, testSDKWorkspaceIsolation) }

func testSDKWorkspaceIsolation(t *testing.T, e *sdkEnv) {
	ctx := t.Context()
	s := e.newStore(t, "A's")
	m := e.newMemory(t, s.ID, "/private.md", "private")
	wsB, _, secretB := e.h.newKey(t, "B")
	b := e.client(secretB)
	bs, err := b.Beta.MemoryStores.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "B's"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"GetStore", func() error {
			_, err := b.Beta.MemoryStores.Get(ctx, s.ID, anthropic.BetaMemoryStoreGetParams{})
			return err
		}},
		{"UpdateStore", func() error {
			_, err := b.Beta.MemoryStores.Update(ctx, s.ID, anthropic.BetaMemoryStoreUpdateParams{Name: anthropic.String("x")})
			return err
		}},
		{"ArchiveStore", func() error {
			_, err := b.Beta.MemoryStores.Archive(ctx, s.ID, anthropic.BetaMemoryStoreArchiveParams{})
			return err
		}},
		{"GetMemory", func() error {
			_, err := b.Beta.MemoryStores.Memories.Get(ctx, m.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: s.ID})
			return err
		}},
		{"ListMemories", func() error {
			_, err := b.Beta.MemoryStores.Memories.List(ctx, s.ID, anthropic.BetaMemoryStoreMemoryListParams{})
			return err
		}},
		{"CreateMemory", func() error {
			_, err := b.Beta.MemoryStores.Memories.New(ctx, s.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/x.md", Content: anthropic.String("x")})
			return err
		}},
		{"GetMemoryViaOwnStore", func() error {
			_, err := b.Beta.MemoryStores.Memories.Get(ctx, m.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: bs.ID})
			return err
		}},
		{"ListVersions", func() error {
			_, err := b.Beta.MemoryStores.MemoryVersions.List(ctx, s.ID, anthropic.BetaMemoryStoreMemoryVersionListParams{})
			return err
		}},
		{"RedactVersion", func() error {
			_, err := b.Beta.MemoryStores.MemoryVersions.Redact(ctx, m.MemoryVersionID, anthropic.BetaMemoryStoreMemoryVersionRedactParams{MemoryStoreID: s.ID})
			return err
		}},
		{"DeleteMemory", func() error {
			_, err := b.Beta.MemoryStores.Memories.Delete(ctx, m.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: s.ID})
			return err
		}},
		{"DeleteStore", func() error {
			_, err := b.Beta.MemoryStores.Delete(ctx, s.ID, anthropic.BetaMemoryStoreDeleteParams{})
			return err
		}},
	} {
		sdkError(t, c.call(), 404, memstore.ENotFound, "B: "+c.name)
	}
	page, err := b.Beta.MemoryStores.List(ctx, anthropic.BetaMemoryStoreListParams{IncludeArchived: anthropic.Bool(true)})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != bs.ID {
		t.Errorf("B lists %v, %v; want only its own store", page, err)
	}
	// B's own workspace header is fine; A's is refused.
	if _, err := b.Beta.MemoryStores.Get(ctx, bs.ID, anthropic.BetaMemoryStoreGetParams{WorkspaceID: anthropic.String(wsB.ID)}); err != nil {
		t.Errorf("B with its own workspace header: %v", err)
	}
	_, err = b.Beta.MemoryStores.Get(ctx, s.ID, anthropic.BetaMemoryStoreGetParams{WorkspaceID: anthropic.String(e.ws.ID)})
	sdkError(t, err, 403, memstore.EPermission, "B naming A's workspace")
	// Nothing changed for A.
	got, err := e.svc.Memories.Get(ctx, m.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: s.ID})
	if err != nil || got.Content != "private" || got.MemoryVersionID != m.MemoryVersionID {
		t.Errorf("A's memory after B's attempts: %v, %v", got, err)
	}
}

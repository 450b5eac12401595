package httpapi_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

var memoryKeys = []string{"type", "id", "memory_store_id", "path", "content", "content_sha256",
	"content_size_bytes", "size_bytes", "memory_version_id", "created_at", "updated_at"}

func TestMemoryLifecycle(t *testing.T) {
	e := newServerEnv(t)
	store, base := e.storeMemories(t)

	// Create: basic view by default, content null but present.
	m := e.ok(t, "POST", base, `{"path":"/a b/ü.md","content":"hello\r\n"}`)
	wantKeys(t, m, memoryKeys...)
	id := m["id"].(string)
	if m["type"] != "memory" || !strings.HasPrefix(id, "mem_") || m["memory_store_id"] != store || m["path"] != "/a b/ü.md" ||
		m["content"] != nil || m["content_sha256"] != sha256Hex("hello\r\n") || m["content_size_bytes"] != 7.0 ||
		!strings.HasPrefix(m["memory_version_id"].(string), "memver_") {
		t.Errorf("created %v", m)
	}
	if full := e.ok(t, "POST", base+"?view=full", `{"path":"/empty.md","content":""}`); full["content"] != "" || full["content_sha256"] != sha256Hex("") {
		t.Errorf("created with view=full %v", full)
	}

	// Retrieve: full by default.
	e.wantRetrieved(t, base+"/"+id, "hello\r\n", memoryKeys)

	// Update by POST, PATCH and PUT; the answer is basic unless asked.
	up := e.ok(t, "POST", base+"/"+id, `{"content":"v2"}`)
	if up["content"] != nil || up["content_sha256"] != sha256Hex("v2") || up["memory_version_id"] == m["memory_version_id"] || up["id"] != id {
		t.Errorf("updated %v", up)
	}
	if up := e.ok(t, "PATCH", base+"/"+id+"?view=full", `{"path":"/moved.md"}`); up["path"] != "/moved.md" || up["content"] != "v2" {
		t.Errorf("PATCH %v", up)
	}
	if up := e.ok(t, "PUT", base+"/"+id+"?view=full", `{"content":"v3","path":null}`); up["path"] != "/moved.md" || up["content"] != "v3" {
		t.Errorf("PUT %v", up)
	}
	// An update that changes nothing: same version, same updated_at.
	before := e.ok(t, "GET", base+"/"+id, "")
	if same := e.ok(t, "POST", base+"/"+id, `{}`); same["memory_version_id"] != before["memory_version_id"] || same["updated_at"] != before["updated_at"] {
		t.Errorf("empty update %v, before %v", same, before)
	}

	del := e.ok(t, "DELETE", base+"/"+id, "")
	wantKeys(t, del, "type", "id")
	if del["type"] != "memory_deleted" || del["id"] != id {
		t.Errorf("deleted %v", del)
	}
	e.call(t, "GET", base+"/"+id, "").apiError(t, 404, "not_found_error")
	e.call(t, "POST", base+"/"+id, `{"content":"x"}`).apiError(t, 404, "not_found_error")
	e.call(t, "DELETE", base+"/"+id, "").apiError(t, 404, "not_found_error")
}

func TestMemoryOfAnotherStoreIs404(t *testing.T) {
	e := newServerEnv(t)
	s1, s2 := e.createStore(t, "one"), e.createStore(t, "two")
	id := e.createMemory(t, s1, "/a.md", "x")["id"].(string)
	other := "/v1/memory_stores/" + s2 + "/memories/" + id
	e.call(t, "GET", other, "").apiError(t, 404, "not_found_error")
	e.call(t, "POST", other, `{"content":"y"}`).apiError(t, 404, "not_found_error")
	e.call(t, "DELETE", other, "").apiError(t, 404, "not_found_error")
	if m := e.ok(t, "GET", "/v1/memory_stores/"+s1+"/memories/"+id, ""); m["content"] != "x" {
		t.Errorf("memory after attempts through another store: %v", m)
	}
}

func TestListMemories(t *testing.T) {
	e := newServerEnv(t)
	store, base := e.storeMemories(t)
	for _, p := range []string{"/notes/x.md", "/a.md", "/notes/sub/y.md", "/projects/p/q.md", "/notes-old/z.md"} {
		e.createMemory(t, store, p, "content of "+p)
	}
	type item struct{ typ, path string }
	list := func(query string) ([]item, []map[string]any) {
		t.Helper()
		var items []item
		var objs []map[string]any
		page := ""
		for {
			target := base + "?" + query
			if page != "" {
				target += "&page=" + url.QueryEscape(page)
			}
			p := e.ok(t, "GET", target, "")
			wantKeys(t, p, "data", "next_page")
			data := p["data"].([]any)
			if len(data) == 0 && p["next_page"] != nil {
				t.Fatalf("%s: an empty page with a next_page", query)
			}
			for _, d := range data {
				o := d.(map[string]any)
				objs = append(objs, o)
				items = append(items, item{o["type"].(string), o["path"].(string)})
			}
			if p["next_page"] == nil {
				return items, objs
			}
			page = p["next_page"].(string)
		}
	}
	for _, tc := range []struct {
		query string
		want  []item
	}{
		{"", []item{{"memory", "/a.md"}, {"memory", "/notes-old/z.md"}, {"memory", "/notes/sub/y.md"}, {"memory", "/notes/x.md"}, {"memory", "/projects/p/q.md"}}},
		{"limit=2", []item{{"memory", "/a.md"}, {"memory", "/notes-old/z.md"}, {"memory", "/notes/sub/y.md"}, {"memory", "/notes/x.md"}, {"memory", "/projects/p/q.md"}}},
		{"depth=1&path_prefix=%2F", []item{{"memory", "/a.md"}, {"memory_prefix", "/notes-old/"}, {"memory_prefix", "/notes/"}, {"memory_prefix", "/projects/"}}},
		{"depth=1&limit=1", []item{{"memory", "/a.md"}, {"memory_prefix", "/notes-old/"}, {"memory_prefix", "/notes/"}, {"memory_prefix", "/projects/"}}},
		{"path_prefix=%2Fnotes%2F", []item{{"memory", "/notes/sub/y.md"}, {"memory", "/notes/x.md"}}},
		{"path_prefix=%2Fnotes%2F&depth=1&order_by=path&order=desc", []item{{"memory_prefix", "/notes/sub/"}, {"memory", "/notes/x.md"}}},
		{"path_prefix=%2Fnone%2F", nil},
	} {
		t.Run(tc.query, func(t *testing.T) {
			got, objs := list(tc.query)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			for _, o := range objs {
				if o["type"] == "memory_prefix" {
					wantKeys(t, o, "type", "path")
				} else {
					wantKeys(t, o, memoryKeys...)
					if o["content"] != nil {
						t.Errorf("basic list with content: %v", o)
					}
				}
			}
		})
	}

	// view=full fills content and caps pages at 20.
	_, objs := list("view=full")
	for _, o := range objs {
		if o["content"] != "content of "+o["path"].(string) {
			t.Errorf("full list item %v", o)
		}
	}
	for i := range 20 {
		e.createMemory(t, store, fmt.Sprintf("/many/%02d.md", i), "")
	}
	if p := e.ok(t, "GET", base+"?view=full&limit=100", ""); len(p["data"].([]any)) != 20 || p["next_page"] == nil {
		t.Errorf("view=full&limit=100: %d items, next %v", len(p["data"].([]any)), p["next_page"])
	}
	if p := e.ok(t, "GET", base+"?view=basic&limit=100", ""); len(p["data"].([]any)) != 25 || p["next_page"] != nil {
		t.Errorf("view=basic&limit=100: %d items, next %v", len(p["data"].([]any)), p["next_page"])
	}
	if p := e.ok(t, "GET", base, ""); len(p["data"].([]any)) != 20 || p["next_page"] == nil {
		t.Errorf("default limit: %d items, next %v", len(p["data"].([]any)), p["next_page"])
	}
}

func TestCreateAtAnOccupiedPath(t *testing.T) {
	for _, mode := range []string{"", httpapi.CreateConflict, httpapi.CreateUpsert} {
		t.Run("mode "+mode, func(t *testing.T) {
			e := newServerEnv(t, func(c *httpapi.Config) { c.CreateExisting = mode })
			store, base := e.storeMemories(t)
			first := e.createMemory(t, store, "/notes/a.md", "one")
			id := first["id"].(string)

			res := e.call(t, "POST", base+"?view=full", `{"path":"/notes/a.md","content":"two"}`)
			if mode == httpapi.CreateUpsert {
				if res.status != 200 {
					t.Fatalf("upsert: %d %s", res.status, res.body)
				}
				m := res.object(t)
				if m["id"] != id || m["content"] != "two" || m["memory_version_id"] == first["memory_version_id"] {
					t.Errorf("upserted %v", m)
				}
			} else {
				er := res.apiError(t, 409, "memory_path_conflict_error")
				if er["conflicting_memory_id"] != id || er["conflicting_path"] != "/notes/a.md" {
					t.Errorf("conflict %v", er)
				}
				if res.header.Get("X-Should-Retry") != "false" {
					t.Errorf("x-should-retry %q", res.header.Get("X-Should-Retry"))
				}
			}

			// Overlap is a conflict in every mode, naming the blocker.
			for _, p := range []string{"/notes", "/notes/a.md/b.md"} {
				res := e.call(t, "POST", base, jsonOf(t, map[string]any{"path": p, "content": "x"}))
				if er := res.apiError(t, 409, "memory_path_conflict_error"); er["conflicting_memory_id"] != id || er["conflicting_path"] != "/notes/a.md" {
					t.Errorf("%s: conflict %v", p, er)
				}
			}

			// not_exists: a precondition failure, never an upsert, naming
			// the blocker as a path conflict does.
			res = e.call(t, "POST", base, `{"path":"/notes/a.md","content":"three","precondition":{"type":"not_exists"}}`)
			er := res.apiError(t, 409, "memory_precondition_failed_error")
			if er["conflicting_memory_id"] != id || er["conflicting_path"] != "/notes/a.md" {
				t.Errorf("precondition error without the blocker: %v", er)
			}
			if res.header.Get("X-Should-Retry") != "false" {
				t.Errorf("x-should-retry %q", res.header.Get("X-Should-Retry"))
			}
			e.ok(t, "POST", base, `{"path":"/free.md","content":"x","precondition":{"type":"not_exists"}}`)

			want := map[string]string{"": "one", httpapi.CreateConflict: "one", httpapi.CreateUpsert: "two"}[mode]
			if m := e.ok(t, "GET", base+"/"+id, ""); m["content"] != want {
				t.Errorf("content %v, want %q", m["content"], want)
			}
		})
	}
}

func TestUpdatePreconditions(t *testing.T) {
	e := newServerEnv(t)
	store, base := e.storeMemories(t)
	base += "/"
	m := e.createMemory(t, store, "/a.md", "one")
	id := m["id"].(string)
	e.createMemory(t, store, "/taken.md", "x")
	oneSHA := sha256Hex("one")

	// A matching hash, in capitals too.
	up := e.ok(t, "POST", base+id, jsonOf(t, map[string]any{"content": "two",
		"precondition": map[string]any{"type": "content_sha256", "content_sha256": strings.ToUpper(oneSHA)}}))
	if up["content_sha256"] != sha256Hex("two") {
		t.Fatalf("updated %v", up)
	}
	// A stale hash: 409, nothing changes.
	stale := jsonOf(t, map[string]any{"content": "three", "precondition": map[string]any{"type": "content_sha256", "content_sha256": oneSHA}})
	res := e.call(t, "POST", base+id, stale)
	er := res.apiError(t, 409, "memory_precondition_failed_error")
	if _, has := er["conflicting_path"]; has || res.header.Get("X-Should-Retry") != "false" {
		t.Errorf("precondition failure %v, x-should-retry %q", er, res.header.Get("X-Should-Retry"))
	}
	// A stale hash on an update that already landed: a no-op success.
	again := e.ok(t, "POST", base+id, jsonOf(t, map[string]any{"content": "two", "precondition": map[string]any{"type": "content_sha256", "content_sha256": oneSHA}}))
	if again["memory_version_id"] != up["memory_version_id"] || again["updated_at"] != up["updated_at"] {
		t.Errorf("idempotent retry %v, first %v", again, up)
	}

	// A rename onto a taken path: 409, or a no-op with not_exists.
	res = e.call(t, "POST", base+id, `{"path":"/taken.md"}`)
	if er := res.apiError(t, 409, "memory_path_conflict_error"); er["conflicting_path"] != "/taken.md" || er["conflicting_memory_id"] == "" {
		t.Errorf("rename conflict %v", er)
	}
	noop := e.ok(t, "POST", base+id, `{"path":"/taken.md","precondition":{"type":"not_exists"}}`)
	if noop["path"] != "/a.md" || noop["memory_version_id"] != up["memory_version_id"] {
		t.Errorf("rename onto a taken path with not_exists: %v", noop)
	}
	if moved := e.ok(t, "POST", base+id, `{"path":"/free.md","precondition":{"type":"not_exists"}}`); moved["path"] != "/free.md" {
		t.Errorf("rename to a free path with not_exists: %v", moved)
	}

	// Delete with a hash: from the query or a JSON body.
	twoSHA := sha256Hex("two")
	res = e.call(t, "DELETE", base+id+"?expected_content_sha256="+oneSHA, "")
	res.apiError(t, 409, "memory_precondition_failed_error")
	e.call(t, "DELETE", base+id, `{"expected_content_sha256":"`+oneSHA+`"}`).apiError(t, 409, "memory_precondition_failed_error")
	e.call(t, "DELETE", base+id+"?expected_content_sha256="+twoSHA, `{"expected_content_sha256":"`+oneSHA+`"}`).apiError(t, 400, "invalid_request_error")
	if m := e.ok(t, "GET", base+id, ""); m["content"] != "two" {
		t.Fatalf("after refused deletes: %v", m)
	}
	e.ok(t, "DELETE", base+id+"?expected_content_sha256="+strings.ToUpper(twoSHA), `{"expected_content_sha256":"`+twoSHA+`"}`)

	// An empty expected hash is no precondition; a body hash alone works.
	other := e.createMemory(t, store, "/b.md", "b")["id"].(string)
	e.ok(t, "DELETE", base+other+"?expected_content_sha256=", "")
	third := e.createMemory(t, store, "/c.md", "c")["id"].(string)
	e.ok(t, "DELETE", base+third, `{"expected_content_sha256":"`+sha256Hex("c")+`"}`)
}

func TestArchivedStoreMemories(t *testing.T) {
	e := newServerEnv(t)
	store, base := e.storeMemories(t)
	m := e.createMemory(t, store, "/a.md", "one")
	id := m["id"].(string)
	e.createMemory(t, store, "/b.md", "b")
	e.ok(t, "POST", "/v1/memory_stores/"+store+"/archive", "")

	for _, tc := range []struct{ method, target, body string }{
		{"POST", base, `{"path":"/c.md","content":"x"}`},
		{"POST", base + "/" + id, `{"content":"two"}`},
		{"PATCH", base + "/" + id, `{"path":"/z.md"}`},
		{"DELETE", base + "/" + id, ""},
	} {
		res := e.call(t, tc.method, tc.target, tc.body)
		res.apiError(t, 400, "invalid_request_error")
		if res.header.Get("X-Should-Retry") != "false" {
			t.Errorf("%s %s: x-should-retry %q", tc.method, tc.target, res.header.Get("X-Should-Retry"))
		}
	}
	// Reads and redactions still work.
	if got := e.ok(t, "GET", base+"/"+id, ""); got["content"] != "one" {
		t.Errorf("read %v", got)
	}
	if p := e.ok(t, "GET", base, ""); len(p["data"].([]any)) != 2 {
		t.Errorf("list %v", p)
	}
	e.ok(t, "POST", "/v1/memory_stores/"+store+"/memory_versions/"+m["memory_version_id"].(string)+"/redact", "")
}

// TestMemoryValidation covers the 400s of the memory endpoints; none
// changes anything.
func TestMemoryValidation(t *testing.T) {
	e := newServerEnv(t)
	store, base := e.storeMemories(t)
	id := e.createMemory(t, store, "/a.md", "one")["id"].(string)
	mem := base + "/" + id
	hash := sha256Hex("one")
	for _, tc := range []struct {
		name, method, target, body string
		msg                        string
	}{
		{"create: no body", "POST", base, "", "JSON object is required"},
		{"create: null body", "POST", base, "null", "path is required"},
		{"create: no path", "POST", base, `{"content":"x"}`, "path is required"},
		{"create: no content", "POST", base, `{"path":"/b.md"}`, "content is required"},
		{"create: null content", "POST", base, `{"path":"/b.md","content":null}`, "content is required"},
		{"create: numeric content", "POST", base, `{"path":"/b.md","content":5}`, "content must be a string, not a number"},
		{"create: boolean path", "POST", base, `{"path":true,"content":""}`, "path must be a string, not a boolean"},
		{"create: relative path", "POST", base, `{"path":"b.md","content":""}`, "must start with /"},
		{"create: trailing slash", "POST", base, `{"path":"/b/","content":""}`, "empty segment"},
		{"create: dot segment", "POST", base, `{"path":"/a/../b","content":""}`, "path must not contain . or .. segments"},
		{"create: not NFC", "POST", base, `{"path":"/e\u0301.md","content":""}`, "NFC"},
		{"create: format character", "POST", base, `{"path":"/a\u200b.md","content":""}`, "format"},
		{"create: content too long", "POST", base, `{"path":"/b.md","content":"` + strings.Repeat("x", 102_401) + `"}`, "102400"},
		{"create: content_sha256 precondition", "POST", base, `{"path":"/b.md","content":"","precondition":{"type":"content_sha256","content_sha256":"` + hash + `"}}`, "not_exists"},
		{"create: unknown precondition", "POST", base, `{"path":"/b.md","content":"","precondition":{"type":"if_match"}}`, "precondition.type"},
		{"create: precondition not an object", "POST", base, `{"path":"/b.md","content":"","precondition":"not_exists"}`, "precondition must be an object, not a string"},
		{"create: not_exists with a hash", "POST", base, `{"path":"/b.md","content":"","precondition":{"type":"not_exists","content_sha256":"` + hash + `"}}`, "takes no content_sha256"},
		{"create: bad view", "POST", base + "?view=all", `{"path":"/b.md","content":""}`, "view"},
		{"update: no body", "POST", mem, "", "JSON object is required"},
		{"update: numeric content", "POST", mem, `{"content":1}`, "content must be a string"},
		{"update: precondition without hash", "POST", mem, `{"content":"x","precondition":{"type":"content_sha256"}}`, "precondition.content_sha256 is required"},
		{"update: short hash", "POST", mem, `{"content":"x","precondition":{"type":"content_sha256","content_sha256":"abc"}}`, "precondition.content_sha256 must be a SHA-256"},
		{"update: empty hash", "POST", mem, `{"content":"x","precondition":{"type":"content_sha256","content_sha256":""}}`, "precondition.content_sha256 must be a SHA-256"},
		{"update: non-hex hash", "POST", mem, `{"content":"x","precondition":{"type":"content_sha256","content_sha256":"` + strings.Repeat("g", 64) + `"}}`, "SHA-256"},
		{"update: numeric hash", "POST", mem, `{"content":"x","precondition":{"type":"content_sha256","content_sha256":1}}`, "precondition.content_sha256 must be a string"},
		{"update: missing type", "POST", mem, `{"content":"x","precondition":{}}`, "precondition.type"},
		{"update: not_exists without path", "POST", mem, `{"content":"x","precondition":{"type":"not_exists"}}`, "needs path"},
		{"update: bad path", "POST", mem, `{"path":"/a//b"}`, "empty segment"},
		{"update: bad view", "POST", mem + "?view=FULL", `{"content":"x"}`, "view"},
		{"retrieve: bad view", "GET", mem + "?view=none", "", "view"},
		{"delete: short hash", "DELETE", mem + "?expected_content_sha256=abc", "", "expected_content_sha256"},
		{"delete: hash with a space", "DELETE", mem + "?expected_content_sha256=" + hash[:63] + "+", "", "expected_content_sha256"},
		{"delete: short hash in the body", "DELETE", mem, `{"expected_content_sha256":"abc"}`, "expected_content_sha256"},
		{"delete: body not JSON", "DELETE", mem, `expected`, "not valid JSON"},
		{"list: depth -1", "GET", base + "?depth=-1", "", "depth"},
		{"list: depth words", "GET", base + "?depth=one", "", "depth"},
		{"list: limit 0", "GET", base + "?limit=0", "", "limit"},
		{"list: limit 101 with view=full", "GET", base + "?limit=101&view=full", "", "limit"},
		{"list: bad view", "GET", base + "?view=partial", "", "view"},
		{"list: garbled page", "GET", base + "?page=nope", "", "page"},
		{"list: a page of another list", "GET", base + "?page=" + url.QueryEscape(storesCursor(t, e)), "", "page"},
	} {
		t.Run(tc.name, func(t *testing.T) { e.wantInvalid(t, tc.method, tc.target, tc.body, tc.msg) })
	}
	p := e.ok(t, "GET", base+"?view=full", "")
	if data := p["data"].([]any); len(data) != 1 || data[0].(map[string]any)["content"] != "one" || data[0].(map[string]any)["path"] != "/a.md" {
		t.Errorf("store after refused requests: %v", p)
	}
}

// storesCursor returns a next_page of the stores list.
func storesCursor(tb testing.TB, e *serverEnv) string {
	tb.Helper()
	e.createStore(tb, "cursor")
	p := e.ok(tb, "GET", "/v1/memory_stores?limit=1", "")
	next, _ := p["next_page"].(string)
	if next == "" {
		tb.Fatalf("no next page: %v", p)
	}
	return next
}

// unkept hides a MemoryService's MemoryUnlessAt, so that a server over it
// reads and encodes every retrieval.
type unkept struct{ memstore.MemoryService }

// TestKeptRetrievals: the server keeps its answers to retrievals and sends
// one again only while the memory is at the version it shows, whoever
// changed the memory.
func TestKeptRetrievals(t *testing.T) {
	e := newServerEnv(t)
	core := memstore.NewCore(e.db)
	plain := httptest.NewServer(httpapi.New(httpapi.Config{Stores: core, Memories: unkept{core}, Versions: core, Keys: core}))
	t.Cleanup(plain.Close)
	store := e.createStore(t, "kept")
	id := e.createMemory(t, store, "/a.md", "first <&> \u2028")["id"].(string)
	path := "/v1/memory_stores/" + store + "/memories/" + id
	// get reads the memory twice from the server, and once from a server
	// that keeps nothing: all three answers must be the same bytes.
	get := func(content string) {
		t.Helper()
		first, again := e.call(t, "GET", path, ""), e.call(t, "GET", path, "")
		fresh := e.call(t, "GET", path, "", func(r *http.Request) { r.URL.Host = strings.TrimPrefix(plain.URL, "http://") })
		if first.status != http.StatusOK || !bytes.Equal(first.body, again.body) || !bytes.Equal(first.body, fresh.body) {
			t.Fatalf("answers differ:\n%d %s\n%d %s\n%d %s", first.status, first.body, again.status, again.body, fresh.status, fresh.body)
		}
		if got := first.object(t)["content"]; got != content {
			t.Fatalf("content %q, want %q", got, content)
		}
		if n, _ := strconv.Atoi(again.header.Get("Content-Length")); n != len(again.body) {
			t.Errorf("content-length %q for %d bytes", again.header.Get("Content-Length"), len(again.body))
		}
	}
	get("first <&> \u2028")

	// Changed through the API, or behind the server's back.
	e.ok(t, "POST", path, jsonOf(t, map[string]any{"content": "second"}))
	get("second")
	ctx := t.Context()
	if _, err := sqlitetest.Writer(e.db).UpdateMemory(ctx, e.workspace, store, id, memstore.MemoryUpdate{Content: ptrTo("third"), Path: ptrTo("/b.md")}, memstore.Actor{Type: memstore.ActorUser, ID: "user_x"}); err != nil {
		t.Fatal(err)
	}
	get("third")
	if got := e.ok(t, "GET", path, "")["path"]; got != "/b.md" {
		t.Errorf("path %v after a rename, want /b.md", got)
	}

	// Whoever asks must still be allowed to, and the basic view has no
	// content.
	e.call(t, "GET", path, "", withHeader("X-Api-Key", e.otherKey(t, "elsewhere"))).apiError(t, http.StatusNotFound, memstore.ENotFound)
	if basic := e.ok(t, "GET", path+"?view=basic", ""); basic["content"] != nil {
		t.Errorf("basic view after a kept full one: content %v", basic["content"])
	}

	// Deleted behind the server's back, then through it.
	if err := sqlitetest.Writer(e.db).DeleteMemory(ctx, e.workspace, store, id, "", memstore.Actor{Type: memstore.ActorUser, ID: "user_x"}); err != nil {
		t.Fatal(err)
	}
	e.call(t, "GET", path, "").apiError(t, http.StatusNotFound, memstore.ENotFound)
	id = e.createMemory(t, store, "/c.md", "fourth")["id"].(string)
	path = "/v1/memory_stores/" + store + "/memories/" + id
	get("fourth")
	e.ok(t, "DELETE", path, "")
	e.call(t, "GET", path, "").apiError(t, http.StatusNotFound, memstore.ENotFound)
}

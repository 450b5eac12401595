package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The fuzz targets send what they are given to a real server over a real
// SQLite file, through HTTP. Whatever a client sends, the server must
// answer with its JSON, and never with a 5xx: a panic, which the server
// turns into a 500, or an error it did not foresee, fails them.
// testdata/fuzz holds their seeds; run one with
//
//	go test ./httpapi -run '^$' -fuzz '^FuzzStoreBody$' -fuzztime 1m

// fuzzEnv is one server for all of a target's inputs, with a store, a
// memory in it and a session attaching it.
type fuzzEnv struct {
	*serverEnv
	store, memory, session string
}

func newFuzzEnv(f *testing.F) *fuzzEnv {
	e := &fuzzEnv{serverEnv: newServerEnv(f)}
	e.store = e.createStore(f, "fuzz")
	e.memory = e.createMemory(f, e.store, "/fuzz.md", "fuzz")["id"].(string)
	s, _ := e.createSession(f, attach(e.store, ""))
	e.session = s["id"].(string)
	return e
}

// wantNo5xx sends a request and checks its answer: below 500, with a JSON
// body.
func (e *fuzzEnv) wantNo5xx(t *testing.T, method, target, body string) {
	t.Helper()
	res := e.call(t, method, target, body)
	if res.status >= 500 {
		t.Fatalf("%s %s with %q: %d %s", method, target, body, res.status, res.body)
	}
	if !json.Valid(res.body) {
		t.Fatalf("%s %s with %q: %d, not JSON: %q", method, target, body, res.status, res.body)
	}
}

func FuzzStoreBody(f *testing.F) {
	for _, seed := range []string{`{"name":"s"}`, `{"name":"s","description":"d","metadata":{"k":"v"}}`, `{"metadata":{"k":null}}`,
		`{"name":"s","metadata":{"k\u0000":"v\u0000"}}`} {
		f.Add(seed)
	}
	e := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, body string) {
		e.wantNo5xx(t, "POST", "/v1/memory_stores", body)
		e.wantNo5xx(t, "POST", "/v1/memory_stores/"+e.store, body)
	})
}

func FuzzMemoryBody(f *testing.F) {
	for _, seed := range []string{`{"path":"/a.md","content":"a"}`, `{"content":"b","precondition":{"type":"content_sha256","content_sha256":"00"}}`,
		`{"path":"/b.md","content":"","precondition":{"type":"not_exists"}}`} {
		f.Add(seed)
	}
	e := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, body string) {
		e.wantNo5xx(t, "POST", "/v1/memory_stores/"+e.store+"/memories", body)
		e.wantNo5xx(t, "PATCH", "/v1/memory_stores/"+e.store+"/memories/"+e.memory, body)
	})
}

func FuzzSessionBody(f *testing.F) {
	for _, seed := range []string{`{"agent":"a","resources":[{"type":"memory_store","memory_store_id":"STORE"}]}`,
		`{"resources":[{"memory_store_id":"STORE","access":"read_only","prompt":"p"}],"token_expires_in_seconds":60,"title":"t","metadata":{}}`,
		`{"expires_in_seconds":1}`, `{"agent":"\u0000","x\u0000":{"y":"\\u0000"}}`,
		`{"resources":[{"memory_store_id":"STORE\u0000"}],"metadata":{"k":"\u0000"}}`} {
		f.Add(seed)
	}
	e := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, body string) {
		// Seeds name the store as STORE, so that they attach one.
		body = strings.ReplaceAll(body, "STORE", e.store)
		e.wantNo5xx(t, "POST", "/v1/sessions", body)
		e.wantNo5xx(t, "POST", "/v1/sessions/"+e.session+"/tokens", body)
	})
}

func FuzzQuery(f *testing.F) {
	for _, seed := range []string{
		"limit=1&page=page_eyJrIjoicyIsInQiOjEsImEiOiJ4In0",
		"view=full&depth=2&path_prefix=/a&order_by=path",
		"created_at[gte]=0001-01-01T00:00:00Z&created_at_lte=9999-12-31T23:59:59Z",
		"operation=modified&memory_id=mem_x&api_key_id=apikey_x&session_id=sesn_x",
		"q=fuzz&limit=100&include_archived=true&memory_store_id=memstore_x",
		"page=page_eyJrIjoic3QiLCJ0IjotOTIyMzM3MjAzNjg1NDc3NTgwOCwiYSI6IiJ9&limit=%zz",
		"agent_id=%00&memory_store_id=%FF&memory_id=mem_%00&path_prefix=/%00",
	} {
		f.Add(seed)
	}
	e := newFuzzEnv(f)
	lists := []string{
		"/v1/memory_stores",
		"/v1/memory_stores/" + e.store + "/memories",
		"/v1/memory_stores/" + e.store + "/memory_versions",
		"/v1/memory_stores/" + e.store + "/memories/search",
		"/v1/memory_stores/" + e.store + "/memories/" + e.memory,
		"/v1/sessions",
		"/v1/sessions/" + e.session + "/tokens",
		"/v1/sessions/" + e.session + "/memories/search",
	}
	f.Fuzz(func(t *testing.T, query string) {
		if _, err := url.Parse("/?" + query); err != nil || strings.Contains(query, "#") || !isURLText(query) {
			t.Skip("not a query string a client can send")
		}
		for _, l := range lists {
			e.wantNo5xx(t, http.MethodGet, l+"?"+query, "")
		}
	})
}

// isURLText reports whether s can stand in a request line: printable
// ASCII only.
func isURLText(s string) bool {
	for i := range len(s) {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

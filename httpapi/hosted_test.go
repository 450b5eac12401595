package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// TestArchivedStoreAnswers400: every write to an archived store (create,
// update, delete of its memories, and an update of the store) is the
// hosted API's 400 invalid_request_error whose message begins "cannot
// modify archived resource", told not to retry: never a 409, which
// clients read as a concurrent change. Reads and the store's deletion
// still work.
func TestArchivedStoreAnswers400(t *testing.T) {
	e := newServerEnv(t)
	store := e.createStore(t, "team")
	m := e.createMemory(t, store, "/a.md", "a")
	id := m["id"].(string)
	e.ok(t, "POST", "/v1/memory_stores/"+store+"/archive", "")
	base := "/v1/memory_stores/" + store
	for _, tc := range []struct{ name, method, target, body string }{
		{"create", "POST", base + "/memories", `{"path":"/b.md","content":"b"}`},
		{"create not_exists", "POST", base + "/memories", `{"path":"/b.md","content":"b","precondition":{"type":"not_exists"}}`},
		{"update", "POST", base + "/memories/" + id, `{"content":"changed"}`},
		{"update with a precondition", "POST", base + "/memories/" + id, `{"content":"changed","precondition":{"type":"content_sha256","content_sha256":"` + sha256Hex("a") + `"}}`},
		{"delete", "DELETE", base + "/memories/" + id, ""},
		{"delete with a precondition", "DELETE", base + "/memories/" + id + "?expected_content_sha256=" + sha256Hex("a"), ""},
		{"update of the store", "POST", base, `{"name":"other"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.call(t, tc.method, tc.target, tc.body)
			msg, _ := res.apiError(t, http.StatusBadRequest, "invalid_request_error")["message"].(string)
			if !strings.HasPrefix(msg, "cannot modify archived resource: memory store "+store+" is archived") {
				t.Errorf("message %q", msg)
			}
			if got := res.header.Get("X-Should-Retry"); got != "false" {
				t.Errorf("x-should-retry %q, want false", got)
			}
		})
	}
	got := e.ok(t, "GET", base+"/memories/"+id, "")
	if got["content"] != "a" {
		t.Errorf("memory after refused writes: %v", got)
	}
	e.ok(t, "DELETE", base, "")
}

// TestLimitsInHostedWords: each limit of input answers 400 with the
// hosted API's message, word for word, and memstore's own account in
// error.detail.
func TestLimitsInHostedWords(t *testing.T) {
	db := sqlitetest.Open(t, sqlite.Options{})
	e := newServerEnvOn(t, db, func(c *httpapi.Config) {
		core := memstore.NewCore(db, memstore.MaxMemoriesPerStore(1))
		c.Stores, c.Memories = core, core
	})
	store := e.createStore(t, "limits")
	deep := strings.Repeat("/a", memstore.MaxPathSegments+1)
	for _, tc := range []struct{ name, path, content, message, detail string }{
		{"content", "/big.md", strings.Repeat("x", memstore.MaxContentBytes+1), "content must be at most 102400 bytes", "content is 102401 bytes"},
		{"path bytes", "/" + strings.Repeat("p", memstore.MaxPathBytes), "x", "path must be at most 1024 bytes", "path is 1025 bytes long"},
		{"path depth", deep, "x", "path must be at most 20 segments deep", "has 21 segments"},
		{"dot segment", "/a/../b.md", "x", "path must not contain . or .. segments", `has a ".." segment`},
		{"control character", "/a\u200bb.md", "x", "path must not contain control or format characters", "U+200B"},
		{"NFC", "/e\u0301.md", "x", "path must be NFC-normalized", "not in Unicode NFC"},
		{"credential", "/c.md", "token ghp_" + strings.Repeat("A1b2C3", 6), memstore.CredentialMessage, "GitHub token"},
		{"index", "/MEMORY.md", strings.Repeat("- [a](a.md) — a\n", memstore.MaxIndexLines+1), "MEMORY.md content exceeds the prompt-index cap", "201 lines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.call(t, "POST", "/v1/memory_stores/"+store+"/memories", jsonOf(t, map[string]any{"path": tc.path, "content": tc.content}))
			obj := res.apiError(t, http.StatusBadRequest, "invalid_request_error")
			if obj["message"] != tc.message {
				t.Errorf("message %q, want %q", obj["message"], tc.message)
			}
			if d, _ := obj["detail"].(string); !strings.Contains(d, tc.detail) {
				t.Errorf("detail %q, want it to contain %q", d, tc.detail)
			}
			if got := res.header.Get("X-Should-Retry"); got != "false" {
				t.Errorf("x-should-retry %q, want false", got)
			}
		})
	}
	e.createMemory(t, store, "/one.md", "1")
	res := e.call(t, "POST", "/v1/memory_stores/"+store+"/memories", `{"path":"/two.md","content":"2"}`)
	obj := res.apiError(t, http.StatusBadRequest, "invalid_request_error")
	if obj["message"] != "memory store has reached its memory limit" {
		t.Errorf("message %q", obj["message"])
	}
	if d, _ := obj["detail"].(string); !strings.Contains(d, "is at its limit of 1 memories") || !strings.Contains(d, "--max-memories-per-store") {
		t.Errorf("detail %q, want the configured limit and its flag", d)
	}
}

// TestNotExistsConflictNamesTheMemory: a create whose not_exists
// precondition fails names the memory in the way, as a path conflict
// does.
func TestNotExistsConflictNamesTheMemory(t *testing.T) {
	e := newServerEnv(t)
	store := e.createStore(t, "team")
	m := e.createMemory(t, store, "/notes/a.md", "a")
	for _, path := range []string{"/notes/a.md", "/notes", "/notes/a.md/b.md"} {
		res := e.call(t, "POST", "/v1/memory_stores/"+store+"/memories", jsonOf(t, map[string]any{
			"path": path, "content": "b", "precondition": map[string]string{"type": "not_exists"}}))
		obj := res.apiError(t, http.StatusConflict, "memory_precondition_failed_error")
		if obj["conflicting_memory_id"] != m["id"] || obj["conflicting_path"] != "/notes/a.md" {
			t.Errorf("%s: %v, want conflicting_memory_id %v and conflicting_path /notes/a.md", path, obj, m["id"])
		}
		if got := res.header.Get("X-Should-Retry"); got != "false" {
			t.Errorf("%s: x-should-retry %q, want false", path, got)
		}
	}
	// An update's failed precondition names nothing.
	res := e.call(t, "POST", "/v1/memory_stores/"+store+"/memories/"+m["id"].(string), jsonOf(t, map[string]any{
		"content": "c", "precondition": map[string]string{"type": "content_sha256", "content_sha256": sha256Hex("stale")}}))
	obj := res.apiError(t, http.StatusConflict, "memory_precondition_failed_error")
	if _, ok := obj["conflicting_memory_id"]; ok {
		t.Errorf("an update's precondition failure names a memory: %v", obj)
	}
}

// TestStrictHeadersLetBearerClientsThrough: in strict mode, a client
// that authenticates with a bearer token and sends neither
// anthropic-version nor anthropic-beta (Claude Code's team memory) is
// served on the memory stores' routes; sending one of them, or the key
// as x-api-key, or another route, keeps the strict checks.
func TestStrictHeadersLetBearerClientsThrough(t *testing.T) {
	e := newServerEnv(t, func(c *httpapi.Config) { c.StrictHeaders = true })
	store := e.createStore(t, "team")
	bare := []func(*http.Request){withHeader("Anthropic-Version", ""), withHeader("Anthropic-Beta", "")}
	bearer := append([]func(*http.Request){withHeader("X-Api-Key", ""), withHeader("Authorization", "Bearer "+e.secret)}, bare...)
	for _, target := range []string{"/v1/memory_stores", "/v1/memory_stores/" + store + "/memories"} {
		if res := e.call(t, "GET", target, "", bearer...); res.status != http.StatusOK {
			t.Errorf("bearer without headers, %s: %d %s", target, res.status, res.body)
		}
	}
	if res := e.call(t, "POST", "/v1/memory_stores/"+store+"/memories", `{"path":"/a.md","content":"a"}`, bearer...); res.status != http.StatusOK {
		t.Errorf("bearer without headers, create: %d %s", res.status, res.body)
	}
	for _, tc := range []struct {
		name   string
		target string
		edit   []func(*http.Request)
	}{
		{"x-api-key without headers", "/v1/memory_stores", bare},
		{"bearer with a version only", "/v1/memory_stores", append(bearer, withHeader("Anthropic-Version", "2023-06-01"))},
		{"bearer with a wrong beta only", "/v1/memory_stores", append(bearer, withHeader("Anthropic-Beta", "files-api-2025-04-14"))},
		{"bearer without headers, sessions", "/v1/sessions", bearer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.call(t, "GET", tc.target, "", tc.edit...).apiError(t, http.StatusBadRequest, "invalid_request_error")
		})
	}
}

// TestContentRulesOff: a server whose operator turned the content rules
// off takes what they would refuse.
func TestContentRulesOff(t *testing.T) {
	db := sqlitetest.Open(t, sqlite.Options{})
	e := newServerEnvOn(t, db, func(c *httpapi.Config) {
		core := memstore.NewCore(db, memstore.WithContentRules(memstore.ContentRules{AllowCredentials: true, AllowOversizedIndex: true}))
		c.Stores, c.Memories = core, core
	})
	store := e.createStore(t, "open")
	e.createMemory(t, store, "/c.md", "token ghp_"+strings.Repeat("A1b2C3", 6))
	e.createMemory(t, store, "/MEMORY.md", strings.Repeat("- [a](a.md) — a\n", memstore.MaxIndexLines+1))
}

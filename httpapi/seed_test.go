package httpapi_test

// Compatibility with the research preview's guide to memory stores
// (docs/api.md, Differences from the hosted API): every request its curl
// examples show, sent as they show it over plain net/http, with the
// results the guide documents.
// The guide's examples of the sessions API (attaching a store to a
// session) are not part of the memory stores endpoints and are left out.

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore/httpapi"
)

// seedAPI sends requests with the seed's headers: x-api-key,
// anthropic-version 2023-06-01 and only the managed-agents beta.
type seedAPI struct {
	t      *testing.T
	h      *apiHarness
	secret string
}

// seedAnswer is a status and a decoded JSON object.
type seedAnswer struct {
	status int
	obj    map[string]any
}

// do sends method to path (below the base URL) with body as JSON when it
// is not "", as curl --data does with content-type: application/json.
func (s *seedAPI) do(method, path, body string) seedAnswer {
	s.t.Helper()
	res := sendAPI(s.t, s.h.srv, s.secret, managedAgentsBeta, method, path, body)
	defer res.Body.Close()
	a := seedAnswer{status: res.StatusCode}
	if err := json.NewDecoder(res.Body).Decode(&a.obj); err != nil {
		s.t.Fatalf("%s %s: %d with a body that is not a JSON object: %v", method, path, res.StatusCode, err)
	}
	return a
}

// ok is do for a request that must succeed (curl -fsS).
func (s *seedAPI) ok(method, path, body string) map[string]any {
	s.t.Helper()
	a := s.do(method, path, body)
	if a.status != http.StatusOK {
		s.t.Fatalf("%s %s: %d %v, want 200", method, path, a.status, a.obj)
	}
	return a.obj
}

// fails checks that a request fails with status and error type.
func (s *seedAPI) fails(method, path, body string, status int, typ string) map[string]any {
	s.t.Helper()
	a := s.do(method, path, body)
	e, _ := a.obj["error"].(map[string]any)
	if a.status != status || e["type"] != typ {
		s.t.Errorf("%s %s: %d %v, want %d %s", method, path, a.status, a.obj, status, typ)
	}
	return e
}

// list returns the data of a list answer.
func (s *seedAPI) list(path string) []map[string]any {
	s.t.Helper()
	obj := s.ok("GET", path, "")
	var items []map[string]any
	data, _ := obj["data"].([]any)
	for _, d := range data {
		items = append(items, d.(map[string]any))
	}
	if obj["next_page"] != nil {
		s.t.Errorf("GET %s: next_page %v, want the whole list on one page", path, obj["next_page"])
	}
	return items
}

// newSeedAPI starts a server, in strict-header mode (the seed's headers
// must pass it), with createExisting, and a database clock giving each
// write its own second.
func newSeedAPI(t *testing.T, createExisting string) *seedAPI {
	h := newAPIHarness(t, harnessOptions{now: steppingClock(), configure: func(c *httpapi.Config) {
		c.StrictHeaders = true
		c.CreateExisting = createExisting
	}})
	_, _, secret := h.newKey(t, "seed")
	return &seedAPI{t: t, h: h, secret: secret}
}

// TestSeedGuide walks the seed guide's requests in order, on a server in
// upsert mode, the mode of the guide's memories.write.
func TestSeedGuide(t *testing.T) {
	api := newSeedAPI(t, httpapi.CreateUpsert)

	// Create a store.
	store := api.ok("POST", "/v1/memory_stores", `{
  "name": "User Preferences",
  "description": "Per-user preferences and project context."
}`)
	storeID, _ := store["id"].(string)
	if !strings.HasPrefix(storeID, "memstore_") || store["name"] != "User Preferences" || store["description"] != "Per-user preferences and project context." {
		t.Fatalf("created store %v", store)
	}
	memories := "/v1/memory_stores/" + storeID + "/memories"

	// Seed it with reference material.
	standards := "All reports use GAAP formatting. Dates are ISO-8601..."
	api.ok("POST", memories, `{
  "path": "/formatting_standards.md",
  "content": "All reports use GAAP formatting. Dates are ISO-8601..."
}`)

	// List: no content, but the size (under the seed's size_bytes) and
	// the hash the jq filter reads.
	items := api.list(memories + "?path_prefix=/")
	if len(items) != 1 {
		t.Fatalf("list: %v", items)
	}
	it := items[0]
	sum, _ := it["content_sha256"].(string)
	if it["path"] != "/formatting_standards.md" || it["size_bytes"] != float64(len(standards)) ||
		it["content_size_bytes"] != float64(len(standards)) || len(sum) != 64 || it["content"] != nil {
		t.Errorf("listed memory %v", it)
	}

	// Read: the full content.
	memoryID := it["id"].(string)
	if got := api.ok("GET", memories+"/"+memoryID, ""); got["content"] != standards || got["content_sha256"] != sha256Hex(standards) {
		t.Errorf("read memory %v", got)
	}

	// Write, and write again at the same path: an upsert replacing the
	// content of the same memory.
	mem := api.ok("POST", memories, `{
  "path": "/preferences/formatting.md",
  "content": "Always use tabs, not spaces."
}`)
	memID := mem["id"].(string)
	again := api.ok("POST", memories, `{"path": "/preferences/formatting.md", "content": "Always use 2-space indentation."}`)
	if again["id"] != memID || again["content_sha256"] != sha256Hex("Always use 2-space indentation.") || again["memory_version_id"] == mem["memory_version_id"] {
		t.Errorf("upsert: %v, want memory %s with the new content", again, memID)
	}

	// Create only if the path is free: occupied, so 409
	// memory_precondition_failed, and nothing changes.
	api.fails("POST", memories, `{
  "path": "/preferences/formatting.md",
  "content": "Always use 2-space indentation.",
  "precondition": {"type": "not_exists"}
}`, http.StatusConflict, "memory_precondition_failed_error")
	api.fails("POST", memories, `{"path": "/preferences", "content": "x", "precondition": {"type": "not_exists"}}`,
		http.StatusConflict, "memory_precondition_failed_error")
	fresh := api.ok("POST", memories, `{"path": "/preferences/fresh.md", "content": "new", "precondition": {"type": "not_exists"}}`)
	if fresh["path"] != "/preferences/fresh.md" || fresh["id"] == memID {
		t.Errorf("not_exists on a free path: %v", fresh)
	}

	// Rename with PATCH.
	renamed := api.ok("PATCH", memories+"/"+memID, `{"path": "/archive/2026_q1_formatting.md"}`)
	if renamed["path"] != "/archive/2026_q1_formatting.md" || renamed["id"] != memID {
		t.Errorf("rename: %v", renamed)
	}
	// Renaming onto an occupied path is a 409; with not_exists it is a
	// no-op that succeeds.
	api.fails("PATCH", memories+"/"+memID, `{"path": "/preferences/fresh.md"}`, http.StatusConflict, "memory_path_conflict_error")
	noop := api.ok("PATCH", memories+"/"+memID, `{"path": "/preferences/fresh.md", "precondition": {"type": "not_exists"}}`)
	if noop["path"] != "/archive/2026_q1_formatting.md" || noop["memory_version_id"] != renamed["memory_version_id"] {
		t.Errorf("not_exists rename onto an occupied path: %v, want the memory unchanged", noop)
	}

	// Safe content edit with the hash that was read; a stale hash is
	// 409 memory_precondition_failed.
	memSHA := renamed["content_sha256"].(string)
	edited := api.ok("PATCH", memories+"/"+memID, `{
  "content": "CORRECTED: Always use 2-space indentation.",
  "precondition": {"type": "content_sha256", "content_sha256": "`+memSHA+`"}
}`)
	if edited["content_sha256"] != sha256Hex("CORRECTED: Always use 2-space indentation.") {
		t.Errorf("guarded edit: %v", edited)
	}
	api.fails("PATCH", memories+"/"+memID, `{"content": "lost", "precondition": {"type": "content_sha256", "content_sha256": "`+memSHA+`"}}`,
		http.StatusConflict, "memory_precondition_failed_error")

	// Conditional delete, then delete.
	api.fails("DELETE", memories+"/"+memID+"?expected_content_sha256="+memSHA, "", http.StatusConflict, "memory_precondition_failed_error")
	api.ok("DELETE", memories+"/"+memID, "")
	api.fails("GET", memories+"/"+memID, "", http.StatusNotFound, "not_found_error")

	// The versions of the memory, newest first, without content: one per
	// change (the no-op rename wrote none).
	versions := "/v1/memory_stores/" + storeID + "/memory_versions"
	vs := api.list(versions + "?memory_id=" + memID)
	var ops []string
	for _, v := range vs {
		ops = append(ops, v["operation"].(string))
		if v["content"] != nil {
			t.Errorf("listed version with content: %v", v)
		}
	}
	if want := []string{"deleted", "modified", "modified", "modified", "created"}; !slices.Equal(ops, want) {
		t.Errorf("versions: %v, want %v", ops, want)
	}

	// Retrieve one: the list's fields plus the content.
	created := vs[len(vs)-1]
	versionID := created["id"].(string)
	v := api.ok("GET", versions+"/"+versionID, "")
	if v["content"] != "Always use tabs, not spaces." || v["path"] != "/preferences/formatting.md" || v["operation"] != "created" {
		t.Errorf("retrieved version %v", v)
	}
	for k, want := range created {
		if k != "content" && !jsonEqual(v[k], want) {
			t.Errorf("retrieved version: %s = %v, listed %v", k, v[k], want)
		}
	}

	// Filters: operation, api_key_id, and the seed's created_at_gte /
	// created_at_lte spelling (inclusive).
	if got := api.list(versions + "?operation=created"); len(got) != 3 {
		t.Errorf("operation=created: %d versions, want 3", len(got))
	}
	by, _ := v["created_by"].(map[string]any)
	keyID, _ := by["api_key_id"].(string)
	if by["type"] != "api_actor" || !strings.HasPrefix(keyID, "apikey_") {
		t.Fatalf("created_by %v", by)
	}
	if got := api.list(versions + "?limit=100&api_key_id=" + keyID); len(got) != 7 {
		t.Errorf("api_key_id: %d versions, want all 7", len(got))
	}
	if got := api.list(versions + "?session_id=sesn_nobody"); len(got) != 0 {
		t.Errorf("session_id of no session: %v", got)
	}
	at := v["created_at"].(string)
	within := api.list(versions + "?limit=100&created_at_gte=" + at + "&created_at_lte=" + at)
	if len(within) != 1 || within[0]["id"] != versionID {
		t.Errorf("created_at_gte = created_at_lte = %s: %v, want version %s", at, within, versionID)
	}
	// Before it: only the version of the reference material.
	if got := api.list(versions + "?limit=100&created_at_lte=" + at); len(got) != 2 || got[0]["id"] != versionID || got[1]["operation"] != "created" {
		t.Errorf("created_at_lte=%s: %v, want this version and the one before it", at, got)
	}

	// Redact with the seed's {} body: path and content cleared, actor and
	// times kept.
	r := api.ok("POST", versions+"/"+versionID+"/redact", `{}`)
	for _, k := range []string{"content", "content_sha256", "content_size_bytes", "path"} {
		if val, ok := r[k]; !ok || val != nil {
			t.Errorf("redacted %s = %v (present %v), want null", k, val, ok)
		}
	}
	if r["redacted_at"] == nil || r["created_at"] != at || !jsonEqual(r["created_by"], v["created_by"]) || r["operation"] != "created" {
		t.Errorf("redacted version %v", r)
	}

	// The path_prefix of the list section: /notes/ matches /notes/a.md,
	// not /notes_backup/old.md.
	api.ok("POST", memories, `{"path": "/notes/a.md", "content": "a"}`)
	api.ok("POST", memories, `{"path": "/notes_backup/old.md", "content": "old"}`)
	notes := api.list(memories + "?path_prefix=/notes/")
	if len(notes) != 1 || notes[0]["path"] != "/notes/a.md" {
		t.Errorf("path_prefix=/notes/: %v", notes)
	}
}

// TestSeedCreateOnOccupiedPath checks the seed's write on an occupied path
// in each mode: the default follows the SDKs (409
// memory_path_conflict_error), the upsert mode the seed; overlapping paths
// are a conflict in both.
func TestSeedCreateOnOccupiedPath(t *testing.T) {
	for _, mode := range []string{httpapi.CreateConflict, httpapi.CreateUpsert} {
		t.Run(mode, func(t *testing.T) {
			api := newSeedAPI(t, mode)
			storeID := api.ok("POST", "/v1/memory_stores", `{"name": "s"}`)["id"].(string)
			memories := "/v1/memory_stores/" + storeID + "/memories"
			first := api.ok("POST", memories, `{"path": "/a/b.md", "content": "one"}`)
			a := api.do("POST", memories, `{"path": "/a/b.md", "content": "two"}`)
			switch mode {
			case httpapi.CreateConflict:
				e, _ := a.obj["error"].(map[string]any)
				if a.status != http.StatusConflict || e["type"] != "memory_path_conflict_error" || e["conflicting_memory_id"] != first["id"] {
					t.Errorf("create on an occupied path: %d %v", a.status, a.obj)
				}
			case httpapi.CreateUpsert:
				if a.status != http.StatusOK || a.obj["id"] != first["id"] || a.obj["content_sha256"] != sha256Hex("two") {
					t.Errorf("upsert: %d %v", a.status, a.obj)
				}
			}
			e := api.fails("POST", memories, `{"path": "/a", "content": "x"}`, http.StatusConflict, "memory_path_conflict_error")
			if e["conflicting_memory_id"] != first["id"] || e["conflicting_path"] != "/a/b.md" {
				t.Errorf("create above a memory: %v", e)
			}
		})
	}
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

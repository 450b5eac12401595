package httpapi_test

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

var versionKeys = []string{"type", "id", "memory_store_id", "memory_id", "operation", "path", "content",
	"content_sha256", "content_size_bytes", "created_at", "created_by", "redacted_at", "redacted_by"}

func TestVersions(t *testing.T) {
	e := newServerEnv(t)
	store := e.createStore(t, "s")
	base := "/v1/memory_stores/" + store
	m := e.createMemory(t, store, "/a.md", "one")
	id := m["id"].(string)
	e.ok(t, "POST", base+"/memories/"+id, `{"content":"two"}`)
	e.ok(t, "DELETE", base+"/memories/"+id, "")
	other := e.createMemory(t, store, "/b.md", "b")["id"].(string)

	// Newest first, basic by default; every key present.
	p := e.ok(t, "GET", base+"/memory_versions?memory_id="+id, "")
	wantKeys(t, p, "data", "next_page")
	data := p["data"].([]any)
	if len(data) != 3 || p["next_page"] != nil {
		t.Fatalf("versions of %s: %v", id, p)
	}
	var ops []string
	for _, d := range data {
		v := d.(map[string]any)
		wantKeys(t, v, versionKeys...)
		ops = append(ops, v["operation"].(string))
		if v["memory_id"] != id || v["memory_store_id"] != store || v["path"] != "/a.md" || v["content"] != nil || v["redacted_at"] != nil || v["redacted_by"] != nil {
			t.Errorf("version %v", v)
		}
		by := v["created_by"].(map[string]any)
		wantKeys(t, by, "type", "api_key_id")
		if by["type"] != "api_actor" || by["api_key_id"] != e.keyID {
			t.Errorf("created_by %v, want the key %s", by, e.keyID)
		}
	}
	if strings.Join(ops, " ") != "deleted modified created" {
		t.Errorf("operations %v", ops)
	}
	deleted, modified := data[0].(map[string]any), data[1].(map[string]any)
	if deleted["content_sha256"] != nil || deleted["content_size_bytes"] != nil {
		t.Errorf("deleted version %v", deleted)
	}
	if modified["content_sha256"] != sha256Hex("two") || modified["content_size_bytes"] != 3.0 {
		t.Errorf("modified version %v", modified)
	}

	// Filters.
	for _, tc := range []struct {
		query string
		n     int
	}{
		{"", 4},
		{"operation=deleted", 1},
		{"operation=created", 2},
		{"operation=created&memory_id=" + other, 1},
		{"api_key_id=" + e.keyID, 4},
		{"api_key_id=apikey_other", 0},
		{"session_id=sesn_none", 0},
		{"service_account_id=svac_none", 0},
		{"created_at%5Bgte%5D=" + url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339)), 0},
		{"created_at_lte=" + url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339)), 4},
		{"limit=1", 1},
	} {
		if got := e.ok(t, "GET", base+"/memory_versions?"+tc.query, "")["data"].([]any); len(got) != tc.n {
			t.Errorf("%q: %d versions, want %d", tc.query, len(got), tc.n)
		}
	}
	// Paging by one walks all four, newest first.
	var seen []string
	page := ""
	for {
		target := base + "/memory_versions?limit=1"
		if page != "" {
			target += "&page=" + url.QueryEscape(page)
		}
		p := e.ok(t, "GET", target, "")
		seen = append(seen, p["data"].([]any)[0].(map[string]any)["id"].(string))
		if p["next_page"] == nil {
			break
		}
		page = p["next_page"].(string)
	}
	if len(seen) != 4 || seen[0] <= seen[3] {
		t.Errorf("paged versions %v", seen)
	}

	// view=full shows content; retrieve is full by default.
	if full := e.ok(t, "GET", base+"/memory_versions?view=full&memory_id="+id+"&operation=modified", "")["data"].([]any); full[0].(map[string]any)["content"] != "two" {
		t.Errorf("full list %v", full)
	}
	vid := modified["id"].(string)
	e.wantRetrieved(t, base+"/memory_versions/"+vid, "two", versionKeys)
	e.call(t, "GET", base+"/memory_versions/memver_none", "").apiError(t, 404, "not_found_error")
	s2 := e.createStore(t, "two")
	e.call(t, "GET", "/v1/memory_stores/"+s2+"/memory_versions/"+vid, "").apiError(t, 404, "not_found_error")
	e.call(t, "POST", "/v1/memory_stores/"+s2+"/memory_versions/"+vid+"/redact", "").apiError(t, 404, "not_found_error")
}

func TestRedact(t *testing.T) {
	e := newServerEnv(t)
	store := e.createStore(t, "s")
	base := "/v1/memory_stores/" + store + "/memory_versions/"
	m := e.createMemory(t, store, "/a.md", "one")
	vids := []string{m["memory_version_id"].(string)}
	for _, c := range []string{"two", "three", "four"} {
		up := e.ok(t, "POST", "/v1/memory_stores/"+store+"/memories/"+m["id"].(string), jsonOf(t, map[string]any{"content": c}))
		vids = append(vids, up["memory_version_id"].(string))
	}
	// Redact with no body (the SDKs), {} (the seed) or null.
	for i, body := range []string{"", "{}", "null"} {
		v := e.ok(t, "POST", base+vids[i]+"/redact", body)
		wantKeys(t, v, versionKeys...)
		if v["path"] != nil || v["content"] != nil || v["content_sha256"] != nil || v["content_size_bytes"] != nil || v["redacted_at"] == nil {
			t.Errorf("redacted with %q: %v", body, v)
		}
		by, _ := v["redacted_by"].(map[string]any)
		if by["type"] != "api_actor" || by["api_key_id"] != e.keyID || v["created_by"].(map[string]any)["api_key_id"] != e.keyID {
			t.Errorf("redacted_by %v", v["redacted_by"])
		}
		got := e.ok(t, "GET", base+vids[i], "")
		if got["path"] != nil || got["content"] != nil || got["redacted_at"] != v["redacted_at"] || got["operation"] == nil {
			t.Errorf("retrieved after redaction %v", got)
		}
	}
	// Redacting again keeps the first redaction.
	first := e.ok(t, "GET", base+vids[0], "")
	if again := e.ok(t, "POST", base+vids[0]+"/redact", ""); again["redacted_at"] != first["redacted_at"] {
		t.Errorf("redacted again %v, first %v", again, first)
	}
	e.call(t, "POST", base+vids[3]+"/redact", `[]`).apiError(t, 400, "invalid_request_error")
	e.call(t, "POST", base+vids[3]+"/redact", `{`).apiError(t, 400, "invalid_request_error")
	if v := e.ok(t, "GET", base+vids[3], ""); v["content"] != "four" || v["redacted_at"] != nil {
		t.Errorf("version after refused redactions %v", v)
	}
	e.call(t, "POST", base+"memver_none/redact", "").apiError(t, 404, "not_found_error")
}

func TestVersionValidation(t *testing.T) {
	e := newServerEnv(t)
	store := e.createStore(t, "s")
	base := "/v1/memory_stores/" + store + "/memory_versions"
	for _, tc := range []struct{ query, msg string }{
		{"operation=renamed", "operation"},
		{"operation=Created", "operation"},
		{"view=everything", "view"},
		{"limit=0", "limit"},
		{"limit=1000", "limit"},
		{"created_at%5Bgte%5D=2026-01-02", "created_at[gte]"},
		{"created_at_lte=now", "created_at_lte"},
		{"created_at%5Blte%5D=2026-01-02T00:00:00Z&created_at_lte=2026-01-03T00:00:00Z", "disagree"},
		{"page=page_x", "page"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			er := e.call(t, "GET", base+"?"+tc.query, "").apiError(t, 400, "invalid_request_error")
			if !strings.Contains(er["message"].(string), tc.msg) {
				t.Errorf("message %q lacks %q", er["message"], tc.msg)
			}
		})
	}
	e.call(t, "GET", base+"/x?view=none", "").apiError(t, 400, "invalid_request_error")
}

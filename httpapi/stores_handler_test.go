package httpapi_test

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

var storeKeys = []string{"type", "id", "name", "description", "metadata", "created_at", "updated_at", "archived_at"}

func TestStoreLifecycle(t *testing.T) {
	e := newServerEnv(t)
	st := e.ok(t, "POST", "/v1/memory_stores", `{"name":"User Prefs","description":"d","metadata":{"a":"b"},"unknown":1}`)
	wantKeys(t, st, storeKeys...)
	id := st["id"].(string)
	if st["type"] != "memory_store" || !strings.HasPrefix(id, "memstore_") || st["name"] != "User Prefs" ||
		st["description"] != "d" || st["metadata"].(map[string]any)["a"] != "b" || st["archived_at"] != nil {
		t.Errorf("created %v", st)
	}
	if _, err := time.Parse(time.RFC3339Nano, st["created_at"].(string)); err != nil || !strings.HasSuffix(st["created_at"].(string), "Z") {
		t.Errorf("created_at %v", st["created_at"])
	}

	// Defaults: description "" and metadata {}, never null.
	bare := e.ok(t, "POST", "/v1/memory_stores", `{"name":"bare"}`)
	if bare["description"] != "" || len(bare["metadata"].(map[string]any)) != 0 {
		t.Errorf("bare store %v", bare)
	}

	got := e.ok(t, "GET", "/v1/memory_stores/"+id, "")
	wantKeys(t, got, storeKeys...)
	if got["name"] != "User Prefs" {
		t.Errorf("retrieved %v", got)
	}

	// Update: a merge patch on metadata, null fields unchanged; POST,
	// PATCH and PUT alike.
	up := e.ok(t, "POST", "/v1/memory_stores/"+id, `{"metadata":{"a":null,"c":"d"},"description":null}`)
	md := up["metadata"].(map[string]any)
	if _, has := md["a"]; has || md["c"] != "d" || up["description"] != "d" || up["name"] != "User Prefs" {
		t.Errorf("updated %v", up)
	}
	if up := e.ok(t, "PATCH", "/v1/memory_stores/"+id, `{"name":"Renamed"}`); up["name"] != "Renamed" {
		t.Errorf("PATCH %v", up)
	}
	if up := e.ok(t, "PUT", "/v1/memory_stores/"+id, `{"description":""}`); up["description"] != "" || up["name"] != "Renamed" {
		t.Errorf("PUT %v", up)
	}

	// Archive: no body, {} or null; idempotent.
	ar := e.ok(t, "POST", "/v1/memory_stores/"+id+"/archive", "")
	if ar["archived_at"] == nil {
		t.Fatalf("archived %v", ar)
	}
	for _, body := range []string{"{}", "null", " "} {
		if again := e.ok(t, "POST", "/v1/memory_stores/"+id+"/archive", body); again["archived_at"] != ar["archived_at"] || again["updated_at"] != ar["updated_at"] {
			t.Errorf("archive again with %q: %v, first %v", body, again, ar)
		}
	}
	e.call(t, "POST", "/v1/memory_stores/"+bare["id"].(string)+"/archive", "[1]").apiError(t, 400, "invalid_request_error")
	res := e.call(t, "POST", "/v1/memory_stores/"+id, `{"name":"x"}`)
	res.apiError(t, 400, "invalid_request_error")
	if res.header.Get("X-Should-Retry") != "false" {
		t.Errorf("x-should-retry %q", res.header.Get("X-Should-Retry"))
	}
	if got := e.ok(t, "GET", "/v1/memory_stores/"+id, ""); got["archived_at"] != ar["archived_at"] {
		t.Errorf("archived store retrieved %v", got)
	}

	del := e.ok(t, "DELETE", "/v1/memory_stores/"+id, "")
	wantKeys(t, del, "type", "id")
	if del["type"] != "memory_store_deleted" || del["id"] != id {
		t.Errorf("deleted %v", del)
	}
	e.call(t, "GET", "/v1/memory_stores/"+id, "").apiError(t, 404, "not_found_error")
	e.call(t, "DELETE", "/v1/memory_stores/"+id, "").apiError(t, 404, "not_found_error")
}

func TestListStores(t *testing.T) {
	e := newServerEnv(t)
	var ids []string
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		ids = append(ids, e.createStore(t, n))
	}
	e.ok(t, "POST", "/v1/memory_stores/"+ids[1]+"/archive", "")

	// Pages of 2, newest first, archived hidden: e d | c a.
	var got []string
	var pages int
	page := ""
	for {
		target := "/v1/memory_stores?limit=2"
		if page != "" {
			target += "&page=" + url.QueryEscape(page)
		}
		p := e.ok(t, "GET", target, "")
		wantKeys(t, p, "data", "next_page")
		data := p["data"].([]any)
		if len(data) == 0 {
			t.Fatalf("an empty page: %v", p)
		}
		pages++
		for _, it := range data {
			wantKeys(t, it.(map[string]any), storeKeys...)
			got = append(got, it.(map[string]any)["id"].(string))
		}
		if p["next_page"] == nil {
			break
		}
		page = p["next_page"].(string)
	}
	if want := []string{ids[4], ids[3], ids[2], ids[0]}; strings.Join(got, " ") != strings.Join(want, " ") || pages != 2 {
		t.Errorf("listed %v in %d pages, want %v in 2", got, pages, want)
	}

	if all := e.ok(t, "GET", "/v1/memory_stores?include_archived=true&limit=100", "")["data"].([]any); len(all) != 5 {
		t.Errorf("include_archived: %d stores", len(all))
	}
	if p := e.ok(t, "GET", "/v1/memory_stores?include_archived=false", ""); len(p["data"].([]any)) != 4 || p["next_page"] != nil {
		t.Errorf("include_archived=false: %v", p)
	}

	// The time range, in both spellings; equal bounds given twice agree.
	future := url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339))
	past := url.QueryEscape(time.Now().Add(-time.Hour).Format(time.RFC3339Nano))
	for _, tc := range []struct {
		query string
		n     int
	}{
		{"created_at%5Bgte%5D=" + future, 0},
		{"created_at_gte=" + future, 0},
		{"created_at%5Bgte%5D=" + past, 4},
		{"created_at_lte=" + past, 0},
		{"created_at%5Blte%5D=" + future + "&created_at_gte=" + past, 4},
		{"created_at%5Bgte%5D=" + past + "&created_at_gte=" + past, 4},
		{"created_at%5Bgte%5D=2026-01-02T03%3A04%3A05%2B07%3A00&created_at_gte=2026-01-01T20%3A04%3A05Z", 4}, // the same instant
		// Any year RFC 3339 can write, far beyond nanoseconds since 1970.
		{"created_at%5Bgte%5D=0001-01-01T00%3A00%3A00Z", 4},
		{"created_at_gte=1600-01-01T00%3A00%3A00Z", 4},
		{"created_at%5Blte%5D=9999-12-31T23%3A59%3A59.999999999Z", 4},
		{"created_at_lte=2300-01-01T00%3A00%3A00%2B14%3A00", 4},
		{"created_at%5Bgte%5D=0001-01-01T00%3A00%3A00Z&created_at%5Blte%5D=9999-12-31T23%3A59%3A59Z", 4},
		{"created_at%5Bgte%5D=9999-12-31T23%3A59%3A59Z", 0},
		{"created_at_gte=2300-01-01T00%3A00%3A00Z", 0},
		{"created_at%5Blte%5D=0001-01-01T00%3A00%3A00Z", 0},
		{"created_at_lte=1600-01-01T00%3A00%3A00Z", 0},
	} {
		if p := e.ok(t, "GET", "/v1/memory_stores?"+tc.query, ""); len(p["data"].([]any)) != tc.n {
			t.Errorf("%s: %d stores, want %d", tc.query, len(p["data"].([]any)), tc.n)
		}
	}
	// A bound that is no RFC 3339 time is refused, naming its parameter.
	for _, q := range []string{"created_at%5Bgte%5D=10000-01-01T00%3A00%3A00Z", "created_at_lte=yesterday", "created_at%5Blte%5D=2026-13-01T00%3A00%3A00Z"} {
		name, _ := url.QueryUnescape(q[:strings.Index(q, "=")])
		msg, _ := e.call(t, "GET", "/v1/memory_stores?"+q, "").apiError(t, 400, "invalid_request_error")["message"].(string)
		if !strings.Contains(msg, name+" must be an RFC 3339 date-time") {
			t.Errorf("%s: message %q does not name %s", q, msg, name)
		}
	}
}

// TestStoreValidation covers the 400s of the store endpoints: each names
// what is wrong.
func TestStoreValidation(t *testing.T) {
	e := newServerEnv(t)
	store := e.createStore(t, "s")
	for _, tc := range []struct {
		name, method, target, body string
		msg                        string // in the message
	}{
		{"no body", "POST", "/v1/memory_stores", "", "JSON object is required"},
		{"not JSON", "POST", "/v1/memory_stores", "{", "not valid JSON"},
		{"trailing data", "POST", "/v1/memory_stores", `{"name":"a"} x`, "not valid JSON"},
		{"an array", "POST", "/v1/memory_stores", `[]`, "must be a JSON object, not an array"},
		{"no name", "POST", "/v1/memory_stores", `{}`, "name is required"},
		{"null name", "POST", "/v1/memory_stores", `{"name":null}`, "name is required"},
		{"empty name", "POST", "/v1/memory_stores", `{"name":""}`, "name"},
		{"numeric name", "POST", "/v1/memory_stores", `{"name":1}`, "name must be a string, not a number"},
		{"long name", "POST", "/v1/memory_stores", `{"name":"` + strings.Repeat("n", 256) + `"}`, "255"},
		{"control character", "POST", "/v1/memory_stores", `{"name":"a\u0007"}`, "control"},
		{"metadata not an object", "POST", "/v1/memory_stores", `{"name":"a","metadata":"x"}`, "metadata must be an object, not a string"},
		{"metadata value a number", "POST", "/v1/memory_stores", `{"name":"a","metadata":{"k":1}}`, "the values of metadata must each be a string, not a number"},
		{"metadata value null on create", "POST", "/v1/memory_stores", `{"name":"a","metadata":{"k":null}}`, "metadata.k must be a string"},
		{"description a boolean", "POST", "/v1/memory_stores", `{"name":"a","description":true}`, "description must be a string, not a boolean"},
		{"update name a number", "POST", "/v1/memory_stores/" + store, `{"name":2}`, "name must be a string"},
		{"update metadata value a number", "POST", "/v1/memory_stores/" + store, `{"metadata":{"k":2}}`, "the values of metadata must each be a string"},
		{"update with no body", "POST", "/v1/memory_stores/" + store, ``, "JSON object is required"},
		{"limit 0", "GET", "/v1/memory_stores?limit=0", "", "limit"},
		{"limit 101", "GET", "/v1/memory_stores?limit=101", "", "limit"},
		{"limit -1", "GET", "/v1/memory_stores?limit=-1", "", "limit"},
		{"limit words", "GET", "/v1/memory_stores?limit=ten", "", "limit"},
		{"include_archived", "GET", "/v1/memory_stores?include_archived=maybe", "", "include_archived"},
		{"created_at[gte]", "GET", "/v1/memory_stores?created_at%5Bgte%5D=yesterday", "", "created_at[gte]"},
		{"created_at[lte] without a zone", "GET", "/v1/memory_stores?created_at%5Blte%5D=2026-01-02T03:04:05", "", "created_at[lte]"},
		{"created_at_lte", "GET", "/v1/memory_stores?created_at_lte=2026-13-01T00:00:00Z", "", "created_at_lte"},
		{"both spellings differ", "GET", "/v1/memory_stores?created_at%5Bgte%5D=2026-01-01T00:00:00Z&created_at_gte=2026-01-02T00:00:00Z", "", "disagree"},
		{"garbled page", "GET", "/v1/memory_stores?page=page_garbage", "", "page"},
	} {
		t.Run(tc.name, func(t *testing.T) { e.wantInvalid(t, tc.method, tc.target, tc.body, tc.msg) })
	}
	// Nothing was created or changed.
	if p := e.ok(t, "GET", "/v1/memory_stores", ""); len(p["data"].([]any)) != 1 {
		t.Errorf("stores after refused requests: %v", p)
	}
	if st := e.ok(t, "GET", "/v1/memory_stores/"+store, ""); st["name"] != "s" || len(st["metadata"].(map[string]any)) != 0 {
		t.Errorf("store after refused updates: %v", st)
	}
}

func TestUnknownStoreIs404(t *testing.T) {
	e := newServerEnv(t)
	for _, tc := range []struct{ method, target, body string }{
		{"GET", "/v1/memory_stores/memstore_none", ""},
		{"POST", "/v1/memory_stores/memstore_none", `{"name":"x"}`},
		{"POST", "/v1/memory_stores/memstore_none/archive", ""},
		{"DELETE", "/v1/memory_stores/memstore_none", ""},
		{"GET", "/v1/memory_stores/memstore_none/memories", ""},
		{"POST", "/v1/memory_stores/memstore_none/memories", `{"path":"/a","content":""}`},
		{"GET", "/v1/memory_stores/memstore_none/memory_versions", ""},
	} {
		res := e.call(t, tc.method, tc.target, tc.body)
		res.apiError(t, 404, "not_found_error")
		if res.header.Get("X-Should-Retry") != "false" {
			t.Errorf("%s %s: x-should-retry %q", tc.method, tc.target, res.header.Get("X-Should-Retry"))
		}
	}
}

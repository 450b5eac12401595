package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

// createSession makes a session through the API and returns it with its
// token.
func (e *serverEnv) createSession(tb testing.TB, resources ...map[string]any) (session map[string]any, token string) {
	tb.Helper()
	s := e.ok(tb, "POST", "/v1/sessions", jsonOf(tb, map[string]any{
		"agent": "agent_01", "environment_id": "env_01", "resources": resources,
	}))
	token, _ = s["token"].(string)
	if !strings.HasPrefix(token, "st-memstore-") {
		tb.Fatalf("session token %q", token)
	}
	return s, token
}

func attach(store string, access string) map[string]any {
	r := map[string]any{"type": "memory_store", "memory_store_id": store}
	if access != "" {
		r["access"] = access
	}
	return r
}

// as sends a request with a session token instead of the API key, as the
// SDK's environment worker does (Authorization: Bearer, no x-api-key).
func as(token string) func(*http.Request) {
	return func(r *http.Request) {
		r.Header.Del("X-Api-Key")
		r.Header.Set("Authorization", "Bearer "+token)
	}
}

func TestCreateSession(t *testing.T) {
	e := newServerEnv(t)
	prefs := e.createStore(t, "User Preferences")
	e.ok(t, "POST", "/v1/memory_stores/"+prefs, `{"description":"Per-user preferences."}`)
	notes := e.createStore(t, "notes")

	s := e.ok(t, "POST", "/v1/sessions", jsonOf(t, map[string]any{
		"agent": map[string]any{"type": "agent", "id": "agent_01", "version": 3}, "environment_id": "env_01",
		"title": "Fix the build", "metadata": map[string]string{"ticket": "42"}, "vault_ids": []string{},
		"resources": []map[string]any{
			{"type": "memory_store", "memory_store_id": prefs, "access": "read_only", "instructions": "Check before starting."},
			{"type": "memory_store", "memory_store_id": notes, "prompt": "Project notes."}, // the seed's name
		},
	}))
	id, _ := s["id"].(string)
	if !strings.HasPrefix(id, "sesn_") || s["type"] != "session" || s["title"] != "Fix the build" || s["status"] != "idle" {
		t.Fatalf("session %v", s)
	}
	// The agent as sent, with the fields the SDKs require that it lacks.
	if s["environment_id"] != "env_01" || fmt.Sprint(s["agent"]) != "map[description: execution_identity:map[type:service_account] id:agent_01 "+
		"mcp_servers:[] model:map[id:] multiagent:<nil> name: skills:[] system: tools:[] type:agent version:3]" {
		t.Errorf("kept fields: agent %v environment_id %v", s["agent"], s["environment_id"])
	}
	res := s["resources"].([]any)
	want := []string{
		fmt.Sprint(map[string]any{"id": prefs, "type": "memory_store", "memory_store_id": prefs, "access": "read_only",
			"instructions": "Check before starting.", "name": "User Preferences", "description": "Per-user preferences.",
			"mount_path": "/mnt/memory/user-preferences"}),
		fmt.Sprint(map[string]any{"id": notes, "type": "memory_store", "memory_store_id": notes, "access": "read_write",
			"instructions": "Project notes.", "name": "notes", "description": "", "mount_path": "/mnt/memory/notes"}),
	}
	if len(res) != 2 || fmt.Sprint(res[0]) != want[0] || fmt.Sprint(res[1]) != want[1] {
		t.Errorf("resources\n%v\nwant\n%v", res, want)
	}
	if !strings.HasPrefix(s["token"].(string), "st-memstore-") || !strings.HasPrefix(s["token_id"].(string), "sesntok_") {
		t.Errorf("token %v %v", s["token"], s["token_id"])
	}

	// Read back: the same, without the token; a later rename of the store
	// does not reach the snapshot.
	e.ok(t, "POST", "/v1/memory_stores/"+prefs, `{"name":"Renamed"}`)
	got := e.ok(t, "GET", "/v1/sessions/"+id, "")
	if _, ok := got["token"]; ok {
		t.Errorf("GET shows the token: %v", got)
	}
	if r0 := got["resources"].([]any)[0].(map[string]any); r0["name"] != "User Preferences" {
		t.Errorf("snapshot name %v", r0["name"])
	}
	if got["environment_id"] != "env_01" || got["metadata"].(map[string]any)["ticket"] != "42" {
		t.Errorf("read back %v", got)
	}

	// The list, and its store filter.
	e.createSession(t, attach(notes, ""))
	if l := e.ok(t, "GET", "/v1/sessions", ""); len(l["data"].([]any)) != 2 || l["next_page"] != nil {
		t.Errorf("list %v", l)
	}
	if l := e.ok(t, "GET", "/v1/sessions?memory_store_id="+prefs, ""); len(l["data"].([]any)) != 1 {
		t.Errorf("filtered list %v", l)
	}
}

func TestSessionValidation(t *testing.T) {
	e := newServerEnv(t)
	var stores []string
	for i := range 9 {
		stores = append(stores, e.createStore(t, fmt.Sprintf("s%d", i)))
	}
	archived := e.createStore(t, "old")
	e.ok(t, "POST", "/v1/memory_stores/"+archived+"/archive", "")
	foreign := func() string {
		other := e.otherKey(t, "other")
		return e.ok(t, "POST", "/v1/memory_stores", `{"name":"theirs"}`, withHeader("X-Api-Key", other))["id"].(string)
	}()
	nine := make([]map[string]any, 9)
	for i, s := range stores {
		nine[i] = attach(s, "")
	}
	for _, tc := range []struct {
		name string
		body any
		want string // in the message
	}{
		{"nine stores", map[string]any{"resources": nine}, "at most 8"},
		{"twice", map[string]any{"resources": []any{attach(stores[0], ""), attach(stores[0], "read_only")}}, "already attached"},
		{"unknown", map[string]any{"resources": []any{attach("memstore_nope", "")}}, "memstore_nope"},
		{"other workspace", map[string]any{"resources": []any{attach(foreign, "")}}, foreign},
		{"archived", map[string]any{"resources": []any{attach(archived, "")}}, "archived"},
		{"bad access", map[string]any{"resources": []any{attach(stores[0], "write")}}, "access"},
		{"long instructions", map[string]any{"resources": []any{map[string]any{"type": "memory_store", "memory_store_id": stores[0],
			"instructions": strings.Repeat("é", 4097)}}}, "4097"},
		{"prompt and instructions", map[string]any{"resources": []any{map[string]any{"type": "memory_store", "memory_store_id": stores[0],
			"instructions": "a", "prompt": "b"}}}, "prompt"},
		{"file resource", map[string]any{"resources": []any{map[string]any{"type": "file", "file_id": "file_1"}}}, "only memory_store"},
		{"no type", map[string]any{"resources": []any{map[string]any{"file_id": "file_1"}}}, "type is required"},
		{"no store id", map[string]any{"resources": []any{map[string]any{"type": "memory_store"}}}, "memory_store_id is required"},
		{"resources not a list", map[string]any{"resources": "x"}, "resources"},
		{"bad lifetime", map[string]any{"token_expires_in_seconds": 0}, "token_expires_in_seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			er := e.call(t, "POST", "/v1/sessions", jsonOf(t, tc.body)).apiError(t, 400, "invalid_request_error")
			if msg := er["message"].(string); !strings.Contains(msg, tc.want) {
				t.Errorf("message %q lacks %q", msg, tc.want)
			}
		})
	}
	// 4,096 characters are fine, and nothing was created by the failures.
	e.ok(t, "POST", "/v1/sessions", jsonOf(t, map[string]any{"resources": []any{map[string]any{"type": "memory_store",
		"memory_store_id": stores[0], "instructions": strings.Repeat("é", 4096)}}}))
	if l := e.ok(t, "GET", "/v1/sessions", ""); len(l["data"].([]any)) != 1 {
		t.Errorf("%d sessions after the refusals, want 1", len(l["data"].([]any)))
	}
}

func TestSessionTokenScope(t *testing.T) {
	e := newServerEnv(t, func(c *httpapi.Config) { c.AuthCacheTTL = -1 })
	rw, ro, other := e.createStore(t, "rw"), e.createStore(t, "ro"), e.createStore(t, "other")
	m := e.createMemory(t, ro, "/a.md", "read me")
	o := e.createMemory(t, other, "/secret.md", "not yours")
	s, tok := e.createSession(t, attach(rw, ""), attach(ro, "read_only"))
	sid := s["id"].(string)
	other2, _ := e.createSession(t, attach(other, ""))

	// Reading the attached stores works, also with x-api-key.
	if got := e.ok(t, "GET", "/v1/memory_stores/"+ro+"/memories/"+m["id"].(string), "", as(tok)); got["content"] != "read me" {
		t.Errorf("read %v", got)
	}
	e.ok(t, "GET", "/v1/memory_stores/"+ro+"/memories", "", withHeader("X-Api-Key", tok))
	e.ok(t, "GET", "/v1/memory_stores/"+ro+"/memory_versions", "", as(tok))

	// A write to the read-write store is the session's, on record.
	w := e.ok(t, "POST", "/v1/memory_stores/"+rw+"/memories", `{"path":"/progress.md","content":"step 1"}`, as(tok))
	v := e.ok(t, "GET", "/v1/memory_stores/"+rw+"/memory_versions/"+w["memory_version_id"].(string), "")
	if by := v["created_by"].(map[string]any); by["type"] != "session_actor" || by["session_id"] != sid {
		t.Errorf("created_by %v", by)
	}
	e.ok(t, "POST", "/v1/memory_stores/"+rw+"/memories/"+w["id"].(string), `{"content":"step 2"}`, as(tok))
	if l := e.ok(t, "GET", "/v1/memory_stores/"+rw+"/memory_versions?session_id="+sid, ""); len(l["data"].([]any)) != 2 {
		t.Errorf("versions by the session: %v", l["data"])
	}

	refused := []struct{ method, target, body string }{
		{"POST", "/v1/memory_stores/" + ro + "/memories", `{"path":"/b.md","content":"x"}`},
		{"POST", "/v1/memory_stores/" + ro + "/memories/" + m["id"].(string), `{"content":"x"}`},
		{"DELETE", "/v1/memory_stores/" + ro + "/memories/" + m["id"].(string), ""},
		{"GET", "/v1/memory_stores/" + other + "/memories/" + o["id"].(string), ""},
		{"GET", "/v1/memory_stores/" + other + "/memories", ""},
		{"GET", "/v1/memory_stores/memstore_doesnotexist/memories", ""},
		{"GET", "/v1/memory_stores", ""},
		{"POST", "/v1/memory_stores", `{"name":"mine"}`},
		{"GET", "/v1/memory_stores/" + rw, ""},
		{"POST", "/v1/memory_stores/" + rw + "/archive", ""},
		{"DELETE", "/v1/memory_stores/" + rw, ""},
		{"POST", "/v1/memory_stores/" + rw + "/memory_versions/" + w["memory_version_id"].(string) + "/redact", ""},
		{"POST", "/v1/sessions", `{"resources":[]}`},
		{"GET", "/v1/sessions/" + other2["id"].(string), ""},
		{"POST", "/v1/sessions/" + sid + "/tokens", ""},
		{"GET", "/v1/sessions/" + sid + "/tokens", ""},
		{"POST", "/v1/sessions/" + sid + "/archive", ""},
	}
	for _, r := range refused {
		e.call(t, r.method, r.target, r.body, as(tok)).apiError(t, 403, "permission_error")
	}
	// Nothing changed: the read-only memory, the other store.
	if got := e.ok(t, "GET", "/v1/memory_stores/"+ro+"/memories/"+m["id"].(string), ""); got["content"] != "read me" {
		t.Errorf("read-only memory now %v", got["content"])
	}

	// The session sees itself, and itself alone.
	if got := e.ok(t, "GET", "/v1/sessions/"+sid, "", as(tok)); got["id"] != sid {
		t.Errorf("own session %v", got["id"])
	}
	l := e.ok(t, "GET", "/v1/sessions", "", as(tok))["data"].([]any)
	if len(l) != 1 || l[0].(map[string]any)["id"] != sid {
		t.Errorf("a session token lists %v", l)
	}
}

func TestSessionTokens(t *testing.T) {
	e := newServerEnv(t, func(c *httpapi.Config) { c.AuthCacheTTL = -1 })
	st := e.createStore(t, "s")
	s, first := e.createSession(t, attach(st, ""))
	sid := s["id"].(string)
	list := "/v1/memory_stores/" + st + "/memories"

	before := time.Now()
	second := e.ok(t, "POST", "/v1/sessions/"+sid+"/tokens", `{"expires_in_seconds":3600}`)
	exp, err := time.Parse(time.RFC3339Nano, second["expires_at"].(string))
	if err != nil || exp.Before(before.Add(59*time.Minute)) || exp.After(time.Now().Add(61*time.Minute)) {
		t.Errorf("expires_at %v (%v)", second["expires_at"], err)
	}
	e.ok(t, "GET", list, "", as(second["token"].(string)))
	toks := e.ok(t, "GET", "/v1/sessions/"+sid+"/tokens", "")["data"].([]any)
	if len(toks) != 2 || toks[0].(map[string]any)["token"] != nil {
		t.Fatalf("tokens %v", toks)
	}

	// Revoking one leaves the other working.
	e.ok(t, "POST", "/v1/sessions/"+sid+"/tokens/"+second["id"].(string)+"/revoke", "")
	e.call(t, "GET", list, "", as(second["token"].(string))).apiError(t, 401, "authentication_error")
	e.ok(t, "GET", list, "", as(first))
	e.call(t, "POST", "/v1/sessions/"+sid+"/tokens/sesntok_nope/revoke", "").apiError(t, 404, "not_found_error")

	// Archiving the session stops every token and the making of new ones.
	a := e.ok(t, "POST", "/v1/sessions/"+sid+"/archive", "")
	if a["archived_at"] == nil {
		t.Errorf("archive %v", a)
	}
	e.call(t, "GET", list, "", as(first)).apiError(t, 401, "authentication_error")
	e.call(t, "POST", "/v1/sessions/"+sid+"/tokens", "").apiError(t, 409, "conflict_error")

	e.call(t, "POST", "/v1/sessions/"+sid+"/tokens", `{"expires_in_seconds":-5}`).apiError(t, 400, "invalid_request_error")
	e.call(t, "GET", "/v1/sessions/sesn_nope", "").apiError(t, 404, "not_found_error")
	// Another workspace does not see the session.
	e.call(t, "GET", "/v1/sessions/"+sid, "", withHeader("X-Api-Key", e.otherKey(t, "w2"))).apiError(t, 404, "not_found_error")
	e.call(t, "GET", list, "", as("st-memstore-forged")).apiError(t, 401, "authentication_error")
}

func TestMemoryPrompt(t *testing.T) {
	e := newServerEnv(t)
	st := e.createStore(t, "Team Notes")
	s, tok := e.createSession(t, map[string]any{"type": "memory_store", "memory_store_id": st, "access": "read_only",
		"instructions": "Decisions of the team."})
	sid := s["id"].(string)
	for _, edit := range [][]func(*http.Request){nil, {as(tok)}} {
		p := e.ok(t, "GET", "/v1/sessions/"+sid+"/memory_prompt", "", edit...)
		wantKeys(t, p, "type", "session_id", "prompt")
		text, _ := p["prompt"].(string)
		for _, want := range []string{"/mnt/memory/team-notes", "Team Notes", "Decisions of the team.", "read-only"} {
			if p["type"] != "memory_prompt" || p["session_id"] != sid || !strings.Contains(text, want) {
				t.Errorf("prompt lacks %q: %v", want, p)
			}
		}
	}
	other, _ := e.createSession(t, attach(st, ""))
	e.call(t, "GET", "/v1/sessions/"+other["id"].(string)+"/memory_prompt", "", as(tok)).apiError(t, 403, "permission_error")
	e.call(t, "GET", "/v1/sessions/sesn_nope/memory_prompt", "").apiError(t, 404, "not_found_error")
}

// TestSessionKeptFieldLimits: the fields a session keeps as sent are
// bounded in depth and size, so that every answer listing sessions stays
// readable by common JSON parsers; a refused body makes nothing.
func TestSessionKeptFieldLimits(t *testing.T) {
	e := newServerEnv(t)
	nested := func(depth int) string { return strings.Repeat(`{"a":`, depth-1) + `[1]` + strings.Repeat(`}`, depth-1) }
	long := func(n int) string { return `"` + strings.Repeat("x", n) + `"` }
	for _, tc := range []struct {
		name, body string
		mention    []string
	}{
		{"9000 levels", `{"agent":` + nested(9000) + `}`, []string{"agent", "9000", "limit is 32"}},
		{"33 levels", `{"environment_id":"env","agent":` + nested(33) + `}`, []string{"agent is nested 33 levels deep; the limit is 32"}},
		{"a field of 1 MB", `{"agent":` + long(1_000_000) + `}`, []string{"agent", "16384"}},
		{"fields of 16 KiB and a byte", `{"a":` + long(memstore.MaxSessionFieldsBytes-len("a")-len("b")-len(`""`)-len(`"y"`)+1) + `,"b":"y"}`,
			[]string{"a alone", "16385", "16384"}},
	} {
		msg, _ := e.call(t, "POST", "/v1/sessions", tc.body).apiError(t, 400, "invalid_request_error")["message"].(string)
		for _, m := range tc.mention {
			if !strings.Contains(msg, m) {
				t.Errorf("%s: message %q does not mention %q", tc.name, msg, m)
			}
		}
	}
	if got := e.ok(t, "GET", "/v1/sessions", "")["data"].([]any); len(got) != 0 {
		t.Fatalf("refused creates left %d sessions", len(got))
	}

	// At the limits, the fields are kept and come back as sent.
	deep := nested(memstore.MaxJSONDepth)
	env := long(memstore.MaxSessionFieldsBytes - len("tools") - len(deep) - len("env") - len(`""`))
	s := e.ok(t, "POST", "/v1/sessions", `{"tools":`+deep+`,"env":`+env+`}`)
	got := e.ok(t, "GET", "/v1/sessions/"+s["id"].(string), "")
	if b, _ := json.Marshal(got["tools"]); string(b) != deep {
		t.Errorf("tools nested %d levels came back as %.80s", memstore.MaxJSONDepth, b)
	}
	if b, _ := json.Marshal(got["env"]); string(b) != env {
		t.Errorf("env of %d bytes came back as %d bytes", len(env), len(b))
	}
}

// TestDeepBodies: no request body may nest deeper than the limit, even
// in fields the endpoint ignores; the message names the field.
func TestDeepBodies(t *testing.T) {
	e := newServerEnv(t)
	store := e.createStore(t, "s")
	m := e.createMemory(t, store, "/a.md", "a")
	deep := strings.Repeat("[", 9000) + strings.Repeat("]", 9000)
	for _, tc := range []struct{ method, target, body, mention string }{
		{"POST", "/v1/memory_stores", `{"name":"n","extra":` + deep + `}`, "extra is nested 9000 levels deep"},
		{"POST", "/v1/memory_stores/" + store, `{"name":"n","metadata":` + deep + `}`, "metadata is nested 9000 levels deep"},
		{"POST", "/v1/memory_stores/" + store + "/memories", `{"path":"/b.md","content":"b","x":` + deep + `}`, "x is nested"},
		{"PATCH", "/v1/memory_stores/" + store + "/memories/" + m["id"].(string), `{"content":"c","precondition":` + deep + `}`, "precondition is nested"},
		{"POST", "/v1/memory_stores/" + store + "/archive", `{"why":` + deep + `}`, "why is nested"},
		{"POST", "/v1/memory_stores", deep, "the request body is nested 9000 levels deep; the limit is 33"},
	} {
		msg, _ := e.call(t, tc.method, tc.target, tc.body).apiError(t, 400, "invalid_request_error")["message"].(string)
		if !strings.Contains(msg, tc.mention) {
			t.Errorf("%s %s: message %q does not mention %q", tc.method, tc.target, msg, tc.mention)
		}
	}
	// Nothing changed.
	if got := e.ok(t, "GET", "/v1/memory_stores/"+store+"/memories/"+m["id"].(string), ""); got["content"] != "a" {
		t.Errorf("memory now %v", got["content"])
	}
	if got := e.ok(t, "GET", "/v1/memory_stores", "")["data"].([]any); len(got) != 1 || got[0].(map[string]any)["name"] != "s" {
		t.Errorf("stores now %v", got)
	}
	// Brackets inside strings are text, whatever their number.
	e.ok(t, "POST", "/v1/memory_stores/"+store+"/memories", jsonOf(t, map[string]any{"path": "/brackets.md", "content": deep}))
}

// TestSessionTokenPages: a session's tokens are listed as every list is,
// a page at a time, oldest first; a bad cursor or limit is a 400.
func TestSessionTokenPages(t *testing.T) {
	e := newServerEnv(t)
	s, _ := e.createSession(t)
	sid := s["id"].(string)
	want := []string{s["token_id"].(string)}
	for range 249 {
		tok, _, err := memstore.NewCore(e.db).CreateSessionToken(context.Background(), e.caller(), sid, 0)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, tok.ID)
	}
	var got []string
	var sizes []int
	for page := ""; ; {
		target := "/v1/sessions/" + sid + "/tokens?limit=100"
		if page != "" {
			target += "&page=" + url.QueryEscape(page)
		}
		p := e.ok(t, "GET", target, "")
		data := p["data"].([]any)
		sizes = append(sizes, len(data))
		for _, d := range data {
			got = append(got, d.(map[string]any)["id"].(string))
		}
		if p["next_page"] == nil {
			break
		}
		page = p["next_page"].(string)
		if len(sizes) > 3 {
			t.Fatalf("more than 3 pages: %v", sizes)
		}
	}
	if fmt.Sprint(sizes) != "[100 100 50]" {
		t.Errorf("page sizes %v, want [100 100 50]", sizes)
	}
	if !slices.Equal(got, want) { // the order they were made in
		t.Errorf("tokens not listed once each, oldest first")
	}
	if p := e.ok(t, "GET", "/v1/sessions/"+sid+"/tokens", ""); len(p["data"].([]any)) != 20 || p["next_page"] == nil {
		t.Errorf("default page: %d tokens, next_page %v; want 20 and a cursor", len(p["data"].([]any)), p["next_page"])
	}

	next := e.ok(t, "GET", "/v1/sessions/"+sid+"/tokens?limit=1", "")["next_page"].(string)
	e.createSession(t)
	sessionsNext := e.ok(t, "GET", "/v1/sessions?limit=1", "")["next_page"].(string)
	e.createStore(t, "another") // for a stores list's cursor
	for _, q := range []string{"page=garbage", "page=" + url.QueryEscape(next+"x"), "page=" + url.QueryEscape(next[:len(next)-3]),
		"page=" + url.QueryEscape(sessionsNext), "page=" + url.QueryEscape(storesCursor(t, e)), "limit=0", "limit=101", "limit=ten"} {
		msg, _ := e.call(t, "GET", "/v1/sessions/"+sid+"/tokens?"+q, "").apiError(t, 400, "invalid_request_error")["message"].(string)
		if name, _, _ := strings.Cut(q, "="); !strings.Contains(msg, name) {
			t.Errorf("%s: message %q does not name %s", q, msg, name)
		}
	}
	e.call(t, "GET", "/v1/sessions/sesn_nope/tokens", "").apiError(t, 404, "not_found_error")
}

// TestRevokeTokenOfAnotherSession: a token is revoked only under its own
// session's path.
func TestRevokeTokenOfAnotherSession(t *testing.T) {
	e := newServerEnv(t)
	st := e.createStore(t, "s")
	a, tokA := e.createSession(t, attach(st, ""))
	b, _ := e.createSession(t, attach(st, ""))
	e.call(t, "POST", "/v1/sessions/"+b["id"].(string)+"/tokens/"+a["token_id"].(string)+"/revoke", "").apiError(t, 404, "not_found_error")
	e.call(t, "POST", "/v1/sessions/sesn_nope/tokens/"+a["token_id"].(string)+"/revoke", "").apiError(t, 404, "not_found_error")
	e.ok(t, "GET", "/v1/memory_stores/"+st+"/memories", "", as(tokA))
	r := e.ok(t, "POST", "/v1/sessions/"+a["id"].(string)+"/tokens/"+a["token_id"].(string)+"/revoke", "")
	if r["revoked_at"] == nil {
		t.Errorf("revoked token %v", r)
	}
	e.call(t, "GET", "/v1/memory_stores/"+st+"/memories", "", as(tokA)).apiError(t, 401, "authentication_error")
}

// TestSessionTokenRefusalMessages: what a session token is refused is
// named in the message, the same whichever session the request names.
func TestSessionTokenRefusalMessages(t *testing.T) {
	e := newServerEnv(t, func(c *httpapi.Config) { c.AuthCacheTTL = -1 })
	st := e.createStore(t, "s")
	a, tokA := e.createSession(t, attach(st, ""))
	b, _ := e.createSession(t, attach(st, ""))
	const manage = "a session token cannot manage sessions; use an API key"
	for _, r := range []struct{ method, target, want string }{
		{"POST", "/v1/sessions/" + a["id"].(string) + "/tokens/" + a["token_id"].(string) + "/revoke", manage},
		{"POST", "/v1/sessions/" + b["id"].(string) + "/tokens/" + b["token_id"].(string) + "/revoke", manage},
		{"POST", "/v1/sessions/sesn_nope/tokens/sesntok_nope/revoke", manage},
		{"GET", "/v1/sessions/" + b["id"].(string), "a session token reaches only its own session (" + a["id"].(string) + ")"},
		{"GET", "/v1/memory_stores", "a session token cannot manage memory stores; use an API key"},
	} {
		e.call(t, r.method, r.target, "", as(tokA)).apiError(t, 403, "permission_error")
		got := e.call(t, r.method, r.target, "", as(tokA)).object(t)["error"].(map[string]any)["message"]
		if got != r.want {
			t.Errorf("%s %s: message %q, want %q", r.method, r.target, got, r.want)
		}
	}
	// The tokens are live still.
	if tok := e.ok(t, "GET", "/v1/sessions/"+b["id"].(string)+"/tokens", "")["data"].([]any)[0].(map[string]any); tok["revoked_at"] != nil {
		t.Errorf("token revoked by a refused request: %v", tok)
	}
}

// TestSessionDuration: stats.duration_seconds is the time since the
// session's creation while it is live, and stays at the time from its
// creation to its archiving once archived.
func TestSessionDuration(t *testing.T) {
	e := newServerEnv(t)
	s, _ := e.createSession(t, attach(e.createStore(t, "notes"), ""))
	id := s["id"].(string)
	stats := func(s map[string]any) (duration, active float64) {
		t.Helper()
		st, _ := s["stats"].(map[string]any)
		d, ok1 := st["duration_seconds"].(float64)
		a, ok2 := st["active_seconds"].(float64)
		if !ok1 || !ok2 {
			t.Fatalf("stats %v", s["stats"])
		}
		return d, a
	}
	at := func(s map[string]any, field string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339Nano, s[field].(string))
		if err != nil {
			t.Fatalf("%s: %v", field, err)
		}
		return v
	}
	created := at(s, "created_at")
	const pause = 300 * time.Millisecond
	time.Sleep(pause)
	before := time.Now()
	got := e.ok(t, "GET", "/v1/sessions/"+id, "")
	d, a := stats(got)
	if a != 0 || d < pause.Seconds() || d > time.Since(created).Seconds() || d < before.Sub(created).Seconds()-0.001 {
		t.Errorf("a live session %v after its creation: duration %v, active %v", before.Sub(created), d, a)
	}

	archived := e.ok(t, "POST", "/v1/sessions/"+id+"/archive", "")
	want := at(archived, "archived_at").Sub(created).Truncate(time.Millisecond).Seconds()
	if d, _ := stats(archived); d != want {
		t.Errorf("the archived session: duration %v, want %v (from creation to archiving)", d, want)
	}
	time.Sleep(pause)
	if d, _ := stats(e.ok(t, "GET", "/v1/sessions/"+id, "")); d != want {
		t.Errorf("the archived session later: duration %v, want it frozen at %v", d, want)
	}
}

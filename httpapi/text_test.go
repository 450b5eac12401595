package httpapi_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/syncbuf"
)

// A textEnv is a server on one backend with a key's workspace holding
// one of everything a route names: a store, a memory and its version, a
// session and its token, and a webhook endpoint; its log is kept.
type textEnv struct {
	h      *apiHarness
	ws     string // the workspace's ID
	secret string
	logs   *syncbuf.Buffer
	ids    map[string]string // by placeholder: STORE, MEM, VER, SESS, TOK, HOOK
}

func newTextEnv(t *testing.T, backend harnessBackend) *textEnv {
	e := &textEnv{logs: new(syncbuf.Buffer), ids: map[string]string{}}
	e.h = newAPIHarness(t, harnessOptions{backend: backend, configure: func(c *httpapi.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(e.logs, nil))
	}})
	ws, _, secret := e.h.newKey(t, "text")
	e.ws, e.secret = ws.ID, secret
	id := func(status int, body []byte) string {
		t.Helper()
		var v struct {
			ID        string `json:"id"`
			VersionID string `json:"memory_version_id"`
			TokenID   string `json:"token_id"`
		}
		if status != 200 || json.Unmarshal(body, &v) != nil || v.ID == "" {
			t.Fatalf("setting up: %d %s", status, body)
		}
		if v.VersionID != "" {
			e.ids["VER"] = v.VersionID
		}
		if v.TokenID != "" {
			e.ids["TOK"] = v.TokenID
		}
		return v.ID
	}
	e.ids["STORE"] = id(e.send(t, "POST", "/v1/memory_stores", `{"name":"notes"}`))
	e.ids["MEM"] = id(e.send(t, "POST", "/v1/memory_stores/"+e.ids["STORE"]+"/memories", `{"path":"/a.md","content":"alpha"}`))
	e.ids["SESS"] = id(e.send(t, "POST", "/v1/sessions", `{"agent":"agent_1","resources":[{"type":"memory_store","memory_store_id":"`+e.ids["STORE"]+`"}]}`))
	e.ids["HOOK"] = id(e.send(t, "POST", "/v1/organizations/webhooks", `{"url":"http://127.0.0.1:9/h","enabled_events":["memory_store.created"]}`))
	if e.ids["VER"] == "" || e.ids["TOK"] == "" {
		t.Fatalf("setting up: no version or token in %v", e.ids)
	}
	return e
}

// send makes a request as the SDKs do and returns the status and body.
func (e *textEnv) send(t *testing.T, method, target, body string) (int, []byte) {
	t.Helper()
	for k, v := range e.ids {
		target = strings.ReplaceAll(target, k, v)
		body = strings.ReplaceAll(body, k, v)
	}
	res := sendAPI(t, e.h.srv, e.secret, memoryBeta, method, target, body)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// wantRefused sends a request and wants a 400 invalid_request_error
// whose message matches want (naming what is wrong), and no error in the
// log.
func (e *textEnv) wantRefused(t *testing.T, method, target, body, want string) {
	t.Helper()
	status, b := e.send(t, method, target, body)
	var env struct {
		Error struct{ Type, Message string }
	}
	json.Unmarshal(b, &env)
	if status != 400 || env.Error.Type != "invalid_request_error" || !regexp.MustCompile(want).MatchString(env.Error.Message) {
		t.Errorf("%s %s %s: %d %s; want 400 saying %s", method, target, body, status, b, want)
	}
	if strings.Contains(e.logs.String(), `"level":"ERROR"`) {
		t.Fatalf("%s %s %s: an error was logged: %s", method, target, body, e.logs.String())
	}
}

// The spellings of bad text in a URL: NUL alone and inside an ID, and
// bytes that are not UTF-8.
var badInURL = []string{"%00", "memstore_%00x", "%FF", "mem%C3%28"}

// TestBadTextInURLsRefused walks every route with NUL and invalid UTF-8
// in each ID of its path and each text parameter of its query, on both
// backends: each is a 400 that says what is wrong, never a 500 with an
// error in the log.
func TestBadTextInURLsRefused(t *testing.T) {
	onEachBackend(t, func(t *testing.T, backend harnessBackend) {
		e := newTextEnv(t, backend)
		routes := []struct{ method, path, body string }{
			{"GET", "/v1/memory_stores/STORE", ""},
			{"POST", "/v1/memory_stores/STORE", `{"name":"n"}`},
			{"DELETE", "/v1/memory_stores/STORE", ""},
			{"POST", "/v1/memory_stores/STORE/archive", ""},
			{"POST", "/v1/memory_stores/STORE/memories", `{"path":"/b.md","content":"b"}`},
			{"GET", "/v1/memory_stores/STORE/memories", ""},
			{"GET", "/v1/memory_stores/STORE/memories/MEM", ""},
			{"POST", "/v1/memory_stores/STORE/memories/MEM", `{"content":"c"}`},
			{"DELETE", "/v1/memory_stores/STORE/memories/MEM", ""},
			{"GET", "/v1/memory_stores/STORE/memory_versions", ""},
			{"GET", "/v1/memory_stores/STORE/memory_versions/VER", ""},
			{"POST", "/v1/memory_stores/STORE/memory_versions/VER/redact", ""},
			{"GET", "/v1/memory_stores/STORE/memories/search?q=alpha", ""},
			{"GET", "/v1/sessions/SESS", ""},
			{"POST", "/v1/sessions/SESS", `{"title":"t"}`},
			{"DELETE", "/v1/sessions/SESS", ""},
			{"POST", "/v1/sessions/SESS/archive", ""},
			{"GET", "/v1/sessions/SESS/resources", ""},
			{"POST", "/v1/sessions/SESS/resources", `{"type":"memory_store","memory_store_id":"STORE"}`},
			{"GET", "/v1/sessions/SESS/resources/STORE", ""},
			{"POST", "/v1/sessions/SESS/resources/STORE", `{"access":"read_only"}`},
			{"DELETE", "/v1/sessions/SESS/resources/STORE", ""},
			{"POST", "/v1/sessions/SESS/tokens", `{}`},
			{"GET", "/v1/sessions/SESS/tokens", ""},
			{"POST", "/v1/sessions/SESS/tokens/TOK/revoke", ""},
			{"GET", "/v1/sessions/SESS/memory_prompt", ""},
			{"GET", "/v1/sessions/SESS/memories/search?q=alpha", ""},
			{"GET", "/v1/organizations/webhooks/HOOK", ""},
			{"POST", "/v1/organizations/webhooks/HOOK", `{"name":"n"}`},
			{"DELETE", "/v1/organizations/webhooks/HOOK", ""},
			{"POST", "/v1/organizations/webhooks/HOOK/regenerate_signing_secret", ""},
			{"GET", "/v1/organizations/webhooks/HOOK/deliveries", ""},
		}
		// What each message names: the ID at fault, and what an ID is.
		names := map[string]string{"STORE": "(memory_store_id|resource_id)", "MEM": "memory_id", "VER": "memory_version_id",
			"SESS": "session_id", "TOK": "token_id", "HOOK": "webhook_endpoint_id"}
		for _, r := range routes {
			for ph, name := range names {
				if !strings.Contains(r.path, ph) {
					continue
				}
				for _, bad := range badInURL {
					e.wantRefused(t, r.method, strings.Replace(r.path, ph, bad, 1), r.body, "^"+name+` ".*" is not an ID: an ID is UTF-8 text without NUL characters$`)
				}
			}
		}
		// What each message names: the parameter, or what it is.
		says := map[string]string{"page": `^page ".*" is not a cursor of this (list|search)`, "after": "is not a cursor of the events",
			"q": "^the search query is not valid UTF-8$", "path_prefix": "^path_prefix (is not valid UTF-8|holds a NUL character)"}
		queries := []struct{ path, params string }{
			{"/v1/memory_stores", "page"},
			{"/v1/memory_stores/STORE/memories", "page path_prefix"},
			{"/v1/memory_stores/STORE/memory_versions", "page memory_id session_id api_key_id service_account_id"},
			{"/v1/memory_stores/STORE/memories/search", "q path_prefix page"},
			{"/v1/sessions", "page memory_store_id agent_id"},
			{"/v1/sessions/SESS/tokens", "page"},
			{"/v1/sessions/SESS/resources", "page"},
			{"/v1/sessions/SESS/memories/search", "q path_prefix page"},
			{"/v1/organizations/webhooks", "after_id before_id"},
			{"/v1/memory_stores/STORE/events", "after"},
		}
		for _, q := range queries {
			for _, name := range strings.Fields(q.params) {
				for _, bad := range badInURL {
					if name == "q" && strings.Contains(bad, "%00") {
						continue // searched as a space, below
					}
					v := url.Values{}
					if name != "q" && strings.HasSuffix(q.path, "/search") {
						v.Set("q", "alpha")
					}
					target := q.path + "?" + v.Encode()
					want, ok := says[name]
					if !ok {
						want = "^" + regexp.QuoteMeta(name) + ` ".*" is not an ID`
					}
					if name == "path_prefix" {
						bad = "/" + bad
					}
					e.wantRefused(t, "GET", target+"&"+name+"="+bad, "", want)
				}
			}
		}
		// A search's text may hold NUL, searched as a space, on both.
		for _, path := range []string{"/v1/memory_stores/STORE/memories/search?q=alpha%00", "/v1/sessions/SESS/memories/search?q=%00alpha"} {
			if status, b := e.send(t, "GET", path, ""); status != 200 || !strings.Contains(string(b), `"/a.md"`) {
				t.Errorf("GET %s: %d %s; want the memory found", path, status, b)
			}
		}
	})
}

// TestBadTextInBodiesRefused sends NUL (the JSON escape \u0000) and
// unpaired surrogates in each name, ID, metadata pair and kept field of
// the bodies that create and change things, on both backends: each is a
// 400 that says what is wrong, and nothing is made or changed.
func TestBadTextInBodiesRefused(t *testing.T) {
	onEachBackend(t, func(t *testing.T, backend harnessBackend) {
		e := newTextEnv(t, backend)
		const hookURL = `"url":"http://127.0.0.1:9/h","enabled_events":["memory_store.created"]`
		for _, tc := range []struct{ method, path, body, want string }{
			{"POST", "/v1/memory_stores", `{"name":"a\u0000b"}`, "^name must not contain control characters$"},
			{"POST", "/v1/memory_stores", `{"name":"n","metadata":{"k\u0000":"v"}}`, `^metadata key "k\\x00" holds a NUL character`},
			{"POST", "/v1/memory_stores", `{"name":"n","metadata":{"k":"v\u0000"}}`, `^metadata value of "k" holds a NUL character`},
			{"POST", "/v1/memory_stores/STORE", `{"metadata":{"k":"\u0000"}}`, `^metadata value of "k" holds a NUL character`},
			{"POST", "/v1/memory_stores/STORE", `{"name":"\u0000"}`, "^name must not contain control characters$"},
			{"POST", "/v1/memory_stores/STORE/memories", `{"path":"/a\u0000.md","content":"x"}`, "control or format character"},
			{"POST", "/v1/sessions", `{"metadata":{"k":"\u0000"}}`, `^metadata value of "k" holds a NUL character`},
			{"POST", "/v1/sessions", `{"agent":"\u0000"}`, `^"agent" holds the escape \\u0000`},
			{"POST", "/v1/sessions", `{"agent":{"id":"agent_1","name":"a\u0000"}}`, `^"agent" holds the escape \\u0000`},
			{"POST", "/v1/sessions", `{"agent":"agent_1","environment_id":"\\\u0000"}`, `^"environment_id" holds the escape \\u0000`},
			{"POST", "/v1/sessions", `{"environment_id":"\ud800"}`, `lone UTF-16 surrogate escape \\ud800`},
			{"POST", "/v1/sessions", `{"environment_id":"\udc00\ud800"}`, `lone UTF-16 surrogate escape \\udc00`},
			{"POST", "/v1/sessions", `{"a\u0000b":1}`, `^the name of the field "a\\x00b" holds a NUL character`},
			{"POST", "/v1/sessions", `{"resources":[{"type":"memory_store","memory_store_id":"\u0000"}]}`, `^resources\[0\]\.memory_store_id "\\x00" is not an ID`},
			{"POST", "/v1/sessions/SESS", `{"metadata":{"k":"\u0000"}}`, `^metadata value of "k" holds a NUL character`},
			{"POST", "/v1/sessions/SESS", `{"agent":"\u0000"}`, `^"agent" holds the escape \\u0000`},
			{"POST", "/v1/sessions/SESS/resources", `{"type":"memory_store","memory_store_id":"x\u0000"}`, `^memory_store_id "x\\x00" is not an ID`},
			{"POST", "/v1/organizations/webhooks", `{"url":"http://127.0.0.1:9/\u0000","enabled_events":["memory_store.created"]}`, "^url holds a NUL character"},
			{"POST", "/v1/organizations/webhooks", `{"name":"\u0000",` + hookURL + `}`, "^name holds a NUL character"},
			{"POST", "/v1/organizations/webhooks", `{"description":"d\u0000",` + hookURL + `}`, "^description holds a NUL character"},
			{"POST", "/v1/organizations/webhooks/HOOK", `{"name":"\u0000"}`, "^name holds a NUL character"},
			{"POST", "/v1/organizations/webhooks/HOOK", `{"url":"http://127.0.0.1:9/\u0000"}`, "^url holds a NUL character"},
		} {
			e.wantRefused(t, tc.method, tc.path, tc.body, tc.want)
		}
		// Nothing was made or changed.
		for _, l := range []string{"/v1/memory_stores", "/v1/sessions", "/v1/organizations/webhooks"} {
			_, b := e.send(t, "GET", l, "")
			if n := strings.Count(string(b), `"created_at"`); n != 1 {
				t.Errorf("GET %s lists %d, want the one made before: %s", l, n, b)
			}
		}
		_, b := e.send(t, "GET", "/v1/memory_stores/STORE", "")
		if strings.Contains(string(b), `"k"`) || !strings.Contains(string(b), `"notes"`) {
			t.Errorf("the store changed: %s", b)
		}
		// A backslash before u0000 that is itself escaped is no NUL.
		status, b := e.send(t, "POST", "/v1/sessions", `{"environment_id":"\\u0000","agent":"agent_2","title":"\\u0000"}`)
		if status != 200 || !strings.Contains(string(b), `"environment_id":"\\u0000"`) {
			t.Errorf("an escaped backslash before u0000: %d %s", status, b)
		}
	})
}

// TestUnreadableKeptFieldsListByAgent: a session whose kept fields hold
// what PostgreSQL's JSON functions cannot read (\u0000, an unpaired
// surrogate), kept before memstore refused them, does not fail the
// workspace's lists by agent: it matches none, and the others are
// listed, on both backends.
func TestUnreadableKeptFieldsListByAgent(t *testing.T) {
	onEachBackend(t, func(t *testing.T, backend harnessBackend) {
		e := newTextEnv(t, backend)
		for _, fields := range []string{`{"agent":"agent_1","environment_id":"\u0000"}`, `{"agent":"agent_1","x":"\udc00"}`,
			`{"agent":{"id":"agent_1","name":"\u0000"}}`, `{"agent":"\u0000"}`} {
			var f map[string]json.RawMessage
			if err := json.Unmarshal([]byte(fields), &f); err != nil {
				t.Fatal(err)
			}
			// Straight to the backend, as an older memstore kept them.
			err := e.h.DB.WriteSessions(t.Context(), e.ws, func(tx memstore.SessionTx) error {
				now := e.h.DB.Now()
				return tx.CreateSession(&memstore.Session{WorkspaceID: e.ws, Metadata: map[string]string{}, Fields: f, CreatedAt: now, UpdatedAt: now})
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		status, b := e.send(t, "GET", "/v1/sessions?agent_id=agent_1", "")
		var page struct {
			Data []struct{ ID string } `json:"data"`
		}
		if status != 200 || json.Unmarshal(b, &page) != nil || len(page.Data) < 1 || page.Data[len(page.Data)-1].ID != e.ids["SESS"] {
			t.Errorf("GET /v1/sessions?agent_id=agent_1: %d %s; want the session made through the API", status, b)
		}
		if strings.Contains(e.logs.String(), `"level":"ERROR"`) {
			t.Errorf("an error was logged: %s", e.logs.String())
		}
	})
}

package httpapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

func TestSearchEndpoints(t *testing.T) {
	e := newServerEnv(t)
	a, b, c := e.createStore(t, "a"), e.createStore(t, "b"), e.createStore(t, "c")
	e.createMemory(t, a, "/deploy.md", "The deploy runs on Fridays with the blue-green switch.")
	e.createMemory(t, b, "/notes/deploys.md", "Deploying needs the release checklist.")
	e.createMemory(t, c, "/deploy.md", "Not attached: never found through the session.")
	e.createMemory(t, a, "/other.md", "Unrelated text about lunch.")

	page := e.ok(t, "GET", "/v1/memory_stores/"+a+"/memories/search?q=deploy", "")
	data := page["data"].([]any)
	if len(data) != 1 || page["next_page"] != nil {
		t.Fatalf("search %v", page)
	}
	hit := data[0].(map[string]any)
	wantKeys(t, hit, "type", "memory", "score", "snippet")
	mem := hit["memory"].(map[string]any)
	if hit["type"] != "memory_search_result" || mem["path"] != "/deploy.md" || mem["content"] != nil || hit["snippet"] == "" {
		t.Errorf("hit %v", hit)
	}

	s, tok := e.createSession(t, attach(a, ""), attach(b, "read_only"))
	sid := s["id"].(string)
	for _, edit := range [][]func(*http.Request){nil, {as(tok)}} {
		got := e.ok(t, "GET", "/v1/sessions/"+sid+"/memories/search?q=deploy&limit=10", "", edit...)["data"].([]any)
		var stores []string
		for _, h := range got {
			stores = append(stores, h.(map[string]any)["memory"].(map[string]any)["memory_store_id"].(string))
		}
		if len(got) != 2 || strings.Contains(strings.Join(stores, " "), c) {
			t.Errorf("session search found %v", stores)
		}
	}
	e.call(t, "GET", "/v1/memory_stores/"+c+"/memories/search?q=deploy", "", as(tok)).apiError(t, 403, "permission_error")

	for _, q := range []string{"", "?q=", "?q=%20%20", "?q=x&limit=0", "?q=x&limit=101", "?q=x&path_prefix=notes", "?q=x&conversation=maybe"} {
		e.call(t, "GET", "/v1/memory_stores/"+a+"/memories/search"+q, "").apiError(t, 400, "invalid_request_error")
	}
	e.call(t, "GET", "/v1/memory_stores/memstore_nope/memories/search?q=x", "").apiError(t, 404, "not_found_error")
	// mode: an unknown one names the three; semantic and hybrid on a
	// server without an embedding model say how to configure one.
	for q, want := range map[string]string{"?q=x&mode=fuzzy": "lexical, semantic or hybrid", "?q=x&mode=semantic": "--embed-url", "?q=x&mode=hybrid": "--embed-url"} {
		msg := e.call(t, "GET", "/v1/memory_stores/"+a+"/memories/search"+q, "").apiError(t, 400, "invalid_request_error")["message"].(string)
		if !strings.Contains(msg, want) {
			t.Errorf("%s: %q, want it to say %q", q, msg, want)
		}
	}
	if got := e.ok(t, "GET", "/v1/memory_stores/"+a+"/memories/search?q=deploy&mode=lexical", "")["data"].([]any); len(got) != 1 {
		t.Errorf("mode=lexical found %d memories; want 1", len(got))
	}
	// conversation=true is a search of its own: a plain search's cursor
	// does not continue it.
	e.createMemory(t, a, "/chat/0002.md", "Ana: the deploy went out.")
	first := e.ok(t, "GET", "/v1/memory_stores/"+a+"/memories/search?q=deploy&limit=1", "")
	next, _ := first["next_page"].(string)
	if next == "" {
		t.Fatalf("two matches, a page of one: no next page in %v", first)
	}
	e.call(t, "GET", "/v1/memory_stores/"+a+"/memories/search?q=deploy&limit=1&conversation=true&page="+next, "").apiError(t, 400, "invalid_request_error")
	if got := e.ok(t, "GET", "/v1/memory_stores/"+a+"/memories/search?q=deploy&conversation=true", "")["data"].([]any); len(got) != 2 {
		t.Errorf("conversation=true found %d memories; want 2", len(got))
	}
}

// TestClientSearch searches through the Go client: one store with a key,
// and every store of a session with its token.
func TestClientSearch(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	ws, _, secret := h.newKey(t, "w")
	c := h.client(secret)
	ctx := t.Context()
	a, err := c.CreateStore(ctx, nil, memstore.StoreCreate{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.CreateStore(ctx, nil, memstore.StoreCreate{Name: "b"})
	other, _ := c.CreateStore(ctx, nil, memstore.StoreCreate{Name: "other"})
	for _, m := range []struct{ store, path string }{{a.ID, "/one.md"}, {b.ID, "/two.md"}, {other.ID, "/three.md"}} {
		if _, err := c.CreateMemory(ctx, nil, m.store, memstore.MemoryCreate{Path: m.path, Content: "the quarterly roadmap review"}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := c.SearchMemories(ctx, nil, []string{a.ID}, memstore.SearchQuery{Text: "roadmap"})
	if err != nil || len(page.Items) != 1 || page.Items[0].Memory.Path != "/one.md" || page.Items[0].Memory.StoreID != a.ID || page.Items[0].Snippet == "" {
		t.Fatalf("one store: %+v %v", page, err)
	}
	if _, err := c.SearchMemories(ctx, nil, []string{a.ID, b.ID}, memstore.SearchQuery{Text: "roadmap"}); memstore.ErrorCode(err) != memstore.EInvalid {
		t.Errorf("several stores without a session: %v", err)
	}
	if _, err := c.SearchMemories(ctx, nil, []string{a.ID}, memstore.SearchQuery{Text: "  "}); memstore.ErrorCode(err) != memstore.EInvalid {
		t.Errorf("empty query: %v", err)
	}

	s, _, token, err := c.CreateSession(ctx, nil, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: a.ID}, {StoreID: b.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	agent := h.client(token)
	caller, err := agent.AuthenticateSession(ctx, token)
	if err != nil || caller.Session.ID != s.ID || caller.WorkspaceID != ws.ID || caller.Actor.Type != memstore.ActorSession {
		t.Fatalf("AuthenticateSession: %+v %v", caller, err)
	}
	agent.Caller = caller
	page, err = agent.SearchMemories(ctx, nil, []string{a.ID, b.ID}, memstore.SearchQuery{Text: "roadmap"})
	var paths []string
	for _, r := range page.Items {
		paths = append(paths, r.Memory.Path)
	}
	slices.Sort(paths)
	if err != nil || !slices.Equal(paths, []string{"/one.md", "/two.md"}) {
		t.Errorf("the session's stores: %v %v", paths, err)
	}
	if _, err := c.AuthenticateSession(ctx, secret); memstore.ErrorCode(err) != memstore.EUnauthenticated {
		t.Errorf("an API key authenticated as a session: %v", err)
	}
}

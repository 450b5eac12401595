package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

var (
	sessionSecretRE = regexp.MustCompile(`<pre id="secret">(st-memstore-[^<]+)</pre>`)
	keySecretRE     = regexp.MustCompile(`<pre id="secret">(sk-memstore-[^<]+)</pre>`)
	tokenFormRE     = regexp.MustCompile(`action="/console/sessions/[^/]+/tokens/([^/]+)/revoke"`)
)

// TestSessionsPages: an admin makes a session of a store, read-only with
// instructions, and is shown its token once with the snippets that
// connect an agent; the token reaches the store; another token is
// minted and revoked; archiving stops the first. An auditor reads the
// pages and changes nothing; a member sees none of it.
func TestSessionsPages(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "x")
	admin := f.signIn(t, "admin")
	_, page := f.get(t, admin, "/console/sessions/new")
	resp, body := f.post(t, admin, "/console/sessions", f.srv.URL, url.Values{"csrf": {csrfOf(t, page)}, "title": {"Nightly digest"},
		"store": {f.storeID}, "access." + f.storeID: {"read_only"}, "instructions." + f.storeID: {"Read the style guide."}})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create session: %d %s", resp.StatusCode, body)
	}
	m := sessionSecretRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no token shown: %s", body)
	}
	secret := m[1]
	for _, want := range []string{
		`claude mcp add --transport http memstore ` + f.srv.URL + `/mcp --header &#34;Authorization: Bearer ` + secret + `&#34;`,
		`&#34;args&#34;: [&#34;mcp&#34;, &#34;--url&#34;, &#34;` + f.srv.URL + `&#34;]`,
		`MEMSTORE_TOKEN=` + secret + ` memstore mcp --url ` + f.srv.URL,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the token page lacks %s", want)
		}
	}
	c, err := f.core.AuthenticateSession(ctx, secret)
	if err != nil {
		t.Fatalf("the shown token does not work: %v", err)
	}
	if err := c.CanRead(f.storeID); err != nil {
		t.Errorf("the session cannot read its store: %v", err)
	}
	if err := c.CanWrite(f.storeID); err == nil {
		t.Error("a read-only attachment allows writes")
	}
	list := mustGet(t, f, admin, "/console/sessions?status=idle")
	if !strings.Contains(list, "Nightly digest") || !strings.Contains(list, "read_only") {
		t.Errorf("the list lacks the session: %s", list)
	}
	if ended := mustGet(t, f, admin, "/console/sessions?status=terminated"); strings.Contains(ended, "Nightly digest") {
		t.Error("the terminated filter lists an idle session")
	}
	if resp, _ := f.get(t, admin, "/console/sessions?status=bogus"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad status filter: %d, want 400", resp.StatusCode)
	}
	id := c.Session.ID
	spage := mustGet(t, f, admin, "/console/sessions/"+id)
	if !strings.Contains(spage, "Read the style guide.") || !strings.Contains(spage, "/mnt/memory/") {
		t.Errorf("the session page lacks the attachment: %s", spage)
	}

	// Another token, then revoked.
	resp, body = f.post(t, admin, "/console/sessions/"+id+"/tokens", f.srv.URL, url.Values{"csrf": {csrfOf(t, spage)}})
	m2 := sessionSecretRE.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusCreated || m2 == nil || m2[1] == secret {
		t.Fatalf("mint: %d %s", resp.StatusCode, body)
	}
	if _, err := f.core.AuthenticateSession(ctx, m2[1]); err != nil {
		t.Fatalf("the minted token does not work: %v", err)
	}
	spage = mustGet(t, f, admin, "/console/sessions/"+id)
	forms := tokenFormRE.FindAllStringSubmatch(spage, -1)
	if len(forms) != 2 {
		t.Fatalf("want 2 revoke buttons, got %v", forms)
	}
	second := ""
	for _, fm := range forms {
		if tok, _ := f.core.SessionToken(ctx, f.op, fm[1]); tok != nil && tok.Hint == memstore.SecretHint(m2[1]) {
			second = fm[1]
		}
	}
	resp, _ = f.post(t, admin, "/console/sessions/"+id+"/tokens/"+second+"/revoke", f.srv.URL, url.Values{"csrf": {csrfOf(t, spage)}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	if _, err := f.core.AuthenticateSession(ctx, m2[1]); memstore.ErrorCode(err) != memstore.EUnauthenticated {
		t.Errorf("a revoked token still works: %v", err)
	}
	if _, err := f.core.AuthenticateSession(ctx, secret); err != nil {
		t.Errorf("revoking one token stopped another: %v", err)
	}

	// An auditor reads, and is refused every change.
	auditor := f.signIn(t, "auditor")
	apage := mustGet(t, f, auditor, "/console/sessions/"+id)
	for _, path := range []string{"/console/sessions/" + id + "/tokens", "/console/sessions/" + id + "/archive", "/console/sessions"} {
		if resp, _ := f.post(t, auditor, path, f.srv.URL, url.Values{"csrf": {csrfOf(t, apage)}, "title": {"x"}}); resp.StatusCode != http.StatusForbidden {
			t.Errorf("auditor POST %s: %d, want 403", path, resp.StatusCode)
		}
	}
	if resp, _ := f.get(t, auditor, "/console/sessions/new"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("auditor's new session form: %d, want 403", resp.StatusCode)
	}
	member := f.signIn(t, "member")
	if resp, _ := f.get(t, member, "/console/sessions"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("member's sessions list: %d, want 403", resp.StatusCode)
	}

	// Archiving stops every token.
	resp, _ = f.post(t, admin, "/console/sessions/"+id+"/archive", f.srv.URL, url.Values{"csrf": {csrfOf(t, spage)}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("archive: %d", resp.StatusCode)
	}
	if _, err := f.core.AuthenticateSession(ctx, secret); memstore.ErrorCode(err) != memstore.EUnauthenticated {
		t.Errorf("an archived session's token still works: %v", err)
	}
}

// TestSessionCreateInvalid: a session of an unknown store is refused with
// the core's reason on the form, and makes nothing.
func TestSessionCreateInvalid(t *testing.T) {
	f := newFixture(t, "x")
	admin := f.signIn(t, "admin")
	_, page := f.get(t, admin, "/console/sessions/new")
	resp, body := f.post(t, admin, "/console/sessions", f.srv.URL, url.Values{"csrf": {csrfOf(t, page)}, "title": {"t"},
		"store": {f.storeID}, "access." + f.storeID: {"sideways"}})
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `id="error"`) || strings.Contains(body, "st-memstore-") {
		t.Fatalf("bad access: %d %s", resp.StatusCode, body)
	}
	p, err := f.core.Sessions(context.Background(), f.op, memstore.SessionFilter{Limit: 10, IncludeArchived: true})
	if err != nil || len(p.Items) != 0 {
		t.Errorf("a refused form made sessions: %+v %v", p.Items, err)
	}
}

// TestKeysPage: an admin makes a key, shown once, that works, and
// revokes it; an auditor sees the list and no form, and is refused both.
func TestKeysPage(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "x")
	admin := f.signIn(t, "admin")
	page := mustGet(t, f, admin, "/console/keys")
	resp, body := f.post(t, admin, "/console/keys", f.srv.URL, url.Values{"csrf": {csrfOf(t, page)}, "name": {"ci"}})
	m := keySecretRE.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusCreated || m == nil {
		t.Fatalf("create key: %d %s", resp.StatusCode, body)
	}
	c, err := f.core.Authenticate(ctx, m[1])
	if err != nil {
		t.Fatalf("the new key does not work: %v", err)
	}
	if strings.Contains(mustGet(t, f, admin, "/console/keys"), m[1]) {
		t.Error("the secret is shown again")
	}
	auditor := f.signIn(t, "auditor")
	apage := mustGet(t, f, auditor, "/console/keys")
	if !strings.Contains(apage, c.Actor.ID) || strings.Contains(apage, `id="create-key"`) || strings.Contains(apage, "/revoke") {
		t.Errorf("auditor's keys page: %s", apage)
	}
	for _, path := range []string{"/console/keys", "/console/keys/" + c.Actor.ID + "/revoke"} {
		if resp, _ := f.post(t, auditor, path, f.srv.URL, url.Values{"csrf": {csrfOf(t, apage)}, "name": {"x"}}); resp.StatusCode != http.StatusForbidden {
			t.Errorf("auditor POST %s: %d, want 403", path, resp.StatusCode)
		}
	}
	if _, err := f.core.Authenticate(ctx, m[1]); err != nil {
		t.Fatalf("an auditor's refused revoke stopped the key: %v", err)
	}
	resp, _ = f.post(t, admin, "/console/keys/"+c.Actor.ID+"/revoke", f.srv.URL, url.Values{"csrf": {csrfOf(t, page)}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	if _, err := f.core.Authenticate(ctx, m[1]); memstore.ErrorCode(err) != memstore.EUnauthenticated {
		t.Errorf("a revoked key still works: %v", err)
	}
	member := f.signIn(t, "member")
	if resp, _ := f.get(t, member, "/console/keys"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("member's keys page: %d, want 403", resp.StatusCode)
	}

	// Revoked keys stay listed, so the list is paged: the page after a
	// full one holds the rest.
	var last string
	for i := range 50 {
		k, _, err := f.core.CreateAPIKey(ctx, f.op.WorkspaceID, fmt.Sprint("key ", i))
		if err != nil {
			t.Fatal(err)
		}
		last = k.ID
	}
	first := mustGet(t, f, admin, "/console/keys")
	next := nextPageRE.FindStringSubmatch(first)
	if next == nil || strings.Contains(first, last) || !strings.Contains(first, c.Actor.ID) {
		t.Fatalf("the first of two pages of keys: next %v, holds the 51st %v", next, strings.Contains(first, last))
	}
	if second := mustGet(t, f, admin, "/console/keys?page="+next[1]); !strings.Contains(second, last) || nextPageRE.MatchString(second) || strings.Contains(second, c.Actor.ID) {
		t.Errorf("the second page of keys: %s", second)
	}
}

// nextPageRE finds a page's link to the next and its cursor.
var nextPageRE = regexp.MustCompile(`rel="next" href="/console/keys\?page=([^"&]+)"`)

func mustGet(t *testing.T, f *fixture, c *http.Client, path string) string {
	t.Helper()
	resp, body := f.get(t, c, path)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	return body
}

package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/console"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

const password = "correct horse battery"

// fixture is a console over a real SQLite database, with a store, a
// memory and one user of each role.
type fixture struct {
	srv     *httptest.Server
	storeID string
	memID   string
	core    *memstore.Core
	op      *memstore.Caller // an API key's caller, as an agent writes
	db      *sqlite.DB
	h       *console.Handler
}

// openCore opens a database over a fresh SQLite file, closed with tb, and
// returns it with its core, its users, and the caller of an API key
// keyID of its default workspace.
func openCore(tb testing.TB, keyID string) (*sqlite.DB, *memstore.Core, *memstore.Users, *memstore.Caller) {
	tb.Helper()
	db := sqlitetest.Open(tb, sqlite.Options{})
	ws := sqlitetest.Workspace(tb, db, "default")
	op := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: keyID}}
	return db, memstore.NewCore(db), memstore.NewUsers(db), op
}

// agentSession makes a session titled "Night agent" attaching f's store,
// and returns it with the caller of its token.
func (f *fixture) agentSession(t *testing.T) (*memstore.Session, *memstore.Caller) {
	t.Helper()
	ses, _, secret, err := f.core.CreateSession(t.Context(), f.op, memstore.SessionCreate{Title: "Night agent",
		Stores: []memstore.AttachmentCreate{{StoreID: f.storeID}}})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := f.core.AuthenticateSession(t.Context(), secret)
	if err != nil {
		t.Fatal(err)
	}
	return ses, agent
}

// newFixture's opts change the console's configuration.
func newFixture(t *testing.T, content string, opts ...func(*console.Config)) *fixture {
	t.Helper()
	ctx := context.Background()
	db, core, users, op := openCore(t, "apikey_test")
	for _, r := range memstore.Roles {
		if _, err := users.CreateUser(ctx, op, memstore.UserCreate{Name: string(r), Role: r, Password: password}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := core.CreateStore(ctx, op, memstore.StoreCreate{Name: "Notes"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := core.CreateMemory(ctx, op, s.ID, memstore.MemoryCreate{Path: "/prefs/style.md", Content: content})
	if err != nil {
		t.Fatal(err)
	}
	cfg := console.Config{Stores: core, Memories: core, Versions: core, Search: core, Sessions: core, Activity: core, Keys: memstore.NewKeys(core), Users: users,
		Webhooks: memstore.NewWebhooks(db, memstore.WebhooksAllowPrivate(true))}
	for _, o := range opts {
		o(&cfg)
	}
	h := console.New(cfg)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &fixture{srv: srv, storeID: s.ID, memID: m.ID, core: core, op: op, db: db, h: h}
}

// client is a browser-like client: a cookie jar, no redirects followed,
// and the Origin of the console on every POST unless told otherwise.
func (f *fixture) client(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (f *fixture) post(t *testing.T, c *http.Client, path, origin string, form url.Values) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	return do(t, c, req)
}

func (f *fixture) get(t *testing.T, c *http.Client, path string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+path, nil)
	return do(t, c, req)
}

func do(t *testing.T, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (f *fixture) signIn(t *testing.T, name string) *http.Client {
	t.Helper()
	c := f.client(t)
	resp, body := f.post(t, c, "/console/signin", f.srv.URL, url.Values{"workspace": {"default"}, "name": {name}, "password": {password}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in as %s: %d %s", name, resp.StatusCode, body)
	}
	return c
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, body string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token in %s", body)
	}
	return m[1]
}

// TestHeaders: every response, a refusal or a static file too, carries
// the security headers.
func TestHeaders(t *testing.T) {
	f := newFixture(t, "x")
	c := f.client(t)
	for _, path := range []string{"/console/signin", "/console/stores", "/console/static/console.css", "/console/nope"} {
		resp, _ := f.get(t, c, path)
		for k, want := range map[string]string{
			"Content-Security-Policy": wantCSP(t),
			"X-Frame-Options":         "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin",
		} {
			if got := resp.Header.Get(k); got != want {
				t.Errorf("GET %s: %s = %q, want %q", path, k, got, want)
			}
		}
	}
	resp, body := f.get(t, c, "/console/signin")
	if resp.StatusCode != 200 || strings.Contains(body, "<script") || strings.Contains(body, "style=") {
		t.Errorf("sign-in page: %d, inline script or style:\n%s", resp.StatusCode, body)
	}
}

func TestSignIn(t *testing.T) {
	f := newFixture(t, "x")
	c := f.client(t)
	resp, _ := f.get(t, c, "/console/stores")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/console/signin") {
		t.Errorf("stores signed out: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body := f.post(t, c, "/console/signin", f.srv.URL, url.Values{"workspace": {"default"}, "name": {"admin"}, "password": {"wrong password"}})
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "wrong workspace, user name or password") || len(resp.Cookies()) != 0 {
		t.Errorf("wrong password: %d %v\n%s", resp.StatusCode, resp.Cookies(), body)
	}
	resp, _ = f.post(t, c, "/console/signin", f.srv.URL, url.Values{"workspace": {"default"}, "name": {"admin"}, "password": {password}})
	var ck *http.Cookie
	for _, k := range resp.Cookies() {
		ck = k
	}
	if resp.StatusCode != http.StatusSeeOther || ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" ||
		!strings.HasPrefix(ck.Value, memstore.SignInSecretPrefix) {
		t.Fatalf("sign in: %d, cookie %+v", resp.StatusCode, ck)
	}
	if got := resp.Header.Get("Location"); got != "/console/" {
		t.Errorf("signed in to %q, want the home page /console/", got)
	}
	resp, body = f.get(t, c, "/console/stores")
	if resp.StatusCode != 200 || !strings.Contains(body, "Notes") {
		t.Fatalf("stores: %d\n%s", resp.StatusCode, body)
	}
	// Sign out needs the token; then the session is gone for good.
	resp, _ = f.post(t, c, "/console/signout", f.srv.URL, url.Values{})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("sign out without the CSRF token: %d", resp.StatusCode)
	}
	resp, _ = f.post(t, c, "/console/signout", f.srv.URL, url.Values{"csrf": {csrfOf(t, body)}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("sign out: %d", resp.StatusCode)
	}
	// The old cookie, replayed, no longer works.
	c2 := f.client(t)
	u, _ := url.Parse(f.srv.URL)
	c2.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: ck.Value, Path: "/"}})
	if resp, _ := f.get(t, c2, "/console/stores"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("a signed-out session replayed: %d", resp.StatusCode)
	}
	// Signing out of a session that has already ended (in another tab,
	// or by expiry) leads to the sign-in page, not to an error.
	c2.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: ck.Value, Path: "/"}})
	resp, _ = f.post(t, c2, "/console/signout", f.srv.URL, url.Values{"csrf": {csrfOf(t, body)}})
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/console/signin") {
		t.Errorf("sign out of an ended session: %d to %q", resp.StatusCode, loc)
	}
}

// TestSecureCookies: behind a proxy that ends TLS, Config.SecureCookies
// makes the session cookie Secure and __Host- prefixed over plain HTTP,
// the console reads it back under that name, and the agent snippets say
// https. Without it, a client's X-Forwarded-Proto changes nothing.
func TestSecureCookies(t *testing.T) {
	signIn := func(t *testing.T, f *fixture, header http.Header) *http.Cookie {
		t.Helper()
		form := url.Values{"workspace": {"default"}, "name": {"admin"}, "password": {password}}
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/console/signin", strings.NewReader(form.Encode()))
		req.Header = header
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", f.srv.URL)
		resp, body := do(t, f.client(t), req)
		if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
			t.Fatalf("sign in: %d %v %s", resp.StatusCode, resp.Cookies(), body)
		}
		return resp.Cookies()[0]
	}

	t.Run("plain HTTP, X-Forwarded-Proto not trusted", func(t *testing.T) {
		f := newFixture(t, "x")
		ck := signIn(t, f, http.Header{"X-Forwarded-Proto": {"https"}})
		if ck.Secure || ck.Name != "memstore_console" {
			t.Errorf("cookie %q Secure=%v over plain HTTP without SecureCookies; want memstore_console, not Secure", ck.Name, ck.Secure)
		}
	})

	t.Run("SecureCookies", func(t *testing.T) {
		f := newFixture(t, "x", func(c *console.Config) { c.SecureCookies = true })
		ck := signIn(t, f, http.Header{})
		if ck.Name != "__Host-memstore_console" || !ck.Secure || !ck.HttpOnly || ck.Path != "/" || ck.Domain != "" {
			t.Fatalf("cookie %s Secure=%v HttpOnly=%v Path=%q Domain=%q; want __Host-memstore_console, Secure, HttpOnly, Path=/, no Domain",
				ck.Name, ck.Secure, ck.HttpOnly, ck.Path, ck.Domain)
		}
		// The jar would not send a Secure cookie over HTTP, as a browser
		// behind the proxy does: send it by hand.
		send := func(method, path string, form url.Values) (*http.Response, string) {
			req, _ := http.NewRequest(method, f.srv.URL+path, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", f.srv.URL)
			req.AddCookie(&http.Cookie{Name: ck.Name, Value: ck.Value})
			return do(t, f.client(t), req)
		}
		resp, page := send(http.MethodGet, "/console/sessions/new", nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("a page with the __Host- cookie: %d", resp.StatusCode)
		}
		resp, body := send(http.MethodPost, "/console/sessions", url.Values{"csrf": {csrfOf(t, page)}, "title": {"t"},
			"store": {f.storeID}, "access." + f.storeID: {"read_only"}})
		want := "memstore mcp --url https://" + strings.TrimPrefix(f.srv.URL, "http://")
		if resp.StatusCode != http.StatusCreated || !strings.Contains(body, want) {
			t.Errorf("token page: %d; want it to contain %q:\n%s", resp.StatusCode, want, body)
		}
	})
}

// TestCrossSite: a POST from another origin, or with no origin at all,
// is refused before it is acted on, and so is one without the token.
func TestCrossSite(t *testing.T) {
	f := newFixture(t, "x")
	c := f.signIn(t, "admin")
	_, body := f.get(t, c, "/console/users/new")
	token := csrfOf(t, body)
	form := url.Values{"csrf": {token}, "name": {"mallory"}, "role": {"admin"}, "password": {password}}
	for _, origin := range []string{"https://evil.example", "null", ""} {
		resp, body := f.post(t, c, "/console/users", origin, form)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "another site") {
			t.Errorf("POST with Origin %q: %d\n%s", origin, resp.StatusCode, body)
		}
	}
	bad := url.Values{"csrf": {"forged"}, "name": {"mallory"}, "role": {"admin"}, "password": {password}}
	if resp, body := f.post(t, c, "/console/users", f.srv.URL, bad); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "security token") {
		t.Errorf("POST with a forged token: %d\n%s", resp.StatusCode, body)
	}
	_, body = f.get(t, c, "/console/users")
	if strings.Contains(body, "mallory") {
		t.Fatal("a refused POST created a user")
	}
	if resp, _ := f.post(t, c, "/console/users", f.srv.URL, form); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the same POST from the console: %d", resp.StatusCode)
	}
	// A sign-in from another site is refused too (login CSRF).
	resp, _ := f.post(t, f.client(t), "/console/signin", "https://evil.example", url.Values{"workspace": {"default"}, "name": {"admin"}, "password": {password}})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site sign-in: %d", resp.StatusCode)
	}
}

// TestRoles: the console shows what the core allows each role, and
// refuses the rest with the core's message.
func TestRoles(t *testing.T) {
	f := newFixture(t, "x")
	for _, tc := range []struct {
		role memstore.Role
		path string
		code int
	}{
		{memstore.RoleAuditor, "/console/stores", 200},
		{memstore.RoleAuditor, "/console/users", 200},
		{memstore.RoleAuditor, "/console/users/new", 403},
		{memstore.RoleMember, "/console/stores/" + f.storeID + "/memories/" + f.memID, 200},
		{memstore.RoleMember, "/console/users", 403},
		{memstore.RoleAdmin, "/console/users/new", 200},
	} {
		c := f.signIn(t, string(tc.role))
		resp, body := f.get(t, c, tc.path)
		if resp.StatusCode != tc.code {
			t.Errorf("%s GET %s: %d, want %d\n%s", tc.role, tc.path, resp.StatusCode, tc.code, body)
		}
		if tc.code == 403 && !strings.Contains(body, "role cannot") {
			t.Errorf("%s GET %s: the refusal does not say why:\n%s", tc.role, tc.path, body)
		}
	}
	// A member's POST of an admin action, with a valid token, is refused
	// by the core.
	c := f.signIn(t, "member")
	_, body := f.get(t, c, "/console/stores")
	resp, body := f.post(t, c, "/console/users", f.srv.URL, url.Values{"csrf": {csrfOf(t, body)}, "name": {"x"}, "role": {"admin"}, "password": {password}})
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "member role cannot manage users") {
		t.Errorf("member creating a user: %d\n%s", resp.StatusCode, body)
	}
}

// TestMemoryPage: a memory's content is never active HTML: raw HTML is
// dropped from the rendering and escaped in the raw view, and unsafe
// links lose their URL.
func TestMemoryPage(t *testing.T) {
	content := "# Title\n\n<script>window.pwned=1</script>\n<img src=x onerror=alert(1)>\n\n" +
		"[x](javascript:alert(1)) [y](JavaScript:alert(1)) [z](vbscript:msgbox) [d](data:text/html,<b>x</b>) <javascript:alert(2)>\n" +
		"![i](javascript:alert(3)) [ok](https://example.com/a)\n"
	f := newFixture(t, content)
	c := f.signIn(t, "auditor")
	resp, body := f.get(t, c, "/console/stores/"+f.storeID+"/memories/"+f.memID)
	if resp.StatusCode != 200 {
		t.Fatalf("%d\n%s", resp.StatusCode, body)
	}
	rendered := body[strings.Index(body, `id="rendered"`):strings.Index(body, `id="raw"`)]
	for _, bad := range []string{"<script", "<img", "onerror", `href="javascript`, `href="vbscript`, `href="data:`, `src="javascript`} {
		if strings.Contains(strings.ToLower(rendered), bad) {
			t.Errorf("the rendering holds %q:\n%s", bad, rendered)
		}
	}
	if !strings.Contains(rendered, `<h1>Title</h1>`) || !strings.Contains(rendered, `<a href="https://example.com/a" rel="noopener noreferrer">ok</a>`) {
		t.Errorf("the Markdown is not rendered as it should be:\n%s", rendered)
	}
	if !strings.Contains(body, "&lt;script&gt;window.pwned=1&lt;/script&gt;") {
		t.Errorf("the raw view does not show the content escaped:\n%s", body)
	}
	for _, want := range []string{memstore.ContentSHA256(content), "api_actor apikey_test"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
}

// TestSignInRateLimit: past the burst, more attempts at one name are
// refused with 429 and a clear message, even with the right password.
func TestSignInRateLimit(t *testing.T) {
	f := newFixture(t, "x")
	c := f.client(t)
	var resp *http.Response
	var body string
	for i := 0; i < 6; i++ {
		resp, body = f.post(t, c, "/console/signin", f.srv.URL, url.Values{"workspace": {"default"}, "name": {"admin"}, "password": {"guess number " + string(rune('a'+i))}})
	}
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "Too many sign-in attempts") || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("the 6th attempt: %d %q\n%s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	wantWait(t, resp, body, "the 6th attempt")
	resp, _ = f.post(t, c, "/console/signin", f.srv.URL, url.Values{"workspace": {"default"}, "name": {"admin"}, "password": {password}})
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the right password past the limit: %d", resp.StatusCode)
	}
	// Another name is not held up by it.
	if resp, _ := f.post(t, c, "/console/signin", f.srv.URL, url.Values{"workspace": {"default"}, "name": {"member"}, "password": {password}}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("another user: %d", resp.StatusCode)
	}
}

// TestStylesheetType: the stylesheet is served as text/css, which a
// browser needs to apply it under X-Content-Type-Options: nosniff.
func TestStylesheetType(t *testing.T) {
	f := newFixture(t, "x")
	resp, body := f.get(t, f.client(t), "/console/static/console.css")
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/css") || !strings.Contains(body, "--accent") {
		t.Errorf("GET the stylesheet: %d, Content-Type %q", resp.StatusCode, ct)
	}
}

// TestStoreTotals: the list of stores and a store's page show how many
// memories the store holds and their size, as the store reports them.
func TestStoreTotals(t *testing.T) {
	f := newFixture(t, strings.Repeat("x", 2048))
	c := f.signIn(t, "member")
	_, list := f.get(t, c, "/console/stores")
	if !strings.Contains(list, `<td data-label="Memories" class="num">1</td>`) || !strings.Contains(list, `<td data-label="Size" class="num">2KB</td>`) {
		t.Errorf("the list of stores does not show 1 memory of 2KB:\n%s", list)
	}
	_, page := f.get(t, c, "/console/stores/"+f.storeID)
	if !strings.Contains(page, "1 memory · 2KB") {
		t.Errorf("the store's page does not show 1 memory of 2KB:\n%s", page)
	}
	if _, err := f.core.CreateMemory(context.Background(), f.op, f.storeID, memstore.MemoryCreate{Path: "/more.md", Content: strings.Repeat("y", 100*1024)}); err != nil {
		t.Fatal(err)
	}
	_, list = f.get(t, c, "/console/stores")
	_, page = f.get(t, c, "/console/stores/"+f.storeID)
	if !strings.Contains(list, `<td data-label="Memories" class="num">2</td>`) || !strings.Contains(list, `<td data-label="Size" class="num">102KB</td>`) || !strings.Contains(page, "2 memories · 102KB") {
		t.Errorf("after a second memory of 100KB, want 2 memories of 102KB:\n%s\n%s", list, page)
	}
}

// TestNavByRole: the main navigation shows each role the pages the core
// lets it read, and no other: every link shown opens, every page not
// linked refuses the role.
func TestNavByRole(t *testing.T) {
	f := newFixture(t, "x")
	pages := []string{"", "stores", "activity", "sessions", "keys", "webhooks", "users"} // "" is the home page
	for _, tc := range []struct {
		role  memstore.Role
		shown []string
	}{
		{memstore.RoleAdmin, pages},
		{memstore.RoleAuditor, []string{"", "stores", "activity", "sessions", "keys", "users"}},
		{memstore.RoleMember, []string{"", "stores", "activity"}},
	} {
		c := f.signIn(t, string(tc.role))
		_, body := f.get(t, c, "/console/stores")
		nav := body[strings.Index(body, `<nav aria-label="Main"`):]
		nav = nav[:strings.Index(nav, "</nav>")]
		for _, p := range pages {
			linked := strings.Contains(nav, `href="/console/`+p+`"`)
			if want := slices.Contains(tc.shown, p); linked != want {
				t.Errorf("%s: link to %s shown %v, want %v\n%s", tc.role, p, linked, want, nav)
			}
			want := http.StatusForbidden
			if linked {
				want = http.StatusOK
			}
			if resp, _ := f.get(t, c, "/console/"+p); resp.StatusCode != want {
				t.Errorf("%s: GET %s (linked %v): %d, want %d", tc.role, p, linked, resp.StatusCode, want)
			}
		}
	}
}

// TestCSPDocumented: docs/console.md quotes the Content-Security-Policy the
// console sends, word for word, and what it says of it holds: no script
// runs but the console's own static/copy.js, allowed by its hash alone,
// and no page is framed.
func TestCSPDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/console.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("Content-Security-Policy\\s+`([^`]+)`").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/console.md does not quote the console's Content-Security-Policy")
	}
	documented := string(m[1])
	f := newFixture(t, "x")
	resp, _ := f.get(t, f.client(t), "/console/signin")
	sent := resp.Header.Get("Content-Security-Policy")
	if documented != sent {
		t.Fatalf("docs/console.md quotes the policy\n  %s\nthe console sends\n  %s", documented, sent)
	}
	directives := map[string]string{}
	for d := range strings.SplitSeq(sent, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		directives[name] = value
	}
	// script-src falls back to default-src when it is not given.
	script := directives["default-src"]
	if v, ok := directives["script-src"]; ok {
		script = v
	}
	if script != "'"+copyJSHash(t)+"'" || directives["frame-ancestors"] != "'none'" {
		t.Errorf("the policy %q allows other script (%q) than copy.js by its hash, or framing", sent, script)
	}
	if !strings.Contains(regexp.MustCompile(`\s+`).ReplaceAllString(string(doc), " "), "allows no script but the console's own") {
		t.Error("docs/console.md no longer says that the policy allows no script but the console's own")
	}
}

// wantWait checks that a refusal for too many attempts says how long to
// wait as every rate limit does, in whole seconds, and that Retry-After
// is the same whole number.
func wantWait(t *testing.T, resp *http.Response, body, what string) {
	t.Helper()
	m := regexp.MustCompile(`[Ww]ait (\d+) seconds? and try again`).FindStringSubmatch(body)
	if m == nil {
		t.Errorf("%s: the page does not say to wait N seconds and try again:\n%s", what, body)
		return
	}
	if got := resp.Header.Get("Retry-After"); got != m[1] {
		t.Errorf("%s: Retry-After %q; want %q, the whole seconds the page says", what, got, m[1])
	}
}

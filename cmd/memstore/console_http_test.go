package main

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

// consoleClient is a browser's part in the console of a real server,
// spoken over plain HTTP: a cookie jar, the console's own Origin on every
// form, redirects not followed.
type consoleClient struct {
	base string // the server's address, without /console/
	hc   *http.Client
}

func newConsoleClient(base string) *consoleClient {
	jar, _ := cookiejar.New(nil)
	return &consoleClient{base: base, hc: &http.Client{Jar: jar, Timeout: 60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (c *consoleClient) do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func (c *consoleClient) get(t *testing.T, path string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.base+path, nil)
	return c.do(t, req)
}

// post sends a form to path as a page of the console would.
func (c *consoleClient) post(t *testing.T, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.base)
	return c.do(t, req)
}

// signIn signs in to the default workspace and returns the answer's
// status: 303 when signed in.
func (c *consoleClient) signIn(t *testing.T, name, password string) int {
	t.Helper()
	resp, _ := c.post(t, "/console/signin", url.Values{"workspace": {"default"}, "name": {name}, "password": {password}})
	return resp.StatusCode
}

var consoleCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the CSRF token of the page at path.
func (c *consoleClient) csrf(t *testing.T, path string) string {
	t.Helper()
	resp, body := c.get(t, path)
	m := consoleCSRF.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("GET %s: %d, no CSRF token:\n%s", path, resp.StatusCode, body)
	}
	return m[1]
}

// createConsoleUser makes a user of the database db with consolePassword.
func createConsoleUser(t *testing.T, db, name, role string) {
	t.Helper()
	if code, out, errOut := run(t, consolePassword+"\n", "users", "create", "--db", db, "--name", name, "--role", role); code != 0 {
		t.Fatalf("users create %s: %d %s %s", name, code, out, errOut)
	}
}

// TestConsoleActivityPagesServed: on a real server, a session's 60
// changes and one by an API key are reached through the activity's
// "Older changes" links, filters kept, each change once; each half of the
// actor filter works alone, and one that cannot work says why.
func TestConsoleActivityPagesServed(t *testing.T) {
	clearEnv(t)
	db := filepath.Join(t.TempDir(), "m.db")
	createConsoleUser(t, db, "ann", "admin")
	s := startServer(t, "--db", db)
	a := s.api(t)
	store := a.createStore(t, "notes")
	a.must(t, "POST", "/v1/memory_stores/"+store+"/memories", map[string]any{"path": "/by-key.md", "content": "k"}, nil)
	var sess httpapi.SessionJSON
	a.must(t, "POST", "/v1/sessions", map[string]any{"resources": []any{
		map[string]any{"type": "memory_store", "memory_store_id": store}}}, &sess)
	agent := newAPI(s.url, sess.Token)
	const n = 60
	for i := range n {
		agent.must(t, "POST", "/v1/memory_stores/"+store+"/memories", map[string]any{"path": fmt.Sprintf("/agent/%02d.md", i), "content": "x"}, nil)
	}
	c := newConsoleClient(s.url)
	if got := c.signIn(t, "ann", consolePassword); got != http.StatusSeeOther {
		t.Fatalf("sign in: %d", got)
	}
	older := regexp.MustCompile(`<a rel="next" href="([^"]+)">Older changes</a>`)
	shownPath := regexp.MustCompile(`>(/(?:agent/\d+|by-key)\.md)</a>`)
	for _, tc := range []struct {
		name, query string
		want        int
	}{
		{"everything", "", n + 1},
		{"the session by its ID alone", "?actor=" + sess.ID, n},
		{"sessions alone", "?actor_type=session_actor", n},
		{"API keys alone", "?actor_type=api_actor", 1},
		{"the store alone", "?store=" + store, n + 1},
		{"created alone", "?op=created", n + 1},
	} {
		seen := map[string]int{}
		path, pages := "/console/activity"+tc.query, 0
		for path != "" {
			if pages++; pages > 5 {
				t.Fatalf("%s: the pages do not end", tc.name)
			}
			resp, body := c.get(t, path)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: GET %s: %d\n%s", tc.name, path, resp.StatusCode, body)
			}
			for _, m := range shownPath.FindAllStringSubmatch(body, -1) {
				seen[m[1]]++
			}
			path = ""
			if m := older.FindStringSubmatch(body); m != nil {
				path = html.UnescapeString(m[1])
			}
		}
		total := 0
		for p, k := range seen {
			total += k
			if k != 1 {
				t.Errorf("%s: %s shown %d times", tc.name, p, k)
			}
		}
		if total != tc.want || (tc.want > 50 && pages < 2) {
			t.Errorf("%s: %d changes over %d pages, want %d", tc.name, total, pages, tc.want)
		}
	}
	for query, want := range map[string]string{
		"?actor=someone": `actor &#34;someone&#34; is not an actor&#39;s ID`,
		"?actor_type=user_actor&actor=" + sess.ID: "is a session_actor, not a user_actor",
	} {
		resp, body := c.get(t, "/console/activity"+query)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("%s: %d, want 400 saying %q:\n%s", query, resp.StatusCode, want, body)
		}
	}
}

// TestReplicasSignInLimits: two replica processes on one PostgreSQL
// database count a user's sign-in attempts, and a client address's,
// together: five wrong passwords spread over both, and the sixth
// attempt, on either and with the right password, is refused; twenty
// attempts from one address, and the next is refused on both.
func TestReplicasSignInLimits(t *testing.T) {
	clearEnv(t)
	db := postgresDB(t, "signin")
	children, _ := startChildReplicas(t, db, 2)
	createConsoleUser(t, db, "ann", "admin")
	createConsoleUser(t, db, "bo", "member")
	clients := []*consoleClient{newConsoleClient(children[0].url), newConsoleClient(children[1].url)}
	begun := time.Now()
	for i := range 5 {
		if got := clients[i%2].signIn(t, "ann", fmt.Sprint("wrong password ", i)); got != http.StatusUnauthorized {
			t.Fatalf("wrong password %d, on replica %d: %d, want 401", i+1, i%2, got)
		}
	}
	for i, c := range clients {
		if got := c.signIn(t, "ann", consolePassword); got != http.StatusTooManyRequests {
			t.Errorf("the right password after 5 wrong ones, on replica %d: %d, want 429", i, got)
		}
	}
	// Another user is not held back by it.
	if got := clients[1].signIn(t, "bo", consolePassword); got != http.StatusSeeOther {
		t.Errorf("another user: %d, want 303", got)
	}

	// redeem tries a made-up sign-in link, which is refused without
	// hashing anything, on replica i.
	redeem := func(i int) int {
		resp, _ := clients[i].post(t, "/console/link", url.Values{"t": {"made-up"}})
		return resp.StatusCode
	}
	// The address has used 8 of its 20 (ann's 7 attempts and bo's one),
	// and the allowance refills one every SignInAddrInterval since the
	// first: alternating between the replicas, it runs out after 20 and
	// what refilled meanwhile (replicas counting apart would allow 40).
	for i := 8; i < 20; i++ {
		if got := redeem(i % 2); got != http.StatusUnauthorized {
			t.Fatalf("attempt %d from the address, on replica %d: %d, want 401", i+1, i%2, got)
		}
	}
	n := 20
	for ; n < 60 && redeem(n%2) == http.StatusUnauthorized; n++ {
	}
	refilled := int(time.Since(begun)/memstore.SignInAddrInterval) + 1
	if n < 20 || n > 20+refilled {
		t.Errorf("the address was refused after %d attempts over both replicas in %v; want 20 and the %d refilled at most",
			n, time.Since(begun).Round(time.Millisecond), refilled)
	}
}

// TestConsolePasswordServed: on a real server, a user made with a
// sign-in link sets a first password on the console's password page and
// signs in with it; a user with a password changes it, which keeps that
// browser signed in and ends the user's sign-in in another; a form
// without the page's CSRF token changes nothing.
func TestConsolePasswordServed(t *testing.T) {
	clearEnv(t)
	db := filepath.Join(t.TempDir(), "m.db")
	createConsoleUser(t, db, "ann", "admin")
	code, out, errOut := run(t, "", "users", "create", "--db", db, "--name", "linda", "--role", "member", "--link", "--json")
	var made struct {
		SignInLink string `json:"sign_in_link"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &made) != nil || made.SignInLink == "" {
		t.Fatalf("users create --link: %d %s %s", code, out, errOut)
	}
	link, err := url.Parse(made.SignInLink)
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "--db", db)
	const first, second = "linda's own passphrase", "ann's second passphrase"

	linda := newConsoleClient(s.url)
	if resp, _ := linda.post(t, "/console/link", url.Values{"t": {link.Query().Get("t")}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("redeem the link: %d", resp.StatusCode)
	}
	if _, page := linda.get(t, "/console/password"); strings.Contains(page, `name="current"`) || !strings.Contains(page, "no password yet") {
		t.Errorf("the password page of a user without one:\n%s", page)
	}
	form := url.Values{"csrf": {linda.csrf(t, "/console/password")}, "new": {first}, "again": {first}}
	if resp, body := linda.post(t, "/console/password", form); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("set a first password: %d\n%s", resp.StatusCode, body)
	}
	if _, body := linda.get(t, "/console/password?done=password"); !strings.Contains(body, "Your password is set") || !strings.Contains(body, `name="current"`) {
		t.Errorf("after setting it:\n%s", body)
	}
	if got := newConsoleClient(s.url).signIn(t, "linda", first); got != http.StatusSeeOther {
		t.Errorf("linda signs in with her password: %d, want 303", got)
	}

	ann, elsewhere := newConsoleClient(s.url), newConsoleClient(s.url)
	for _, c := range []*consoleClient{ann, elsewhere} {
		if got := c.signIn(t, "ann", consolePassword); got != http.StatusSeeOther {
			t.Fatalf("ann signs in: %d", got)
		}
	}
	change := url.Values{"current": {consolePassword}, "new": {second}, "again": {second}}
	if resp, _ := ann.post(t, "/console/password", change); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a change without the CSRF token: %d, want 403", resp.StatusCode)
	}
	change.Set("csrf", ann.csrf(t, "/console/password"))
	if resp, body := ann.post(t, "/console/password", change); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("ann changes her password: %d\n%s", resp.StatusCode, body)
	}
	if resp, _ := ann.get(t, "/console/stores"); resp.StatusCode != http.StatusOK {
		t.Errorf("the browser that changed it: %d, want 200", resp.StatusCode)
	}
	if resp, _ := elsewhere.get(t, "/console/stores"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "/console/signin") {
		t.Errorf("ann's other sign-in: %d to %q, want the sign-in page", resp.StatusCode, resp.Header.Get("Location"))
	}
	if got := newConsoleClient(s.url).signIn(t, "ann", consolePassword); got != http.StatusUnauthorized {
		t.Errorf("the old password: %d, want 401", got)
	}
	if got := newConsoleClient(s.url).signIn(t, "ann", second); got != http.StatusSeeOther {
		t.Errorf("the new password: %d, want 303", got)
	}
}

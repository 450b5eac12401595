package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// noRedirect is a client that shows redirects instead of following them.
func noRedirect() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// redeem posts a sign-in link's token to the console, from the console's
// own origin, as its page's form does.
func redeem(t *testing.T, link string) *http.Response {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", u.Scheme+"://"+u.Host+u.Path, strings.NewReader(url.Values{"t": {u.Query().Get("t")}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", u.Scheme+"://"+u.Host)
	resp, err := noRedirect().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestFirstRunInitAdmin: a first 'memstore serve --init-admin NAME' says
// on standard output where the API and the console are, makes the admin
// and prints a sign-in link that works once, and the key last; none of it
// goes to the log. A later start with the same flag makes no one and
// prints nothing.
func TestFirstRunInitAdmin(t *testing.T) {
	clearEnv(t)
	db := filepath.Join(t.TempDir(), "m.db")
	c := startChild(t, db, "--init-admin", "ada")
	out := c.stdout.String()
	for _, want := range []string{
		"  API       " + c.url + "  ",
		"  Console   " + c.url + "/console/\n",
		`Made console user "ada", an admin.`,
		"It will not be shown again",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("first run's output lacks %q:\n%s", want, out)
		}
	}
	if c.key == "" {
		t.Errorf("the key is not alone on the last line:\n%s", out)
	}
	m := regexp.MustCompile(`(?m)^  (` + regexp.QuoteMeta(c.url) + `/console/link\?t=memstore-link-\S+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no sign-in link into %s/console/:\n%s", c.url, out)
	}
	link := m[1]
	tok, _ := url.Parse(link)
	for _, secret := range []string{c.key, tok.Query().Get("t")} {
		if strings.Contains(c.stderr.String(), secret) {
			t.Errorf("the log holds a secret:\n%s", c.stderr)
		}
	}
	// Opening the link asks first; confirming signs ada in, once.
	if resp, err := http.Get(link); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET the link: %v %v", resp, err)
	}
	resp := redeem(t, link)
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) == 0 {
		t.Fatalf("redeeming the link: %s, cookies %v; want 303 and a session", resp.Status, resp.Cookies())
	}
	req, _ := http.NewRequest("GET", c.url+"/console/stores", nil)
	req.AddCookie(resp.Cookies()[0])
	page, err := noRedirect().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != http.StatusOK {
		t.Errorf("the console with the link's session: %s; want 200", page.Status)
	}
	if again := redeem(t, link); again.StatusCode != http.StatusUnauthorized {
		t.Errorf("the link used twice: %s; want 401", again.Status)
	}
	c.stop(t, syscall.SIGTERM)

	// A later start, with the flag still given: no new user, no link,
	// nothing on standard output, and a word on why.
	c2 := startChild(t, db, "--init-admin", "ada")
	if out := c2.stdout.String(); out != "" {
		t.Errorf("a later start printed %q; want nothing", out)
	}
	if !strings.Contains(c2.stderr.String(), "has console users already, so no user was made") {
		t.Errorf("a later start with --init-admin does not say why it made no one:\n%s", c2.stderr)
	}
	code, users, stderr := run(t, "", "users", "ls", "--db", db)
	if code != 0 || strings.Count(users, "\n") != 2 || !strings.Contains(users, " ada ") || !strings.Contains(users, " admin ") {
		t.Errorf("users ls: %d %q %s; want ada alone, an admin", code, users, stderr)
	}
}

// wantRoot checks the answer to GET / of the server at base: a redirect
// to location, or the API's JSON 404.
func wantRoot(t *testing.T, base string, status int, location string) {
	t.Helper()
	resp, err := noRedirect().Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status || resp.Header.Get("Location") != location {
		t.Errorf("GET %s/: %s to %q; want %d to %q", base, resp.Status, resp.Header.Get("Location"), status, location)
	}
	if status == http.StatusNotFound && (resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(body), "no such endpoint: GET /")) {
		t.Errorf("GET %s/: %s %q; want the API's JSON 404", base, resp.Header.Get("Content-Type"), body)
	}
}

// TestFirstRunNextSteps: without --init-admin, a first run prints the
// command that makes the first console user, and that command, run as
// printed, makes one.
func TestFirstRunNextSteps(t *testing.T) {
	clearEnv(t)
	db := filepath.Join(t.TempDir(), "m.db")
	c := startChild(t, db)
	out := c.stdout.String()
	m := regexp.MustCompile(`(?m)^  memstore (users create --db (\S+) --name NAME --role admin)$`).FindStringSubmatch(out)
	if m == nil || m[2] != db {
		t.Fatalf("first run's output has no 'memstore users create --db %s' line:\n%s", db, out)
	}
	if !strings.Contains(out, "  Console   "+c.url+"/console/\n") || !strings.Contains(out, "--init-admin NAME") || c.key == "" {
		t.Errorf("first run's output:\n%s", out)
	}
	args := strings.Fields(strings.Replace(m[1], "NAME", "grace", 1))
	if code, _, stderr := run(t, "a long enough password\n", args...); code != 0 {
		t.Fatalf("memstore %s: %d %s", m[1], code, stderr)
	}
	if _, err := os.Stat(db + ".key"); err != nil {
		t.Errorf("no key file: %v", err)
	}
	wantRoot(t, c.url, http.StatusFound, "/console/")
	// With the console off, the console's lines are left out, and
	// --init-admin is refused.
	db2 := filepath.Join(t.TempDir(), "m.db")
	c2 := startChild(t, db2, "--console=false")
	if out := c2.stdout.String(); strings.Contains(out, "Console") || strings.Contains(out, "users create") || c2.key == "" {
		t.Errorf("first run without the console:\n%s", out)
	}
	wantRoot(t, c2.url, http.StatusNotFound, "")
	// With the console on its own address, the root of each leads to it,
	// or is the API's 404.
	c3 := startChild(t, filepath.Join(t.TempDir(), "m.db"), "--console-addr", "127.0.0.1:0")
	m = regexp.MustCompile(`(?m)^  Console   (http://\S+)/console/$`).FindStringSubmatch(c3.stdout.String())
	if m == nil || m[1] == c3.url {
		t.Fatalf("first run with --console-addr names no console of its own:\n%s", c3.stdout)
	}
	wantRoot(t, m[1], http.StatusFound, "/console/")
	wantRoot(t, c3.url, http.StatusNotFound, "")
	// On every interface (as in a container), the next steps name
	// loopback, which a person can open, not 0.0.0.0.
	c4 := startChild(t, filepath.Join(t.TempDir(), "m.db"), "--addr", "0.0.0.0:0")
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(c4.url, "http://"))
	local := "http://127.0.0.1:" + port
	if out := c4.stdout.String(); !strings.Contains(out, "  API       "+local+"  ") || !strings.Contains(out, "  Console   "+local+"/console/\n") {
		t.Errorf("first run on every interface:\n%s", out)
	}
	if code, _, stderr := run(t, "", "serve", "--db", db2, "--console=false", "--init-admin", "ada"); code != 2 || !strings.Contains(stderr, "--console=false") {
		t.Errorf("--init-admin without the console: %d %s; want a usage error", code, stderr)
	}
	if code, _, stderr := run(t, "", "serve", "--db", db2, "--init-admin", "user_x"); code != 2 || !strings.Contains(stderr, "--init-admin") {
		t.Errorf("--init-admin user_x: %d %s; want a usage error", code, stderr)
	}
}

// lateList is a database whose user list is read before another server
// made its user: it lists none.
type lateList struct{ memstore.Database }

func (lateList) Users(context.Context, string, memstore.UserFilter) (memstore.Page[memstore.User], error) {
	return memstore.Page[memstore.User]{}, nil
}

// TestInitAdminTogether: of servers of one database started together
// with --init-admin, the one that finds the user made meanwhile (after
// it saw none) starts all the same, without a link, and says why.
func TestInitAdminTogether(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t, sqlite.Options{})
	core := memstore.NewCore(db)
	base := consoleBase("http", "127.0.0.1:6366")
	e := env{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	if link, _, err := initAdmin(ctx, e, db, core, "ada", base); err != nil || link == "" {
		t.Fatalf("the first server: %q, %v; want a link", link, err)
	}
	var stderr strings.Builder
	e.stderr = &stderr
	link, _, err := initAdmin(ctx, e, lateList{db}, core, "ada", base)
	if err != nil || link != "" || !strings.Contains(stderr.String(), "another server made the user meanwhile") {
		t.Errorf("the second server: %q, %v, %q; want no link, no error, and why", link, err, stderr.String())
	}
}

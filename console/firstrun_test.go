package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/console"
)

// TestSignInHintWithoutUsers: while the database has no console user,
// the sign-in page (and a failed sign-in) says how to make the first
// one; once a user exists, in any workspace, it says nothing about users.
func TestSignInHintWithoutUsers(t *testing.T) {
	ctx := context.Background()
	db, core, users, op := openCore(t, "apikey_test")
	srv := httptest.NewServer(console.New(console.Config{Stores: core, Memories: core, Versions: core, Search: core, Sessions: core, Activity: core, Keys: memstore.NewKeys(core), Users: users}))
	t.Cleanup(srv.Close)
	f := &fixture{srv: srv}
	c := f.client(t)
	const hint = "memstore users create --name NAME --role admin"

	resp, page := f.get(t, c, "/console/signin")
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, hint) || !strings.Contains(page, `id="no-users"`) {
		t.Errorf("sign-in page without users: %d, without the hint %q:\n%s", resp.StatusCode, hint, page)
	}
	resp, page = f.post(t, c, "/console/signin", srv.URL, url.Values{"workspace": {"default"}, "name": {"ann"}, "password": {password}})
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(page, hint) {
		t.Errorf("a failed sign-in without users: %d, without the hint:\n%s", resp.StatusCode, page)
	}

	// A user in another workspace is a user: the hint goes.
	other, err := db.CreateWorkspace(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := users.CreateUser(ctx, &memstore.Caller{WorkspaceID: other.ID, Actor: op.Actor}, memstore.UserCreate{Name: "ann", Role: memstore.RoleAdmin, Password: password}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/console/signin", "/console/signin?ended=1"} {
		resp, page = f.get(t, c, path)
		if resp.StatusCode != http.StatusOK || strings.Contains(page, "no-users") || strings.Contains(page, "users create") || strings.Contains(page, "console user") {
			t.Errorf("%s with a user: %d, still speaks of users:\n%s", path, resp.StatusCode, page)
		}
	}
	resp, page = f.post(t, c, "/console/signin", srv.URL, url.Values{"workspace": {"default"}, "name": {"ann"}, "password": {password}})
	if resp.StatusCode != http.StatusUnauthorized || strings.Contains(page, "no-users") {
		t.Errorf("a failed sign-in with a user: %d, still speaks of users:\n%s", resp.StatusCode, page)
	}
}

// TestRootLeadsToConsole: the console, served on its own, answers the
// root with a redirect to itself, and nothing else outside its prefix.
func TestRootLeadsToConsole(t *testing.T) {
	f := newFixture(t, "x")
	c := f.client(t)
	for _, method := range []string{"GET", "HEAD"} {
		req, _ := http.NewRequest(method, f.srv.URL+"/", nil)
		resp, _ := do(t, c, req)
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != console.Prefix {
			t.Errorf("%s /: %d to %q; want 302 to %s", method, resp.StatusCode, resp.Header.Get("Location"), console.Prefix)
		}
	}
	if resp, _ := f.get(t, c, "/other"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /other: %d; want 404", resp.StatusCode)
	}
	resp, _ := f.post(t, c, "/", f.srv.URL, url.Values{})
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d; want 405", resp.StatusCode)
	}
}

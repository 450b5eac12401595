package console_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

// TestUsersManage: an administrator changes another user's role (in
// force on that user's next page), makes a sign-in link that signs the
// user in once, and removes a user after a confirmation page (their
// session ends); their own row offers none of it, and the core refuses
// it if sent anyway.
func TestUsersManage(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "x")
	users := memstore.NewUsers(f.db)
	id := func(name string) string {
		u, err := users.User(ctx, f.op, name)
		if err != nil {
			t.Fatal(err)
		}
		return u.ID
	}
	admin, member := f.signIn(t, "admin"), f.signIn(t, "member")
	adminID, memberID, auditorID := id("admin"), id("member"), id("auditor")
	page := mustGet(t, f, admin, "/console/users")
	csrf := csrfOf(t, page)
	for _, want := range []string{`id="role-` + memberID + `"`, `id="link-` + auditorID + `"`, `href="/console/users/` + memberID + `/remove"`, `href="/console/password"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the users page lacks %s:\n%s", want, page)
		}
	}
	if strings.Contains(page, `id="role-`+adminID+`"`) || strings.Contains(page, `/users/`+adminID+`/remove`) {
		t.Errorf("the administrator's own row offers to change their role or remove them:\n%s", page)
	}

	// The member becomes an auditor: the users page, refused to a member,
	// opens on the next request of the same session.
	if resp, _ := f.get(t, member, "/console/users"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a member reads the users: %d", resp.StatusCode)
	}
	resp, _ := f.post(t, admin, "/console/users/"+memberID+"/role", f.srv.URL, url.Values{"csrf": {csrf}, "role": {"auditor"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/users?done=role" {
		t.Fatalf("change the role: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, body := f.get(t, member, "/console/users/new"); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "auditor role cannot") {
		t.Errorf("after the change the member's session is refused as: %d\n%s", resp.StatusCode, body)
	}
	mustGet(t, f, member, "/console/users")
	for _, bad := range []struct {
		path, role string
		code       int
		says       string
	}{
		{"/console/users/" + adminID + "/role", "member", http.StatusForbidden, "your own role"},
		{"/console/users/" + adminID + "/remove", "", http.StatusForbidden, "remove yourself"},
		{"/console/users/" + memberID + "/role", "owner", http.StatusBadRequest, "owner"},
		{"/console/users/user_nosuch/role", "member", http.StatusNotFound, "user_nosuch"},
	} {
		resp, body := f.post(t, admin, bad.path, f.srv.URL, url.Values{"csrf": {csrf}, "role": {bad.role}})
		if resp.StatusCode != bad.code || !strings.Contains(body, bad.says) {
			t.Errorf("POST %s %s: %d\n%s", bad.path, bad.role, resp.StatusCode, body)
		}
	}
	if u, _ := users.User(ctx, f.op, adminID); u.Role != memstore.RoleAdmin {
		t.Errorf("the administrator's role after the refusals: %s", u.Role)
	}

	// A sign-in link, shown once, that signs the auditor in.
	resp, body := f.post(t, admin, "/console/users/"+auditorID+"/link", f.srv.URL, url.Values{"csrf": {csrf}})
	m := regexp.MustCompile(`<pre id="link">([^<]+)</pre>`).FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil || !strings.HasPrefix(m[1], f.srv.URL+"/console/link?t="+memstore.SignInLinkPrefix) {
		t.Fatalf("a sign-in link: %d\n%s", resp.StatusCode, body)
	}
	link, _ := url.Parse(html.UnescapeString(m[1]))
	c := f.client(t)
	if resp, _ := f.post(t, c, "/console/link", f.srv.URL, url.Values{"t": {link.Query().Get("t")}}); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/" {
		t.Fatalf("redeeming the link: %d to %q, want 303 to the home page /console/", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, body := f.get(t, c, "/console/users/new"); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "auditor role cannot") {
		t.Errorf("the link signed in as another than the auditor: %d\n%s", resp.StatusCode, body)
	}

	// Removing asks first, then ends the user's session.
	page = mustGet(t, f, admin, "/console/users/"+memberID+"/remove")
	if !strings.Contains(page, "Remove member?") || !strings.Contains(page, `action="/console/users/`+memberID+`/remove"`) {
		t.Errorf("the confirmation:\n%s", page)
	}
	if _, err := users.User(ctx, f.op, memberID); err != nil {
		t.Fatalf("the confirmation page removed the user: %v", err)
	}
	resp, _ = f.post(t, admin, "/console/users/"+memberID+"/remove", f.srv.URL, url.Values{"csrf": {csrf}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/users?done=removed" {
		t.Fatalf("remove: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, err := users.User(ctx, f.op, memberID); memstore.ErrorCode(err) != memstore.ENotFound {
		t.Errorf("the removed user: %v", err)
	}
	if resp, _ := f.get(t, member, "/console/stores"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "/console/signin") {
		t.Errorf("the removed user's session: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestUsersManageAdminsOnly: an auditor reads the users but is offered
// no change, and every change sent with a good token is refused by the
// core; without the token, or from another site, before it.
func TestUsersManageAdminsOnly(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "x")
	users := memstore.NewUsers(f.db)
	target, err := users.User(ctx, f.op, "member")
	if err != nil {
		t.Fatal(err)
	}
	auditor := f.signIn(t, "auditor")
	page := mustGet(t, f, auditor, "/console/users")
	if strings.Contains(page, `id="role-`) || strings.Contains(page, "/remove") || strings.Contains(page, `id="link-`) || strings.Contains(page, `id="new-user"`) {
		t.Errorf("an auditor is offered changes:\n%s", page)
	}
	csrf := csrfOf(t, page)
	base := "/console/users/" + target.ID
	for path, form := range map[string]url.Values{
		base + "/role":   {"role": {"admin"}},
		base + "/remove": {},
		base + "/link":   {},
	} {
		form.Set("csrf", csrf)
		if resp, body := f.post(t, auditor, path, f.srv.URL, form); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "auditor role cannot manage users") {
			t.Errorf("auditor POST %s: %d\n%s", path, resp.StatusCode, body)
		}
	}
	if resp, _ := f.get(t, auditor, base+"/remove"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an auditor's confirmation page: %d", resp.StatusCode)
	}
	admin := f.signIn(t, "admin")
	_, page = f.get(t, admin, "/console/users")
	if resp, _ := f.post(t, admin, base+"/role", f.srv.URL, url.Values{"role": {"admin"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("without the token: %d", resp.StatusCode)
	}
	if resp, _ := f.post(t, admin, base+"/remove", "https://evil.example", url.Values{"csrf": {csrfOf(t, page)}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("from another site: %d", resp.StatusCode)
	}
	if u, err := users.User(ctx, f.op, target.ID); err != nil || u.Role != memstore.RoleMember {
		t.Errorf("the member after the refusals: %+v %v", u, err)
	}
}

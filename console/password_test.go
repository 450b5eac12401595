package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

// setPassword posts the password form of the signed-in client c.
func (f *fixture) setPassword(t *testing.T, c *http.Client, current, password, again string) (*http.Response, string) {
	t.Helper()
	page := mustGet(t, f, c, "/console/password")
	form := url.Values{"csrf": {csrfOf(t, page)}, "new": {password}, "again": {again}}
	if current != "" {
		form.Set("current", current)
	}
	return f.post(t, c, "/console/password", f.srv.URL, form)
}

// signInAs signs in with a password and returns the status.
func (f *fixture) signInAs(t *testing.T, name, pw string) int {
	t.Helper()
	resp, _ := f.post(t, f.client(t), "/console/signin", f.srv.URL, url.Values{"workspace": {"default"}, "name": {name}, "password": {pw}})
	return resp.StatusCode
}

// TestPasswordPage: a signed-in user changes their password with the
// current one, within the rules of passwords, with the form's CSRF
// token; the change keeps this browser signed in and ends the user's
// other sign-ins.
func TestPasswordPage(t *testing.T) {
	f := newFixture(t, "x")
	const newPassword = "a brand new passphrase"
	// The refusals, as the auditor (each user's attempts are limited).
	c := f.signIn(t, "auditor")
	page := mustGet(t, f, c, "/console/password")
	for _, want := range []string{`name="current"`, `name="new"`, `name="again"`, `autocomplete="new-password"`, `href="/console/password"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the password page lacks %s:\n%s", want, page)
		}
	}
	// Without the page's token, nothing changes.
	if resp, _ := f.post(t, c, "/console/password", f.srv.URL, url.Values{"current": {password}, "new": {newPassword}, "again": {newPassword}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("without the CSRF token: %d, want 403", resp.StatusCode)
	}
	for _, tc := range []struct {
		name                     string
		current, password, again string
		status                   int
		says                     string
	}{
		{"no current password", "", newPassword, newPassword, http.StatusForbidden, "current password is not right"},
		{"a wrong current password", "not my password", newPassword, newPassword, http.StatusForbidden, "current password is not right"},
		{"too short", password, "short", "short", http.StatusBadRequest, "at least 12"},
		{"the two differ", password, newPassword, newPassword + "!", http.StatusBadRequest, "differ"},
	} {
		resp, body := f.setPassword(t, c, tc.current, tc.password, tc.again)
		if resp.StatusCode != tc.status || !strings.Contains(body, tc.says) || strings.Contains(body, tc.password) {
			t.Errorf("%s: %d, want %d saying %q, and not the password:\n%s", tc.name, resp.StatusCode, tc.status, tc.says, body)
		}
	}
	if got := f.signInAs(t, "auditor", password); got != http.StatusSeeOther {
		t.Fatalf("after the refusals, the password: %d, want 303", got)
	}

	c = f.signIn(t, "member")
	other := f.signIn(t, "member")
	resp, _ := f.setPassword(t, c, password, newPassword, newPassword)
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/console/password?done=password" {
		t.Fatalf("the change: %d to %q", resp.StatusCode, loc)
	}
	// This browser stays signed in, with a new session; the others end.
	if body := mustGet(t, f, c, "/console/password?done=password"); !strings.Contains(body, "other sign-ins have ended") {
		t.Errorf("after the change:\n%s", body)
	}
	if resp, _ := f.get(t, other, "/console/stores"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("another sign-in of the user after the change: %d, want 303 to sign in", resp.StatusCode)
	}
	if got := f.signInAs(t, "member", password); got != http.StatusUnauthorized {
		t.Errorf("the old password: %d, want 401", got)
	}
	if got := f.signInAs(t, "member", newPassword); got != http.StatusSeeOther {
		t.Errorf("the new password: %d, want 303", got)
	}
}

// TestPasswordPageLimited: wrong current passwords count against the
// user's allowance of sign-in attempts, so that a signed-in browser left
// open is no way to guess the password faster than the sign-in page.
func TestPasswordPageLimited(t *testing.T) {
	f := newFixture(t, "x")
	c := f.signIn(t, "admin") // one attempt of the allowance
	for i := range memstore.SignInNameBurst - 1 {
		if resp, _ := f.setPassword(t, c, fmt.Sprint("guess number ", i), "a brand new passphrase", "a brand new passphrase"); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("guess %d: %d, want 403", i+1, resp.StatusCode)
		}
	}
	resp, body := f.setPassword(t, c, password, "a brand new passphrase", "a brand new passphrase")
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "Too many") || resp.Header.Get("Retry-After") == "" {
		t.Errorf("past the allowance, even the right password: %d %q\n%s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	wantWait(t, resp, body, "past the allowance")
	if got := f.signInAs(t, "admin", password); got != http.StatusTooManyRequests {
		t.Errorf("the sign-in page after the guesses: %d, want 429", got)
	}
}

// TestPasswordPageLinkUser: a user made without a password, signed in
// with a link, sets one without a current password, and then signs in
// with it.
func TestPasswordPageLinkUser(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "x")
	users := memstore.NewUsers(f.db)
	if _, err := users.CreateUser(ctx, f.op, memstore.UserCreate{Name: "linda", Role: memstore.RoleMember}); err != nil {
		t.Fatal(err)
	}
	link, _, err := users.CreateSignInLink(ctx, f.op, "linda")
	if err != nil {
		t.Fatal(err)
	}
	c := f.client(t)
	if resp, _ := f.post(t, c, "/console/link", f.srv.URL, url.Values{"t": {link}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("redeem the link: %d", resp.StatusCode)
	}
	page := mustGet(t, f, c, "/console/password")
	if strings.Contains(page, `name="current"`) || !strings.Contains(page, "no password yet") {
		t.Errorf("the password page of a user without one:\n%s", page)
	}
	const pw = "linda's own passphrase"
	if resp, body := f.setPassword(t, c, "", pw, pw); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("set a first password: %d\n%s", resp.StatusCode, body)
	}
	if got := f.signInAs(t, "linda", pw); got != http.StatusSeeOther {
		t.Errorf("sign in with the password set: %d, want 303", got)
	}
	// Now that there is one, a change needs it.
	if resp, _ := f.setPassword(t, c, "", "another passphrase!", "another passphrase!"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a change without the password now set: %d, want 403", resp.StatusCode)
	}
}

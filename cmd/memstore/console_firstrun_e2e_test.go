package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore/internal/webdriver"
)

// TestFirstRunInFirefox follows a newcomer in a browser: the server's
// root leads to the sign-in page, which, with no user yet, says how to
// make one; a sign-in link made then signs in; and once a user exists the
// page says nothing about users.
func TestFirstRunInFirefox(t *testing.T) {
	if webdriver.FirefoxPath() == "" {
		skipOrFailInCI(t, "no firefox-esr or firefox on PATH: the first run's browser test needs one (apt-get install firefox-esr)")
	}
	clearEnv(t)
	db := filepath.Join(t.TempDir(), "m.db")
	srv := startChild(t, db)
	s, err := webdriver.Firefox(t.TempDir(), webdriver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)

	if err := s.Navigate(srv.url + "/"); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait("#no-users"); err != nil {
		t.Fatalf("the root does not lead to a sign-in page with the hint: %v", err)
	}
	if u, _ := s.URL(); !strings.Contains(u, "/console/signin") {
		t.Errorf("the root led to %q; want the sign-in page", u)
	}
	if hint := s.Text("#no-users"); !strings.Contains(hint, "memstore users create --name NAME --role admin") {
		t.Errorf("the hint says %q", hint)
	}

	code, out, stderr := run(t, "", "users", "create", "--db", db, "--name", "ada", "--role", "admin", "--link", "--console-url", srv.url+"/console/")
	if code != 0 {
		t.Fatalf("users create --link: %d %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err := s.Navigate(lines[len(lines)-1]); err != nil {
		t.Fatal(err)
	}
	if err := s.Click("#redeem"); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait("#signout"); err != nil {
		t.Fatalf("the link did not sign in: %v", err)
	}
	if err := s.Navigate(srv.url + "/console/signin"); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait("#signin"); err != nil {
		t.Fatal(err)
	}
	if hint := s.Text("#no-users"); hint != "" {
		t.Errorf("with a user, the sign-in page still says %q", hint)
	}
}

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsersCommands: users create (password from standard input, or a
// sign-in link), ls, passwd and rm, and their refusals, each of which
// changes nothing.
func TestUsersCommands(t *testing.T) {
	clearEnv(t)
	db := filepath.Join(t.TempDir(), "m.db")
	code, out, errOut := run(t, "correct horse battery\n", "users", "create", "--db", db, "--name", "ann", "--role", "admin")
	if code != 0 || !strings.Contains(out, `Created user "ann"`) || strings.Contains(out+errOut, "correct horse") {
		t.Fatalf("create ann: exit %d, %q %q", code, out, errOut)
	}
	code, out, errOut = run(t, "", "users", "create", "--db", db, "--name", "bo", "--role", "auditor", "--link", "--console-url", "https://mem.example.com/console", "--json")
	var bo userJSON
	if code != 0 || json.Unmarshal([]byte(out), &bo) != nil || bo.Role != "auditor" ||
		!strings.HasPrefix(bo.SignInLink, "https://mem.example.com/console/link?t=memstore-link-") || bo.SignInLinkExpiry == nil {
		t.Fatalf("create bo --link: exit %d, %q %q", code, out, errOut)
	}
	for _, bad := range []struct {
		stdin string
		args  []string
		code  int
		says  string
	}{
		{"correct horse battery\n", []string{"--name", "ann"}, 1, "already exists"},
		{"short\n", []string{"--name", "cy"}, 1, "at least 12"},
		{"correct horse battery\n", []string{"--name", "dd", "--role", "owner"}, 2, "not one of"},
		{"correct horse battery\n", []string{"--name", "has space"}, 2, "may hold only"},
		{"", []string{"--name", "ee", "--link", "--console-url", "ftp://x"}, 2, "not an http"},
	} {
		code, out, errOut := run(t, bad.stdin, append([]string{"users", "create", "--db", db}, bad.args...)...)
		if code != bad.code || !strings.Contains(errOut, bad.says) {
			t.Errorf("create %v: exit %d, %q %q; want %d saying %q", bad.args, code, out, errOut, bad.code, bad.says)
		}
	}
	code, out, _ = run(t, "", "users", "ls", "--db", db, "--json")
	var all []userJSON
	if code != 0 || json.Unmarshal([]byte(out), &all) != nil || len(all) != 2 || all[0].Name != "ann" || all[1].Name != "bo" {
		t.Fatalf("ls: exit %d, %q", code, out)
	}
	if strings.Contains(out, "argon2") {
		t.Errorf("ls shows a password hash: %s", out)
	}
	if code, out, errOut := run(t, "another long password\n", "users", "passwd", "--db", db, "bo"); code != 0 || !strings.Contains(out, "signed them out") {
		t.Errorf("passwd bo: exit %d, %q %q", code, out, errOut)
	}
	if code, _, errOut := run(t, "short\n", "users", "passwd", "--db", db, "bo"); code != 1 || !strings.Contains(errOut, "nothing was changed") {
		t.Errorf("passwd bo short: exit %d, %q", code, errOut)
	}
	if code, _, errOut := run(t, "", "users", "rm", "--yes", "--db", db, "cy"); code != 1 || !strings.Contains(errOut, `no user "cy"`) {
		t.Errorf("rm cy: exit %d, %q", code, errOut)
	}
	if code, out, errOut := run(t, "", "users", "rm", "--yes", "--db", db, "bo"); code != 0 || !strings.Contains(out, `Removed user "bo"`) {
		t.Errorf("rm bo: exit %d, %q %q", code, out, errOut)
	}
	code, out, _ = run(t, "", "users", "ls", "--db", db)
	if code != 0 || !strings.Contains(out, "ann") || strings.Contains(out, "bo ") {
		t.Errorf("ls after rm: exit %d, %q", code, out)
	}
	if code, _, errOut := run(t, "", "users", "ls", "--db", db, "--workspace", "nope"); code != 1 || !strings.Contains(errOut, "nope") {
		t.Errorf("ls in an unknown workspace: exit %d, %q", code, errOut)
	}
}

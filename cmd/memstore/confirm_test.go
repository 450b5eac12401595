//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/memstore/memstore/httpapi"
)

// openPTY opens a pseudo-terminal: what is written to master is read from
// slave as a terminal's input.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	var unlock int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); errno != 0 {
		t.Fatalf("unlock the pseudo-terminal: %v", errno)
	}
	var n uint32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); errno != 0 {
		t.Fatalf("number the pseudo-terminal: %v", errno)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// runTTY runs memstore with a terminal as standard input, on which answer
// is typed.
func runTTY(t *testing.T, answer string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	master, slave := openPTY(t)
	if _, err := master.WriteString(answer + "\n"); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code = Main(context.Background(), args, slave, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestConfirm checks every command that cannot be undone: without a
// terminal and without --yes it refuses, saying to add --yes; on a
// terminal it asks, and does nothing unless the answer is yes; --yes does
// it without asking. Each refusal leaves everything as it was.
func TestConfirm(t *testing.T) {
	clearEnv(t)
	db := notesDatabase(t)
	cli := func(stdin string, args ...string) string {
		t.Helper()
		return mustRun(t, stdin, append(args, "--db", db)...)
	}
	id := func(out string) string {
		t.Helper()
		var v struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil || v.ID == "" {
			t.Fatalf("no ID in %q: %v", out, err)
		}
		return v.ID
	}
	cli("one\n", "put", "/a.md")
	cli("two\n", "put", "/a.md")
	var versions []httpapi.VersionJSON
	if err := json.Unmarshal([]byte(cli("", "log", "/a.md", "--json")), &versions); err != nil || len(versions) != 2 {
		t.Fatalf("log: %v %v", versions, err)
	}
	old := versions[1].ID
	session := id(cli("", "sessions", "create", "--store", "notes", "--json"))
	other := id(cli("", "sessions", "create", "--store", "notes", "--json"))
	key := id(cli("", "keys", "create", "--name", "ci", "--json"))
	cli("", "users", "create", "--name", "bo", "--link")
	hook := id(cli("", "webhooks", "create", "--endpoint-url", "https://hooks.example.com/in", "--event", "memstore.memory.created", "--json"))
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "kept.md"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Not read nor written for two days: prune would remove it.
	longAgo := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(filepath.Join(root, "kept.md"), longAgo, longAgo); err != nil {
		t.Fatal(err)
	}

	// unchanged reports what a refused or declined command must have left.
	unchanged := func(t *testing.T) {
		t.Helper()
		var st httpapi.StoreJSON
		if err := json.Unmarshal([]byte(cli("", "stores", "show", "notes", "--json")), &st); err != nil || st.ArchivedAt != nil {
			t.Errorf("the store was archived or deleted: %+v %v", st, err)
		}
		if out := cli("", "show", old); !strings.Contains(out, "/a.md") || !strings.Contains(out, "one") {
			t.Errorf("the version was redacted:\n%s", out)
		}
		for _, s := range []string{session, other} {
			var j httpapi.SessionJSON
			if err := json.Unmarshal([]byte(cli("", "sessions", "show", s, "--json")), &j); err != nil || j.ArchivedAt != nil {
				t.Errorf("session %s was ended or deleted: %+v %v", s, j, err)
			}
		}
		if out := cli("", "keys", "ls", "--json"); strings.Contains(out, `"revoked_at":"`) {
			t.Errorf("the key was revoked: %s", out)
		}
		if out := cli("", "users", "ls"); !strings.Contains(out, "bo") {
			t.Errorf("the user was removed: %s", out)
		}
		if out := cli("", "webhooks", "ls"); !strings.Contains(out, hook) {
			t.Errorf("the webhook was removed: %s", out)
		}
		if _, err := os.Stat(filepath.Join(root, "kept.md")); err != nil {
			t.Errorf("prune removed a file: %v", err)
		}
	}

	irreversible := [][]string{
		{"stores", "rm", "notes"},
		{"stores", "archive", "notes"},
		{"redact", old},
		{"sessions", "revoke", session},
		{"sessions", "rm", other},
		{"keys", "revoke", key},
		{"users", "rm", "bo"},
		{"webhooks", "rm", hook},
		{"tool", "prune", "--root", root, "--older-than", "1d"},
	}
	withDB := func(args []string) []string {
		if args[0] == "tool" {
			return args
		}
		return append(append([]string(nil), args...), "--db", db)
	}
	t.Run("no terminal", func(t *testing.T) {
		for _, args := range irreversible {
			code, out, errs := run(t, "y\n", withDB(args)...)
			if code != 2 || !strings.Contains(errs, "cannot be undone; add --yes to confirm") || out != "" {
				t.Errorf("memstore %s without a terminal: exit %d, stdout %q, stderr %q; want exit 2 and 'add --yes to confirm'", strings.Join(args, " "), code, out, errs)
			}
		}
		unchanged(t)
	})
	t.Run("declined", func(t *testing.T) {
		for _, args := range irreversible {
			code, out, errs := runTTY(t, "n", withDB(args)...)
			if code != 1 || !strings.Contains(errs, "This cannot be undone. [y/N]") || !strings.Contains(errs, "not confirmed; nothing was changed") || out != "" {
				t.Errorf("memstore %s answered n: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, errs)
			}
		}
		unchanged(t)
	})
	t.Run("confirmed", func(t *testing.T) {
		code, _, errs := runTTY(t, "y", withDB([]string{"redact", old})...)
		if code != 0 || !strings.Contains(errs, "Erase the path and content of version "+old) {
			t.Errorf("redact answered y: exit %d: %s", code, errs)
		}
		if out := cli("", "show", old); !strings.Contains(out, "(redacted)") {
			t.Errorf("redact answered y left the version:\n%s", out)
		}
		code, _, errs = runTTY(t, "yes", withDB([]string{"keys", "revoke", key})...)
		if code != 0 || !strings.Contains(cli("", "keys", "ls", "--json"), `"revoked_at":"`) {
			t.Errorf("keys revoke answered yes: exit %d: %s", code, errs)
		}
		code, out, errs := run(t, "", "tool", "prune", "--root", root, "--older-than", "1d", "--yes")
		if _, err := os.Stat(filepath.Join(root, "kept.md")); code != 0 || !os.IsNotExist(err) {
			t.Errorf("tool prune --yes: exit %d, %s %s; the expired file: %v", code, out, errs, err)
		}
		// --yes asks nothing, terminal or not.
		code, out, errs = runTTY(t, "n", withDB([]string{"stores", "rm", "notes", "--yes"})...)
		if code != 0 || strings.Contains(errs, "[y/N]") || !strings.Contains(out, "deleted memory store") {
			t.Errorf("stores rm --yes on a terminal: exit %d: %s %s", code, out, errs)
		}
	})
}

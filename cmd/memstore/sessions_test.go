package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore/httpapi"
)

// onDatabaseAndServer runs test twice, as subtests named "db" and "url":
// with backend the flags of a database file, and of a server (a child
// process) with its key.
func onDatabaseAndServer(t *testing.T, test func(t *testing.T, name string, backend []string)) {
	clearEnv(t)
	dir := t.TempDir()
	srv := startChild(t, filepath.Join(dir, "served.db"))
	for name, backend := range map[string][]string{
		"db":  {"--db", filepath.Join(dir, "local.db")},
		"url": {"--url", srv.url, "--api-key", srv.key},
	} {
		t.Run(name, func(t *testing.T) { test(t, name, backend) })
	}
}

// TestSessionsChange updates, attaches to, detaches from and deletes a
// session with the CLI, on a database and on a server, and checks what
// each step leaves and what a wrong command line is told.
func TestSessionsChange(t *testing.T) {
	onDatabaseAndServer(t, func(t *testing.T, _ string, backend []string) {
		cli := func(args ...string) (int, string, string) {
			t.Helper()
			return run(t, "", append(args, backend...)...)
		}
		session := func(args ...string) httpapi.SessionJSON {
			t.Helper()
			code, out, errs := cli(append(args, "--json")...)
			var s httpapi.SessionJSON
			if code != 0 || json.Unmarshal([]byte(out), &s) != nil {
				t.Fatalf("%v: exit %d: %s %s", args, code, out, errs)
			}
			return s
		}
		refused := func(code int, want string, args ...string) {
			t.Helper()
			c, out, errs := cli(args...)
			if c != code || !strings.Contains(errs, want) {
				t.Errorf("%v: exit %d, want %d with %q: %s %s", args, c, code, want, out, errs)
			}
		}
		var notes, prefs httpapi.StoreJSON
		for _, s := range []struct {
			name string
			into *httpapi.StoreJSON
		}{{"notes", &notes}, {"prefs", &prefs}} {
			code, out, errs := cli("stores", "create", s.name, "--json")
			if code != 0 || json.Unmarshal([]byte(out), s.into) != nil {
				t.Fatalf("stores create: %d %s %s", code, out, errs)
			}
		}
		id := session("sessions", "create", "--store", notes.ID).ID

		s := session("sessions", "update", id, "--title", "Nightly", "--metadata", "team=infra", "--metadata", "run=7")
		if s.Title != "Nightly" || s.Metadata["team"] != "infra" || s.Metadata["run"] != "7" {
			t.Errorf("after update: %+v", s)
		}
		s = session("sessions", "update", id, "--unset-metadata", "run")
		if s.Title != "Nightly" || len(s.Metadata) != 1 || s.Metadata["team"] != "infra" {
			t.Errorf("after unset: title %q metadata %v", s.Title, s.Metadata)
		}
		refused(2, "nothing to change", "sessions", "update", id)
		refused(2, `metadata key "team" is both set and unset`, "sessions", "update", id, "--metadata", "team=x", "--unset-metadata", "team")

		access := func(s httpapi.SessionJSON, store string) (string, string) {
			for _, r := range s.Resources {
				if r.MemoryStoreID == store {
					ins := ""
					if r.Instructions != nil {
						ins = *r.Instructions
					}
					return r.Access, ins
				}
			}
			return "", ""
		}
		s = session("sessions", "attach", id, "--store", prefs.ID+":ro", "--instructions", "House style.")
		if a, ins := access(s, prefs.ID); len(s.Resources) != 2 || a != "read_only" || ins != "House style." {
			t.Errorf("after attach: %+v", s.Resources)
		}
		// Attaching it again changes only what is given.
		s = session("sessions", "attach", id, "--store", prefs.ID+":rw")
		if a, ins := access(s, prefs.ID); len(s.Resources) != 2 || a != "read_write" || ins != "House style." {
			t.Errorf("after changing its access: %+v", s.Resources)
		}
		refused(2, "is already attached", "sessions", "attach", id, "--store", prefs.ID)
		refused(2, "give one --store ID", "sessions", "attach", id)
		refused(1, "not found", "sessions", "attach", id, "--store", "memstore_missing")

		s = session("sessions", "detach", id, "--store", prefs.ID)
		if a, _ := access(s, prefs.ID); len(s.Resources) != 1 || a != "" {
			t.Errorf("after detach: %+v", s.Resources)
		}
		refused(1, "not attached", "sessions", "detach", id, "--store", prefs.ID)
		refused(2, "give the --store ID", "sessions", "detach", id)

		code, out, errs := cli("sessions", "rm", id, "--json", "--yes")
		var del httpapi.DeletedJSON
		if code != 0 || json.Unmarshal([]byte(out), &del) != nil || del.Type != "session_deleted" || del.ID != id {
			t.Errorf("sessions rm: exit %d: %s %s", code, out, errs)
		}
		refused(1, "not found", "sessions", "show", id)
		refused(1, "not found", "sessions", "rm", id, "--yes")
	})
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore/httpapi"
)

// TestStoreNames names stores by name wherever a command names a store,
// on a database and on a server: --store of the memory commands, export,
// import, grep and sessions, the store argument of stores show, update,
// archive and rm, and MEMSTORE_STORE; a name shared by two stores is
// refused with both IDs, an unknown one with how to list the stores,
// and an archived store is found by name for reading, not for writing.
func TestStoreNames(t *testing.T) {
	onDatabaseAndServer(t, func(t *testing.T, name string, backend []string) {
		cli := func(stdin string, args ...string) (int, string, string) {
			t.Helper()
			return run(t, stdin, append(args, backend...)...)
		}
		ok := func(stdin string, args ...string) string {
			t.Helper()
			code, out, errs := cli(stdin, args...)
			if code != 0 {
				t.Fatalf("memstore %s: exit %d: %s", strings.Join(args, " "), code, errs)
			}
			return out
		}
		refused := func(code int, wants []string, args ...string) {
			t.Helper()
			c, out, errs := cli("", args...)
			if c != code {
				t.Errorf("memstore %s: exit %d, want %d: %s %s", strings.Join(args, " "), c, code, out, errs)
			}
			for _, w := range wants {
				if !strings.Contains(errs, w) {
					t.Errorf("memstore %s: stderr %q lacks %q", strings.Join(args, " "), errs, w)
				}
			}
		}
		create := func(name string) string {
			t.Helper()
			var s httpapi.StoreJSON
			if err := json.Unmarshal([]byte(ok("", "stores", "create", name, "--json")), &s); err != nil {
				t.Fatal(err)
			}
			return s.ID
		}
		notes, work, dup1, dup2, old := create("notes"), create("work"), create("dup"), create("dup"), create("old")
		ok("kept\n", "put", "--store", "old", "/old.md")
		ok("", "stores", "archive", "old", "--yes")

		// The memory commands, by name.
		ok("alpha beta\n", "put", "--store", "notes", "/a.md")
		if out := ok("", "cat", "--store", "notes", "/a.md"); out != "alpha beta\n" {
			t.Errorf("cat --store notes = %q", out)
		}
		if out := ok("", "cat", "--store", notes, "/a.md"); out != "alpha beta\n" {
			t.Errorf("cat --store ID = %q", out)
		}
		if out := ok("", "ls", "--store", "notes"); !strings.Contains(out, "/a.md") {
			t.Errorf("ls --store notes:\n%s", out)
		}
		var versions []httpapi.VersionJSON
		if err := json.Unmarshal([]byte(ok("", "log", "--store", "notes", "--json")), &versions); err != nil || len(versions) != 1 || versions[0].MemoryStoreID != notes {
			t.Errorf("log --store notes: %+v, %v", versions, err)
		}
		if out := ok("", "grep", "alpha", "--store", "notes"); !strings.Contains(out, "/a.md") {
			t.Errorf("grep --store notes:\n%s", out)
		}
		dir := filepath.Join(t.TempDir(), "out")
		ok("", "export", "--store", "notes", dir)
		ok("", "import", "--store", "work", dir)
		if out := ok("", "cat", "--store", "work", "/a.md"); out != "alpha beta\n" {
			t.Errorf("after import --store work: %q", out)
		}
		ok("", "rm", "--store", "work", "/a.md")
		t.Setenv("MEMSTORE_STORE", "notes")
		if out := ok("", "cat", "/a.md"); out != "alpha beta\n" {
			t.Errorf("MEMSTORE_STORE=notes cat = %q", out)
		}
		t.Setenv("MEMSTORE_STORE", "")

		// The stores commands, by name.
		var s httpapi.StoreJSON
		if err := json.Unmarshal([]byte(ok("", "stores", "update", "notes", "--description", "by name", "--json")), &s); err != nil || s.ID != notes || s.Description != "by name" {
			t.Errorf("stores update notes: %+v, %v", s, err)
		}
		if err := json.Unmarshal([]byte(ok("", "stores", "show", "old", "--json")), &s); err != nil || s.ID != old {
			t.Errorf("stores show old (archived): %+v, %v", s, err)
		}

		// Sessions, by name.
		var ses httpapi.SessionJSON
		if err := json.Unmarshal([]byte(ok("", "sessions", "create", "--store", "notes:ro", "--store", "work", "--json")), &ses); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range ses.Resources {
			got[r.MemoryStoreID] = r.Access
		}
		if got[notes] != "read_only" || got[work] != "read_write" || len(got) != 2 {
			t.Errorf("sessions create --store notes:ro --store work: %v", got)
		}
		var list []httpapi.SessionJSON
		if err := json.Unmarshal([]byte(ok("", "sessions", "ls", "--store", "work", "--json")), &list); err != nil || len(list) != 1 || list[0].ID != ses.ID {
			t.Errorf("sessions ls --store work: %+v, %v", list, err)
		}
		// The memory tool, and memdir sync (a server's only).
		if out := ok(`{"command":"view","path":"/memories"}`+"\n", "tool", "--store", "notes"); !strings.Contains(out, "a.md") {
			t.Errorf("tool --store notes: %s", out)
		}
		if name == "url" {
			memdir := t.TempDir()
			ok("", "memdir", "sync", "--dir", memdir, "--store", "notes")
			if b, err := os.ReadFile(filepath.Join(memdir, "a.md")); err != nil || string(b) != "alpha beta\n" {
				t.Errorf("memdir sync --store notes: a.md = %q, %v", b, err)
			}
			if code, _, errs := cli("", "memdir", "sync", "--dir", memdir, "--store", "dup"); code != 2 || !strings.Contains(errs, `2 memory stores are named "dup"`) {
				t.Errorf("memdir sync --store dup: exit %d: %s", code, errs)
			}
			bench := []string{"bench", "--duration", "100ms", "--concurrency", "1", "--memories", "1", "--mix", "read", "--json"}
			ok("", append(bench, "--store", "work")...)
			refused(1, []string{`2 memory stores are named "dup"`}, append(bench, "--store", "dup")...)
		}
		ok("", "sessions", "detach", ses.ID, "--store", "work")
		ok("", "sessions", "attach", ses.ID, "--store", "work:ro")
		if name == "url" {
			// A session's token names its own stores by name.
			code, out, errs := run(t, `{"command":"view","path":"/memories"}`+"\n", "tool", "--url", backend[1], "--token", ses.Token, "--store", "notes")
			if code != 0 || !strings.Contains(out, "a.md") {
				t.Errorf("tool --token --store notes: exit %d: %s %s", code, out, errs)
			}
			code, _, errs = run(t, "", "tool", "--url", backend[1], "--token", ses.Token, "--store", "dup")
			if code != 1 || !strings.Contains(errs, "session "+ses.ID+` has no memory store named "dup"`) {
				t.Errorf("tool --token --store dup: exit %d: %s", code, errs)
			}
		}

		// Two stores named dup, and no store named nope.
		refused(1, []string{`2 memory stores are named "dup"`, dup1, dup2, "give one by its ID"}, "ls", "--store", "dup")
		refused(1, []string{`2 memory stores are named "dup"`}, "stores", "show", "dup")
		refused(1, []string{`2 memory stores are named "dup"`}, "sessions", "create", "--store", "dup")
		refused(1, []string{`no memory store named "nope"`, "'memstore stores ls'"}, "cat", "--store", "nope", "/a.md")
		refused(1, []string{`no memory store named "nope"`}, "stores", "rm", "nope", "--yes")

		// An archived store is read by name, not written.
		if out := ok("", "cat", "--store", "old", "/old.md"); out != "kept\n" {
			t.Errorf("cat --store old = %q", out)
		}
		refused(1, []string{`the memory store named "old" is archived (` + old + ")"}, "put", "--store", "old", "/x.md")
		refused(1, []string{"is archived"}, "sessions", "create", "--store", "old")
		// A live store of the same name wins over the archived one.
		again := create("old")
		if err := json.Unmarshal([]byte(ok("", "stores", "show", "old", "--json")), &s); err != nil || s.ID != again {
			t.Errorf("stores show old, with a live and an archived one: %+v, %v; want %s", s, err, again)
		}

		refused(1, []string{`2 memory stores are named "dup"`}, "stores", "rm", "dup", "--yes")
		var ids []string
		var all []httpapi.StoreJSON
		if err := json.Unmarshal([]byte(ok("", "stores", "ls", "--archived", "--json")), &all); err != nil {
			t.Fatal(err)
		}
		for _, s := range all {
			ids = append(ids, s.ID)
		}
		if !slices.Contains(ids, dup1) || !slices.Contains(ids, dup2) {
			t.Errorf("stores rm dup removed a store: %v", ids)
		}
	})
}

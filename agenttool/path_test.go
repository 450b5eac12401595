package agenttool_test

import (
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// TestPaths resolves the paths a model may send, in sessions with one
// store and with two: a mount path, a plain path (one store only), and
// every way of leaving a mount or naming something that is not a memory.
// No failing call changes anything.
func TestPaths(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	notes := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Notes"})
	prefs := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "User Preferences"})
	sqlitetest.Create(t, db, ws, notes.ID, "/a.md", "alpha\n", admin)
	sqlitetest.Create(t, db, ws, notes.ID, "/dir/b.md", "beta\n", admin)
	sqlitetest.Create(t, db, ws, prefs.ID, "/style.md", "tabs\n", admin)
	one := newToolset(t, services(db), newSession(attach{store: notes}))
	two := newToolset(t, services(db), newSession(attach{store: notes}, attach{store: prefs, readOnly: true}))

	oneMount := "The memory store attached is /mnt/memory/notes/ (read-write)."
	twoMounts := "The memory stores attached are /mnt/memory/notes/ (read-write), /mnt/memory/user-preferences/ (read-only)."
	tests := []struct {
		name string
		two  bool   // in the session with two stores
		path string // read, then written with new content
		want string // in the read's result; an error unless it starts with /mnt/memory/
	}{
		{"mount path", false, "/mnt/memory/notes/a.md", "/mnt/memory/notes/a.md: 6 bytes, 1 line,"},
		{"plain path, one store", false, "/a.md", "/mnt/memory/notes/a.md: 6 bytes, 1 line,"},
		{"deeper plain path", false, "/dir/b.md", "/mnt/memory/notes/dir/b.md: 5 bytes"},
		{"mount path, two stores", true, "/mnt/memory/user-preferences/style.md", "/mnt/memory/user-preferences/style.md: 5 bytes"},
		{"plain path, two stores", true, "/a.md", "Error: Several memory stores are attached, so /a.md is ambiguous: give the full path, starting with the mount path of a store, such as /mnt/memory/notes/a.md. " + twoMounts},
		{"unknown mount", false, "/mnt/memory/other/a.md", "Error: There is no memory store mounted at /mnt/memory/other/. " + oneMount},
		{"unknown mount, two stores", true, "/mnt/memory/notesx/a.md", "Error: There is no memory store mounted at /mnt/memory/notesx/. " + twoMounts},
		{"empty slug", false, "/mnt/memory//a.md", "Error: The path /mnt/memory//a.md has no store directory after /mnt/memory/. " + oneMount},
		{"relative", false, "a.md", `Error: The path "a.md" is not absolute. Give the full path, such as /mnt/memory/notes/notes.md. ` + oneMount},
		{"relative mount", true, "mnt/memory/notes/a.md", `Error: The path "mnt/memory/notes/a.md" is not absolute.`},
		{"root of mounts", true, "/mnt/memory", "Error: /mnt/memory/ is the directory of all memory stores, not a memory."},
		{"root of mounts with /", false, "/mnt/memory/", "Error: /mnt/memory/ is the directory of all memory stores, not a memory."},
		{"a mount", false, "/mnt/memory/notes", `Error: /mnt/memory/notes/ is the directory of the memory store "Notes", not a memory.`},
		{"a mount with /", true, "/mnt/memory/notes/", `Error: /mnt/memory/notes/ is the directory of the memory store "Notes", not a memory.`},
		{"plain root", false, "/", `Error: /mnt/memory/notes/ is the directory of the memory store "Notes", not a memory.`},
		{"directory with /", false, "/mnt/memory/notes/dir/", "Error: /mnt/memory/notes/dir/ ends with /, so it names a directory, not a memory. memory_list with path_prefix /mnt/memory/notes/dir/ shows what it holds"},
		{"traversal to another mount", true, "/mnt/memory/notes/../user-preferences/style.md", `Error: Invalid path: path must not contain . or .. segments (path "/mnt/memory/notes/../user-preferences/style.md" has a ".." segment). Paths are used exactly as given, never resolved`},
		{"traversal out of the mounts", false, "/mnt/memory/notes/../../etc/passwd", `has a ".." segment`},
		{"plain traversal", false, "/../a.md", `Error: Invalid path: path must not contain . or .. segments (path "/mnt/memory/notes/../a.md" has a ".." segment).`},
		{"dot segment", false, "/mnt/memory/notes/./a.md", `has a "." segment`},
		{"encoded dots", false, "/mnt/memory/notes/%2e%2e/a.md", "Error: The path /mnt/memory/notes/%2e%2e/a.md contains the percent-escape %2e, which memory paths do not allow; write paths literally. " + oneMount},
		{"encoded slash, upper case", true, "/mnt/memory/notes/a%2Fb.md", "contains the percent-escape %2f"},
		{"encoded percent", false, "/mnt/memory/notes/%252e", "contains the percent-escape %25"},
		{"NUL", false, "/mnt/memory/notes/a\x00.md", `Error: The path "/mnt/memory/notes/a\x00.md" contains a NUL character`},
		{"doubled slash", false, "/mnt/memory/notes//a.md", `Error: Invalid path: path "/mnt/memory/notes//a.md" has an empty segment (a trailing or doubled /).`},
		{"control character", false, "/mnt/memory/notes/a\u202e.md", "contains the control or format character U+202E"},
		{"not NFC", false, "/mnt/memory/notes/e\u0301.md", "is not in Unicode NFC"},
		{"too deep", false, "/mnt/memory/notes" + strings.Repeat("/x", 21), "has 21 segments; the limit is 20"},
		{"too long", false, "/mnt/memory/notes/" + strings.Repeat("x", 1024), "path is 1025 bytes long; the limit is 1024"},
		{"a directory", false, "/mnt/memory/notes/dir", "Error: /mnt/memory/notes/dir is a directory, not a memory. memory_list with path_prefix /mnt/memory/notes/dir/ shows what it holds."},
		{"no such memory", false, "/mnt/memory/notes/c.md", "Error: There is no memory at /mnt/memory/notes/c.md. memory_list shows the memories that exist; memory_search finds them by their text."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := one
			if tt.two {
				ts = two
			}
			r := call(t, ts, "memory_read", map[string]any{"path": tt.path})
			if r.IsError == strings.HasPrefix(tt.want, "/mnt/memory/") || !strings.Contains(r.Text, tt.want) {
				t.Fatalf("read %q:\n%s\nwant (is error %v):\n%s", tt.path, r.Text, r.IsError, tt.want)
			}
			if !r.IsError {
				return
			}
			// The same path cannot be written either, and nothing is.
			before := db.Counts
			n1, err := before(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			w := call(t, ts, "memory_write", map[string]any{"path": tt.path, "content": "x"})
			if !w.IsError {
				if tt.name == "no such memory" {
					return // writing creates it: that is what write is for
				}
				t.Fatalf("write %q succeeded: %s", tt.path, w.Text)
			}
			n2, err := db.Counts(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			// The search indexer empties its queue meanwhile: not a
			// change of what the database holds.
			n1.SearchBacklog, n2.SearchBacklog = 0, 0
			if n1 != n2 {
				t.Fatalf("a refused write changed the database: %+v, then %+v", n1, n2)
			}
		})
	}
	wantContent(t, db, notes.ID, "/a.md", "alpha\n")
	wantContent(t, db, prefs.ID, "/style.md", "tabs\n")
}

// TestNoStores: a session may have no store attached; every tool then
// says so.
func TestNoStores(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	ts := newToolset(t, services(db), newSession())
	if got := ok(t, ts, "memory_list", nil); got != "No memory store is attached to this session, so there is no memory to list." {
		t.Errorf("list: %s", got)
	}
	for _, c := range []struct{ tool, args string }{
		{"memory_search", `{"query": "x"}`},
		{"memory_read", `{"path": "/a.md"}`},
		{"memory_write", `{"path": "/a.md", "content": "x"}`},
		{"memory_edit", `{"path": "/a.md", "old_str": "x", "new_str": "y"}`},
		{"memory_delete", `{"path": "/a.md"}`},
	} {
		wantContains(t, fails(t, ts, c.tool, c.args), "No memory store is attached to this session")
	}
}

// TestMissingMountPaths: attachments without mount paths get those that
// AssignMountPaths gives.
func TestMissingMountPaths(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	notes := newStore(t, db, "Notes", "/a.md", "alpha\n")
	s := newSession(attach{store: notes})
	s.Attachments[0].MountPath = ""
	ts := newToolset(t, services(db), s)
	wantContains(t, ok(t, ts, "memory_read", map[string]any{"path": "/mnt/memory/notes/a.md"}), "/mnt/memory/notes/a.md: 6 bytes")
}

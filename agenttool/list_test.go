package agenttool_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// listFixture is a session with three stores: Notes (read-write, with
// nested memories), User Preferences (read-only) and Empty.
func listFixture(t *testing.T) (*sqlite.DB, *memstore.Session, *memstore.Store) {
	t.Helper()
	db := sqlitetest.Open(t, sqliteOptions)
	notes := newStore(t, db, "Notes", "/a.md", "alpha\n", "/projects/plan.md", "plan",
		"/projects/web/todo.md", "x", "/projects-old/x.md", "old")
	prefs := newStore(t, db, "User Preferences", "/style.md", "tabs")
	empty := newStore(t, db, "Empty")
	return db, newSession(attach{store: notes}, attach{store: prefs, readOnly: true}, attach{store: empty}), notes
}

func TestList(t *testing.T) {
	db, s, _ := listFixture(t)
	ts := newToolset(t, services(db), s)
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"every store", nil, `3 memory stores are attached to this session. Entries up to 2 levels deep in each; an entry ending in / is a directory, which path_prefix lists.

/mnt/memory/notes/ — memory store "Notes", read-write
/mnt/memory/notes/a.md  6 bytes
/mnt/memory/notes/projects-old/x.md  3 bytes
/mnt/memory/notes/projects/plan.md  4 bytes
/mnt/memory/notes/projects/web/  (directory)

/mnt/memory/user-preferences/ — memory store "User Preferences", read-only
/mnt/memory/user-preferences/style.md  4 bytes

/mnt/memory/empty/ — memory store "Empty", read-write
(no memories yet)`},
		{"the root of the mounts", map[string]any{"path_prefix": "/mnt/memory/", "depth": 1}, `3 memory stores are attached to this session. Entries directly in each; an entry ending in / is a directory, which path_prefix lists.

/mnt/memory/notes/ — memory store "Notes", read-write
/mnt/memory/notes/a.md  6 bytes
/mnt/memory/notes/projects-old/  (directory)
/mnt/memory/notes/projects/  (directory)

/mnt/memory/user-preferences/ — memory store "User Preferences", read-only
/mnt/memory/user-preferences/style.md  4 bytes

/mnt/memory/empty/ — memory store "Empty", read-write
(no memories yet)`},
		{"a mount", map[string]any{"path_prefix": "/mnt/memory/notes"}, `Entries up to 2 levels deep in /mnt/memory/notes/ (memory store "Notes", read-write):
/mnt/memory/notes/a.md  6 bytes
/mnt/memory/notes/projects-old/x.md  3 bytes
/mnt/memory/notes/projects/plan.md  4 bytes
/mnt/memory/notes/projects/web/  (directory)`},
		{"a directory", map[string]any{"path_prefix": "/mnt/memory/notes/projects", "depth": 1}, `Entries directly in /mnt/memory/notes/projects/ (memory store "Notes", read-write):
/mnt/memory/notes/projects/plan.md  4 bytes
/mnt/memory/notes/projects/web/  (directory)`},
		{"a directory with /", map[string]any{"path_prefix": "/mnt/memory/notes/projects/", "depth": 0}, `Every memory in /mnt/memory/notes/projects/ (memory store "Notes", read-write):
/mnt/memory/notes/projects/plan.md  4 bytes
/mnt/memory/notes/projects/web/todo.md  1 byte`},
		{"a read-only mount", map[string]any{"path_prefix": "/mnt/memory/user-preferences/"}, `Entries up to 2 levels deep in /mnt/memory/user-preferences/ (memory store "User Preferences", read-only):
/mnt/memory/user-preferences/style.md  4 bytes`},
		{"an empty mount", map[string]any{"path_prefix": "/mnt/memory/empty"}, `Entries up to 2 levels deep in /mnt/memory/empty/ (memory store "Empty", read-write):
(no memories yet)`},
		{"part of a name is no directory", map[string]any{"path_prefix": "/mnt/memory/notes/proj"}, `Entries up to 2 levels deep in /mnt/memory/notes/proj/ (memory store "Notes", read-write):
(empty: no memory is below this directory)`},
		{"a memory", map[string]any{"path_prefix": "/mnt/memory/notes/a.md"}, `Entries up to 2 levels deep in /mnt/memory/notes/a.md/ (memory store "Notes", read-write):
(empty: /mnt/memory/notes/a.md is a memory, not a directory; read it with memory_read)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ok(t, ts, "memory_list", tt.args); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}

	t.Run("plain path with one store", func(t *testing.T) {
		one := newToolset(t, services(db), newSession(attach{store: storeOf(t, db, s, 0)}))
		want := "Entries up to 2 levels deep in /mnt/memory/notes/projects/ (memory store \"Notes\", read-write):\n/mnt/memory/notes/projects/plan.md  4 bytes\n/mnt/memory/notes/projects/web/todo.md  1 byte"
		if got := ok(t, one, "memory_list", map[string]any{"path_prefix": "/projects"}); got != want {
			t.Errorf("got:\n%s\nwant:\n%s", got, want)
		}
		wantContains(t, ok(t, one, "memory_list", nil), "1 memory store is attached to this session.", "/mnt/memory/notes/a.md  6 bytes")
	})

	for _, bad := range []struct{ prefix, want string }{
		{"/projects", "Several memory stores are attached, so /projects is ambiguous"},
		{"/mnt/memory/nope/", "There is no memory store mounted at /mnt/memory/nope/."},
		{"/mnt/memory/notes/../user-preferences", `has a ".." segment`},
		{"/mnt/memory/notes/a//b", "has an empty segment"},
		{"notes", "is not absolute"},
	} {
		t.Run("bad prefix "+bad.prefix, func(t *testing.T) {
			wantContains(t, fails(t, ts, "memory_list", map[string]any{"path_prefix": bad.prefix}), bad.want)
		})
	}
}

// storeOf returns the store of a session's i-th attachment.
func storeOf(t *testing.T, db *sqlite.DB, s *memstore.Session, i int) *memstore.Store {
	t.Helper()
	st, err := db.Store(t.Context(), ws, s.Attachments[i].StoreID)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestListLimit: a list stops at MaxListEntries entries, through several
// pages, and says how to narrow it.
func TestListLimit(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	big := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Big"})
	small := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Small"})
	for i := range 205 {
		sqlitetest.Create(t, db, ws, big.ID, fmt.Sprintf("/m%03d.md", i), "x", admin)
	}
	sqlitetest.Create(t, db, ws, small.ID, "/s.md", "s", admin)
	ms := hook(db, nil)
	ts := newToolset(t, agenttoolServices(ms, db), newSession(attach{store: big}, attach{store: small}))

	got := ok(t, ts, "memory_list", map[string]any{"path_prefix": "/mnt/memory/big"})
	lines := strings.Split(got, "\n")
	entries := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "/mnt/memory/big/m") {
			entries++
		}
	}
	if entries != 200 || !strings.Contains(got, "/mnt/memory/big/m199.md  1 byte") || strings.Contains(got, "m200.md") {
		t.Fatalf("%d entries, want 200, m000 to m199:\n%s", entries, got)
	}
	if last := lines[len(lines)-1]; last != "[Only the first 200 entries are shown; there are more. Narrow the list with a deeper path_prefix or a smaller depth.]" {
		t.Errorf("last line %q", last)
	}
	if ms.calls["Memories"] < 3 {
		t.Errorf("%d list calls: pages hold at most 100 items, so 200 entries take at least 3", ms.calls["Memories"])
	}

	// Listing every store: the second is named with the way to list it.
	got = ok(t, ts, "memory_list", nil)
	wantContains(t, got, "/mnt/memory/big/m199.md  1 byte",
		"/mnt/memory/small/ — memory store \"Small\", read-write\n(not listed: the 200-entry limit was reached; list it with path_prefix /mnt/memory/small/)",
		"[Only the first 200 entries are shown; there are more.")

	// Exactly 200 entries: all shown, no note.
	if err := sqlitetest.Writer(db).DeleteMemory(context.Background(), ws, big.ID, mustFind(t, db, big.ID, "/m204.md").ID, "", admin); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/m203.md", "/m202.md", "/m201.md", "/m200.md"} {
		if err := sqlitetest.Writer(db).DeleteMemory(context.Background(), ws, big.ID, mustFind(t, db, big.ID, p).ID, "", admin); err != nil {
			t.Fatal(err)
		}
	}
	got = ok(t, ts, "memory_list", map[string]any{"path_prefix": "/mnt/memory/big/"})
	if strings.Count(got, "\n/mnt/memory/big/m") != 200 || strings.Contains(got, "[Only") {
		t.Errorf("200 memories: want all listed and no note:\n%s", got[len(got)-200:])
	}
}

func mustFind(t *testing.T, db *sqlite.DB, storeID, path string) *memstore.Memory {
	t.Helper()
	m, err := memstore.FindMemory(t.Context(), memstore.NewCore(db), adminCaller, storeID, path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

package agenttool_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/agenttool"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

func TestWrite(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	notes := newStore(t, db, "Notes", "/a.md", "alpha\n", "/projects/plan.md", "plan")
	ts := newToolset(t, services(db), newSession(attach{store: notes}))

	created := "first line\nsecond\n"
	got := ok(t, ts, "memory_write", map[string]any{"path": "/mnt/memory/notes/new/deep/n.md", "content": created})
	if want := fmt.Sprintf("Created /mnt/memory/notes/new/deep/n.md: %d bytes, 2 lines.\ncontent_sha256: %s", len(created), sha(created)); got != want {
		t.Errorf("create:\n%s\nwant:\n%s", got, want)
	}
	wantContent(t, db, notes.ID, "/new/deep/n.md", created)

	updated := "replaced"
	got = ok(t, ts, "memory_write", map[string]any{"path": "/new/deep/n.md", "content": updated})
	if want := fmt.Sprintf("Updated /mnt/memory/notes/new/deep/n.md: 8 bytes, 1 line (it was %d bytes).\ncontent_sha256: %s", len(created), sha(updated)); got != want {
		t.Errorf("update:\n%s\nwant:\n%s", got, want)
	}
	wantContent(t, db, notes.ID, "/new/deep/n.md", updated)

	got = ok(t, ts, "memory_write", map[string]any{"path": "/new/deep/n.md", "content": updated})
	if want := "Unchanged: /mnt/memory/notes/new/deep/n.md already has exactly this content (8 bytes).\ncontent_sha256: " + sha(updated); got != want {
		t.Errorf("same content again:\n%s\nwant:\n%s", got, want)
	}
	versions, err := db.Versions(t.Context(), ws, notes.ID, memstore.VersionFilter{MemoryID: mustFind(t, db, notes.ID, "/new/deep/n.md").ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(versions.Items) != 2 {
		t.Errorf("%d versions, want 2: writing the same content again makes none", len(versions.Items))
	}

	got = ok(t, ts, "memory_write", map[string]any{"path": "/empty.md", "content": ""})
	if want := "Created /mnt/memory/notes/empty.md: 0 bytes, 0 lines.\ncontent_sha256: " + sha(""); got != want {
		t.Errorf("empty:\n%s\nwant:\n%s", got, want)
	}

	for _, bad := range []struct{ name, path, content, want string }{
		{"under a memory", "/a.md/b.md", "x", "Error: /mnt/memory/notes/a.md/b.md cannot be created: /mnt/memory/notes/a.md is a memory, and a memory cannot also be a directory holding others. Choose another path, or first move that memory (write its text to a new path, then delete it)."},
		{"over a directory", "/projects", "x", "Error: /mnt/memory/notes/projects cannot be created: it is a directory holding /mnt/memory/notes/projects/plan.md, and a path cannot be both a directory and a memory. Choose another path, such as /mnt/memory/notes/projects.md."},
		{"too large", "/big.md", strings.Repeat("x", memstore.MaxContentBytes+1), "Error: content is 102401 bytes, over the 102400-byte limit of a memory, so /mnt/memory/notes/big.md was not written. Split the text into several smaller memories, one per topic."},
	} {
		t.Run(bad.name, func(t *testing.T) {
			if got := fails(t, ts, "memory_write", map[string]any{"path": bad.path, "content": bad.content}); got != bad.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, bad.want)
			}
			wantAbsent(t, db, notes.ID, bad.path)
		})
	}
	wantContent(t, db, notes.ID, "/a.md", "alpha\n")
	wantContent(t, db, notes.ID, "/projects/plan.md", "plan")
	// The largest content is accepted.
	ok(t, ts, "memory_write", map[string]any{"path": "/big.md", "content": strings.Repeat("x", memstore.MaxContentBytes)})
}

func TestWriteLimitsAndArchive(t *testing.T) {
	db := sqlitetest.Open(t, sqlite.Options{})
	notes := newStore(t, db, "Notes", "/a.md", "alpha\n")
	ts := newToolset(t, services(db, memstore.MaxMemoriesPerStore(1)), newSession(attach{store: notes}))
	got := fails(t, ts, "memory_write", map[string]any{"path": "/b.md", "content": "x"})
	wantContains(t, got, "Error: /mnt/memory/notes/b.md: memory store has reached its memory limit (memory store "+notes.ID+" is at its limit of 1 memories; delete some before creating more, or have the server's operator raise the limit (memstore serve --max-memories-per-store)).")
	wantAbsent(t, db, notes.ID, "/b.md")

	if _, err := sqlitetest.Writer(db).ArchiveStore(t.Context(), ws, notes.ID, memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_test"}); err != nil {
		t.Fatal(err)
	}
	archived := "The memory store mounted at /mnt/memory/notes/ is archived: its memories can still be listed, searched and read, but not created, changed or deleted."
	for _, c := range []struct{ tool, args string }{
		{"memory_write", `{"path": "/a.md", "content": "new"}`},
		{"memory_write", `{"path": "/c.md", "content": "new"}`},
		{"memory_edit", `{"path": "/a.md", "old_str": "alpha", "new_str": "beta"}`},
		{"memory_delete", `{"path": "/a.md"}`},
	} {
		if got := fails(t, ts, c.tool, c.args); got != "Error: "+archived {
			t.Errorf("%s %s on an archived store:\n%s\nwant:\n%s", c.tool, c.args, got, archived)
		}
	}
	wantContent(t, db, notes.ID, "/a.md", "alpha\n")
	wantContains(t, ok(t, ts, "memory_read", map[string]any{"path": "/a.md"}), "     1\talpha")
}

func TestEdit(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	notes := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Notes"})
	text := "one\ntwo\nthree\nfour\nfive\nsix\n"
	sqlitetest.Create(t, db, ws, notes.ID, "/n.md", text, admin)
	sqlitetest.Create(t, db, ws, notes.ID, "/dir/x.md", "x", admin)
	ts := newToolset(t, services(db), newSession(attach{store: notes}))

	edited := "one\ntwo\nthree\nFOUR\n4b\nfive\nsix\n"
	got := ok(t, ts, "memory_edit", map[string]any{"path": "/mnt/memory/notes/n.md", "old_str": "four", "new_str": "FOUR\n4b", "expected_sha256": strings.ToUpper(sha(text))})
	want := fmt.Sprintf("Edited /mnt/memory/notes/n.md: %d bytes, 7 lines.\ncontent_sha256: %s\nThe edited part, with line numbers:\n"+
		"     2\ttwo\n     3\tthree\n     4\tFOUR\n     5\t4b\n     6\tfive\n     7\tsix", len(edited), sha(edited))
	if got != want {
		t.Errorf("edit:\n%s\nwant:\n%s", got, want)
	}
	wantContent(t, db, notes.ID, "/n.md", edited)

	// A multi-line old_str, replaced by nothing.
	edited2 := "one\ntwo\nthree\nfive\nsix\n"
	got = ok(t, ts, "memory_edit", map[string]any{"path": "/n.md", "old_str": "FOUR\n4b\n", "new_str": ""})
	want = fmt.Sprintf("Edited /mnt/memory/notes/n.md: %d bytes, 5 lines.\ncontent_sha256: %s\nThe edited part, with line numbers:\n"+
		"     2\ttwo\n     3\tthree\n     4\tfive\n     5\tsix", len(edited2), sha(edited2))
	if got != want {
		t.Errorf("multi-line edit:\n%s\nwant:\n%s", got, want)
	}
	wantContent(t, db, notes.ID, "/n.md", edited2)

	got = ok(t, ts, "memory_edit", map[string]any{"path": "/n.md", "old_str": "two", "new_str": "two"})
	if want := "Unchanged: old_str and new_str are the same, so /mnt/memory/notes/n.md was left as it is.\ncontent_sha256: " + sha(edited2); got != want {
		t.Errorf("same text:\n%s\nwant:\n%s", got, want)
	}

	sqlitetest.Create(t, db, ws, notes.ID, "/whole.md", "all of it", admin)
	got = ok(t, ts, "memory_edit", map[string]any{"path": "/whole.md", "old_str": "all of it", "new_str": ""})
	if want := "Edited /mnt/memory/notes/whole.md: 0 bytes, 0 lines.\ncontent_sha256: " + sha("") + "\nThe memory is now empty."; got != want {
		t.Errorf("emptied:\n%s\nwant:\n%s", got, want)
	}

	sqlitetest.Create(t, db, ws, notes.ID, "/big.md", strings.Repeat("x", memstore.MaxContentBytes-10)+"MARK", admin)
	sqlitetest.Create(t, db, ws, notes.ID, "/many.md", "a x\nb\nx x\n", admin)
	for _, bad := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"not found", map[string]any{"path": "/n.md", "old_str": "seven", "new_str": "7"},
			"Error: old_str does not occur in /mnt/memory/notes/n.md, so nothing was changed. It must match the memory's text exactly, spaces, indentation and line breaks included, and without the line numbers and tabs that memory_read adds. Read the memory with memory_read and copy the text from it."},
		{"with a line number", map[string]any{"path": "/n.md", "old_str": "     2\ttwo", "new_str": "2"}, "Error: old_str does not occur in /mnt/memory/notes/n.md"},
		{"several times", map[string]any{"path": "/many.md", "old_str": "x", "new_str": "y"},
			"Error: old_str occurs 3 times in /mnt/memory/notes/many.md (starting on lines 1, 3), so nothing was changed. Include more of the surrounding text in old_str so that it occurs exactly once."},
		{"overlapping", map[string]any{"path": "/many.md", "old_str": "x x", "new_str": "y"}, ""},
		{"stale hash", map[string]any{"path": "/n.md", "old_str": "two", "new_str": "2", "expected_sha256": sha(text)},
			"Error: /mnt/memory/notes/n.md has changed since you saw it: its content_sha256 is now " + sha(edited2) + ", not " + sha(text) + ". Nothing was edited. Read it again with memory_read and make the edit on its current text."},
		{"too large", map[string]any{"path": "/big.md", "old_str": "MARK", "new_str": strings.Repeat("y", 100)},
			fmt.Sprintf("Error: The edit would make /mnt/memory/notes/big.md %d bytes, over the 102400-byte limit of a memory, so nothing was changed. Move some of its text into another memory.", memstore.MaxContentBytes-10+100)},
		{"no memory", map[string]any{"path": "/nope.md", "old_str": "a", "new_str": "b"}, "Error: There is no memory at /mnt/memory/notes/nope.md."},
		{"a directory", map[string]any{"path": "/dir", "old_str": "a", "new_str": "b"}, "Error: /mnt/memory/notes/dir is a directory, not a memory."},
	} {
		t.Run(bad.name, func(t *testing.T) {
			before, _ := content(t, db, notes.ID, bad.args["path"].(string))
			got := call(t, ts, "memory_edit", bad.args)
			if bad.want == "" { // "x x" occurs once: a success
				if got.IsError {
					t.Fatalf("error: %s", got.Text)
				}
				wantContent(t, db, notes.ID, "/many.md", "a x\nb\ny\n")
				return
			}
			if !got.IsError || !strings.HasPrefix(got.Text, bad.want) {
				t.Errorf("got:\n%s\nwant:\n%s", got.Text, bad.want)
			}
			after, _ := content(t, db, notes.ID, bad.args["path"].(string))
			if after != before {
				t.Errorf("a failed edit changed the memory to %q", after)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	notes := newStore(t, db, "Notes", "/a.md", "alpha\n", "/dir/b.md", "b")
	ts := newToolset(t, services(db), newSession(attach{store: notes}))

	if got, want := ok(t, ts, "memory_delete", map[string]any{"path": "/mnt/memory/notes/a.md"}), "Deleted /mnt/memory/notes/a.md (6 bytes)."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	wantAbsent(t, db, notes.ID, "/a.md")
	if got := fails(t, ts, "memory_delete", map[string]any{"path": "/a.md"}); !strings.HasPrefix(got, "Error: There is no memory at /mnt/memory/notes/a.md.") {
		t.Errorf("deleting again: %s", got)
	}
	got := fails(t, ts, "memory_delete", map[string]any{"path": "/dir"})
	if want := "Error: /mnt/memory/notes/dir is a directory, not a memory, and memory_delete deletes one memory at a time. Delete the memories in it one by one (memory_list with path_prefix /mnt/memory/notes/dir/ shows them); the directory disappears with its last memory."; got != want {
		t.Errorf("directory:\n%s\nwant:\n%s", got, want)
	}
	wantContent(t, db, notes.ID, "/dir/b.md", "b")
	wantContains(t, fails(t, ts, "memory_delete", map[string]any{"path": "/dir/"}), "names a directory, not a memory")
	wantContains(t, fails(t, ts, "memory_delete", map[string]any{"path": "/mnt/memory/notes"}), `is the directory of the memory store "Notes", not a memory`)
	wantContent(t, db, notes.ID, "/dir/b.md", "b")
}

// TestReadOnly: a read-only mount can be listed, searched and read; every
// change is asked of the services and refused there, by the core, before
// the backend is touched, and the model is told that the store is attached
// read-only.
func TestReadOnly(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	prefs := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "User Preferences"})
	notes := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Notes"})
	sqlitetest.Create(t, db, ws, prefs.ID, "/style.md", "tabs", admin)
	ms := hook(db, nil)
	rec := &recorded{MemoryService: memstore.NewCore(ms)}
	ts := newToolset(t, agenttool.Services{Memories: rec, Search: memstore.NewCore(db)}, newSession(attach{store: prefs, readOnly: true}, attach{store: notes}))
	refusal := "the memory store mounted at /mnt/memory/user-preferences/ is attached read-only: this session can list, search and read its memories but not create, change or delete them."
	before := versionCount(t, db, prefs.ID)
	const style = "/mnt/memory/user-preferences/style.md"
	for _, c := range []struct {
		name   string
		tool   string
		args   map[string]any
		path   string
		change string // the MemoryService method the tool asks for the change
	}{
		{"write over", "memory_write", map[string]any{"path": style, "content": "spaces"}, style, "UpdateMemory"},
		{"write the same", "memory_write", map[string]any{"path": style, "content": "tabs"}, style, "UpdateMemory"},
		{"write new", "memory_write", map[string]any{"path": "/mnt/memory/user-preferences/new.md", "content": "x"}, "/mnt/memory/user-preferences/new.md", "CreateMemory"},
		{"edit", "memory_edit", map[string]any{"path": style, "old_str": "tabs", "new_str": "spaces"}, style, "UpdateMemory"},
		{"edit the same", "memory_edit", map[string]any{"path": style, "old_str": "tabs", "new_str": "tabs"}, style, "UpdateMemory"},
		{"delete", "memory_delete", map[string]any{"path": style}, style, "DeleteMemory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ms.calls, rec.changes = map[string]int{}, nil
			if got, want := fails(t, ts, c.tool, c.args), "Error: "+c.path+" cannot be changed: "+refusal; got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
			if want := []string{c.change + " " + memstore.EPermission}; !slices.Equal(rec.changes, want) {
				t.Errorf("changes asked of the services and their errors: %v, want %v", rec.changes, want)
			}
			if n := ms.calls["WriteMemory"]; n != 0 {
				t.Errorf("the backend was asked to write %d times", n)
			}
		})
	}
	if after := versionCount(t, db, prefs.ID); after != before {
		t.Errorf("%d versions after the refusals, %d before", after, before)
	}
	wantContent(t, db, prefs.ID, "/style.md", "tabs")
	wantAbsent(t, db, prefs.ID, "/new.md")
	// Where there is nothing to change, the tool says so, as on any store.
	rec.changes = nil
	wantContains(t, fails(t, ts, "memory_delete", map[string]any{"path": "/mnt/memory/user-preferences/nope.md"}), "Error: There is no memory at /mnt/memory/user-preferences/nope.md.")
	if len(rec.changes) != 0 {
		t.Errorf("changes asked for a memory that does not exist: %v", rec.changes)
	}
	wantContains(t, ok(t, ts, "memory_read", map[string]any{"path": style}), "     1\ttabs")
	wantContains(t, ok(t, ts, "memory_list", map[string]any{"path_prefix": "/mnt/memory/user-preferences"}), "/mnt/memory/user-preferences/style.md  4 bytes")
	// The read-write mount beside it takes writes.
	ok(t, ts, "memory_write", map[string]any{"path": "/mnt/memory/notes/a.md", "content": "a"})
	wantContent(t, db, notes.ID, "/a.md", "a")
}

// versionCount is the number of versions of a store's memories.
func versionCount(tb testing.TB, db *sqlite.DB, storeID string) int {
	tb.Helper()
	page, err := db.Versions(context.Background(), ws, storeID, memstore.VersionFilter{Limit: 100})
	if err != nil {
		tb.Fatal(err)
	}
	return len(page.Items)
}

// TestActor: every version the tools write is the session's.
func TestActor(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	notes := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Notes"})
	ts := newToolset(t, services(db), newSession(attach{store: notes}))
	ok(t, ts, "memory_write", map[string]any{"path": "/a.md", "content": "one"})
	id := mustFind(t, db, notes.ID, "/a.md").ID
	ok(t, ts, "memory_write", map[string]any{"path": "/a.md", "content": "two"})
	ok(t, ts, "memory_edit", map[string]any{"path": "/a.md", "old_str": "two", "new_str": "three"})
	ok(t, ts, "memory_delete", map[string]any{"path": "/a.md"})
	page, err := db.Versions(t.Context(), ws, notes.ID, memstore.VersionFilter{MemoryID: id, Full: true})
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, v := range page.Items {
		ops = append(ops, string(v.Operation)+" "+v.Content)
		if v.CreatedBy != session {
			t.Errorf("version %s (%s) by %+v, want the session %+v", v.ID, v.Operation, v.CreatedBy, session)
		}
	}
	if got, want := strings.Join(ops, ", "), "deleted , modified three, modified two, created one"; got != want {
		t.Errorf("versions: %s, want %s", got, want)
	}
	bySession, err := db.Versions(t.Context(), ws, notes.ID, memstore.VersionFilter{SessionID: session.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(bySession.Items) != 4 {
		t.Errorf("%d versions found by session, want 4", len(bySession.Items))
	}
}

// TestConcurrentChange: another writer changes the memory between the
// tool's lookup and its write. The tool reports it and the other change
// stays.
func TestConcurrentChange(t *testing.T) {
	other := memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_other"}
	tests := []struct {
		name    string
		method  string // the call before which the other writer acts
		exists  bool   // /a.md exists with "mine" before the call
		act     func(ctx context.Context, db *sqlite.DB, storeID string) error
		tool    string
		args    map[string]any
		want    string
		content string // of /a.md at the end
		gone    bool   // /a.md must not exist at the end
	}{
		{"write over a change", "WriteMemory", true, modify(other, "theirs"), "memory_write", map[string]any{"path": "/a.md", "content": "new"},
			"Error: /mnt/memory/notes/a.md was changed by another writer after it was read, so it was not written and the other change was kept. Read it again with memory_read and redo your change on its current text.", "theirs", false},
		{"write over a deletion", "WriteMemory", true, remove(other), "memory_write", map[string]any{"path": "/a.md", "content": "new"},
			"Error: /mnt/memory/notes/a.md was deleted by another writer after it was read, so it was not written. Check with memory_list; memory_write creates it again if it should exist.", "", true},
		{"create over a create", "WriteMemory", false, createAt(other, "/a.md", "theirs"), "memory_write", map[string]any{"path": "/a.md", "content": "new"},
			"Error: /mnt/memory/notes/a.md was created by another writer just now, so nothing was written. Read it with memory_read; write again if your text should replace it.", "theirs", false},
		{"create under a new memory", "WriteMemory", false, createAt(other, "/a.md", "theirs"), "memory_write", map[string]any{"path": "/a.md/b.md", "content": "new"},
			"Error: /mnt/memory/notes/a.md/b.md cannot be created: /mnt/memory/notes/a.md is a memory", "theirs", false},
		{"edit over a change", "WriteMemory", true, modify(other, "mine, theirs"), "memory_edit", map[string]any{"path": "/a.md", "old_str": "mine", "new_str": "ours"},
			"Error: /mnt/memory/notes/a.md was changed by another writer after it was read, so it was not edited and the other change was kept.", "mine, theirs", false},
		{"edit over a deletion", "WriteMemory", true, remove(other), "memory_edit", map[string]any{"path": "/a.md", "old_str": "mine", "new_str": "ours"},
			"Error: /mnt/memory/notes/a.md was deleted by another writer after it was read, so it was not edited.", "", true},
		{"delete over a change", "WriteMemory", true, modify(other, "theirs"), "memory_delete", map[string]any{"path": "/a.md"},
			"Error: /mnt/memory/notes/a.md was changed by another writer just now, so it was not deleted. Read it with memory_read; if it should still go, call memory_delete again.", "theirs", false},
		{"delete over a deletion", "WriteMemory", true, remove(other), "memory_delete", map[string]any{"path": "/a.md"},
			"Error: /mnt/memory/notes/a.md no longer exists: another writer deleted it just now.", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := sqlitetest.Open(t, sqliteOptions)
			notes := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Notes"})
			if tt.exists {
				sqlitetest.Create(t, db, ws, notes.ID, "/a.md", "mine", admin)
			}
			fired := false
			ms := hook(db, func(method string) error {
				if method == tt.method && !fired {
					fired = true
					return tt.act(context.Background(), db, notes.ID)
				}
				return nil
			})
			ts := newToolset(t, agenttoolServices(ms, db), newSession(attach{store: notes}))
			got := fails(t, ts, tt.tool, tt.args)
			if !fired {
				t.Fatalf("the other writer never acted; calls %v", ms.calls)
			}
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			if tt.gone {
				wantAbsent(t, db, notes.ID, "/a.md")
			} else {
				wantContent(t, db, notes.ID, "/a.md", tt.content)
			}
			wantAbsent(t, db, notes.ID, "/a.md/b.md")
		})
	}
}

func modify(by memstore.Actor, to string) func(context.Context, *sqlite.DB, string) error {
	return func(ctx context.Context, db *sqlite.DB, storeID string) error {
		m, err := memstore.FindMemory(ctx, memstore.NewCore(db), adminCaller, storeID, "/a.md")
		if err != nil {
			return err
		}
		_, err = sqlitetest.Writer(db).UpdateMemory(ctx, ws, storeID, m.ID, memstore.MemoryUpdate{Content: &to}, by)
		return err
	}
}

func remove(by memstore.Actor) func(context.Context, *sqlite.DB, string) error {
	return func(ctx context.Context, db *sqlite.DB, storeID string) error {
		m, err := memstore.FindMemory(ctx, memstore.NewCore(db), adminCaller, storeID, "/a.md")
		if err != nil {
			return err
		}
		return sqlitetest.Writer(db).DeleteMemory(ctx, ws, storeID, m.ID, "", by)
	}
}

func createAt(by memstore.Actor, path, text string) func(context.Context, *sqlite.DB, string) error {
	return func(ctx context.Context, db *sqlite.DB, storeID string) error {
		_, err := sqlitetest.Writer(db).CreateMemory(ctx, ws, storeID, memstore.MemoryCreate{Path: path, Content: text}, by)
		return err
	}
}

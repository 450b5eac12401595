package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
	"github.com/memstore/memstore/storetest"
)

const ws = "wrkspc_test"

var (
	alice = memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_alice"}
	agent = memstore.Actor{Type: memstore.ActorSession, ID: "sesn_agent"}
	admin = memstore.Actor{Type: memstore.ActorUser, ID: "user_admin"}
)

// asAlice is the caller of alice's key in workspace ws.
var asAlice = &memstore.Caller{WorkspaceID: ws, Actor: alice}

// MustOpen opens a database in a fresh file, closed at the end of the
// test.
func MustOpen(tb testing.TB) *sqlite.DB {
	tb.Helper()
	return sqlitetest.Open(tb, sqlite.Options{})
}

func mustOpenAt(tb testing.TB, path string, opts sqlite.Options) *sqlite.DB {
	tb.Helper()
	return sqlitetest.OpenAt(tb, path, opts)
}

// mustOpenToClose opens a database in a fresh file, for a test that
// closes it itself (to open it again), and returns the file's path.
func mustOpenToClose(tb testing.TB) (*sqlite.DB, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "m.db")
	db, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return db, path
}

// mustIndexed opens a database to close with n memories ("pangolinI
// scales" at /m/I.md) in one store, all taken in by the search index.
func mustIndexed(tb testing.TB, n int) (db *sqlite.DB, path string, s *memstore.Store) {
	tb.Helper()
	db, path = mustOpenToClose(tb)
	s = mustStore(tb, db)
	mustCreateMany(tb, db, s.ID, n, "/m/%d.md", "pangolin%d scales")
	if err := db.WaitSearchIndex(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return db, path, s
}

func mustStore(tb testing.TB, db *sqlite.DB) *memstore.Store {
	tb.Helper()
	return sqlitetest.Store(tb, db, ws, memstore.StoreCreate{Name: "notes"})
}

func mustCreate(tb testing.TB, db *sqlite.DB, storeID, path, content string) *memstore.Memory {
	tb.Helper()
	return sqlitetest.Create(tb, db, ws, storeID, path, content, alice)
}

func wantCode(tb testing.TB, err error, code string) *memstore.Error {
	tb.Helper()
	var e *memstore.Error
	if !errors.As(err, &e) || e.Code != code {
		tb.Fatalf("error %v: want code %s", err, code)
	}
	return e
}

func ptr[T any](v T) *T { return &v }

// listAll pages through a memory list and returns its items as strings
// ("/a" for a memory, "/b/" for a prefix), checking the page rules.
func listAll(tb testing.TB, db *sqlite.DB, storeID string, f memstore.MemoryFilter) []string {
	tb.Helper()
	return storetest.ListNames(tb, f, func(f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
		return db.Memories(context.Background(), ws, storeID, f)
	})
}

func TestReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	db, path := mustOpenToClose(t)
	s := mustStore(t, db)
	m := mustCreate(t, db, s.ID, "/a", "x")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpenAt(t, path, sqlite.Options{}) // migrations already applied
	got, err := db.Memory(ctx, ws, s.ID, m.ID)
	if err != nil || got.Content != "x" {
		t.Fatalf("after reopen: %v %+v", err, got)
	}
}

func TestStores(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 5, 11, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	db := mustOpenAt(t, filepath.Join(t.TempDir(), "m.db"), sqlite.Options{Now: clock})

	// The core checks the input before the backend sees it.
	if _, err := memstore.NewCore(db).CreateStore(ctx, &memstore.Caller{WorkspaceID: ws, Actor: alice}, memstore.StoreCreate{}); err == nil {
		t.Fatal("created a store without a name")
	}
	s, err := db.CreateStore(ctx, ws, memstore.StoreCreate{Name: "a", Metadata: map[string]string{"k": "v", "x": "y"}}, memstore.Quota{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Store(ctx, "wrkspc_other", s.ID); memstore.ErrorCode(err) != memstore.ENotFound {
		t.Fatalf("other workspace: %v", err)
	}

	// A no-op update leaves UpdatedAt alone; a change moves it.
	now = now.Add(time.Minute)
	u, err := sqlitetest.Writer(db).UpdateStore(ctx, ws, s.ID, memstore.StoreUpdate{Name: ptr("a"), Metadata: map[string]*string{"k": ptr("v")}})
	if err != nil || !u.UpdatedAt.Equal(s.UpdatedAt) {
		t.Fatalf("no-op update: %v %+v", err, u)
	}
	u, err = sqlitetest.Writer(db).UpdateStore(ctx, ws, s.ID, memstore.StoreUpdate{Metadata: map[string]*string{"k": nil, "n": ptr("1")}})
	if err != nil || !u.UpdatedAt.Equal(now) || len(u.Metadata) != 2 || u.Metadata["n"] != "1" || u.Metadata["x"] != "y" {
		t.Fatalf("merge patch: %v %+v", err, u)
	}
	big := map[string]*string{}
	for i := range 15 {
		big[fmt.Sprint("key", i)] = ptr("v")
	}
	_, err = sqlitetest.Writer(db).UpdateStore(ctx, ws, s.ID, memstore.StoreUpdate{Metadata: big})
	wantCode(t, err, memstore.EInvalid) // 2 + 15 > 16

	a, err := sqlitetest.Writer(db).ArchiveStore(ctx, ws, s.ID, alice)
	if err != nil || a.ArchivedAt == nil || !a.UpdatedAt.Equal(now) {
		t.Fatalf("archive: %v %+v", err, a)
	}
	now = now.Add(time.Minute)
	a2, err := sqlitetest.Writer(db).ArchiveStore(ctx, ws, s.ID, alice)
	if err != nil || !a2.ArchivedAt.Equal(*a.ArchivedAt) || !a2.UpdatedAt.Equal(a.UpdatedAt) {
		t.Fatalf("archive again: %v %+v", err, a2)
	}
	_, err = sqlitetest.Writer(db).UpdateStore(ctx, ws, s.ID, memstore.StoreUpdate{Name: ptr("b")})
	wantCode(t, err, memstore.EInvalid)

	// Pagination newest first; ties on created_at broken by ID.
	for i := range 25 {
		if i%10 == 0 {
			now = now.Add(time.Second)
		}
		if _, err := db.CreateStore(ctx, ws, memstore.StoreCreate{Name: fmt.Sprint("s", i)}, memstore.Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	f := memstore.StoreFilter{Limit: 7}
	for {
		p, err := db.Stores(ctx, ws, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range p.Items {
			names = append(names, s.Name)
		}
		if p.Next == "" {
			break
		}
		f.Page = p.Next
	}
	if len(names) != 25 || names[0] != "s24" || names[24] != "s0" {
		t.Fatalf("stores: %v", names)
	}
	f = memstore.StoreFilter{IncludeArchived: true, Limit: 100}
	if p, _ := db.Stores(ctx, ws, f); len(p.Items) != 26 {
		t.Fatalf("with archived: %d", len(p.Items))
	}
	_, err = db.Stores(ctx, ws, memstore.StoreFilter{Limit: 101})
	wantCode(t, err, memstore.EInvalid)
	_, err = db.Stores(ctx, ws, memstore.StoreFilter{Page: "page_garbage"})
	wantCode(t, err, memstore.EInvalid)

	if err := db.DeleteStore(ctx, ws, s.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, db.DeleteStore(ctx, ws, s.ID), memstore.ENotFound)
}

func TestPathConflicts(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	s := mustStore(t, db)
	notes := mustCreate(t, db, s.ID, "/notes/todo.md", "a")
	other := mustCreate(t, db, s.ID, "/other", "b")
	mustCreate(t, db, s.ID, "/notes-old/x", "c") // a sibling, not a descendant

	for _, tc := range []struct{ path, blocker string }{
		{"/notes/todo.md", "/notes/todo.md"}, // equal
		{"/notes", "/notes/todo.md"},         // ancestor of a memory
		{"/notes/todo.md/x", "/notes/todo.md"},
		{"/other/deep/er", "/other"}, // descendant of a memory
	} {
		_, err := sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: tc.path}, alice)
		e := wantCode(t, err, memstore.EPathConflict)
		if e.ConflictingPath != tc.blocker || e.ConflictingMemoryID == "" {
			t.Errorf("%s: blocker %q %q", tc.path, e.ConflictingPath, e.ConflictingMemoryID)
		}
		_, err = sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: tc.path, IfNotExists: true}, alice)
		wantCode(t, err, memstore.EPreconditionFailed)
	}

	// Renames: onto a descendant's ancestor, and onto itself moved deeper.
	_, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, other.ID, memstore.MemoryUpdate{Path: ptr("/notes")}, alice)
	if e := wantCode(t, err, memstore.EPathConflict); e.ConflictingMemoryID != notes.ID {
		t.Errorf("blocker %s", e.ConflictingMemoryID)
	}
	same, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, other.ID, memstore.MemoryUpdate{Path: ptr("/notes"), RenameIfFree: true}, alice)
	if err != nil || same.Path != "/other" || same.VersionID != other.VersionID {
		t.Fatalf("rename if free: %v %+v", err, same)
	}
	moved, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, other.ID, memstore.MemoryUpdate{Path: ptr("/other/inside")}, alice)
	if err != nil || moved.Path != "/other/inside" {
		t.Fatalf("rename below its old path: %v", err)
	}

	// Upsert on an exact path modifies; on an overlap it still conflicts.
	up, err := sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: "/notes/todo.md", Content: "new", Upsert: true}, alice)
	if err != nil || up.ID != notes.ID || up.Content != "new" || up.VersionID == notes.VersionID {
		t.Fatalf("upsert: %v %+v", err, up)
	}
	_, err = sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: "/notes", Upsert: true}, alice)
	wantCode(t, err, memstore.EPathConflict)
}

func TestUpdateAndDelete(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	s := mustStore(t, db)
	m := mustCreate(t, db, s.ID, "/a", "one")
	if m.ContentSHA256 != "7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed" || m.ContentSize != 3 {
		t.Fatalf("hash %s size %d", m.ContentSHA256, m.ContentSize)
	}
	stale := m.ContentSHA256

	u, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Content: ptr("two"), IfSHA256: strings.ToUpper(stale)}, alice)
	if err != nil || u.Content != "two" || u.VersionID == m.VersionID {
		t.Fatalf("update: %v %+v", err, u)
	}
	// The same update again, with the now-stale hash: unchanged, no version.
	again, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Content: ptr("two"), IfSHA256: stale}, alice)
	if err != nil || again.VersionID != u.VersionID {
		t.Fatalf("idempotent update: %v %+v", err, again)
	}
	_, err = sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Content: ptr("three"), IfSHA256: stale}, alice)
	wantCode(t, err, memstore.EPreconditionFailed)
	_, err = sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Path: ptr("bad")}, alice)
	wantCode(t, err, memstore.EInvalid)
	_, err = sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, "mem_nope", memstore.MemoryUpdate{Content: ptr("x")}, alice)
	wantCode(t, err, memstore.ENotFound)
	_, err = db.Memory(ctx, ws, "memstore_other", m.ID)
	wantCode(t, err, memstore.ENotFound)

	wantCode(t, sqlitetest.Writer(db).DeleteMemory(ctx, ws, s.ID, m.ID, stale, alice), memstore.EPreconditionFailed)

	if err := sqlitetest.Writer(db).DeleteMemory(ctx, ws, s.ID, m.ID, u.ContentSHA256, agent); err != nil {
		t.Fatal(err)
	}
	_, err = db.Memory(ctx, ws, s.ID, m.ID)
	wantCode(t, err, memstore.ENotFound)

	// Archived: no create, update or delete.
	kept := sqlitetest.Create(t, db, ws, s.ID, "/kept", "k", alice)
	if _, err := sqlitetest.Writer(db).ArchiveStore(ctx, ws, s.ID, alice); err != nil {
		t.Fatal(err)
	}
	_, err = sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, kept.ID, memstore.MemoryUpdate{Content: ptr("x")}, alice)
	wantCode(t, err, memstore.EInvalid)
	_, err = sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: "/b"}, alice)
	wantCode(t, err, memstore.EInvalid)
	wantCode(t, sqlitetest.Writer(db).DeleteMemory(ctx, ws, s.ID, kept.ID, "", agent), memstore.EInvalid)
	if _, err := db.Memory(ctx, ws, s.ID, kept.ID); err != nil {
		t.Fatalf("memory after a refused delete: %v", err)
	}

	p, err := db.Versions(ctx, ws, s.ID, memstore.VersionFilter{MemoryID: m.ID, Full: true})
	if err != nil || len(p.Items) != 3 {
		t.Fatalf("versions: %v %d", err, len(p.Items))
	}
	del, mod, cre := p.Items[0], p.Items[1], p.Items[2]
	if del.Operation != memstore.OpDeleted || del.Path != "/a" || del.HasContent || del.CreatedBy != agent ||
		mod.Operation != memstore.OpModified || mod.Content != "two" ||
		cre.Operation != memstore.OpCreated || cre.Content != "one" || !cre.HasContent {
		t.Fatalf("versions: %+v", p.Items)
	}
}

func TestDeleteThenRecreateStartsNewLineage(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	s := mustStore(t, db)
	m := mustCreate(t, db, s.ID, "/a/b", "x")
	if err := sqlitetest.Writer(db).DeleteMemory(ctx, ws, s.ID, m.ID, "", alice); err != nil {
		t.Fatal(err)
	}
	n := mustCreate(t, db, s.ID, "/a", "y") // the former ancestor is free
	if n.ID == m.ID {
		t.Fatal("same id")
	}
	p, err := db.Versions(ctx, ws, s.ID, memstore.VersionFilter{MemoryID: n.ID})
	if err != nil || len(p.Items) != 1 || p.Items[0].Operation != memstore.OpCreated {
		t.Fatalf("new lineage: %v %+v", err, p.Items)
	}
}

func TestMemoriesListPagingAndDepth(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	s := mustStore(t, db)
	paths := []string{"/a.md", "/b/1", "/b/2", "/b/c/1", "/b/c/2", "/b/d/e/f", "/b-c", "/z"}
	for i := range 30 {
		paths = append(paths, fmt.Sprintf("/many/%02d", i))
	}
	for _, p := range paths {
		mustCreate(t, db, s.ID, p, "content of "+p)
	}
	sorted := append([]string(nil), paths...)
	slices.Sort(sorted)

	for _, lim := range []int{1, 2, 3, 7, 100} {
		got := listAll(t, db, s.ID, memstore.MemoryFilter{Limit: lim})
		if strings.Join(got, " ") != strings.Join(sorted, " ") {
			t.Errorf("limit %d depth 0: %v", lim, got)
		}
		got = listAll(t, db, s.ID, memstore.MemoryFilter{Limit: lim, Depth: 1})
		if want := "/a.md /b-c /b/ /many/ /z"; strings.Join(got, " ") != want {
			t.Errorf("limit %d depth 1: %v", lim, got)
		}
		got = listAll(t, db, s.ID, memstore.MemoryFilter{Limit: lim, Depth: 1, PathPrefix: "/b/"})
		if want := "/b/1 /b/2 /b/c/ /b/d/"; strings.Join(got, " ") != want {
			t.Errorf("limit %d prefix /b/ depth 1: %v", lim, got)
		}
		got = listAll(t, db, s.ID, memstore.MemoryFilter{Limit: lim, Depth: 2, PathPrefix: "/b/"})
		if want := "/b/1 /b/2 /b/c/1 /b/c/2 /b/d/e/"; strings.Join(got, " ") != want {
			t.Errorf("limit %d prefix /b/ depth 2: %v", lim, got)
		}
	}

	p, err := db.Memories(ctx, ws, s.ID, memstore.MemoryFilter{Full: true, Limit: 100})
	if err != nil || len(p.Items) != 20 || p.Items[0].Memory.Content != "content of /a.md" {
		t.Fatalf("full clamps to 20 and fills content: %v %d", err, len(p.Items))
	}
	p, _ = db.Memories(ctx, ws, s.ID, memstore.MemoryFilter{})
	if p.Items[0].Memory.Content != "" || p.Items[0].Memory.ContentSHA256 == "" {
		t.Fatal("basic list has content or lacks a hash")
	}
	// Bad filters, refused by the core's validation or by the cursor's.
	core, c := memstore.NewCore(db), &memstore.Caller{WorkspaceID: ws, Actor: alice}
	for _, f := range []memstore.MemoryFilter{
		{Depth: -1}, {Limit: -1}, {Page: "page_x"},
		{Page: mustVersionCursor(t, db, s.ID)},
	} {
		_, err := core.Memories(ctx, c, s.ID, f)
		wantCode(t, err, memstore.EInvalid)
	}
}

func mustVersionCursor(tb testing.TB, db *sqlite.DB, storeID string) string {
	p, err := db.Versions(context.Background(), ws, storeID, memstore.VersionFilter{Limit: 1})
	if err != nil || p.Next == "" {
		tb.Fatalf("version cursor: %v", err)
	}
	return p.Next
}

func TestVersionsFilters(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db := mustOpenAt(t, filepath.Join(t.TempDir(), "m.db"), sqlite.Options{Now: func() time.Time { return now }})
	s := mustStore(t, db)
	var mems []*memstore.Memory
	for i := range 10 {
		now = now.Add(time.Second)
		by := alice
		if i%2 == 1 {
			by = agent
		}
		m, err := sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: fmt.Sprint("/m", i), Content: "x"}, by)
		if err != nil {
			t.Fatal(err)
		}
		mems = append(mems, m)
	}
	now = now.Add(time.Second)
	if _, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, mems[0].ID, memstore.MemoryUpdate{Content: ptr("y")}, agent); err != nil {
		t.Fatal(err)
	}
	count := func(f memstore.VersionFilter) int {
		t.Helper()
		n := 0
		f.Limit = 3
		prev := "memver_~"
		for {
			p, err := db.Versions(ctx, ws, s.ID, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range p.Items {
				if v.ID >= prev {
					t.Fatal("not newest first")
				}
				prev = v.ID
			}
			n += len(p.Items)
			if p.Next == "" {
				return n
			}
			f.Page = p.Next
		}
	}
	start := time.Date(2026, 1, 1, 0, 0, 3, 0, time.UTC)
	end := time.Date(2026, 1, 1, 0, 0, 5, 0, time.UTC)
	for name, tc := range map[string]struct {
		f    memstore.VersionFilter
		want int
	}{
		"all":        {memstore.VersionFilter{}, 11},
		"memory":     {memstore.VersionFilter{MemoryID: mems[0].ID}, 2},
		"operation":  {memstore.VersionFilter{Operation: memstore.OpModified}, 1},
		"session":    {memstore.VersionFilter{SessionID: agent.ID}, 6},
		"api key":    {memstore.VersionFilter{APIKeyID: alice.ID}, 5},
		"both":       {memstore.VersionFilter{APIKeyID: alice.ID, SessionID: agent.ID}, 0},
		"service":    {memstore.VersionFilter{ServiceAccountID: "svac_x"}, 0},
		"time range": {memstore.VersionFilter{CreatedAtGTE: &start, CreatedAtLTE: &end}, 3},
	} {
		if got := count(tc.f); got != tc.want {
			t.Errorf("%s: %d versions, want %d", name, got, tc.want)
		}
	}
	_, err := memstore.NewCore(db).Versions(ctx, &memstore.Caller{WorkspaceID: ws, Actor: alice}, s.ID, memstore.VersionFilter{Operation: "renamed"})
	wantCode(t, err, memstore.EInvalid)
}

func TestRedactionRemovesBytesFromFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db := mustOpenAt(t, path, sqlite.Options{})
	s := mustStore(t, db)
	marker := "SECRET-MARKER-" + strings.Repeat("q7", 20)
	m := mustCreate(t, db, s.ID, "/secret", marker)
	small := mustCreate(t, db, s.ID, "/big", strings.Repeat("B", 50_000)+marker) // overflow pages too
	if _, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, small.ID, memstore.MemoryUpdate{Content: ptr("clean")}, alice); err != nil {
		t.Fatal(err)
	}

	// Redacting the current version leaves the live memory alone.
	v, err := db.RedactVersion(ctx, ws, s.ID, m.VersionID, admin)
	if err != nil || !v.Redacted() || v.Path != "" || v.HasContent || *v.RedactedBy != admin {
		t.Fatalf("redact: %v %+v", err, v)
	}
	if got, _ := db.Memory(ctx, ws, s.ID, m.ID); got.Content != marker {
		t.Fatal("redaction changed the live memory")
	}
	v2, err := db.RedactVersion(ctx, ws, s.ID, m.VersionID, alice)
	if err != nil || *v2.RedactedBy != admin || !v2.RedactedAt.Equal(*v.RedactedAt) {
		t.Fatalf("redact again: %v %+v", err, v2)
	}
	got, err := db.Version(ctx, ws, s.ID, m.VersionID)
	if err != nil || got.Content != "" || got.ContentSHA256 != "" || got.Path != "" || got.Operation != memstore.OpCreated {
		t.Fatalf("redacted version: %v %+v", err, got)
	}
	if err := sqlitetest.Writer(db).DeleteMemory(ctx, ws, s.ID, m.ID, "", alice); err != nil {
		t.Fatal(err)
	}
	p, err := db.Versions(ctx, ws, s.ID, memstore.VersionFilter{MemoryID: small.ID})
	if err != nil || len(p.Items) != 2 {
		t.Fatal(err)
	}
	if _, err := db.RedactVersion(ctx, ws, s.ID, p.Items[1].ID, admin); err != nil {
		t.Fatal(err)
	}

	checkpoint(t, path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("SECRET-MARKER")) {
		t.Fatal("the marker is still in the database file")
	}
	if !bytes.Contains(b, []byte("clean")) {
		t.Fatal("the file does not hold the data: the check proves nothing")
	}
}

func checkpoint(tb testing.TB, path string) {
	tb.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		tb.Fatal(err)
	}
	defer raw.Close()
	// The DB's own checkpointer may hold the checkpoint lock for a moment,
	// which makes another checkpoint report busy at once: try again.
	var busy, logged, done int
	for range 200 {
		if err := raw.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &done); err != nil {
			tb.Fatal(err)
		}
		if busy == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	tb.Fatalf("checkpoint: still busy after 2 s")
}

func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db := mustOpenAt(t, path, sqlite.Options{})
	other := mustOpenAt(t, path, sqlite.Options{}) // a second process, in effect
	s := mustStore(t, db)
	m := mustCreate(t, db, s.ID, "/counter", "0")
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := range 8 {
		wg.Go(func() {
			d := db
			if g%2 == 1 {
				d = other
			}
			w := sqlitetest.Writer(d)
			for i := range 10 {
				if _, err := w.CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/g%d/%d", g, i), Content: "x"}, alice); err != nil {
					errs <- err
				}
				if _, err := w.UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Content: ptr(fmt.Sprint(g, i))}, alice); err != nil {
					errs <- err
				}
				if _, err := d.Memories(ctx, ws, s.ID, memstore.MemoryFilter{Depth: 1}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := listAll(t, db, s.ID, memstore.MemoryFilter{Limit: 100}); len(got) != 81 {
		t.Fatalf("%d memories", len(got))
	}
}

func TestDeleteStoreCascades(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	s := mustStore(t, db)
	m := mustCreate(t, db, s.ID, "/a", "x")
	if err := db.DeleteStore(ctx, ws, s.ID); err != nil {
		t.Fatal(err)
	}
	_, err := db.Version(ctx, ws, s.ID, m.VersionID)
	wantCode(t, err, memstore.ENotFound)
	_, err = db.Memory(ctx, ws, s.ID, m.ID)
	wantCode(t, err, memstore.ENotFound)
}

// TestConformance holds the database to the contract every backend
// keeps, through the core that every surface calls.
func TestConformance(t *testing.T) {
	storetest.RunAll(t, storetest.Target{
		Database: func(t *testing.T, now func() time.Time) memstore.Database {
			return sqlitetest.Open(t, sqlite.Options{Now: now})
		},
		RolledBack: func(ctx context.Context, db memstore.Database, workspaceID, storeID string) error {
			return db.(*sqlite.DB).FailAfterWebhookEvents(ctx, workspaceID, storeID)
		},
	})
}

// TestKeysStoredHashed proves that a key's secret never reaches the
// database file, only its hash.
func TestKeysStoredHashed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keys.db")
	db := mustOpenAt(t, path, sqlite.Options{})
	w, err := db.CreateWorkspace(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	core := memstore.NewCore(db)
	_, secret, err := core.CreateAPIKey(ctx, w.ID, "k")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var found []string
	// The database, its WAL and shared memory; finding the hash is the
	// control that these are the files holding the key.
	files, _ := filepath.Glob(path + "*")
	hashed := false
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(secret[len(memstore.APIKeyPrefix):])) {
			found = append(found, filepath.Base(f))
		}
		hashed = hashed || bytes.Contains(b, []byte(memstore.HashSecret(secret)))
	}
	if len(found) > 0 || !hashed {
		t.Errorf("the secret is in %v; its hash found: %v", found, hashed)
	}
}

// TestCheckpointsInBackground shows that committed writes reach the
// database file without waiting for the writer's own checkpoint threshold
// and without closing the database: a background checkpointer copies them.
func TestCheckpointsInBackground(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db := mustOpenAt(t, path, sqlite.Options{})
	s, err := db.CreateStore(ctx, ws, memstore.StoreCreate{Name: "s"}, memstore.Quota{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		c := fmt.Sprintf("BACKGROUND-MARKER-%d ", i) + strings.Repeat("x", 4000)
		if _, err := sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/m%d", i), Content: c}, alice); err != nil {
			t.Fatal(err)
		}
	}
	for range 200 {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("BACKGROUND-MARKER-19 ")) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the last write is still only in the log after 2 s")
}

// TestBatchedWritesFailAlone runs many concurrent writes, so that they
// share transactions, with every other one bound to fail: each failure
// must undo only its own write, and a cancelled request must not disturb
// the others.
func TestBatchedWritesFailAlone(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	s, err := db.CreateStore(ctx, ws, memstore.StoreCreate{Name: "s"}, memstore.Quota{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: "/taken", Content: "x"}, alice); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	const n = 200
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch i % 4 {
			case 0: // succeeds
				_, errs[i] = sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/ok/%d", i), Content: "ok"}, alice)
			case 1: // fails after the store check: below a memory
				_, errs[i] = sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/taken/%d", i), Content: "no"}, alice)
			case 2: // never runs
				_, errs[i] = sqlitetest.Writer(db).CreateMemory(cancelled, ws, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/cancelled/%d", i), Content: "no"}, alice)
			case 3: // fails after a change, undone
				errs[i] = db.FailHalfway(ctx, s.ID)
			}
		}()
	}
	wg.Wait()
	want := 1
	for i, err := range errs {
		switch i % 4 {
		case 0:
			want++
			if err != nil {
				t.Errorf("write %d: %v", i, err)
			}
		case 1:
			if memstore.ErrorCode(err) != memstore.EPathConflict {
				t.Errorf("write %d: %v, want a path conflict", i, err)
			}
		case 2:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("write %d: %v, want context.Canceled", i, err)
			}
		case 3:
			if memstore.ErrorCode(err) != memstore.EConflict {
				t.Errorf("write %d: %v, want its own conflict", i, err)
			}
		}
	}
	if got, err := db.Store(ctx, ws, s.ID); err != nil || got.Name != "s" {
		t.Errorf("store after the writes that failed halfway: %+v, %v; want its name unchanged", got, err)
	}
	c, err := db.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Memories != int64(want) || c.Versions != int64(want) {
		t.Errorf("%d memories and %d versions, want %d of each", c.Memories, c.Versions, want)
	}
}

// TestWritesOfOneBatch runs writes together in one batch, in a known
// order, to check that they stay apart.
func TestWritesOfOneBatch(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	create := func(s *memstore.Store, path string) func() error {
		return func() error {
			_, err := sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: path, Content: "x"}, alice)
			return err
		}
	}
	t.Run("a write failing halfway is undone alone", func(t *testing.T) {
		s := mustStore(t, db)
		errs := inOneBatch(t, db,
			create(s, "/before"),
			func() error { return db.FailHalfway(ctx, s.ID) },
			create(s, "/after"))
		if errs[0] != nil || errs[2] != nil || memstore.ErrorCode(errs[1]) != memstore.EConflict {
			t.Fatalf("errors %v, want nil, its own conflict, nil", errs)
		}
		if got := listAll(t, db, s.ID, memstore.MemoryFilter{}); !slices.Equal(got, []string{"/after", "/before"}) {
			t.Errorf("memories %q", got)
		}
		if got, err := db.Store(ctx, ws, s.ID); err != nil || got.Name != "notes" {
			t.Errorf("store %+v, %v; want its name unchanged", got, err)
		}
	})
	t.Run("a write failing before any change, not by refusing, is left out alone", func(t *testing.T) {
		s := mustStore(t, db)
		errs := inOneBatch(t, db,
			create(s, "/before"),
			func() error { return db.FailUnwritten(ctx, s.ID) },
			create(s, "/after"))
		if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], sqlite.ErrUnwritten) {
			t.Fatalf("errors %v, want nil, its own error, nil", errs)
		}
		if got := listAll(t, db, s.ID, memstore.MemoryFilter{}); !slices.Equal(got, []string{"/after", "/before"}) {
			t.Errorf("memories %q", got)
		}
	})
	t.Run("no write after an archive", func(t *testing.T) {
		s := mustStore(t, db)
		errs := inOneBatch(t, db,
			create(s, "/before"),
			func() error { _, err := sqlitetest.Writer(db).ArchiveStore(ctx, ws, s.ID, alice); return err },
			create(s, "/after"))
		if errs[0] != nil || errs[1] != nil || !memstore.IsArchived(errs[2]) {
			t.Fatalf("errors %v, want nil, nil, the archived store's refusal", errs)
		}
		if got := listAll(t, db, s.ID, memstore.MemoryFilter{}); !slices.Equal(got, []string{"/before"}) {
			t.Errorf("memories %q", got)
		}
	})
}

// TestNoWriteAfterStoreDeleteInOneBatch checks that a write queued behind
// the deletion of its store, in the same batch, is refused as a write to
// a store that is not there, and that the writes before it stay undone
// with the store.
func TestNoWriteAfterStoreDeleteInOneBatch(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	s, other := mustStore(t, db), mustStore(t, db)
	create := func(s *memstore.Store, path string) func() error {
		return func() error {
			_, err := sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: path, Content: "x"}, alice)
			return err
		}
	}
	errs := inOneBatch(t, db,
		create(s, "/before"),
		create(other, "/kept"),
		func() error { return db.DeleteStore(ctx, ws, s.ID) },
		create(s, "/after"),
		create(other, "/kept-too"))
	if errs[0] != nil || errs[1] != nil || errs[2] != nil || memstore.ErrorCode(errs[3]) != memstore.ENotFound || errs[4] != nil {
		t.Fatalf("errors %v, want nil, nil, nil, the deleted store's not-found, nil", errs)
	}
	if got := listAll(t, db, other.ID, memstore.MemoryFilter{}); !slices.Equal(got, []string{"/kept", "/kept-too"}) {
		t.Errorf("memories of the other store %q", got)
	}
	c, err := db.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Memories != 2 {
		t.Errorf("%d memories, want the other store's 2", c.Memories)
	}
}

// inOneBatch queues writes while the writer is held, a little apart so
// that they queue in order, then lets them run and returns their errors.
func inOneBatch(t *testing.T, db *sqlite.DB, writes ...func() error) []error {
	t.Helper()
	release := db.HoldWrites(context.Background())
	errs := make([]error, len(writes))
	var wg sync.WaitGroup
	for i, w := range writes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w()
		}()
		time.Sleep(20 * time.Millisecond)
	}
	release()
	wg.Wait()
	return errs
}

// TestWritePanic: a write that panics after a change fails alone, with
// nothing of it kept, and the writer goes on serving the others.
func TestWritePanic(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	s := mustStore(t, db)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/ok/%d", i), Content: "ok"}, alice)
		})
	}
	err := db.WriteMemory(ctx, ws, s.ID, func(tx memstore.MemoryTx) error {
		m := &memstore.Memory{StoreID: s.ID, Path: "/half", Content: "x", ContentSHA256: memstore.ContentSHA256("x"), ContentSize: 1}
		if err := tx.Put(m, memstore.EventMemoryCreated, alice); err != nil {
			return err
		}
		panic("a fault in a rule")
	})
	wg.Wait()
	if err == nil || memstore.ErrorCode(err) != memstore.EInternal {
		t.Errorf("a panicking write returned %v, want an internal error", err)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("write %d beside the panic: %v", i, err)
		}
	}
	if _, err := memstore.FindMemory(ctx, memstore.NewCore(db), &memstore.Caller{WorkspaceID: ws, Actor: alice}, s.ID, "/half"); memstore.ErrorCode(err) != memstore.ENotFound {
		t.Errorf("the panicking write's memory: %v, want none", err)
	}
	mustCreate(t, db, s.ID, "/after", "the writer still runs")
}

// TestPutRefusesMalformedPath: the backend keeps its own guard of a
// stored path, whoever calls it, and refuses before writing anything.
func TestPutRefusesMalformedPath(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	s := mustStore(t, db)
	for _, p := range []string{"no-slash", "/a//b", "/a/../b", "/"} {
		err := db.WriteMemory(ctx, ws, s.ID, func(tx memstore.MemoryTx) error {
			return tx.Put(&memstore.Memory{StoreID: s.ID, Path: p, Content: "x", ContentSHA256: memstore.ContentSHA256("x"), ContentSize: 1}, memstore.EventMemoryCreated, alice)
		})
		wantCode(t, err, memstore.EInvalid)
	}
	if p, err := db.Versions(ctx, ws, s.ID, memstore.VersionFilter{}); err != nil || len(p.Items) != 0 {
		t.Errorf("versions after refused writes: %d, %v; want none", len(p.Items), err)
	}
}

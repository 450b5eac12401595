package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
)

// vacuumFixture opens the database name, gives it a store, and returns
// the core over it as a caller of its default workspace.
func vacuumFixture(t *testing.T, name string) (memstore.Database, *memstore.Core, *memstore.Caller, string) {
	t.Helper()
	ctx := context.Background()
	db, err := openDatabase(ctx, name, dbOptions{create: true})
	if err != nil {
		t.Fatal(err)
	}
	core := memstore.NewCore(db)
	ws, _, err := ensureWorkspace(ctx, core, memstore.DefaultWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	c := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorUser, ID: "user_test"}}
	s, err := core.CreateStore(ctx, c, memstore.StoreCreate{Name: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	return db, core, c, s.ID
}

// TestVacuumFile: after many deletions, 'memstore vacuum' shrinks a
// database file, and says how long it took.
func TestVacuumFile(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "m.db")
	db, core, c, store := vacuumFixture(t, file)
	content := strings.Repeat("a line of a long note\n", 200)
	var ids []string
	for i := range 200 {
		m, err := core.CreateMemory(ctx, c, store, memstore.MemoryCreate{Path: fmt.Sprintf("/n/%d.md", i), Content: content})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	for _, id := range ids {
		if err := core.DeleteMemory(ctx, c, store, id, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := core.DeleteStore(ctx, c, store); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before := fileSize(t, file)
	code, stdout, stderr := run(t, "", "vacuum", "--db", file, "--json")
	var got struct {
		Full    bool
		Seconds float64
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &got) != nil || got.Seconds <= 0 {
		t.Fatalf("vacuum: exit %d, %q %q", code, stdout, stderr)
	}
	if after := fileSize(t, file); after > before/4 {
		t.Errorf("the file is %d bytes after vacuum, %d before; want it much smaller", after, before)
	}
}

func fileSize(t *testing.T, name string) int64 {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestVacuumPostgresFull: on PostgreSQL, the old row versions of a
// redacted memory, of a deleted store's memories and of what a deleted
// session kept keep their text in the pages of the tables and their
// indexes, read here byte for byte as the server stores them
// (pageinspect), until 'memstore vacuum --full', after which no page
// holds it.
func TestVacuumPostgresFull(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	url := postgresDB(t, "unused")
	db, core, c, store := vacuumFixture(t, url)
	const secret = "the door code is zq4711xv"
	m, err := core.CreateMemory(ctx, c, store, memstore.MemoryCreate{Path: "/door.md", Content: secret})
	if err != nil {
		t.Fatal(err)
	}
	changed := "the door code was changed"
	if _, err := core.UpdateMemory(ctx, c, store, m.ID, memstore.MemoryUpdate{Content: &changed}); err != nil {
		t.Fatal(err)
	}
	if _, err := core.RedactVersion(ctx, c, store, m.VersionID); err != nil {
		t.Fatal(err)
	}
	gone, err := core.CreateStore(ctx, c, memstore.StoreCreate{Name: "gone"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.CreateMemory(ctx, c, gone.ID, memstore.MemoryCreate{Path: "/spare.md", Content: secret}); err != nil {
		t.Fatal(err)
	}
	ses, _, _, err := core.CreateSession(ctx, c, memstore.SessionCreate{
		Title:    secret,
		Metadata: map[string]string{"note": secret},
		Fields:   map[string]json.RawMessage{"agent": json.RawMessage(`{"system":"` + secret + `"}`)},
		Stores:   []memstore.AttachmentCreate{{StoreID: store, Instructions: secret}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := core.DeleteStore(ctx, c, gone.ID); err != nil {
		t.Fatal(err)
	}
	if err := core.DeleteSession(ctx, c, ses.ID); err != nil {
		t.Fatal(err)
	}
	db.Close()

	pages, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pages.Close(ctx)
	if _, err := pages.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pageinspect`); err != nil {
		t.Skipf("pageinspect, which reads the tables' pages, is not available: %v", err)
	}
	holding := func() []string {
		var in []string
		// The tables, their out-of-line storage (TOAST), and the indexes
		// of both.
		rows, err := pages.Query(ctx, `WITH c AS (
				SELECT oid FROM pg_class WHERE oid IN ('memories'::regclass, 'versions'::regclass, 'sessions'::regclass, 'session_stores'::regclass)),
			t AS (SELECT oid FROM c UNION SELECT reltoastrelid FROM pg_class WHERE oid IN (SELECT oid FROM c) AND reltoastrelid <> 0)
			SELECT c.oid::regclass::text FROM pg_class c
			WHERE c.oid IN (SELECT oid FROM t) OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN (SELECT oid FROM t))`)
		if err != nil {
			t.Fatal(err)
		}
		relations, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(relations) < 4 {
			t.Fatalf("the tables and their indexes: %v %v", relations, err)
		}
		for _, table := range relations {
			var n int
			// Whole pages, free space included, not only their rows.
			err := pages.QueryRow(ctx, `SELECT count(*)
				FROM generate_series(0, pg_relation_size($1::text::regclass) / current_setting('block_size')::int - 1) AS blk
				WHERE position($2::bytea IN get_raw_page($1::text, blk::int)) > 0`, table, []byte("zq4711xv")).Scan(&n)
			if err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				in = append(in, fmt.Sprintf("%s (%d pages)", table, n))
			}
		}
		return in
	}
	if in := holding(); len(in) == 0 {
		t.Fatal("no page held the redacted text before the vacuum: the test would prove nothing")
	}
	code, stdout, stderr := run(t, "", "vacuum", "--db", url, "--full")
	if code != 0 || !strings.HasPrefix(stdout, "Vacuumed in ") {
		t.Fatalf("vacuum --full: exit %d, %q %q", code, stdout, stderr)
	}
	if in := holding(); len(in) > 0 {
		t.Errorf("after vacuum --full, the redacted text is still in %v", in)
	}
}

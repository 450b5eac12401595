package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// TestVersionsMigration upgrades a database written at migration 0007,
// with versions of every kind in two stores, to the versions table keyed
// by store and ID (0008): every list and lookup of versions reads back as
// it did, and the schema is that of a new database.
func TestVersionsMigration(t *testing.T) {
	ctx := context.Background()
	all := *sqlite.LastMigration
	*sqlite.LastMigration = 7
	db, path := mustOpenToClose(t)
	*sqlite.LastMigration = all
	var stores []string
	for s := range 2 {
		st, err := db.CreateStore(ctx, ws, memstore.StoreCreate{Name: fmt.Sprintf("store %d", s)})
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, st.ID)
		var last []*memstore.Memory
		for i := range 8 {
			by := []memstore.Actor{alice, agent}[i%2]
			m, err := sqlitetest.Writer(db).CreateMemory(ctx, ws, st.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/notes/%d.md", i), Content: fmt.Sprintf("note %d of store %d", i, s)}, by)
			if err != nil {
				t.Fatal(err)
			}
			c := m.Content + ", edited"
			if m, err = sqlitetest.Writer(db).UpdateMemory(ctx, ws, st.ID, m.ID, memstore.MemoryUpdate{Content: &c}, alice); err != nil {
				t.Fatal(err)
			}
			last = append(last, m)
		}
		if err := sqlitetest.Writer(db).DeleteMemory(ctx, ws, st.ID, last[0].ID, "", agent); err != nil {
			t.Fatal(err)
		}
		// A redacted version that is not current, and a redacted current one.
		vs, err := db.Versions(ctx, ws, st.ID, memstore.VersionFilter{MemoryID: last[1].ID, Operation: memstore.OpCreated})
		if err != nil || len(vs.Items) != 1 {
			t.Fatalf("versions of %s: %v %v", last[1].ID, err, vs.Items)
		}
		for _, id := range []string{vs.Items[0].ID, last[2].VersionID} {
			if _, err := db.RedactVersion(ctx, ws, st.ID, id, admin); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := readVersions(t, db, stores)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if n := userVersion(t, path); n != 7 {
		t.Fatalf("user_version %d before the upgrade, want 7", n)
	}

	db = mustOpenAt(t, path, sqlite.Options{})
	after := readVersions(t, db, stores)
	if !reflect.DeepEqual(before, after) {
		t.Errorf("versions read back differently after the migration:\nbefore %+v\nafter  %+v", before, after)
	}
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	mustOpenAt(t, fresh, sqlite.Options{})
	if got, want := schema(t, path), schema(t, fresh); !reflect.DeepEqual(got, want) {
		t.Errorf("schema after the migration:\n%v\nwant that of a new database:\n%v", got, want)
	}
	var autoindex int
	if err := rawDB(t, path).QueryRow(`SELECT count(*) FROM sqlite_schema WHERE tbl_name = 'versions' AND name LIKE 'sqlite_autoindex%'`).Scan(&autoindex); err != nil || autoindex != 0 {
		t.Errorf("versions keeps an index of its own ID (%d, %v): the migration did not rebuild it", autoindex, err)
	}
	// The rebuilt table takes writes, and its redaction triggers still
	// fire: the memory whose current version was redacted changes.
	st := stores[0]
	p, err := db.Versions(ctx, ws, st, memstore.VersionFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range p.Items {
		if v.Redacted() && v.Operation == memstore.OpModified {
			c := "rewritten after the upgrade"
			if _, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, st, v.MemoryID, memstore.MemoryUpdate{Content: &c}, alice); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.WaitSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if q, err := db.Versions(ctx, ws, st, memstore.VersionFilter{Limit: 100}); err != nil || len(q.Items) != len(p.Items)+1 || q.Items[0].Content != "" {
		t.Errorf("after one more write: %v, %d versions, want %d", err, len(q.Items), len(p.Items)+1)
	}
}

// readVersions reads, for each store, every version through each way of
// listing them (pages of 3, by memory, by actor, by operation) and by ID.
func readVersions(t *testing.T, db *sqlite.DB, stores []string) [][]memstore.Version {
	t.Helper()
	ctx := context.Background()
	list := func(store string, f memstore.VersionFilter) []memstore.Version {
		var all []memstore.Version
		f.Full, f.Limit = true, 3
		for {
			p, err := db.Versions(ctx, ws, store, f)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, p.Items...)
			if p.Next == "" {
				return all
			}
			f.Page = p.Next
		}
	}
	var out [][]memstore.Version
	for _, store := range stores {
		all := list(store, memstore.VersionFilter{})
		var got []memstore.Version
		got = append(got, all...)
		got = append(got, list(store, memstore.VersionFilter{MemoryID: all[len(all)-1].MemoryID})...)
		got = append(got, list(store, memstore.VersionFilter{SessionID: agent.ID})...)
		got = append(got, list(store, memstore.VersionFilter{APIKeyID: alice.ID, Operation: memstore.OpModified})...)
		for _, v := range all {
			w, err := db.Version(ctx, ws, store, v.ID)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, *w)
		}
		out = append(out, got)
	}
	return out
}

func userVersion(t *testing.T, path string) (n int) {
	t.Helper()
	if err := rawDB(t, path).QueryRow(`PRAGMA user_version`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// schema lists the database's tables, indexes and triggers with their SQL.
func schema(t *testing.T, path string) []string {
	t.Helper()
	rows, err := rawDB(t, path).Query(`SELECT type || ' ' || name || ': ' || ifnull(sql, '') FROM sqlite_schema ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var s []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		s = append(s, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

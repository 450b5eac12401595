package sqlite_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/memstore/memstore/internal/syncbuf"
	"github.com/memstore/memstore/sqlite"
)

// damages spoil a populated index file as a failing disk or a stray
// write may.
var damages = []struct {
	name string
	do   func(tb testing.TB, file string)
}{
	{"truncated", func(tb testing.TB, file string) {
		fi := stat(tb, file)
		if err := os.Truncate(file, fi.Size()/2); err != nil {
			tb.Fatal(err)
		}
	}},
	{"random bytes", func(tb testing.TB, file string) {
		overwrite(tb, file, 0, stat(tb, file).Size())
	}},
	{"pages in the middle", func(tb testing.TB, file string) {
		const page = 4096
		pages := stat(tb, file).Size() / page
		if pages < 12 {
			tb.Fatalf("the index has %d pages: too few to damage some in the middle", pages)
		}
		overwrite(tb, file, pages/3*page, pages/3*page)
	}},
}

func stat(tb testing.TB, file string) os.FileInfo {
	tb.Helper()
	fi, err := os.Stat(file)
	if err != nil {
		tb.Fatal(err)
	}
	return fi
}

// overwrite writes n random bytes into file at offset off.
func overwrite(tb testing.TB, file string, off, n int64) {
	tb.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{7})
	r.Read(b)
	if _, err := f.WriteAt(b, off); err != nil {
		tb.Fatal(err)
	}
}

// damagedWarning is the start of what the log says of a damaged index.
const damagedWarning = `level=WARN msg="the search index file is damaged: removed it to build it again; searches wait for the build" file=`

// TestSearchIndexDamaged: the index file holds derived data, so a damaged
// one, found when the database opens or while it is in use, is removed
// and built again, with a warning in the log; searches then find every
// memory, and every other read and write goes on meanwhile.
func TestSearchIndexDamaged(t *testing.T) {
	const n = 200
	for _, damage := range damages {
		for _, when := range []string{"at open", "while open"} {
			t.Run(damage.name+" "+when, func(t *testing.T) {
				var log syncbuf.Buffer
				opts := sqlite.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))}
				db, path, s := mustIndexed(t, n)
				file := sqlite.IndexPath(path)
				if when == "at open" {
					if err := db.Close(); err != nil {
						t.Fatal(err)
					}
					damage.do(t, file)
					db = mustOpenAt(t, path, opts)
				} else {
					if err := db.Close(); err != nil {
						t.Fatal(err)
					}
					db = mustOpenAt(t, path, opts)
					if !found(t, db, s.ID, "pangolin1", "/m/1.md") {
						t.Fatal("pangolin1 is not found before the damage")
					}
					// Every page in the file, where the damage is.
					checkpoint(t, file)
					damage.do(t, file)
				}
				if miss := notFound(t, db, s.ID, n); miss != nil {
					t.Fatalf("pangolin%v not found", miss)
				}
				m := mustCreate(t, db, s.ID, "/new.md", "okapi")
				if !found(t, db, s.ID, "okapi", m.Path) {
					t.Error("a memory written after the damage is not found")
				}
				if !strings.Contains(log.String(), damagedWarning+file+" ") {
					t.Errorf("the log does not say that the index is damaged:\n%s", log.String())
				}
				if mode := stat(t, file).Mode().Perm(); mode != 0o600 {
					t.Errorf("the new index file has mode %#o", mode)
				}
				checkIndexes(t, db, rawIndex(t, path), damage.name+" "+when)
			})
		}
	}
}

// TestSearchIndexRemovedWhileOpen: the index file removed while the
// database is open (by an operator, or by another process that found it
// damaged and built another) is not written to any longer: the indexer
// opens the file at the index's path, building it if need be, and the
// other processes sharing the database read that one.
func TestSearchIndexRemovedWhileOpen(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/m.db"
	db := mustOpenAt(t, path, sqlite.Options{})
	s := mustStore(t, db)
	mustCreateMany(t, db, s.ID, 20, "/m/%d.md", "pangolin%d scales")
	if err := db.WaitSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if err := removeIndex(path); err != nil {
		t.Fatal(err)
	}
	m := mustCreate(t, db, s.ID, "/new.md", "okapi")
	if miss := notFound(t, db, s.ID, 20); miss != nil {
		t.Errorf("pangolin%v not found", miss)
	}
	if !found(t, db, s.ID, "okapi", m.Path) {
		t.Error("a memory written after the removal is not found")
	}
	if _, err := os.Stat(sqlite.IndexPath(path)); err != nil {
		t.Fatalf("no index file at its path: %v", err)
	}
	checkIndexes(t, db, rawIndex(t, path), "after the removal")
}

// TestSearchIndexDamagedSharedFile: two handles on one database (as two
// processes) both find the damaged index file; one builds another, and
// both then search that one: neither removes the other's new file.
func TestSearchIndexDamagedSharedFile(t *testing.T) {
	ctx := context.Background()
	const n = 50
	path := t.TempDir() + "/m.db"
	one := mustOpenAt(t, path, sqlite.Options{})
	s := mustStore(t, one)
	mustCreateMany(t, one, s.ID, n, "/m/%d.md", "pangolin%d scales")
	if err := one.WaitSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	two := mustOpenAt(t, path, sqlite.Options{})
	checkpoint(t, sqlite.IndexPath(path))
	damages[len(damages)-1].do(t, sqlite.IndexPath(path))
	for h, db := range []*sqlite.DB{one, two} {
		if miss := notFound(t, db, s.ID, n); miss != nil {
			t.Fatalf("handle %d: pangolin%v not found", h, miss)
		}
	}
	for h, db := range []*sqlite.DB{one, two} {
		m := mustCreate(t, db, s.ID, fmt.Sprintf("/new%d.md", h), fmt.Sprintf("okapi%d", h))
		for o, other := range []*sqlite.DB{one, two} {
			if !found(t, other, s.ID, fmt.Sprintf("okapi%d", h), m.Path) {
				t.Errorf("handle %d does not find what handle %d wrote", o, h)
			}
		}
	}
	checkIndexes(t, one, rawIndex(t, path), "two handles")
}

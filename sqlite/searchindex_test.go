package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/syncbuf"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// found says whether a search for text finds the memory at path. It may
// run on any goroutine: a failed search is an error, and not found.
func found(tb testing.TB, db *sqlite.DB, storeID, text, path string) bool {
	tb.Helper()
	p, err := db.SearchMemories(context.Background(), ws, []string{storeID}, memstore.SearchQuery{Text: text, Limit: 100})
	if err != nil {
		tb.Error(err)
		return false
	}
	for _, r := range p.Items {
		if r.Memory.Path == path {
			return true
		}
	}
	return false
}

// notFound returns each i below n for which a search for "pangolinI"
// does not find /m/I.md: of the memories mustCreateMany writes with
// "/m/%d.md" and "pangolin%d scales", those search misses.
func notFound(tb testing.TB, db *sqlite.DB, storeID string, n int) []int {
	tb.Helper()
	var missing []int
	for i := range n {
		if !found(tb, db, storeID, fmt.Sprintf("pangolin%d", i), fmt.Sprintf("/m/%d.md", i)) {
			missing = append(missing, i)
		}
	}
	return missing
}

// mustCreateMany creates n memories, the i-th at fmt.Sprintf(pathFormat, i)
// holding fmt.Sprintf(contentFormat, i).
func mustCreateMany(tb testing.TB, db *sqlite.DB, storeID string, n int, pathFormat, contentFormat string) {
	tb.Helper()
	for i := range n {
		mustCreate(tb, db, storeID, fmt.Sprintf(pathFormat, i), fmt.Sprintf(contentFormat, i))
	}
}

// removeIndex deletes the index file of the database at path, with its
// log, as an operator may.
func removeIndex(path string) error {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(sqlite.IndexPath(path) + suffix); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// TestSearchFindsWhatWasJustWritten: the indexer works beside the writer,
// but a search waits for the writes committed before it, so a client
// always finds what it has just written, while others write too.
func TestSearchFindsWhatWasJustWritten(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	s := mustStore(t, db)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			var last *memstore.Memory
			for i := range 25 {
				word := fmt.Sprintf("zq%dx%dk", w, i)
				path := fmt.Sprintf("/w%d/%d.md", w, i%3)
				var err error
				if i < 3 {
					last, err = sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: path, Content: "note " + word}, alice)
				} else {
					m, e := memstore.FindMemory(ctx, memstore.NewCore(db), &memstore.Caller{WorkspaceID: ws, Actor: alice}, s.ID, path)
					if err = e; err == nil {
						last, err = sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Content: ptr("note " + word)}, alice)
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
				if !found(t, db, s.ID, word, last.Path) {
					t.Errorf("%q, just written to %s, is not found", word, last.Path)
				}
				if i >= 3 && found(t, db, s.ID, fmt.Sprintf("zq%dx%dk", w, i-3), last.Path) {
					t.Errorf("%s is still found by the text it held before", last.Path)
				}
			}
		})
	}
	wg.Wait()
}

// TestSearchIndexRebuilt: the index file holds derived data only. Deleted,
// or of another version of its schema, it is built again from the
// memories when the database opens.
func TestSearchIndexRebuilt(t *testing.T) {
	db, path, s := mustIndexed(t, 20)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, damage := range []struct {
		name string
		do   func() error
	}{
		{"deleted", func() error { return removeIndex(path) }},
		{"another version", func() error {
			raw := rawDB(t, sqlite.IndexPath(path))
			defer raw.Close()
			_, err := raw.Exec(`PRAGMA user_version = 999`)
			return err
		}},
	} {
		if err := damage.do(); err != nil {
			t.Fatal(err)
		}
		db := mustOpenAt(t, path, sqlite.Options{})
		if miss := notFound(t, db, s.ID, 20); miss != nil {
			t.Errorf("index %s: pangolin%v not found", damage.name, miss)
		}
		checkIndexes(t, db, rawIndex(t, path), "index "+damage.name)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSearchIndexBuildIsAnnounced: building the index file takes a while
// for a large database, so the logger hears of it and the backlog counts
// every memory meanwhile.
func TestSearchIndexBuildIsAnnounced(t *testing.T) {
	ctx := context.Background()
	db, path := mustOpenToClose(t)
	s := mustStore(t, db)
	const n = 1000
	mustCreateMany(t, db, s.ID, n, "/m/%d.md", "pangolin%d scales")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := removeIndex(path); err != nil {
		t.Fatal(err)
	}
	var log syncbuf.Buffer
	db = mustOpenAt(t, path, sqlite.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	c, err := db.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.SearchBacklog != n {
		t.Errorf("backlog while building: %d, want every memory (%d)", c.SearchBacklog, n)
	}
	if err := db.WaitSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	// The queue is emptied just after the round that took it in.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c, err = db.Counts(ctx); err != nil {
			t.Fatal(err)
		}
		if c.SearchBacklog == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("backlog once built: %d, want 0", c.SearchBacklog)
		}
	}
	got := log.String()
	for _, want := range []string{
		`msg="building the search indexes; searches wait for them" memories=1000 file=` + sqlite.IndexPath(path),
		`msg="search indexes built" memories=1000 took=`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
}

// TestSearchIndexesOtherProcesses: a write made to the file by another
// process does not wake this process's indexer, yet a search that begins
// after it finds it. (Another memstore process would index it itself;
// here a plain SQLite connection writes.)
func TestSearchIndexesOtherProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	db := mustOpenAt(t, path, sqlite.Options{})
	s := mustStore(t, db)
	if err := db.WaitSearchIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path)
	if _, err := raw.Exec(`INSERT INTO memories (id, store_id, path, content, sha256, size, version_id, created_at, updated_at)
		VALUES ('mem_other', ?, '/elsewhere.md', 'okapi', '', 5, 'ver_other', 1, 1)`, s.ID); err != nil {
		t.Fatal(err)
	}
	if !found(t, db, s.ID, "okapi", "/elsewhere.md") {
		t.Fatal("a memory written by another process is not found")
	}
}

// TestSearchIndexSharedByProcesses: several handles on one file (as
// several processes: a server and `memstore ... --db` commands) each run
// an indexer on the one index file. They open together, on a database
// whose index file is new, write and search together, and leave an index
// that matches the memories: rounds take the file in turn.
func TestSearchIndexSharedByProcesses(t *testing.T) {
	ctx := context.Background()
	db, path := mustOpenToClose(t)
	s := mustStore(t, db)
	mustCreateMany(t, db, s.ID, 200, "/old/%d.md", "aardvark%d burrow")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := removeIndex(path); err != nil {
		t.Fatal(err)
	}
	handles := make([]*sqlite.DB, 4)
	var wg sync.WaitGroup
	for h := range handles {
		wg.Go(func() {
			db, err := sqlite.Open(ctx, path, sqlite.Options{})
			if err != nil {
				t.Error(err)
				return
			}
			t.Cleanup(func() { db.Close() })
			handles[h] = db
			for i := range 20 {
				word := fmt.Sprintf("yak%dx%d", h, i)
				m, err := sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/h%d/%d.md", h, i), Content: word}, alice)
				if err != nil {
					t.Error(err)
					return
				}
				if !found(t, db, s.ID, word, m.Path) {
					t.Errorf("handle %d: %q, just written, is not found", h, word)
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if !found(t, handles[0], s.ID, "aardvark7", "/old/7.md") {
		t.Error("a memory from before the index file was made is not found")
	}
	checkIndexes(t, handles[0], rawIndex(t, path), "four handles")
}

// TestSearchFindsOtherProcessesWrites: a search waits for every change
// committed before it began, whichever process made it: a memory written
// through one handle on the database (as by a `memstore --db` command) is
// found at once by a search through another (as a server's), though the
// write does not wake the other's indexer; and the text an update
// replaced is no longer found.
func TestSearchFindsOtherProcessesWrites(t *testing.T) {
	ctx := context.Background()
	db, path := mustOpenToClose(t)
	s := mustStore(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	one, two := mustOpenAt(t, path, sqlite.Options{}), mustOpenAt(t, path, sqlite.Options{})
	if err := two.WaitSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	missed := 0
	for i := range 100 {
		writer, searcher := one, two
		if i >= 50 {
			writer, searcher = two, one
		}
		word := fmt.Sprintf("quokka%dz", i)
		m := mustCreate(t, writer, s.ID, fmt.Sprintf("/q/%d.md", i), "seen "+word)
		if !found(t, searcher, s.ID, word, m.Path) {
			missed++
		}
		u, err := sqlitetest.Writer(writer).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Content: ptr("seen again")}, alice)
		if err != nil {
			t.Fatal(err)
		}
		if found(t, searcher, s.ID, word, u.Path) {
			missed++
		}
	}
	if missed > 0 {
		t.Errorf("%d of 200 searches right after another handle's write did not see it", missed)
	}
}

// TestSearchIndexOfVersion1: an index file of version 1, without the
// count of changes it holds, gains it in place: its indexes are not built
// again.
func TestSearchIndexOfVersion1(t *testing.T) {
	db, path, s := mustIndexed(t, 20)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, sqlite.IndexPath(path))
	for _, q := range []string{`ALTER TABLE search_state DROP COLUMN seq`, `PRAGMA user_version = 1`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	var log syncbuf.Buffer
	db = mustOpenAt(t, path, sqlite.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	m := mustCreate(t, db, s.ID, "/new.md", "okapi")
	if miss := notFound(t, db, s.ID, 20); miss != nil {
		t.Errorf("pangolin%v not found", miss)
	}
	if !found(t, db, s.ID, "okapi", m.Path) {
		t.Error("a memory written after the upgrade is not found")
	}
	if strings.Contains(log.String(), "building the search indexes") {
		t.Errorf("the indexes were built again:\n%s", log.String())
	}
	checkIndexes(t, db, rawIndex(t, path), "upgraded")
}

// segments counts the segments of each search index of the database at
// path.
func segments(tb testing.TB, raw *sql.DB) map[string]int {
	tb.Helper()
	out := map[string]int{}
	for _, table := range searchTables {
		var n int
		if err := raw.QueryRow(`SELECT count(DISTINCT segid) FROM ` + table + `_idx`).Scan(&n); err != nil {
			tb.Fatal(err)
		}
		out[table] = n
	}
	return out
}

// TestSearchIndexMergesWhenIdle: writes indexed in many rounds, each its
// own segment, end in few segments once the indexer is idle, since a
// lookup seeks its term in every segment.
func TestSearchIndexMergesWhenIdle(t *testing.T) {
	db, path := mustOpenToClose(t)
	s := mustStore(t, db)
	const rounds = 48
	for i := range rounds {
		mustCreate(t, db, s.ID, fmt.Sprintf("/m/%d.md", i), fmt.Sprintf("pangolin%d scales", i))
		if err := db.WaitSearchIndex(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	raw := rawIndex(t, path)
	var got map[string]int
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got = segments(t, raw); got["memories_words"] <= 2 && got["memories_paths"] <= 2 && got["memories_trigrams"] <= 2 {
			break
		}
	}
	for table, n := range got {
		if n > 2 {
			t.Errorf("%s: %d segments after %d rounds and a quiet time; want at most 2", table, n, rounds)
		}
	}
	if miss := notFound(t, db, s.ID, rounds); miss != nil {
		t.Errorf("pangolin%v not found after merging", miss)
	}
}

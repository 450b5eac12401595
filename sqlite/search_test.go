package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/searchcorpus"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// rawDB opens a second connection pool on a database file.
func rawDB(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=secure_delete(1)")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { raw.Close() })
	return raw
}

// rawIndex opens the search indexes of the database at path, for what the
// services do not show: the indexes themselves. The database is attached
// as mem.
func rawIndex(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	raw := rawDB(tb, sqlite.IndexPath(path))
	raw.SetMaxOpenConns(1)
	raw.SetConnMaxIdleTime(0)
	if _, err := raw.Exec(`ATTACH DATABASE ? AS mem`, "file:"+path); err != nil {
		tb.Fatal(err)
	}
	return raw
}

// searchTables are the FTS5 indexes of search.
var searchTables = []string{"memories_words", "memories_paths", "memories_trigrams"}

// checkIndexes waits for db's indexer, then compares each index with one
// built afresh from the memories table, token by token (fts5vocab's
// instances: term, rowid, column, offset), after FTS5's own integrity
// check: an index that missed a write, or kept what it should have
// forgotten, fails it.
func checkIndexes(tb testing.TB, db *sqlite.DB, raw *sql.DB, what string) {
	tb.Helper()
	ctx := context.Background()
	if db != nil {
		if err := db.WaitSearchIndex(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	for _, table := range searchTables {
		var create string
		if err := raw.QueryRowContext(ctx, `SELECT sql FROM sqlite_schema WHERE name = ?`, table).Scan(&create); err != nil {
			tb.Fatal(err)
		}
		cols := "path, content"
		if table == "memories_paths" {
			cols = "path"
		}
		for _, q := range []string{
			fmt.Sprintf(`INSERT INTO %[1]s (%[1]s, rank) VALUES ('integrity-check', 1)`, table),
			strings.Replace(create, "CREATE VIRTUAL TABLE "+table, "CREATE VIRTUAL TABLE temp.fresh", 1),
			fmt.Sprintf(`INSERT INTO temp.fresh (rowid, %[1]s) SELECT rowid, %[1]s FROM mem.memories`, cols),
			fmt.Sprintf(`CREATE VIRTUAL TABLE temp.have USING fts5vocab(main, %s, 'instance')`, table),
			`CREATE VIRTUAL TABLE temp.want USING fts5vocab(temp, fresh, 'instance')`,
		} {
			if _, err := raw.ExecContext(ctx, q); err != nil {
				tb.Fatalf("%s: %s: %s: %v", what, table, q, err)
			}
		}
		var extra, missing, n int
		if err := raw.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM (SELECT * FROM temp.have EXCEPT SELECT * FROM temp.want)),
			(SELECT count(*) FROM (SELECT * FROM temp.want EXCEPT SELECT * FROM temp.have)),
			(SELECT count(*) FROM temp.want)`).Scan(&extra, &missing, &n); err != nil {
			tb.Fatal(err)
		}
		if extra != 0 || missing != 0 {
			tb.Errorf("%s: %s has %d token instances it should not and misses %d (of %d)", what, table, extra, missing, n)
		}
		for _, q := range []string{`DROP TABLE temp.have`, `DROP TABLE temp.want`, `DROP TABLE temp.fresh`} {
			if _, err := raw.ExecContext(ctx, q); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// indexed counts the rows of an index that match an FTS5 expression.
func indexed(tb testing.TB, raw *sql.DB, table, expr string) int {
	tb.Helper()
	var n int
	if err := raw.QueryRow(fmt.Sprintf(`SELECT count(*) FROM %[1]s WHERE %[1]s MATCH ?`, table), expr).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// TestSearchIndexFollowsEveryWrite checks the indexes after each way of
// writing a memory: triggers note every change, whichever statement makes
// it, and the indexer takes them in.
func TestSearchIndexFollowsEveryWrite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db := mustOpenAt(t, path, sqlite.Options{})
	raw := rawIndex(t, path)
	s := mustStore(t, db)
	m := mustCreate(t, db, s.ID, "/a/walrus.md", "tusks and whiskers")
	checkIndexes(t, db, raw, "create")
	steps := []struct {
		name string
		do   func() error
	}{
		{"update", func() error {
			_, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Content: ptr("flippers")}, alice)
			return err
		}},
		{"rename", func() error {
			_, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Path: ptr("/b/seal.md")}, alice)
			return err
		}},
		{"rename and update", func() error {
			_, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Path: ptr("/c/otter.md"), Content: ptr("kelp")}, alice)
			return err
		}},
		{"upsert", func() error {
			_, err := sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: "/c/otter.md", Content: "urchins", Upsert: true}, alice)
			return err
		}},
		{"concurrent creates", func() error {
			var wg sync.WaitGroup
			errs := make([]error, 20)
			for i := range errs {
				wg.Go(func() {
					_, errs[i] = sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/many/%d.md", i), Content: fmt.Sprint("plankton ", i)}, alice)
				})
			}
			wg.Wait()
			return errors.Join(errs...)
		}},
		{"delete", func() error { return sqlitetest.Writer(db).DeleteMemory(ctx, ws, s.ID, m.ID, "", alice) }},
		// SQLite gives a new row the rowid of the newest row if that row
		// is gone: the index must not keep the old memory's words for it.
		{"delete the newest, then create", func() error {
			n := mustCreate(t, db, s.ID, "/d/narwhal.md", "tusk")
			if err := sqlitetest.Writer(db).DeleteMemory(ctx, ws, s.ID, n.ID, "", alice); err != nil {
				return err
			}
			_, err := sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: "/d/beluga.md", Content: "melon"}, alice)
			return err
		}},
		// Writes that land in one batch, some on the same memories: each
		// memory is indexed as the batch left it.
		{"concurrent writes to the same memories", func() error {
			var ms []*memstore.Memory
			for i := range 6 {
				ms = append(ms, mustCreate(t, db, s.ID, fmt.Sprintf("/e/%d.md", i), "krill"))
			}
			var wg sync.WaitGroup
			errs := make([]error, 3*len(ms))
			for i, m := range ms {
				wg.Go(func() {
					_, errs[3*i] = sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Content: ptr(fmt.Sprint("squid ", i))}, alice)
				})
				wg.Go(func() {
					_, errs[3*i+1] = sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Path: ptr(fmt.Sprintf("/f/%d.md", i))}, alice)
				})
				wg.Go(func() {
					if i%2 == 0 {
						errs[3*i+2] = sqlitetest.Writer(db).DeleteMemory(ctx, ws, s.ID, m.ID, "", alice)
					}
				})
			}
			wg.Wait()
			for _, err := range errs { // deleted first, then updated: not found
				if err != nil && memstore.ErrorCode(err) != memstore.ENotFound {
					return err
				}
			}
			return nil
		}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		checkIndexes(t, db, raw, st.name)
	}
	if n := indexed(t, raw, "memories_words", "plankton"); n != 20 {
		t.Fatalf("plankton in %d rows of the index, want 20", n)
	}
	for _, w := range []string{"walrus", "tusks", "seal", "otter", "kelp", "urchins", "flippers"} {
		for _, table := range searchTables {
			if table == "memories_paths" && !strings.Contains("walrus seal otter", w) {
				continue
			}
			if n := indexed(t, raw, table, `"`+w+`"`); n != 0 {
				t.Errorf("%q still in %s (%d rows)", w, table, n)
			}
		}
	}

	// Deleting the store deletes its memories by a foreign key cascade,
	// which fires the triggers too.
	if err := db.DeleteStore(ctx, ws, s.ID); err != nil {
		t.Fatal(err)
	}
	checkIndexes(t, db, raw, "store deletion")
	for _, table := range searchTables {
		var n int
		if err := raw.QueryRow(`SELECT count(*) FROM ` + table + `_docsize`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s indexes %d rows after the store's deletion, want 0", table, n)
		}
	}
}

// TestSearchErasesText shows that the words of rewritten and deleted
// memories are never found again, and leave the database file when the
// versions that hold them are redacted: the indexes are then rebuilt
// without them, and the freed bytes zeroed (PRAGMA secure_delete), in the
// database and in the index file.
func TestSearchErasesText(t *testing.T) {
	// A purge in many steps, between which the indexer takes in writes.
	pages := *sqlite.PurgePages
	*sqlite.PurgePages = 1
	t.Cleanup(func() { *sqlite.PurgePages = pages })
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db := mustOpenAt(t, path, sqlite.Options{})
	s := mustStore(t, db)
	// Words the stemmer leaves alone, so that the index holds them as
	// written.
	rewritten, deleted, kept := "qzxjvkplmwrt", "vbnqzxkjhgfd", "wxyqzkvjbnmp"
	m := mustCreate(t, db, s.ID, "/notes/a.md", "before "+rewritten+" after")
	d := mustCreate(t, db, s.ID, "/notes/b.md", "gone "+deleted)
	mustCreate(t, db, s.ID, "/notes/c.md", "stays "+kept)
	for i := range 50 { // more pages in the indexes
		mustCreate(t, db, s.ID, fmt.Sprintf("/filler/%d.md", i), strings.Repeat(fmt.Sprintf("filler%d words ", i), 40))
	}
	// Both files are read whole, after a checkpoint. The index may store
	// a word after the letters it shares with the word before it, so it
	// is looked for there without its first three.
	files := func() (data, index []byte) {
		t.Helper()
		if err := db.WaitSearchIndex(ctx); err != nil {
			t.Fatal(err)
		}
		checkpoint(t, path)
		checkpoint(t, sqlite.IndexPath(path))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		index, err = os.ReadFile(sqlite.IndexPath(path))
		if err != nil {
			t.Fatal(err)
		}
		return data, index
	}
	data, index := files()
	for _, w := range []string{rewritten, deleted, kept} {
		if !bytes.Contains(data, []byte(w)) || !bytes.Contains(index, []byte(w[3:])) {
			t.Fatalf("%q is not in the files to begin with: the check proves nothing", w)
		}
	}

	u, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Content: ptr("before after")}, alice)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlitetest.Writer(db).DeleteMemory(ctx, ws, s.ID, d.ID, "", alice); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{rewritten, deleted} {
		if p, err := db.SearchMemories(ctx, ws, []string{s.ID}, memstore.SearchQuery{Text: w}); err != nil || len(p.Items) != 0 {
			t.Errorf("search %q after the write: %v %+v", w, err, p.Items)
		}
	}
	// The versions keep the old content until they are redacted.
	for _, v := range []string{m.VersionID, d.VersionID} {
		if _, err := db.RedactVersion(ctx, ws, s.ID, v, admin); err != nil {
			t.Fatal(err)
		}
	}
	if u.Content != "before after" {
		t.Fatalf("update: %+v", u)
	}
	data, index = files()
	for _, w := range []string{rewritten, deleted} {
		if bytes.Contains(data, []byte(w)) {
			t.Errorf("%q is still in the database file", w)
		}
		if bytes.Contains(index, []byte(w[3:])) {
			t.Errorf("%q is still in the index file", w)
		}
	}
	if !bytes.Contains(data, []byte(kept)) || !bytes.Contains(index, []byte(kept[3:])) {
		t.Error("a live memory's word is not in the files: the check proves nothing")
	}
	for _, w := range []string{rewritten, deleted, rewritten[2:9]} {
		p, err := db.SearchMemories(ctx, ws, []string{s.ID}, memstore.SearchQuery{Text: w})
		if err != nil || len(p.Items) != 0 {
			t.Errorf("search %q: %v %+v", w, err, p.Items)
		}
	}
}

// TestSearchAfterVacuum: memstore never runs VACUUM, but an operator may.
// The indexes are keyed by the rowids of memories, which has no INTEGER
// PRIMARY KEY; this SQLite keeps them through VACUUM.
func TestSearchAfterVacuum(t *testing.T) {
	ctx := context.Background()
	db, path := mustOpenToClose(t)
	s := mustStore(t, db)
	for i := range 30 {
		m := mustCreate(t, db, s.ID, fmt.Sprintf("/m/%02d.md", i), fmt.Sprintf("word%02d common", i))
		if i%3 == 0 { // gaps in the rowids
			if err := sqlitetest.Writer(db).DeleteMemory(ctx, ws, s.ID, m.ID, "", alice); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.WaitSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw := rawIndex(t, path)
	if _, err := raw.Exec(`VACUUM mem`); err != nil {
		t.Fatal(err)
	}
	checkIndexes(t, nil, raw, "after VACUUM")
	db = mustOpenAt(t, path, sqlite.Options{})
	for i := range 30 {
		p, err := db.SearchMemories(ctx, ws, []string{s.ID}, memstore.SearchQuery{Text: fmt.Sprintf("word%02d", i)})
		want := fmt.Sprintf("/m/%02d.md", i)
		switch {
		case err != nil:
			t.Fatal(err)
		case i%3 == 0 && len(p.Items) != 0, i%3 != 0 && (len(p.Items) != 1 || p.Items[0].Memory.Path != want):
			t.Errorf("word%02d after VACUUM: %+v", i, p.Items)
		}
	}
}

// TestSearchBeyondWindow: each term is looked up among its newest
// memories only, but the older ones that have it in their path, or that
// have every term, are found too, and first.
func TestSearchBeyondWindow(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	s := mustStore(t, db)
	mustCreate(t, db, s.ID, "/zeta/alpha.md", "an old memory named after the word")
	mustCreate(t, db, s.ID, "/old.md", "alpha and beta, together, long ago")
	// More memories with each word than a window holds, and others, so
	// that the words are not in half of the memories (bm25 then ranks
	// nothing).
	for i := range 110 {
		mustCreate(t, db, s.ID, fmt.Sprintf("/a/%d.md", i), fmt.Sprintf("alpha number %d among many", i))
		mustCreate(t, db, s.ID, fmt.Sprintf("/b/%d.md", i), fmt.Sprintf("beta number %d among many", i))
		mustCreate(t, db, s.ID, fmt.Sprintf("/c/%d.md", i), fmt.Sprintf("gamma number %d among many", i))
	}
	for _, tt := range []struct{ query, first string }{
		{"alpha", "/zeta/alpha.md"},
		{"alpha beta", "/old.md"},
		{"together alpha", "/old.md"},
	} {
		p, err := db.SearchMemories(ctx, ws, []string{s.ID}, memstore.SearchQuery{Text: tt.query})
		if err != nil || len(p.Items) == 0 || p.Items[0].Memory.Path != tt.first {
			t.Errorf("search %q: %v, first %+v; want %s first", tt.query, err, p.Items[:min(1, len(p.Items))], tt.first)
		}
	}
}

// The search benchmarks run on a store of 100,000 memories of about 500
// bytes of generated text, built once per run; -searchdb keeps the
// database (and the memories exported as files, for grep) at a path, to
// be reused by later runs.
var searchDB = flag.String("searchdb", "", "keep the search benchmarks' database at `FILE` and reuse it")

// searchFixture is the benchmarks' store, its memories exported as files
// and the queries.
type searchFixture struct {
	db      *sqlite.DB
	storeID string
	files   string // the memories as files below this directory
	queries []string
}

// searchBench builds the fixture (a few minutes), or opens the one kept
// at -searchdb.
func searchBench(b *testing.B) *searchFixture {
	b.Helper()
	ctx := context.Background()
	path := *searchDB
	if path == "" {
		path = filepath.Join(b.TempDir(), "search.db")
	}
	_, statErr := os.Stat(path)
	db := mustOpenAt(b, path, sqlite.Options{})
	paths, contents, queries := searchcorpus.Bench()
	f := &searchFixture{db: db, files: path + ".files", queries: queries}
	if statErr == nil {
		p, err := db.Stores(ctx, ws, memstore.StoreFilter{})
		if err != nil || len(p.Items) != 1 {
			b.Fatalf("%s: want one store: %v", path, err)
		}
		f.storeID = p.Items[0].ID
		return f
	}
	s, err := db.CreateStore(ctx, ws, memstore.StoreCreate{Name: "bench"}, memstore.Quota{})
	if err != nil {
		b.Fatal(err)
	}
	f.storeID = s.ID
	start := time.Now()
	// Several writers, so that the writes share transactions.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for w := range errs {
		wg.Go(func() {
			for i := w; i < searchcorpus.Memories && errs[w] == nil; i += len(errs) {
				_, errs[w] = sqlitetest.Writer(db).CreateMemory(ctx, ws, s.ID, memstore.MemoryCreate{Path: paths[i], Content: contents[i]}, alice)
				if errs[w] == nil {
					dst := filepath.Join(f.files, filepath.FromSlash(paths[i]))
					errs[w] = errors.Join(os.MkdirAll(filepath.Dir(dst), 0o700), os.WriteFile(dst, []byte(contents[i]), 0o600))
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	built := time.Since(start)
	if err := db.WaitSearchIndex(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d memories in %s at %s, indexed %s later", searchcorpus.Memories, built.Round(time.Second), path, (time.Since(start) - built).Round(time.Millisecond))
	return f
}

// grepQueries is how many of the queries grep runs: each reads every file.
const grepQueries = 15

// BenchmarkSearch runs the queries over the 100,000 memories, one per
// iteration, and reports the latency percentiles. Then, side by side, it
// runs the first grepQueries queries again, each followed by grep -rli
// over the same memories exported as files (each word of the query a
// pattern, as an agent without memstore would search), and reports
// grep's median and how many times slower than search it is.
func BenchmarkSearch(b *testing.B) {
	if _, err := exec.LookPath("grep"); err != nil {
		b.Skip("no grep")
	}
	f := searchBench(b)
	ctx := context.Background()
	search := func(q string) (time.Duration, int) {
		start := time.Now()
		p, err := f.db.SearchMemories(ctx, ws, []string{f.storeID}, memstore.SearchQuery{Text: q})
		d := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		return d, len(p.Items)
	}
	var lat []time.Duration
	results := 0
	for i := 0; b.Loop(); i++ {
		d, n := search(f.queries[i%len(f.queries)])
		lat = append(lat, d)
		results += n
	}
	b.ReportMetric(searchcorpus.Millis(searchcorpus.Percentile(lat, 50)), "p50-ms")
	b.ReportMetric(searchcorpus.Millis(searchcorpus.Percentile(lat, 99)), "p99-ms")
	b.ReportMetric(float64(results)/float64(len(lat)), "results/op")

	var ours, greps []time.Duration
	for _, q := range f.queries[:grepQueries] {
		d, _ := search(q)
		ours = append(ours, d)
		args := []string{"-rliF"}
		for _, w := range strings.Fields(q) {
			args = append(args, "-e", w)
		}
		start := time.Now()
		err := exec.Command("grep", append(args, f.files)...).Run()
		greps = append(greps, time.Since(start))
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) { // 1: no match
			b.Fatalf("grep %q: %v", q, err)
		}
	}
	g, o := searchcorpus.Percentile(greps, 50), searchcorpus.Percentile(ours, 50)
	b.ReportMetric(searchcorpus.Millis(g), "grep-p50-ms")
	b.ReportMetric(float64(g)/float64(o), "x-faster-than-grep")
}

// BenchmarkSearchConversation runs BenchmarkSearch's queries through a
// Core, each search twice in turn: as memories of topics, then as turns
// of conversations (SearchQuery.Conversation), which ranks the best
// MaxSearchLimit matches with their neighbours. It reports the latency
// percentiles of each, measured side by side.
func BenchmarkSearchConversation(b *testing.B) {
	f := searchBench(b)
	co := memstore.NewCore(f.db)
	c := &memstore.Caller{WorkspaceID: ws, Actor: alice}
	var plain, turns []time.Duration
	for i := 0; b.Loop(); i++ {
		q := f.queries[i%len(f.queries)]
		for _, conv := range []bool{false, true} {
			start := time.Now()
			if _, err := co.SearchMemories(context.Background(), c, []string{f.storeID}, memstore.SearchQuery{Text: q, Conversation: new(conv)}); err != nil {
				b.Fatal(err)
			}
			if conv {
				turns = append(turns, time.Since(start))
			} else {
				plain = append(plain, time.Since(start))
			}
		}
	}
	b.ReportMetric(searchcorpus.Millis(searchcorpus.Percentile(plain, 50)), "p50-ms")
	b.ReportMetric(searchcorpus.Millis(searchcorpus.Percentile(plain, 99)), "p99-ms")
	b.ReportMetric(searchcorpus.Millis(searchcorpus.Percentile(turns, 50)), "conv-p50-ms")
	b.ReportMetric(searchcorpus.Millis(searchcorpus.Percentile(turns, 99)), "conv-p99-ms")
}

// TestSearchScoresAfterUpdates: a memory's relevance depends on what the
// memories say, not on how often the others were written. FTS5 forgets
// a row of a contentless_delete index without lowering the row count
// and the token totals that bm25 reads, so each memory indexed again
// counted twice from then on.
func TestSearchScoresAfterUpdates(t *testing.T) {
	ctx := context.Background()
	relevance := func(db *sqlite.DB, storeID string) float64 {
		t.Helper()
		p, err := db.SearchMemories(ctx, ws, []string{storeID}, memstore.SearchQuery{Text: "walrus"})
		if err != nil || len(p.Items) == 0 {
			t.Fatalf("search: %v, %d results", err, len(p.Items))
		}
		return p.Items[0].Relevance
	}
	fill := func(db *sqlite.DB, storeID string, last string) *memstore.Memory {
		var m *memstore.Memory
		for i := range 10 {
			text := "a seal on the rocks of the bay, sleeping in the sun"
			switch {
			case i < 3:
				text = "walrus"
			case i == 9:
				text = last
			}
			m = mustCreate(t, db, storeID, fmt.Sprintf("/m/%d.md", i), text)
		}
		return m
	}
	db := mustOpenAt(t, filepath.Join(t.TempDir(), "m.db"), sqlite.Options{})
	s := mustStore(t, db)
	m := fill(db, s.ID, "a seal")
	for i := range 30 {
		text := fmt.Sprintf("a seal on the rocks of the bay, sleeping in the sun, day %d", i)
		if i == 29 {
			text = "a seal"
		}
		if _, err := sqlitetest.Writer(db).UpdateMemory(ctx, ws, s.ID, m.ID, memstore.MemoryUpdate{Content: &text}, alice); err != nil {
			t.Fatal(err)
		}
		relevance(db, s.ID) // each update indexed in a round of its own
	}
	fresh := mustOpenAt(t, filepath.Join(t.TempDir(), "m.db"), sqlite.Options{})
	fs := mustStore(t, fresh)
	fill(fresh, fs.ID, "a seal")
	if got, want := relevance(db, s.ID), relevance(fresh, fs.ID); math.Abs(got-want) > 1e-9 {
		t.Errorf("relevance after 30 updates of another memory %v, in a database written once %v", got, want)
	}
}

package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
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

// corpus makes deterministic text for the search benchmarks: sentences of
// words drawn from a vocabulary with Zipf-like frequencies (common English
// words first, then invented ones), with names, identifiers, dates, email
// addresses and numbers among them, so that queries drawn from it meet
// the spread of rare and common terms of real notes.
type corpus struct {
	vocab []string
	r     *rand.Rand
	z     *rand.Zipf
}

// commonWords are the most frequent words of the corpus, most frequent
// first: function words, then the vocabulary of agents' notes.
var commonWords = strings.Fields(`the of and to a in is that for it as was with be by on not he i this are or his from at
	which but have an they you were her she there been one all we their has would when if so no will more can out up who them
	some about into only than other then now its also time two may could first like these over such our after new any just
	what most very through where much should well people because back how even good made way years many those before must
	here use being both year each same while still down work last day three long great might own old another since against
	right used under around never life world between always system part take program place home group number however off
	without set need state data project team user file server config build test deploy release meeting plan issue change
	review design model service client api version update error support schedule prefers likes wants asked said told
	decided remember note todo bug fix branch commit merge database query index cache memory store path session agent tool
	call response request latency budget deadline customer account password email phone address monday tuesday wednesday
	thursday friday weekend morning evening tomorrow yesterday week month birthday family friend trip flight hotel dinner
	lunch coffee doctor appointment`)

var (
	onsets = strings.Fields(`b c d f g h j k l m n p r s t v w y z bl br ch cl cr dr fl fr gl gr pl pr sc sh sk sl sm sn sp st str sw th tr tw wh qu`)
	vowels = strings.Fields(`a e i o u ai ea ee ie oo ou oa y`)
	codas  = strings.Fields(`b ck d ft g l ld lt m mp n nd ng nk nt p r rd rk rm rn rt s sh sk sp ss st t th x`)
)

func newCorpus(seed uint64, vocabulary int) *corpus {
	c := &corpus{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	seen := map[string]bool{}
	for _, w := range commonWords {
		if !seen[w] {
			seen[w] = true
			c.vocab = append(c.vocab, w)
		}
	}
	for len(c.vocab) < vocabulary {
		var b strings.Builder
		for range []int{1, 2, 2, 3}[c.r.IntN(4)] {
			s := vowels[c.r.IntN(len(vowels))]
			if c.r.IntN(5) > 0 {
				s = onsets[c.r.IntN(len(onsets))] + s
			}
			if c.r.IntN(2) == 0 {
				s += codas[c.r.IntN(len(codas))]
			}
			b.WriteString(s)
		}
		if w := b.String(); len(w) >= 3 && !seen[w] {
			seen[w] = true
			c.vocab = append(c.vocab, w)
		}
	}
	c.z = rand.NewZipf(c.r, 1.0001, 3, uint64(len(c.vocab)-1))
	return c
}

func (c *corpus) word() string { return c.vocab[c.z.Uint64()] }

// rare draws a word outside the 200 most frequent: a content word.
func (c *corpus) rare() string {
	for {
		if i := c.z.Uint64(); i >= 200 {
			return c.vocab[i]
		}
	}
}

func title(w string) string { return strings.ToUpper(w[:1]) + w[1:] }

func (c *corpus) token() string {
	switch c.r.IntN(60) {
	case 0:
		return c.rare() + title(c.rare()) // camelCase
	case 1:
		return c.rare() + "_" + c.rare()
	case 2:
		return fmt.Sprintf("%d-%02d-%02d", 2024+c.r.IntN(3), 1+c.r.IntN(12), 1+c.r.IntN(28))
	case 3:
		return c.rare() + "@" + c.rare() + ".com"
	case 4:
		return fmt.Sprint(c.r.IntN(10000))
	case 5, 6:
		return title(c.rare()) // a name
	}
	w := c.word()
	if c.r.IntN(8) == 0 {
		w += []string{"s", "ing", "ed", "er"}[c.r.IntN(4)]
	}
	return w
}

// memory makes the i-th memory, its content size bytes or a little more.
func (c *corpus) memory(i, size int) (path, content string) {
	path = fmt.Sprintf("/%s/%s-%s-%d.md", c.rare(), c.rare(), c.rare(), i)
	var b strings.Builder
	for b.Len() < size {
		for j := range 6 + c.r.IntN(9) {
			w := c.token()
			if j == 0 {
				w = title(w)
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		b.WriteString(". ")
	}
	return path, b.String()
}

// queries draws n queries of the kinds an agent asks, each from the words
// of one of the memories: a few words, one word, a question with stop
// words, a part of an identifier, a date, an email address, a name.
func (c *corpus) queries(n int, memories []string) []string {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	var qs []string
	for len(qs) < n {
		m := memories[r.IntN(len(memories))]
		var words, idents, dates, mails, names []string
		for _, f := range strings.Fields(m) {
			f = strings.TrimRight(f, ".")
			switch {
			case strings.Contains(f, "@"):
				mails = append(mails, f)
			case strings.Count(f, "-") == 2:
				dates = append(dates, f)
			case strings.Contains(f, "_") || strings.ToLower(f) != f && strings.ToLower(f[:1]) == f[:1]:
				idents = append(idents, f)
			case strings.ToLower(f) != f:
				names = append(names, f)
			case !slices.Contains(commonWords[:100], f) && len(f) > 2:
				words = append(words, f)
			}
		}
		pick := func(xs []string, k int) []string {
			if len(xs) < k {
				return nil
			}
			var out []string
			for _, i := range r.Perm(len(xs))[:k] {
				out = append(out, xs[i])
			}
			return out
		}
		var q []string
		switch k := r.IntN(100); {
		case k < 35:
			q = pick(words, 2)
		case k < 50:
			q = pick(words, 3)
		case k < 65:
			q = pick(words, 1)
		case k < 75:
			if w := pick(words, 2); w != nil {
				q = []string{"what", "did", "we", "say", "about", "the", w[0], "and", w[1]}
			}
		case k < 85:
			if id := pick(idents, 1); id != nil && len(id[0]) > 8 {
				i := 1 + r.IntN(len(id[0])-7)
				q = []string{id[0][i : i+5+r.IntN(3)]}
			}
		case k < 90:
			q = pick(dates, 1)
		case k < 95:
			q = pick(mails, 1)
		default:
			q = pick(names, 1)
		}
		if q != nil {
			qs = append(qs, strings.Join(q, " "))
		}
	}
	return qs
}

// searchFixture is the benchmarks' store, its memories exported as files
// and the queries.
type searchFixture struct {
	db      *sqlite.DB
	storeID string
	files   string // the memories as files below this directory
	queries []string
}

const (
	benchMemories = 100_000
	benchSize     = 500
)

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
	c := newCorpus(1, 50_000)
	paths := make([]string, benchMemories)
	contents := make([]string, benchMemories)
	for i := range contents {
		paths[i], contents[i] = c.memory(i, benchSize)
	}
	f := &searchFixture{db: db, files: path + ".files", queries: c.queries(200, contents)}
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
			for i := w; i < benchMemories && errs[w] == nil; i += len(errs) {
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
	b.Logf("built %d memories in %s at %s, indexed %s later", benchMemories, built.Round(time.Second), path, (time.Since(start) - built).Round(time.Millisecond))
	return f
}

// percentile returns the p-th percentile (0-100) of ds, which it sorts.
func percentile(ds []time.Duration, p float64) time.Duration {
	slices.Sort(ds)
	return ds[int(float64(len(ds)-1)*p/100)]
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

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
	b.ReportMetric(millis(percentile(lat, 50)), "p50-ms")
	b.ReportMetric(millis(percentile(lat, 99)), "p99-ms")
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
	g, o := percentile(greps, 50), percentile(ours, 50)
	b.ReportMetric(millis(g), "grep-p50-ms")
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
	b.ReportMetric(millis(percentile(plain, 50)), "p50-ms")
	b.ReportMetric(millis(percentile(plain, 99)), "p99-ms")
	b.ReportMetric(millis(percentile(turns, 50)), "conv-p50-ms")
	b.ReportMetric(millis(percentile(turns, 99)), "conv-p99-ms")
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

package postgres_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/internal/searchtext"
	"github.com/memstore/memstore/postgres"
)

// TestSearchWindow proves that a term's lookup reads only the newest
// memories that have it, however many share it: an older memory that
// would rank first, with the term in its content only, is not ranked at
// all once a window of newer ones have the term.
func TestSearchWindow(t *testing.T) {
	ctx := t.Context()
	core := memstore.NewCore(mustOpen(t, postgres.Options{}))
	s, err := core.CreateStore(ctx, alice, memstore.StoreCreate{Name: "window"})
	if err != nil {
		t.Fatal(err)
	}
	create := func(path, content string) {
		t.Helper()
		if _, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: path, Content: content}); err != nil {
			t.Fatal(err)
		}
	}
	create("/old.md", "heron heron heron")
	for i := range searchtext.Window {
		create(fmt.Sprintf("/n/%03d.md", i), "a heron flew by")
	}
	var paths []string
	for page := ""; ; {
		p, err := core.SearchMemories(ctx, alice, []string{s.ID}, memstore.SearchQuery{Text: "heron", Limit: memstore.MaxSearchLimit, Page: page})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Items {
			paths = append(paths, r.Memory.Path)
		}
		if page = p.Next; page == "" {
			break
		}
	}
	if slices.Contains(paths, "/old.md") || len(paths) != searchtext.Window {
		t.Fatalf("found %d memories (the oldest: %v), want the %d newest", len(paths), slices.Contains(paths, "/old.md"), searchtext.Window)
	}
}

// TestSearchVectorsInline proves that the search vector of a memory of a
// few hundred bytes stays in its row, where a search's scan of the newest
// memories reads it, and is not moved to the TOAST table.
func TestSearchVectorsInline(t *testing.T) {
	ctx := t.Context()
	url := pgtest.DB(t, migrate)
	core := memstore.NewCore(mustOpenAt(t, url, postgres.Options{}))
	s, err := core.CreateStore(ctx, alice, memstore.StoreCreate{Name: "inline"})
	if err != nil {
		t.Fatal(err)
	}
	// Words of random letters, which compress poorly, as varied prose's
	// many distinct words do.
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < 600 {
		for range 4 + r.IntN(5) {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		b.WriteByte(' ')
	}
	if _, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: "/prose.md", Content: b.String()}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var row, toast int64
	err = conn.QueryRow(ctx, `SELECT (SELECT pg_column_size(m.*) FROM memories m),
		pg_relation_size(reltoastrelid) FROM pg_class WHERE oid = 'memories'::regclass`).Scan(&row, &toast)
	if err != nil {
		t.Fatal(err)
	}
	if toast != 0 {
		t.Fatalf("a memory's row of %d bytes put %d bytes in the TOAST table", row, toast)
	}
}

// wrongPostings counts the rows of search_postings that differ from the
// postings made afresh from the memories' search vectors, as migration
// 0006 fills them: an extra row, a missing one or wrong counts.
func wrongPostings(tb testing.TB, conn *pgx.Conn) (n int) {
	tb.Helper()
	err := conn.QueryRow(tb.Context(), `WITH fresh AS (
		SELECT m.store_id, w.lexeme AS word, m.id AS memory_id,
			cardinality(array_positions(w.weights, 'A'))::smallint AS in_path, cardinality(array_positions(w.weights, 'B'))::smallint AS in_content
		FROM memory_search m, unnest(m.search_words) w)
		SELECT (SELECT count(*) FROM (SELECT * FROM search_postings EXCEPT SELECT * FROM fresh) x) +
			(SELECT count(*) FROM (SELECT * FROM fresh EXCEPT SELECT * FROM search_postings) y)`).Scan(&n)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// wrongSearchRows counts the differences between the live memories and
// memory_search's rows: a memory without its row, a row without its
// memory, and a row of another store, path or text than its memory's.
func wrongSearchRows(tb testing.TB, conn *pgx.Conn) (n int) {
	tb.Helper()
	ctx := tb.Context()
	err := conn.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM (SELECT id, store_id, path FROM memories EXCEPT SELECT id, store_id, path FROM memory_search) x) +
		(SELECT count(*) FROM (SELECT id, store_id, path FROM memory_search EXCEPT SELECT id, store_id, path FROM memories) y)`).Scan(&n)
	if err != nil {
		tb.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT m.path, convert_from(m.content, 'UTF8'), s.search_text FROM memories m JOIN memory_search s ON s.id = m.id`)
	if err != nil {
		tb.Fatal(err)
	}
	var path, content, text string
	_, err = pgx.ForEachRow(rows, []any{&path, &content, &text}, func() error {
		if text != postgres.SearchText(path, content) {
			n++
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// TestSearchPostingsFollowEveryWrite checks the search data against the
// memories after each way of writing one, once the indexer's rounds have
// run: memory_search holds a row for each live memory, at its store and
// path, and search_postings the words of those rows, whichever
// statement wrote the memory.
func TestSearchPostingsFollowEveryWrite(t *testing.T) {
	ctx := t.Context()
	db, core, conn, s := unindexed(t, "postings")
	other, err := core.CreateStore(ctx, alice, memstore.StoreCreate{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: "/a/walrus.md", Content: "tusks and whiskers, walrus walruses"})
	if err != nil {
		t.Fatal(err)
	}
	var count int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM search_postings WHERE memory_id = $1`, m.ID).Scan(&count); err != nil || count != 0 {
		t.Fatalf("a memory not yet indexed has %d postings: %v", count, err)
	}
	if err := db.IndexQueued(ctx); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM search_postings WHERE memory_id = $1`, m.ID).Scan(&count); err != nil || count == 0 {
		t.Fatalf("an indexed memory has %d postings: %v", count, err)
	}
	for _, st := range []struct {
		name string
		do   func() error
	}{
		{"create", func() error { return nil }},
		{"update", func() error {
			_, err := core.UpdateMemory(ctx, alice, s.ID, m.ID, memstore.MemoryUpdate{Content: new("flippers and flippers")})
			return err
		}},
		{"edit a few words", func() error {
			_, err := core.UpdateMemory(ctx, alice, s.ID, m.ID, memstore.MemoryUpdate{Content: new("flippers, flippers and a walrus")})
			return err
		}},
		{"rename", func() error {
			_, err := core.UpdateMemory(ctx, alice, s.ID, m.ID, memstore.MemoryUpdate{Path: new("/b/seal.md")})
			return err
		}},
		{"upsert", func() error {
			_, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: "/b/seal.md", Content: "kelp", Upsert: true})
			return err
		}},
		{"another store", func() error {
			_, err := core.CreateMemory(ctx, alice, other.ID, memstore.MemoryCreate{Path: "/b/seal.md", Content: "kelp forest"})
			return err
		}},
		{"delete", func() error { return core.DeleteMemory(ctx, alice, s.ID, m.ID, "") }},
		{"delete a store", func() error {
			if _, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: "/c/otter.md", Content: "urchins"}); err != nil {
				return err
			}
			return core.DeleteStore(ctx, alice, s.ID)
		}},
	} {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if err := db.IndexQueued(ctx); err != nil {
			t.Fatal(err)
		}
		if n := wrongSearchRows(t, conn); n != 0 {
			t.Errorf("after %s: %d rows of memory_search differ from the memories", st.name, n)
		}
		if n := wrongPostings(t, conn); n != 0 {
			t.Errorf("after %s: %d postings differ from the memories' words", st.name, n)
		}
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM search_queue`).Scan(&count); err != nil || count != 0 {
		t.Fatalf("the indexer left %d rows queued: %v", count, err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM search_postings WHERE store_id = $1`, s.ID).Scan(&count); err != nil || count != 0 {
		t.Fatalf("a deleted store keeps %d postings: %v", count, err)
	}
}

// TestSearchPostingsRank proves that a window read from the postings
// ranks each memory as ts_rank of its search vector does: the search's
// scores are those of the search that read the memories' rows.
func TestSearchPostingsRank(t *testing.T) {
	ctx := t.Context()
	url := pgtest.DB(t, migrate)
	db := mustOpenAt(t, url, postgres.Options{})
	core := memstore.NewCore(db)
	s, err := core.CreateStore(ctx, alice, memstore.StoreCreate{Name: "rank"})
	if err != nil {
		t.Fatal(err)
	}
	for _, inPath := range []int{0, 1, 2, 3} {
		for _, inContent := range []int{0, 1, 2, 3, 5, 8, 40, 300} {
			if inPath+inContent == 0 {
				continue
			}
			path := fmt.Sprintf("/%d-%d/%s.md", inPath, inContent, strings.Repeat("heron-", inPath)+"x")
			content := "a bird " + strings.Repeat("herons fly ", inContent) + "over"
			if _, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: path, Content: content}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.IndexQueued(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := connect(t, url).Query(ctx, `SELECT m.path, p.in_path, p.in_content, ts_rank($1, m.search_words, to_tsquery('memstore', 'heron'))
		FROM memory_search m JOIN search_postings p ON p.memory_id = m.id AND p.word = 'heron'`, postgres.SearchRankWeights)
	if err != nil {
		t.Fatal(err)
	}
	type rank struct {
		path              string
		inPath, inContent int
		want              float64
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rank, error) {
		var k rank
		return k, r.Scan(&k.path, &k.inPath, &k.inContent, &k.want)
	})
	if err != nil || len(got) != 4*8-1 {
		t.Fatalf("%d memories with postings of heron: %v", len(got), err)
	}
	for _, k := range got {
		if r := postgres.PostingRank(k.inPath, k.inContent); r != k.want {
			t.Errorf("%s: %d times in the path, %d in the content: rank %v, ts_rank %v", k.path, k.inPath, k.inContent, r, k.want)
		}
	}
}

// TestSearchPostingsOfOneMemory counts the pages of search_postings'
// indexes that deleting one memory reads, with the indexer's round that
// deletes its search data, in a store of 300 memories of
// 120 words each (36,000 postings): they must be about the memory's own,
// whatever the store's size. A delete by the store and the words (the
// primary key) was planned as a scan of the index over the store's
// every posting: 621 pages here, against 2 to 4 by the memory's ID.
func TestSearchPostingsOfOneMemory(t *testing.T) {
	ctx := t.Context()
	db, core, conn, s := unindexed(t, "postings")
	var ms []*memstore.Memory
	for i := range 300 {
		var b strings.Builder
		for j := range 120 {
			fmt.Fprintf(&b, "w%d ", (i*31+j*7)%600)
		}
		m, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/m/%d.md", i), Content: b.String()})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	if err := db.IndexQueued(ctx); err != nil {
		t.Fatal(err)
	}
	pages := func() (n int64) {
		execAll(t, conn, `SELECT pg_stat_force_next_flush()`, `SELECT pg_stat_clear_snapshot()`)
		if err := conn.QueryRow(ctx, `SELECT coalesce(sum(idx_blks_hit + idx_blks_read), 0) FROM pg_statio_user_indexes WHERE relname = 'search_postings'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The trigger's statements run generic plans after their first five.
	for i, m := range ms[:8] {
		before := pages()
		if _, err := conn.Exec(ctx, `DELETE FROM memories WHERE id = $1`, m.ID); err != nil {
			t.Fatal(err)
		}
		if err := db.IndexQueued(ctx); err != nil {
			t.Fatal(err)
		}
		if n := pages() - before; n > 100 {
			t.Errorf("deletion %d read %d pages of the postings' indexes, want a few", i+1, n)
		}
	}
	if n := wrongPostings(t, conn); n != 0 {
		t.Errorf("%d postings differ from the memories' words", n)
	}
}

package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/searchtext"
	"github.com/memstore/memstore/internal/sqlrow"
	"github.com/memstore/memstore/internal/storecopy"
)

// Search is each backend's own, as its engine's full-text index is.
// SQLite's runs on the FTS5 indexes of the schema, which indexer.go
// keeps current, over the live memories only: memories_words (stemmed
// words of path and content, ranked by bm25), memories_paths (the same
// words of the paths alone) and memories_trigrams (substrings of three
// characters or more). The query is never handed to FTS5 as written: it
// is cut into terms by searchtext.ParseQuery, and each term is quoted as
// an FTS5 string, in which no character is syntax.
//
// FTS5 ranks by computing bm25 for every row that matches, a few
// microseconds each, after a pass over every row with the term: ranking a
// term found in tens of thousands of memories costs tens of milliseconds.
// So each term is looked up on its own, reading at most searchtext.Window
// memories, the most recently created first, and the scores are added up
// here (bm25 is a sum over the terms). When a term fills that window, the
// memories with the term in their path are looked up too (they rank high
// whatever their age), and so are the memories with every term (AND,
// unranked: a term's score for a memory older than its window is taken
// from the window, as searchtext.WordTerm tells), so that the best
// matches are found whatever their age; only older memories that have
// some terms but not all, and not in their path, are missed. A search
// therefore lists at most a few hundred memories. Terms in more than searchCommon memories are left out of a
// query that has others, like stop words: they rank little and cost the
// most.
//
// The page's memories are then read in one query, and so are, for a
// search of conversations, the places of its best hits and the turns
// beside them (keyset.SearchResults): each statement costs tens of
// microseconds of its own, and a page of ten read one memory at a time
// took ten. Their lists of rowids and paths are JSON arrays, so that
// each is one statement, prepared once, whatever its length.
//
// The tuning below was measured with the recall evaluator (internal/recall)
// and the benchmarks of search_test.go: see docs/benchmarks-log.md, Search.
var (
	// searchProbe is how far a term's memories are read to tell whether
	// the term may be common.
	searchProbe = 200
	// searchCommon is the number of memories beyond which a term is
	// common.
	searchCommon = 10_000
)

// termExpr is term t as an FTS5 expression of the word indexes: its
// words, as a phrase.
func termExpr(t searchtext.Term) string { return ftsString(strings.Join(t.Words, " ")) }

// ftsString quotes s as an FTS5 string: within double quotes, every
// character but the double quote, which is doubled, is plain text.
func ftsString(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// SearchMemories implements memstore.SearchStorage. The cursor is an
// offset into the ranked list, which is the same from page to page as
// long as the stores do not change; with no store, nothing is found.
func (db *DB) SearchMemories(ctx context.Context, workspaceID string, storeIDs []string, q memstore.SearchQuery) (memstore.Page[memstore.SearchResult], error) {
	var page memstore.Page[memstore.SearchResult]
	err := db.search(ctx, workspaceID, storeIDs, q, func(tx *txn, sq keyset.Search, hits []*searchHit, turns keyset.Turns[int64]) (err error) {
		page, err = keyset.SearchResults(sq, hits, func(rowids []int64) (map[int64]*memstore.Memory, error) {
			return searchMemories(ctx, tx, rowids)
		}, turns)
		return err
	})
	return page, wrap(err, "search memories")
}

// RankMemories implements memstore.SearchStorage: the page's rowids
// become IDs in one query, which reads no content.
func (db *DB) RankMemories(ctx context.Context, workspaceID string, storeIDs []string, q memstore.SearchQuery) ([]memstore.SearchResult, error) {
	var out []memstore.SearchResult
	err := db.search(ctx, workspaceID, storeIDs, q, func(tx *txn, sq keyset.Search, hits []*searchHit, turns keyset.Turns[int64]) error {
		ranked, _, err := keyset.SearchRanking(sq, hits, turns)
		if err != nil || len(ranked) == 0 {
			return err
		}
		rowids := make([]int64, len(ranked))
		for i, h := range ranked {
			rowids[i] = h.Key
		}
		rows, err := tx.query(ctx, `SELECT memories.rowid, id`+listed(`memories.rowid = l.v`), jsonList(rowids))
		if err != nil {
			return err
		}
		defer rows.Close()
		ids := make(map[int64]string, len(rowids))
		for rows.Next() {
			var r int64
			var id string
			if err := rows.Scan(&r, &id); err != nil {
				return err
			}
			ids[r] = id
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, h := range ranked {
			id, ok := ids[h.Key]
			if !ok {
				return fmt.Errorf("memory %v is in the search index but not in memories", h.Key)
			}
			out = append(out, memstore.SearchResult{Memory: memstore.Memory{ID: id}, Score: h.Score, Relevance: h.BM25})
		}
		return nil
	})
	return out, wrap(err, "rank memories")
}

// search runs q's lookups over the stores, once the indexes cover the
// writes committed before it began, and hands its hits to fn, in the
// search's transaction, with what a search of conversations reads: where
// its hits and their neighbouring turns are, from the copies of the
// stores of conversations (placecopy.go), locked before the transaction
// begins and let go once brought up to date.
func (db *DB) search(ctx context.Context, workspaceID string, storeIDs []string, q memstore.SearchQuery, fn func(tx *txn, sq keyset.Search, hits []*searchHit, turns keyset.Turns[int64]) error) error {
	sq, err := keyset.NewSearch(storeIDs, q)
	if err != nil || len(sq.Stores) == 0 {
		return err
	}
	// The copies stay locked while the search waits for the indexer:
	// the searches of the same stores wait with it, as they would for
	// the indexer anyway.
	var copies []*storecopy.Copy[placeAt, *placeSet]
	unlock := func() {}
	if len(sq.Conversation) > 0 {
		copies, unlock = db.places.LockStores(workspaceID, sq.Conversation, "", 0)
		defer unlock()
	}
	// The indexes lag the writer by a round of the indexer: the search
	// waits for the writes committed before it began.
	return db.ix.whenIndexed(ctx, searchCovered, func(tx *txn) error {
		for _, id := range sq.Stores {
			if _, err := storeState(ctx, tx, workspaceID, id); err != nil {
				return err
			}
		}
		view := &placeView{sets: map[string]*placeSet{}, missing: len(sq.Conversation) > 0, tx: tx, ctx: ctx}
		if len(copies) > 0 {
			// Brought up to date once, as of the first transaction: a
			// search tried again (a damaged index file) reads the database.
			var err error
			if view, err = db.placesOf(ctx, tx, copies); err != nil {
				return err
			}
			copies = nil
			unlock()
		}
		hits, err := searchHits(ctx, tx, sq.Terms, sq.Stores, sq.Prefix, sq.Need())
		if err != nil {
			return err
		}
		return fn(tx, sq, hits, keyset.Turns[int64]{Places: view.Places, At: view.At})
	})
}

// ReadResults implements memstore.SearchStorage, in one query.
func (db *DB) ReadResults(ctx context.Context, workspaceID string, q memstore.SearchQuery, results []memstore.SearchResult, snippet []bool) ([]memstore.SearchResult, error) {
	var out []memstore.SearchResult
	err := db.read(ctx, func(tx *txn) (err error) {
		out, err = keyset.ReadResults(q, results, snippet, func(ids []string) (map[string]*memstore.Memory, error) {
			rows, err := tx.query(ctx, `SELECT `+memoryColumns(true)+`, memories.rowid`+listed(`memories.id = l.v`)+`
				WHERE memories.store_id IN (SELECT id FROM stores WHERE workspace_id = ?)`, jsonList(ids), workspaceID)
			return scanListed(rows, err, func(m *memstore.Memory, _ int64) string { return m.ID })
		})
		return err
	})
	return out, wrap(err, "read search results")
}

// searchMemories returns the memories of rowids, with their content, by
// rowid, in one query.
func searchMemories(ctx context.Context, tx *txn, rowids []int64) (map[int64]*memstore.Memory, error) {
	rows, err := tx.query(ctx, `SELECT `+memoryColumns(true)+`, memories.rowid`+listed(`memories.rowid = l.v`), jsonList(rowids))
	return scanListed(rows, err, func(_ *memstore.Memory, rowid int64) int64 { return rowid })
}

// scanListed reads rows of a memory's columns and its rowid into a map,
// by the key of each.
func scanListed[K comparable](rows *sql.Rows, err error, key func(*memstore.Memory, int64) K) (map[K]*memstore.Memory, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[K]*memstore.Memory{}
	for rows.Next() {
		var rowid int64
		m, err := sqlrow.ScanMemory(sqlrow.Extra(rows, &rowid))
		if err != nil {
			return nil, err
		}
		out[key(m, rowid)] = m
	}
	return out, rows.Err()
}

// searchPlaces returns where the memories of rowids are, in one query.
func searchPlaces(ctx context.Context, tx *txn, rowids []int64) (map[int64]keyset.Place, error) {
	return scanPlaces(tx.query(ctx, `SELECT memories.rowid, store_id, memories.path`+listed(`memories.rowid = l.v`), jsonList(rowids)))
}

// searchAt returns the rowids of the memories of a store at paths, by
// path, in one query, each path an index seek.
func searchAt(ctx context.Context, tx *txn, store string, paths []string) (map[string]int64, error) {
	found, err := scanPlaces(tx.query(ctx, `SELECT memories.rowid, store_id, memories.path`+listed(`memories.store_id = ? AND memories.path = l.v`), jsonList(paths), store))
	out := make(map[string]int64, len(found))
	for r, p := range found {
		out[p.Path] = r
	}
	return out, err
}

// listed is the FROM clause of a query of the memories that join, by on,
// the values v of a JSON array (jsonList, the first parameter), one index
// seek for each value in the array's order. WHERE ... IN (SELECT value
// FROM json_each(?)) first copies the array into a temporary index, which
// cost about as much as the seeks themselves.
func listed(on string) string {
	return ` FROM (SELECT value AS v FROM json_each(?)) l CROSS JOIN memories ON ` + on
}

// jsonList is vs as a JSON array, which json_each reads: a list of any
// length is one statement, prepared once, where an IN list of
// placeholders is another statement for each length.
func jsonList[T int64 | string](vs []T) string {
	b, _ := json.Marshal(vs)
	return string(b)
}

// scanPlaces reads rows of rowid, store_id and path.
func scanPlaces(rows *sql.Rows, err error) (map[int64]keyset.Place, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]keyset.Place{}
	for rows.Next() {
		var r int64
		var p keyset.Place
		if err := rows.Scan(&r, &p.Store, &p.Path); err != nil {
			return nil, err
		}
		out[r] = p
	}
	return out, rows.Err()
}

// A searchHit is a memory found by some terms, by its row.
type searchHit = searchtext.Hit[int64]

// A searcher runs the lookups of one search, in one read transaction.
type searcher struct {
	ctx  context.Context
	tx   *txn
	args []any // the filter's
	// The lookups: words ranked by bm25, words unranked, words of paths
	// and substrings.
	words, ids, paths, subs string
	hits                    searchtext.Hits[int64]
	rows                    int64 // about how many memories the database holds
}

func newSearcher(ctx context.Context, tx *txn, storeIDs []string, prefix string) (*searcher, error) {
	s := &searcher{ctx: ctx, tx: tx, hits: searchtext.Hits[int64]{}}
	// About how many memories there are and, without a prefix, whether
	// the stores hold every one: one statement, as each costs tens of
	// microseconds of its own.
	all := prefix == "" || prefix == "/"
	var others bool
	if all {
		expr, args := otherStores(storeIDs)
		if err := tx.queryRow(ctx, `SELECT (SELECT ifnull(max(rowid), 0) FROM memories), `+expr, args...).Scan(&s.rows, &others); err != nil {
			return nil, err
		}
	} else if err := tx.queryRow(ctx, `SELECT ifnull(max(rowid), 0) FROM memories`).Scan(&s.rows); err != nil {
		return nil, err
	}
	var filter string
	if !all || others {
		filter = " AND m.store_id = ?"
		if len(storeIDs) > 1 {
			filter = " AND m.store_id IN (?" + strings.Repeat(", ?", len(storeIDs)-1) + ")"
		}
		for _, id := range storeIDs {
			s.args = append(s.args, id)
		}
		if prefix != "" && prefix != "/" {
			// As in Memories: a prefix ending with "/" takes whole
			// segments, any other is a plain string prefix.
			filter += " AND m.path >= ?"
			s.args = append(s.args, prefix)
			if hi, ok := keyset.UpperBound(prefix); ok {
				filter += " AND m.path < ?"
				s.args = append(s.args, hi)
			}
		}
	}
	// Each lookup joins memories for the filter (unless the stores hold
	// every memory), with the FTS table outside (CROSS JOIN keeps that
	// order) yielding its rows newest first: LIMIT ends the lookup early,
	// and bm25 is computed only for the rows returned.
	from := func(table string, join bool) string {
		j := ""
		if join || filter != "" {
			j = " CROSS JOIN memories m ON m.rowid = f.rowid"
		}
		return fmt.Sprintf(` FROM %[1]s f%[2]s WHERE %[1]s MATCH ?%[3]s ORDER BY f.rowid DESC LIMIT %[4]d`, table, j, filter, searchtext.Window)
	}
	s.words = fmt.Sprintf(`SELECT f.rowid, bm25(memories_words, %g, 1.0), ''`, searchtext.PathWeight) + from("memories_words", false)
	s.ids = `SELECT f.rowid, 0, ''` + from("memories_words", false)
	s.paths = `SELECT f.rowid, 0, ''` + from("memories_paths", false)
	s.subs = `SELECT f.rowid, 0, m.path` + from("memories_trigrams", true)
	return s, nil
}

// otherStores is an expression that says whether the database holds
// memories of stores other than storeIDs, sorted, when the lookups must
// filter by store: one index seek for each gap around them.
func otherStores(storeIDs []string) (string, []any) {
	gaps := []string{"store_id < ?"}
	args := []any{storeIDs[0]}
	for i := 1; i < len(storeIDs); i++ {
		gaps = append(gaps, "store_id > ? AND store_id < ?")
		args = append(args, storeIDs[i-1], storeIDs[i])
	}
	gaps = append(gaps, "store_id > ?")
	args = append(args, storeIDs[len(storeIDs)-1])
	for i, g := range gaps {
		gaps[i] = "EXISTS (SELECT 1 FROM memories WHERE " + g + ")"
	}
	return "(" + strings.Join(gaps, " OR ") + ")", args
}

// lookup runs one of the searcher's queries with an FTS5 expression and
// calls fn for each row, with bm25 negated; it reports whether the window
// was full.
func (s *searcher) lookup(query, expr string, fn func(rowid int64, score float64, path string)) (full bool, err error) {
	rows, err := s.tx.query(s.ctx, query, append([]any{expr}, s.args...)...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var rowid int64
		var score float64
		var path string
		if err := rows.Scan(&rowid, &score, &path); err != nil {
			return false, err
		}
		fn(rowid, -score, path)
		n++
	}
	return n == searchtext.Window, rows.Err()
}

// How a term is looked up.
const (
	termSubstring = iota // not found as words: as a substring, if long enough
	termWords            // as words
	termCommon           // in too many memories: left out
)

// searchHits looks the terms up and returns the memories found, best
// first: at least need of them when there are as many, and possibly more.
//
// Each term is looked up as words. A term not found so, a fragment of a
// word or an identifier ("arseConf", "2026-11"), is looked up as a
// substring. The memories that have a word only inside longer words
// ("config" in "ParseConfig") rank after all others, so they are looked
// for only when the others are fewer than need: the list is the same from
// page to page.
func searchHits(ctx context.Context, tx *txn, terms []searchtext.Term, storeIDs []string, prefix string, need int) ([]*searchHit, error) {
	s, err := newSearcher(ctx, tx, storeIDs, prefix)
	if err != nil {
		return nil, err
	}
	kind := make([]int, len(terms))
	flat := make([]bool, len(terms)) // looked up without bm25: see below
	common := 0
	for i, t := range terms {
		if len(t.Words) == 0 {
			continue
		}
		kind[i] = termWords
		if c, err := s.common(t); err != nil {
			return nil, err
		} else if c {
			kind[i] = termCommon
			common++
		}
	}
	if common == len(terms) {
		// Only common terms: look them up all the same.
		for i := range kind {
			kind[i], flat[i] = termWords, true
		}
	}
	var found []*wordTerm
	cut := false // some window was full
	for i, t := range terms {
		if kind[i] != termWords {
			continue
		}
		w := &wordTerm{expr: termExpr(t), WordTerm: searchtext.NewWordTerm[int64]()}
		var full bool
		var err error
		if flat[i] || len(t.Words) > 1 {
			// bm25 would first read every memory with the term: the most
			// costly part of looking up a common word or a phrase of
			// common words (a date). Their memories are not told apart
			// by it anyway.
			full, err = s.flatWords(w)
		} else {
			full, err = s.rankedWords(w)
		}
		if err != nil {
			return nil, err
		}
		if !w.Found() {
			kind[i] = termSubstring // in none of these memories
			continue
		}
		found = append(found, w)
		cut = cut || full
	}
	if cut && len(found) > 1 {
		// The memories with every term, whatever their age, found without
		// bm25 (that would be a second pass over every memory with each
		// term): for a term they are older than the window of, they get
		// its typical score.
		exprs := make([]string, len(found))
		terms := make([]*searchtext.WordTerm[int64], len(found))
		for i, w := range found {
			exprs[i], terms[i] = w.expr, w.WordTerm
		}
		if _, err := s.lookup(s.ids, strings.Join(exprs, " AND "), func(rowid int64, _ float64, _ string) {
			searchtext.WithAll(s.hits, terms, rowid)
		}); err != nil {
			return nil, err
		}
	}
	var plain []searchtext.Term // found as words, and may be inside others
	for i, t := range terms {
		switch {
		case !t.Substring:
		case kind[i] == termSubstring:
			if err := s.substrings(t, searchtext.TierWords); err != nil {
				return nil, err
			}
		case kind[i] == termWords && t.Plain():
			plain = append(plain, t)
		}
	}
	return s.hits.RankedWithInside(need, plain, func(t searchtext.Term) error {
		return s.substrings(t, searchtext.TierInside)
	})
}

// A wordTerm is a term found as words, with its FTS5 expression.
type wordTerm struct {
	expr string
	*searchtext.WordTerm[int64]
}

// rankedWords looks a term up with bm25 and reports whether its window
// was full; if so, the memories with the term in their path are looked up
// too, whatever their age. Their score is not computed (that would cost a
// bm25 of every memory with the term): they get the best of the window's,
// weighted as a match in the path.
func (s *searcher) rankedWords(w *wordTerm) (bool, error) {
	full, err := s.lookup(s.words, w.expr, func(rowid int64, score float64, _ string) {
		w.Rank(s.hits, rowid, score)
	})
	if err != nil || !full {
		return full, err
	}
	_, err = s.lookup(s.paths, w.expr, func(rowid int64, _ float64, _ string) {
		w.InPath(s.hits, rowid)
	})
	return true, err
}

// flatWords looks a term up without bm25: each memory with it scores the
// term's inverse document frequency, estimated from the window, weighted
// when the term is in the path. The memories with the term in their path
// are looked up whatever their age.
func (s *searcher) flatWords(w *wordTerm) (bool, error) {
	var rows []int64
	full, err := s.lookup(s.ids, w.expr, func(rowid int64, _ float64, _ string) {
		rows = append(rows, rowid)
	})
	if err != nil || len(rows) == 0 {
		return full, err
	}
	inPath := map[int64]bool{}
	if _, err := s.lookup(s.paths, w.expr, func(rowid int64, _ float64, _ string) { inPath[rowid] = true }); err != nil {
		return false, err
	}
	idf := s.idf(len(rows))
	w.SetTypical(idf)
	for _, r := range rows {
		w.Credit(s.hits, r, idf)
	}
	for r := range inPath {
		w.Credit(s.hits, r, idf)
		s.hits[r].BM25 += idf * (searchtext.PathWeight - 1)
	}
	return full, nil
}

// idf estimates the inverse document frequency of a term found in n
// memories (at most a window's), as bm25 would with a term frequency of 1,
// but never 0.
func (s *searcher) idf(n int) float64 {
	return searchtext.IDF(float64(n), float64(max(s.rows, int64(n))))
}

// common says whether a one-word term is in more than searchCommon
// memories. Counting them costs as much as a bm25 of the term; the
// searchProbe-th newest memory with the term is found for less, and tells
// whether the term is dense enough among the memories to be common.
func (s *searcher) common(t searchtext.Term) (bool, error) {
	if len(t.Words) > 1 || s.rows <= int64(searchCommon) {
		// A phrase is rarely common, and costly to probe; no term is
		// common in a database of so few memories.
		return false, nil
	}
	var r int64
	err := s.tx.queryRow(s.ctx, `SELECT rowid FROM memories_words WHERE memories_words MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?`,
		termExpr(t), searchProbe-1).Scan(&r)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, err
	case int64(searchProbe)*s.rows/max(s.rows-r+1, 1) <= int64(searchCommon):
		return false, nil
	}
	var n int
	err = s.tx.queryRow(s.ctx, `SELECT count(*) FROM (SELECT 1 FROM memories_words WHERE memories_words MATCH ? LIMIT ?)`,
		termExpr(t), searchCommon+1).Scan(&n)
	return n > searchCommon, err
}

// substrings looks term t up as a substring, adding to the hits of the
// tier (a TierInside lookup leaves the memories of TierWords alone).
func (s *searcher) substrings(t searchtext.Term, tier int) error {
	type row struct {
		rowid int64
		path  bool
	}
	var rows []row
	if _, err := s.lookup(s.subs, ftsString(t.Text), func(rowid int64, _ float64, path string) {
		rows = append(rows, row{rowid, strings.Contains(searchtext.Fold(path), t.Fold)})
	}); err != nil {
		return err
	}
	idf := s.idf(len(rows))
	for _, r := range rows {
		s.hits.Substring(r.rowid, tier, idf, r.path)
	}
	return nil
}

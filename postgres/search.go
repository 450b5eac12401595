package postgres

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/searchtext"
	"github.com/memstore/memstore/internal/sqlrow"
)

// Search is each backend's own, as its engine's full-text index is.
// PostgreSQL's reads two columns of memory_search, which the indexer
// makes after the write (searchindex.go), and which a search brings up
// to date for its stores before it reads, so that it sees every write
// committed before it: search_words, the words of the path and of the
// content as searchtext tells and folds them, stemmed (migration 0001's
// memstore configuration), under a GIN index; and search_text, the path
// and content folded, under a trigram index, for substrings. Words are
// told and folded here, not by PostgreSQL's parser, so that a query's
// terms (searchtext.ParseQuery) and the text are cut the same way as on
// SQLite, and no character of a query is ever syntax: a term's words
// become a phrase (phraseto_tsquery) and its text a LIKE pattern with
// every wildcard escaped.
//
// Ranking every memory with a term reads each one's heap page and search
// vector: a word in 15,000 of 100,000 memories cost 127 ms. So each term
// is looked up on its own, in a window of the searchtext.Window newest
// memories that have it (by ID, which grows with time), and only those
// are ranked, as on SQLite. A term of one word, in a search of whole
// stores, reads its window from search_postings (migration 0006: a row
// for each word of each memory, kept by a trigger on memory_search's
// rows, with the word's count in the path and in the content; a
// memory's are found by its ID to change them, migration 0008): a
// range of its primary key's index, without the memories' rows, ranked
// by postingRank as ts_rank ranks the search vector. Scanning the newest
// memories' rows instead read about 10,000 of them for a common word at
// 100,000 memories. A phrase, and any term within a path prefix, is
// looked up in the rows: the planner serves a window by the GIN index
// and a sort for a rare term, and by a backward scan of the primary key
// that stops at the window's last memory for a common one (the vectors
// stay in the rows, so that such a scan reads a page a memory, not three
// or four of the TOAST table). When a term fills its
// window, the memories with the term in their path (the vector's words
// of weight A, under the schema's index) and those with every term
// of the query are looked up too, each in a window, whatever their age,
// and scored from the windows' scores as on SQLite (searchtext.WordTerm):
// only older memories with some terms but not all, and not in their
// path, are missed. The scores are added up here: a term's ts_rank
// (a word of the path weighing searchtext.PathWeight times one of the
// content) times its inverse document frequency among the stores'
// memories. A term not found as words (a fragment of a word or an
// identifier: "arseConf", "2026-11") is looked up as a substring, scoring
// as a word found once would; a plain word is also looked up inside
// longer words ("config" in "ParseConfig"), and the memories found only
// so rank after every other (searchtext.TierInside): that lookup runs
// only when the memories found as words do not fill the page.
const (
	// searchCountCap bounds the count of the stores' memories that the
	// inverse document frequencies use: beyond it, a term's frequency
	// among the candidates tells enough.
	searchCountCap = 10_000
)

// searchRankWeights are ts_rank's weights of D, C, B (content) and A
// (path).
var searchRankWeights = []float32{0, 0, 1 / searchtext.PathWeight, 1}

// searchWords is the SQL expression of search_words for the words of a
// path and of a content, given as the parameters path and content
// (memory_search_words, of migration 0007).
func searchWords(path, content string) string {
	return `memory_search_words(` + path + `, ` + content + `)`
}

// searchValues are what the search columns are made of: the folded text,
// and the words of the path and of the content, folded, separated by
// spaces. NUL, which no text column holds, is a space to search.
func searchValues(path, content string) (text, pathWords, contentWords string) {
	content = strings.ReplaceAll(content, "\x00", " ")
	return searchtext.Fold(path) + "\n" + searchtext.Fold(content), words(path), words(content)
}

func words(s string) string {
	var b strings.Builder
	for w := range searchtext.Words(s) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.Fold)
	}
	return b.String()
}

// likeEscaper makes a LIKE pattern match its text literally.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// SearchMemories implements memstore.SearchStorage. The cursor is an
// offset into the ranked list, which is the same from page to page as
// long as the stores do not change.
func (db *DB) SearchMemories(ctx context.Context, workspaceID string, storeIDs []string, q memstore.SearchQuery) (memstore.Page[memstore.SearchResult], error) {
	var page memstore.Page[memstore.SearchResult]
	err := db.search(ctx, workspaceID, storeIDs, q, func(tx pgx.Tx, sq keyset.Search, hits []*searchtext.Hit[string], turns keyset.Turns[string]) (err error) {
		page, err = keyset.SearchResults(sq, hits, func(ids []string) (map[string]*memstore.Memory, error) {
			return searchMemories(ctx, tx, ids)
		}, turns)
		return err
	})
	return page, wrap(err, "search memories")
}

// RankMemories implements memstore.SearchStorage: the hits' keys are
// the memories' IDs.
func (db *DB) RankMemories(ctx context.Context, workspaceID string, storeIDs []string, q memstore.SearchQuery) ([]memstore.SearchResult, error) {
	var out []memstore.SearchResult
	err := db.search(ctx, workspaceID, storeIDs, q, func(tx pgx.Tx, sq keyset.Search, hits []*searchtext.Hit[string], turns keyset.Turns[string]) error {
		ranked, _, err := keyset.SearchRanking(sq, hits, turns)
		out = out[:0]
		for _, h := range ranked {
			out = append(out, memstore.SearchResult{Memory: memstore.Memory{ID: h.Key}, Score: h.Score, Relevance: h.BM25})
		}
		return err
	})
	return out, wrap(err, "rank memories")
}

// ReadResults implements memstore.SearchStorage, in one query.
func (db *DB) ReadResults(ctx context.Context, workspaceID string, q memstore.SearchQuery, results []memstore.SearchResult, snippet []bool) ([]memstore.SearchResult, error) {
	var out []memstore.SearchResult
	err := db.inTx(ctx, readTx, func(tx pgx.Tx) (err error) {
		out, err = keyset.ReadResults(q, results, snippet, func(ids []string) (map[string]*memstore.Memory, error) {
			rows, err := tx.Query(ctx, `SELECT `+memoryColumns(true)+` FROM memories WHERE id = ANY($1)
				AND store_id IN (SELECT id FROM stores WHERE workspace_id = $2)`, ids, workspaceID)
			return collectMemories(rows, err)
		})
		return err
	})
	return out, wrap(err, "read search results")
}

// search runs q's lookups over the stores and hands its hits to fn, in
// the search's transaction, with what a search of conversations reads.
func (db *DB) search(ctx context.Context, workspaceID string, storeIDs []string, q memstore.SearchQuery, fn func(tx pgx.Tx, sq keyset.Search, hits []*searchtext.Hit[string], turns keyset.Turns[string]) error) error {
	sq, err := keyset.NewSearch(storeIDs, q)
	if err != nil || len(sq.Stores) == 0 {
		return err
	}
	caughtUp := false
	for {
		err := db.inTx(ctx, readTx, func(tx pgx.Tx) error {
			return db.searchIn(ctx, tx, workspaceID, sq, !caughtUp, fn)
		})
		if !errors.Is(err, errQueued) {
			return err
		}
		// The stores are the workspace's (searchIn read them first).
		if err := db.catchUp(ctx, sq.Stores); err != nil {
			return err
		}
		if searchCaughtUp != nil {
			searchCaughtUp()
		}
		caughtUp = true
	}
}

// errQueued is searchIn's when the stores have memories queued for
// search.
var errQueued = errors.New("memories queued for search")

// searchIn runs search's lookups in tx, a read transaction. When first
// is set, it returns errQueued if the stores have memories queued for
// search in tx's snapshot: the caller then runs their rounds (catchUp)
// and calls again, in a new snapshot, in which the memories deleted since
// those rounds are left out (liveHits). With nothing queued, the search
// data is the memories'.
func (db *DB) searchIn(ctx context.Context, tx pgx.Tx, workspaceID string, sq keyset.Search, first bool, fn func(tx pgx.Tx, sq keyset.Search, hits []*searchtext.Hit[string], turns keyset.Turns[string]) error) error {
	var memories int64
	for _, id := range sq.Stores {
		st, err := storeState(ctx, tx, workspaceID, id, false)
		if err != nil {
			return err
		}
		memories += st.memories
	}
	if first {
		var queued bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM search_queue WHERE store_id = ANY($1))`, sq.Stores).Scan(&queued); err != nil {
			return err
		}
		if queued {
			return errQueued
		}
	}
	hits, err := newSearcher(ctx, tx, sq.Stores, sq.Prefix, memories).search(sq.Terms, sq.Need())
	if err == nil && !first {
		hits, err = liveHits(ctx, tx, sq.Stores, hits)
	}
	if err != nil {
		return err
	}
	return fn(tx, sq, hits, keyset.Turns[string]{
		Places: func(ids []string) (map[string]keyset.Place, error) {
			return scanPlaces(tx.Query(ctx, `SELECT id, store_id, path FROM memories WHERE id = ANY($1)`, ids))
		},
		At: func(store string, paths []string) (map[string]string, error) {
			found, err := scanPlaces(tx.Query(ctx, `SELECT id, store_id, path FROM memories WHERE store_id = $1 AND path = ANY($2)`, store, paths))
			out := make(map[string]string, len(found))
			for id, p := range found {
				out[p.Path] = id
			}
			return out, err
		},
	})
}

// searchCaughtUp, when set, runs in each search between its catchUp and
// its snapshot: the tests change memories there.
var searchCaughtUp func()

// liveHits leaves out of hits the memories deleted since the search's
// catchUp and before its snapshot: their search data stays until a round
// takes their queue rows, which the snapshot holds (searchindex.go).
// Every other memory of the stores with search data in the snapshot is
// live in it.
func liveHits(ctx context.Context, tx pgx.Tx, storeIDs []string, hits []*searchHit) ([]*searchHit, error) {
	rows, err := tx.Query(ctx, `SELECT q.memory_id FROM search_queue q
		WHERE q.store_id = ANY($1) AND NOT EXISTS (SELECT FROM memories m WHERE m.id = q.memory_id)`, storeIDs)
	if err != nil {
		return nil, err
	}
	gone, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(gone) == 0 {
		return hits, err
	}
	return slices.DeleteFunc(hits, func(h *searchHit) bool { return slices.Contains(gone, h.Key) }), nil
}

// searchMemories returns the memories of ids, with their content, by ID,
// in one query.
func searchMemories(ctx context.Context, tx pgx.Tx, ids []string) (map[string]*memstore.Memory, error) {
	rows, err := tx.Query(ctx, `SELECT `+memoryColumns(true)+` FROM memories WHERE id = ANY($1)`, ids)
	return collectMemories(rows, err)
}

// collectMemories reads rows of memories, by ID.
func collectMemories(rows pgx.Rows, err error) (map[string]*memstore.Memory, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ms, err := sqlrow.CollectRefs(rows, sqlrow.ScanMemory)
	out := make(map[string]*memstore.Memory, len(ms))
	for _, m := range ms {
		out[m.ID] = m
	}
	return out, err
}

// scanPlaces reads rows of id, store_id and path.
func scanPlaces(rows pgx.Rows, err error) (map[string]keyset.Place, error) {
	if err != nil {
		return nil, err
	}
	out := map[string]keyset.Place{}
	var id string
	var p keyset.Place
	_, err = pgx.ForEachRow(rows, []any{&id, &p.Store, &p.Path}, func() error {
		out[id] = p
		return nil
	})
	return out, err
}

// A searchHit is a memory found by some terms, by its ID.
type searchHit = searchtext.Hit[string]

// A searcher runs the lookups of one search, in one read transaction.
type searcher struct {
	ctx    context.Context
	tx     pgx.Tx
	filter string // the stores and prefix, on memories m
	args   []any  // the filter's, from $1 on
	hits   searchtext.Hits[string]
	count  int64 // the memories searched, at most searchCountCap; -1 until counted
	// stores are the stores searched, when the search is of whole
	// stores, whose postings serve a window; nil within a prefix.
	stores []string
}

// newSearcher searches the stores, which hold memories in all, within
// the prefix. A search of whole stores takes its count of memories from
// their rows; one within a prefix counts them when a term is found.
func newSearcher(ctx context.Context, tx pgx.Tx, storeIDs []string, prefix string, memories int64) *searcher {
	s := &searcher{ctx: ctx, tx: tx, hits: searchtext.Hits[string]{}, count: min(memories, searchCountCap)}
	q := newQuery()
	s.filter = "m.store_id = ANY(" + q.Arg(storeIDs) + ")"
	s.stores = storeIDs
	if prefix != "" && prefix != "/" {
		s.count, s.stores = -1, nil
		// As in Memories: a prefix ending with "/" takes whole
		// segments, any other is a plain string prefix.
		s.filter += " AND m.path >= " + q.Arg(prefix)
		if hi, ok := keyset.UpperBound(prefix); ok {
			s.filter += " AND m.path < " + q.Arg(hi)
		}
	}
	s.args = q.Args
	return s
}

// with returns the arguments of a lookup, the filter's and vs, and the
// placeholders of vs.
func (s *searcher) with(vs ...any) (args []any, marks []string) {
	q := newQuery(s.args...)
	for _, v := range vs {
		marks = append(marks, q.Arg(v))
	}
	return q.Args, marks
}

// idf is the inverse document frequency of a term found in df memories.
func (s *searcher) idf(df int) (float64, error) {
	if s.count < 0 {
		err := s.tx.QueryRow(s.ctx, `SELECT count(*) FROM (SELECT 1 FROM memories m WHERE `+s.filter+` LIMIT `+strconv.Itoa(searchCountCap)+`) c`,
			s.args...).Scan(&s.count)
		if err != nil {
			return 0, err
		}
	}
	return searchtext.IDF(float64(df), float64(max(s.count, int64(df)))), nil
}

// window is the query of a lookup: the columns of the newest memories
// searched that meet cond, at most searchtext.Window of them.
func (s *searcher) window(cols, cond string) string {
	return `SELECT ` + cols + ` FROM memory_search m WHERE ` + cond + ` AND ` + s.filter +
		` ORDER BY m.id DESC LIMIT ` + strconv.Itoa(searchtext.Window)
}

// phrase is the tsquery of a term's folded words, given as the parameter
// mark, as a phrase.
func phrase(mark string) string { return `phraseto_tsquery('memstore', ` + mark + `)` }

// query runs a lookup. The tsqueries are written out in its condition
// so that the planner estimates the terms' frequencies, and
// QueryExecModeExec plans each lookup with its own terms (a cached
// generic plan would treat every term alike).
func (s *searcher) query(sql string, args []any) (pgx.Rows, error) {
	return s.tx.Query(s.ctx, sql, append([]any{pgx.QueryExecModeExec}, args...)...)
}

// ids runs a lookup of the memories meeting cond, calling fn with each
// one's ID.
func (s *searcher) ids(cond string, args []any, fn func(id string)) error {
	rows, err := s.query(s.window("m.id", cond), args)
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	for _, id := range ids {
		fn(id)
	}
	return err
}

// search looks the terms up and returns the memories found, best first,
// the newer first among equals: at least need of them when there are.
func (s *searcher) search(terms []searchtext.Term, need int) ([]*searchHit, error) {
	var plain []searchtext.Term // found as words, and may be inside others
	var found []*searchtext.WordTerm[string]
	var phrases []any // of found, their folded words
	cut := false      // some window was full
	lexemes, err := s.lexemes(terms)
	if err != nil {
		return nil, err
	}
	for i, t := range terms {
		var w *searchtext.WordTerm[string]
		if len(t.Words) > 0 {
			var full bool
			var err error
			if w, full, err = s.words(t, lexemes[i]); err != nil {
				return nil, err
			}
			if w != nil {
				found = append(found, w)
				phrases = append(phrases, strings.Join(t.Folds, " "))
				cut = cut || full
			}
		}
		switch {
		case !t.Substring:
		case w == nil:
			if err := s.substrings(t, searchtext.TierWords); err != nil {
				return nil, err
			}
		case t.Plain():
			plain = append(plain, t)
		}
	}
	if cut && len(found) > 1 {
		// The memories with every term, whatever their age, unranked: a
		// term they are older than the window of scores as typical.
		args, marks := s.with(phrases...)
		for i, m := range marks {
			marks[i] = phrase(m)
		}
		err := s.ids(`m.search_words @@ (`+strings.Join(marks, " && ")+`)`, args, func(id string) {
			searchtext.WithAll(s.hits, found, id)
		})
		if err != nil {
			return nil, err
		}
	}
	return s.hits.RankedWithInside(need, plain, func(t searchtext.Term) error {
		return s.substrings(t, searchtext.TierInside)
	})
}

// lexemes returns, for each term of one word searched by postings (a
// search of whole stores), the word's lexeme, as the search vectors
// hold it; "" for the other terms, and for a word that PostgreSQL's
// parser cuts into more than one lexeme or none, which the memories'
// rows are searched for.
func (s *searcher) lexemes(terms []searchtext.Term) ([]string, error) {
	out := make([]string, len(terms))
	var words []string
	var at []int
	for i, t := range terms {
		if s.stores != nil && len(t.Folds) == 1 {
			words, at = append(words, t.Folds[0]), append(at, i)
		}
	}
	if len(words) == 0 {
		return out, nil
	}
	rows, err := s.tx.Query(s.ctx, `SELECT tsvector_to_array(to_tsvector('memstore', w)) FROM unnest($1::text[]) WITH ORDINALITY u(w, i) ORDER BY i`, words)
	if err != nil {
		return nil, err
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[[]string])
	for j, ls := range got {
		if len(ls) == 1 {
			out[at[j]] = ls[0]
		}
	}
	return out, err
}

// A ranked memory is one found by a term, with its ts_rank.
type ranked struct {
	id   string
	rank float64
}

// posted returns the window of the memories with the lexeme, by their
// postings (migration 0006), ranked: a range of search_postings' index
// in each store, without reading the memories' rows.
func (s *searcher) posted(lexeme string) ([]ranked, error) {
	window := strconv.Itoa(searchtext.Window)
	rows, err := s.tx.Query(s.ctx, `SELECT p.memory_id, p.in_path, p.in_content FROM unnest($1::text[]) st(id),
		LATERAL (SELECT memory_id, in_path, in_content FROM search_postings
			WHERE store_id = st.id AND word = $2 ORDER BY memory_id DESC LIMIT `+window+`) p
		ORDER BY p.memory_id DESC LIMIT `+window, s.stores, lexeme)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ranked, error) {
		var f ranked
		var inPath, inContent int
		err := r.Scan(&f.id, &inPath, &inContent)
		f.rank = postingRank(inPath, inContent)
		return f, err
	})
}

// postingRank is ts_rank's rank (PostgreSQL's calc_rank_or, in its
// float32 arithmetic) with searchRankWeights of a memory for a query of
// one word, found inPath times in its path and inContent times in its
// content: the positions of the path's words come first in the vector.
func postingRank(inPath, inContent int) float64 {
	var sum, top float32 = 0, -1
	jm := 0
	for j := range inPath + inContent {
		w := searchRankWeights[2]
		if j < inPath {
			w = searchRankWeights[3]
		}
		sum += w / float32((j+1)*(j+1))
		if w > top {
			top, jm = w, j
		}
	}
	return float64(float32(float64(top+sum-top/float32((jm+1)*(jm+1))) / 1.64493406685))
}

// words looks a term up as words, a phrase of its words, by the postings
// of lexeme if it is not "", and returns it if some memory has it,
// reporting whether its window was full; if so, the memories with the
// term in their path are looked up too, whatever their age.
func (s *searcher) words(t searchtext.Term, lexeme string) (*searchtext.WordTerm[string], bool, error) {
	text := strings.Join(t.Folds, " ")
	var got []ranked
	var err error
	if lexeme != "" {
		got, err = s.posted(lexeme)
	} else {
		args, marks := s.with(text, searchRankWeights)
		q := phrase(marks[0])
		// The window is taken before ts_rank, which then reads only its
		// memories.
		var rows pgx.Rows
		rows, err = s.query(`SELECT c.id, ts_rank(`+marks[1]+`, c.search_words, `+q+`)
			FROM (`+s.window("m.id, m.search_words", "m.search_words @@ "+q)+`) c`, args)
		if err == nil {
			got, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ranked, error) {
				var f ranked
				return f, r.Scan(&f.id, &f.rank)
			})
		}
	}
	if err != nil || len(got) == 0 {
		return nil, false, err
	}
	idf, err := s.idf(len(got))
	if err != nil {
		return nil, false, err
	}
	w := searchtext.NewWordTerm[string]()
	for _, f := range got {
		w.Rank(s.hits, f.id, idf*f.rank)
	}
	if len(got) < searchtext.Window {
		return w, false, nil
	}
	args, marks := s.with(text)
	err = s.ids(searchPathWords+` @@ `+phrase(marks[0]), args, func(id string) { w.InPath(s.hits, id) })
	return w, true, err
}

// searchPathWords is the expression of the schema's index: the words
// of a memory's path, those of weight A in its search vector.
const searchPathWords = `ts_filter(m.search_words, '{a}')`

// substrings looks term t up as a substring of the folded path or
// content, adding to the hits of the tier (a TierInside lookup leaves the
// memories of TierWords alone).
func (s *searcher) substrings(t searchtext.Term, tier int) error {
	args, marks := s.with("%" + likeEscaper.Replace(t.Fold) + "%")
	rows, err := s.tx.Query(s.ctx, s.window("m.id, m.path", "m.search_text LIKE "+marks[0]), args...)
	if err != nil {
		return err
	}
	type found struct {
		id     string
		inPath bool
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (found, error) {
		var id, path string
		err := r.Scan(&id, &path)
		return found{id, strings.Contains(searchtext.Fold(path), t.Fold)}, err
	})
	if err != nil || len(got) == 0 {
		return err
	}
	idf, err := s.idf(len(got))
	if err != nil {
		return err
	}
	for _, f := range got {
		s.hits.Substring(f.id, tier, idf, f.inPath)
	}
	return nil
}

package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/searchtext"
)

// Search reads two columns of the live memories, written with the path
// and content in the same transaction, so that a search sees every write
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
// is looked up on its own, in a window of the searchCandidates newest
// memories that have it (by ID, which grows with time), and only those
// are ranked, as on SQLite. The planner serves a window by the GIN index
// and a sort for a rare term, and by a backward scan of the primary key
// that stops at the window's last memory for a common one, so a lookup's
// cost does not grow with how many memories share a word (migration
// 0002 keeps the vectors in the rows, so that such a scan reads a page a
// memory, not three or four of the TOAST table). What this
// gives up: an older memory is not found by a term that more than
// searchCandidates newer memories have, however well it would rank. The
// scores are added up here: a term's ts_rank
// (a word of the path weighing searchtext.PathWeight times one of the
// content) times its inverse document frequency among the stores'
// memories. A term not found as words (a fragment of a word or an
// identifier: "arseConf", "2026-11") is looked up as a substring, scoring
// as a word found once would; a plain word is also looked up inside
// longer words ("config" in "ParseConfig"), and the memories found only
// so rank after every other (searchtext.TierInside): that lookup runs
// only when the memories found as words do not fill the page.
const (
	searchCandidates = 200
	// searchCountCap bounds the count of the stores' memories that the
	// inverse document frequencies use: beyond it, a term's frequency
	// among the candidates tells enough.
	searchCountCap = 10_000
)

// searchRankWeights are ts_rank's weights of D, C, B (content) and A
// (path).
var searchRankWeights = []float32{0, 0, 1 / searchtext.PathWeight, 1}

// searchWords is the SQL expression of search_words for the words of a
// path and of a content, given as the parameters path and content.
func searchWords(path, content string) string {
	return `setweight(to_tsvector('memstore', ` + path + `), 'A') || setweight(to_tsvector('memstore', ` + content + `), 'B')`
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
	sq, err := keyset.NewSearch(storeIDs, q)
	if err != nil || len(sq.Stores) == 0 {
		return memstore.Page[memstore.SearchResult]{}, err
	}
	var page memstore.Page[memstore.SearchResult]
	err = db.inTx(ctx, readTx, func(tx pgx.Tx) error {
		var memories int64
		for _, id := range sq.Stores {
			st, err := storeState(ctx, tx, workspaceID, id, false)
			if err != nil {
				return err
			}
			memories += st.memories
		}
		hits, err := newSearcher(ctx, tx, sq.Stores, sq.Prefix, memories).search(sq.Terms, sq.Need())
		if err != nil {
			return err
		}
		page, err = keyset.SearchResults(sq, hits, func(id string) (*memstore.Memory, error) {
			return scanMemory(tx.QueryRow(ctx, `SELECT `+memoryColumns(true)+` FROM memories WHERE id = $1`, id))
		})
		return err
	})
	if err != nil {
		return memstore.Page[memstore.SearchResult]{}, wrap(err, "search memories")
	}
	return page, nil
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
}

// newSearcher searches the stores, which hold memories in all, within
// the prefix. A search of whole stores takes its count of memories from
// their rows; one within a prefix counts them when a term is found.
func newSearcher(ctx context.Context, tx pgx.Tx, storeIDs []string, prefix string, memories int64) *searcher {
	s := &searcher{ctx: ctx, tx: tx, hits: searchtext.Hits[string]{}, count: min(memories, searchCountCap)}
	q := newQuery()
	s.filter = "m.store_id = ANY(" + q.arg(storeIDs) + ")"
	if prefix != "" && prefix != "/" {
		s.count = -1
		// As in Memories: a prefix ending with "/" takes whole
		// segments, any other is a plain string prefix.
		s.filter += " AND m.path >= " + q.arg(prefix)
		if hi, ok := keyset.UpperBound(prefix); ok {
			s.filter += " AND m.path < " + q.arg(hi)
		}
	}
	s.args = q.args
	return s
}

// with returns the arguments of a lookup, the filter's and vs, and the
// placeholders of vs.
func (s *searcher) with(vs ...any) (args []any, marks []string) {
	q := newQuery(s.args...)
	for _, v := range vs {
		marks = append(marks, q.arg(v))
	}
	return q.args, marks
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

// search looks the terms up and returns the memories found, best first,
// the newer first among equals: at least need of them when there are.
func (s *searcher) search(terms []searchtext.Term, need int) ([]*searchHit, error) {
	var plain []searchtext.Term // found as words, and may be inside others
	for _, t := range terms {
		found := false
		if len(t.Words) > 0 {
			var err error
			if found, err = s.words(t); err != nil {
				return nil, err
			}
		}
		switch {
		case !t.Substring:
		case !found:
			if err := s.substrings(t, searchtext.TierWords); err != nil {
				return nil, err
			}
		case t.Plain():
			plain = append(plain, t)
		}
	}
	return s.hits.RankedWithInside(need, plain, func(t searchtext.Term) error {
		return s.substrings(t, searchtext.TierInside)
	})
}

// words looks a term up as words, a phrase of its words, and reports
// whether any memory has it.
func (s *searcher) words(t searchtext.Term) (bool, error) {
	args, marks := s.with(strings.Join(t.Folds, " "), searchRankWeights)
	q := `phraseto_tsquery('memstore', ` + marks[0] + `)`
	// The window is taken before ts_rank, which then reads only its
	// memories; the tsquery is written out in the window's condition so
	// that the planner estimates the term's frequency, and QueryExecModeExec
	// plans each lookup with its own term (a cached generic plan would
	// treat every term alike).
	rows, err := s.tx.Query(s.ctx, `SELECT c.id, ts_rank(`+marks[1]+`, c.search_words, `+q+`)
		FROM (SELECT m.id, m.search_words FROM memories m WHERE m.search_words @@ `+q+` AND `+s.filter+`
			ORDER BY m.id DESC LIMIT `+strconv.Itoa(searchCandidates)+`) c`, append([]any{pgx.QueryExecModeExec}, args...)...)
	if err != nil {
		return false, err
	}
	type found struct {
		id   string
		rank float64
	}
	var got []found
	for rows.Next() {
		var f found
		if err := rows.Scan(&f.id, &f.rank); err != nil {
			rows.Close()
			return false, err
		}
		got = append(got, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(got) == 0 {
		return false, err
	}
	idf, err := s.idf(len(got))
	if err != nil {
		return false, err
	}
	for _, f := range got {
		s.hits.Hit(f.id, searchtext.TierWords).BM25 += idf * f.rank
	}
	return true, nil
}

// substrings looks term t up as a substring of the folded path or
// content, adding to the hits of the tier (a TierInside lookup leaves the
// memories of TierWords alone).
func (s *searcher) substrings(t searchtext.Term, tier int) error {
	args, marks := s.with("%" + likeEscaper.Replace(t.Fold) + "%")
	rows, err := s.tx.Query(s.ctx, `SELECT m.id, m.path FROM memories m
		WHERE m.search_text LIKE `+marks[0]+` AND `+s.filter+` ORDER BY m.id DESC LIMIT `+strconv.Itoa(searchCandidates), args...)
	if err != nil {
		return err
	}
	type found struct {
		id     string
		inPath bool
	}
	var got []found
	for rows.Next() {
		var id, path string
		if err := rows.Scan(&id, &path); err != nil {
			rows.Close()
			return err
		}
		got = append(got, found{id, strings.Contains(searchtext.Fold(path), t.Fold)})
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(got) == 0 {
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

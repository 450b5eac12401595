package postgres

import (
	"context"
	"slices"
	"sort"
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
// Each term is looked up on its own and keeps at most searchCandidates
// memories (ranking them reads every memory of the stores with the term,
// through the index), and the scores are added up here: a term's ts_rank
// (a word of the path weighing searchPathWeight times one of the
// content) times its inverse document frequency among the stores'
// memories. A term not found as words (a fragment of a word or an
// identifier: "arseConf", "2026-11") is looked up as a substring, scoring
// as a word found once would; a plain word is also looked up inside
// longer words ("config" in "ParseConfig"), and the memories found only
// so rank after every other (searchtext.TierInside).
const (
	searchCandidates = 200
	searchPathWeight = 2.0
	// searchCountCap bounds the count of the stores' memories that the
	// inverse document frequencies use: beyond it, a term's frequency
	// among the candidates tells enough.
	searchCountCap = 10_000
)

// searchRankWeights are ts_rank's weights of D, C, B (content) and A
// (path).
var searchRankWeights = []float32{0, 0, 1 / searchPathWeight, 1}

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
	var page memstore.Page[memstore.SearchResult]
	n := q.Limit
	if n == 0 {
		n = memstore.DefaultSearchLimit
	}
	stores := slices.Clone(storeIDs)
	slices.Sort(stores)
	stores = slices.Compact(stores)
	terms := searchtext.ParseQuery(q.Text)
	hash := keyset.SearchHash(terms, q.PathPrefix, stores)
	offset, err := keyset.ParseSearch(q.Page, hash)
	if err != nil || len(stores) == 0 {
		return page, err
	}
	err = db.inTx(ctx, readTx, func(tx pgx.Tx) error {
		page = memstore.Page[memstore.SearchResult]{}
		for _, id := range stores {
			if _, err := storeState(ctx, tx, workspaceID, id, false); err != nil {
				return err
			}
		}
		s := newSearcher(ctx, tx, stores, q.PathPrefix)
		hits, err := s.search(terms)
		if err != nil || offset >= len(hits) {
			return err
		}
		end := min(offset+n, len(hits))
		for _, h := range hits[offset:end] {
			r, err := s.result(h, terms)
			if err != nil {
				return err
			}
			page.Items = append(page.Items, r)
		}
		if end < len(hits) {
			page.Next = keyset.SearchPage(end, hash)
		}
		return nil
	})
	if err != nil {
		return memstore.Page[memstore.SearchResult]{}, wrap(err, "search memories")
	}
	return page, nil
}

// A searchHit is a memory found by some terms.
type searchHit struct {
	id    string
	bm25  float64 // the terms' scores added up
	tier  int     // searchtext.TierWords or TierInside
	score float64
}

// A searcher runs the lookups of one search, in one read transaction.
type searcher struct {
	ctx    context.Context
	tx     pgx.Tx
	filter string // the stores and prefix, on memories m
	args   []any  // the filter's, from $1 on
	hits   map[string]*searchHit
	count  int64 // the stores' memories, -1 until counted
}

func newSearcher(ctx context.Context, tx pgx.Tx, storeIDs []string, prefix string) *searcher {
	s := &searcher{ctx: ctx, tx: tx, hits: map[string]*searchHit{}, count: -1}
	q := newQuery()
	s.filter = "m.store_id = ANY(" + q.arg(storeIDs) + ")"
	if prefix != "" && prefix != "/" {
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

func (s *searcher) hit(id string, tier int) *searchHit {
	h := s.hits[id]
	if h == nil {
		h = &searchHit{id: id, tier: tier}
		s.hits[id] = h
	}
	return h
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
// the newer first among equals.
func (s *searcher) search(terms []searchtext.Term) ([]*searchHit, error) {
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
	for _, t := range plain {
		if err := s.substrings(t, searchtext.TierInside); err != nil {
			return nil, err
		}
	}
	return append(s.ranked(searchtext.TierWords), s.ranked(searchtext.TierInside)...), nil
}

// words looks a term up as words, a phrase of its words, and reports
// whether any memory has it.
func (s *searcher) words(t searchtext.Term) (bool, error) {
	args, marks := s.with(strings.Join(t.Folds, " "), searchRankWeights)
	rows, err := s.tx.Query(s.ctx, `SELECT m.id, ts_rank(`+marks[1]+`, m.search_words, q) AS r
		FROM memories m, phraseto_tsquery('memstore', `+marks[0]+`) q
		WHERE m.search_words @@ q AND `+s.filter+` ORDER BY r DESC, m.id DESC LIMIT `+strconv.Itoa(searchCandidates), args...)
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
		s.hit(f.id, searchtext.TierWords).bm25 += idf * f.rank
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
	// A substring scores as a word found once would, weighted in the
	// path.
	idf, err := s.idf(len(got))
	if err != nil {
		return err
	}
	for _, f := range got {
		h := s.hit(f.id, tier)
		if h.tier != tier {
			continue
		}
		if f.inPath {
			h.bm25 += idf * searchPathWeight
		} else {
			h.bm25 += idf
		}
	}
	return nil
}

// ranked scores the hits of a tier (searchtext.Score) and returns them
// best first, the newer first among equals.
func (s *searcher) ranked(tier int) []*searchHit {
	var hits []*searchHit
	for _, h := range s.hits {
		if h.tier == tier {
			h.score = searchtext.Score(h.bm25, tier)
			hits = append(hits, h)
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].id > hits[j].id
	})
	return hits
}

// result reads a memory found and cuts its snippet.
func (s *searcher) result(h *searchHit, terms []searchtext.Term) (memstore.SearchResult, error) {
	m, err := scanMemory(s.tx.QueryRow(s.ctx, `SELECT `+memoryColumns(true)+` FROM memories WHERE id = $1`, h.id))
	if err != nil {
		return memstore.SearchResult{}, err
	}
	r := memstore.SearchResult{Score: h.score, Snippet: searchtext.Snippet(m.Content, terms)}
	m.Content = ""
	r.Memory = *m
	return r, nil
}

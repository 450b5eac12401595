package keyset

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/searchtext"
)

// A Search is a search's query as every backend runs it: its terms, its
// stores sorted and each once, and the page asked for. A search of no
// store finds nothing.
type Search struct {
	Terms  []searchtext.Term
	Stores []string
	Prefix string
	// Conversation are the stores, sorted, whose hits rank as turns of
	// conversations (memstore.SearchQuery.ConversationStores).
	Conversation []string
	limit        int
	offset       int
	hash         string
}

// NewSearch makes q over the stores ready, refusing a cursor of another
// search (EInvalid).
func NewSearch(storeIDs []string, q memstore.SearchQuery) (Search, error) {
	s := Search{Terms: searchtext.ParseQuery(q.Text), Prefix: q.PathPrefix, limit: q.Limit}
	if s.limit == 0 {
		s.limit = memstore.DefaultSearchLimit
	}
	s.Stores = slices.Clone(storeIDs)
	slices.Sort(s.Stores)
	s.Stores = slices.Compact(s.Stores)
	s.Conversation = slices.Clone(q.ConversationStores)
	slices.Sort(s.Conversation)
	s.Conversation = slices.Compact(s.Conversation)
	s.hash = searchHash(s.Terms, s.Prefix, s.Stores, s.Conversation)
	var err error
	s.offset, err = parseSearch(q.Page, s.hash)
	return s, err
}

// Need is how many of the best hits the page needs: those of the pages
// before it, its own, and one more, which tells that a page follows.
func (s Search) Need() int { return s.offset + s.limit + 1 }

// A Place is where a memory is: its store and its path.
type Place struct{ Store, Path string }

// Turns is what a search of conversations (Search.Conversation) reads of
// a backend, as of the search's snapshot: Places, where the memories of
// keys are (of those in the stores of conversations at least: a memory of
// another store has no neighbours); At, the keys of the live memories of
// a store at paths, by path, of those that exist.
type Turns[K cmp.Ordered] struct {
	Places func(keys []K) (map[K]Place, error)
	At     func(store string, paths []string) (map[string]K, error)
}

// SearchResults is the page of s among its hits, ranked best first. read
// returns the memories of the page's hits by key, in one query, with
// their content, which gives the snippets and is then left out of the
// results. turns serves a search of conversations
// (Search.Conversation), which ranks the best hits again with their
// neighbours (withContext); no other search calls it.
func SearchResults[K cmp.Ordered](s Search, hits []*searchtext.Hit[K], read func(keys []K) (map[K]*memstore.Memory, error), turns Turns[K]) (memstore.Page[memstore.SearchResult], error) {
	ranked, more, err := SearchRanking(s, hits, turns)
	var page memstore.Page[memstore.SearchResult]
	if err != nil || len(ranked) == 0 {
		return page, err
	}
	keys := make([]K, len(ranked))
	for i, h := range ranked {
		keys[i] = h.Key
	}
	byKey, err := read(keys)
	if err != nil {
		return page, err
	}
	for _, h := range ranked {
		m, ok := byKey[h.Key]
		if !ok {
			return memstore.Page[memstore.SearchResult]{}, fmt.Errorf("memory %v is in the search index but not in memories", h.Key)
		}
		r := memstore.SearchResult{Score: h.Score, Relevance: h.BM25, Snippet: searchtext.Snippet(m.Content, s.Terms)}
		m.Content = ""
		r.Memory = *m
		page.Items = append(page.Items, r)
	}
	if more {
		page.Next = searchPage(s.offset+len(ranked), s.hash)
	}
	return page, nil
}

// SearchRanking is the hits of s's page among its hits, ranked best
// first (as SearchResults ranks them, with turns), without reading their
// memories, and whether more follow.
func SearchRanking[K cmp.Ordered](s Search, hits []*searchtext.Hit[K], turns Turns[K]) ([]*searchtext.Hit[K], bool, error) {
	if n := searchtext.ContextHits(hits); len(s.Conversation) > 0 && n > 0 {
		var err error
		if hits, err = withContext(s, hits, n, turns); err != nil {
			return nil, false, err
		}
	}
	if s.offset >= len(hits) {
		return nil, false, nil
	}
	end := min(s.offset+s.limit, len(hits))
	return hits[s.offset:end], end < len(hits), nil
}

// ReadResults fills in the memories of rs, ranked results of some
// searches holding only their memories' IDs, without content: read
// returns the memories of ids, by ID, with their content, in one query.
// Those where snippet[i] get the snippet of q's terms, as the lexical
// search gives. A memory gone since it was ranked (deleted) is left out.
func ReadResults(q memstore.SearchQuery, rs []memstore.SearchResult, snippet []bool, read func(ids []string) (map[string]*memstore.Memory, error)) ([]memstore.SearchResult, error) {
	if len(rs) == 0 {
		return rs, nil
	}
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.Memory.ID
	}
	byID, err := read(ids)
	if err != nil {
		return nil, err
	}
	var terms []searchtext.Term
	if slices.Contains(snippet, true) {
		terms = searchtext.ParseQuery(q.Text)
	}
	out := make([]memstore.SearchResult, 0, len(rs))
	for i, r := range rs {
		m, ok := byID[r.Memory.ID]
		if !ok {
			continue
		}
		if i < len(snippet) && snippet[i] {
			r.Snippet = searchtext.Snippet(m.Content, terms)
		}
		r.Memory = *m
		r.Memory.Content = ""
		out = append(out, r)
	}
	return out, nil
}

// withContext ranks the first n of hits, ranked, again as turns of
// conversations (searchtext.WithContext), with the turns around them,
// which the words may not have found: the answer to a question often
// shares no word with it, beside turns that share the rest. Those turns,
// found by their paths (searchtext.NeighbourPaths) in the hit's store
// and within the search's prefix, score only their neighbours'. A
// conversation is a directory of one store, of the stores of
// conversations (Search.Conversation) alone: a memory of another store is
// no turn and has no neighbours. The ranked turns come first, the other
// hits after them in their order.
func withContext[K cmp.Ordered](s Search, hits []*searchtext.Hit[K], n int, turns Turns[K]) ([]*searchtext.Hit[K], error) {
	keys := make([]K, n)
	for i, h := range hits[:n] {
		keys[i] = h.Key
	}
	byKey, err := turns.Places(keys)
	if err != nil {
		return nil, err
	}
	pool := slices.Clone(hits[:n])
	places := make([]Place, n)
	seen := make(map[Place]bool, n)
	for i, k := range keys {
		places[i] = byKey[k]
		seen[places[i]] = true
	}
	var nearby []Place
	byStore := map[string][]string{}
	for _, p := range places[:min(n, searchtext.NeighbourPool)] {
		if !slices.Contains(s.Conversation, p.Store) {
			continue
		}
		for _, np := range searchtext.NeighbourPaths(p.Path) {
			c := Place{p.Store, np}
			// The range of the backends' prefix filter: for valid
			// text, exactly the paths that start with the prefix.
			if !seen[c] && strings.HasPrefix(np, s.Prefix) {
				seen[c] = true
				nearby = append(nearby, c)
				byStore[c.Store] = append(byStore[c.Store], np)
			}
		}
	}
	rest := hits[n:]
	if len(nearby) > 0 {
		found := make(map[Place]K, len(nearby))
		for st, paths := range byStore {
			at, err := turns.At(st, paths)
			if err != nil {
				return nil, err
			}
			for p, k := range at {
				found[Place{st, p}] = k
			}
		}
		// The hits after the first n that are among the turns found: a
		// pass over them, which may be many, without a map of them all.
		near := make(map[K]bool, len(found))
		for _, k := range found {
			near[k] = true
		}
		later := map[K]int{}
		for i, h := range rest {
			if near[h.Key] {
				later[h.Key] = i
			}
		}
		taken := make([]bool, len(rest))
		for _, c := range nearby {
			k, ok := found[c]
			if !ok {
				continue
			}
			h := &searchtext.Hit[K]{Key: k, Tier: searchtext.TierWords}
			if i, ok := later[k]; ok {
				// Found by words too, further down: it keeps its score
				// of words, and one found only inside longer words none.
				h, taken[i] = rest[i], true
				if h.Tier != searchtext.TierWords {
					h.Tier, h.BM25 = searchtext.TierWords, 0
				}
			}
			pool = append(pool, h)
			places = append(places, c)
		}
		var left []*searchtext.Hit[K]
		for i, h := range rest {
			if !taken[i] {
				left = append(left, h)
			}
		}
		rest = left
	}
	paths := make([]string, len(places))
	for i, p := range places {
		if slices.Contains(s.Conversation, p.Store) {
			paths[i] = p.Store + p.Path // the store's conversations apart
		}
	}
	searchtext.WithContext(pool, paths)
	return append(pool, rest...), nil
}

// searchKind is the kind of a search's cursor, which continues a ranked list
// rather than a keyset: the offset of the next page, and a hash of the
// search (searchHash), so that it is refused with another one.
const searchKind = "q"

type searchCursor struct {
	Kind   string `json:"k"`
	Offset int    `json:"o"`
	Search string `json:"s"`
}

// searchPage is the cursor of the page at offset of the search hash.
func searchPage(offset int, hash string) string {
	b, _ := json.Marshal(searchCursor{Kind: searchKind, Offset: offset, Search: hash})
	return "page_" + base64.RawURLEncoding.EncodeToString(b)
}

// searchHash identifies a search's list of results: its terms, prefix,
// stores and stores of conversations (sorted, each once). The page size
// may change from page to page.
func searchHash(terms []searchtext.Term, prefix string, storeIDs, conversation []string) string {
	h := sha256.New()
	for _, t := range terms {
		fmt.Fprintf(h, "%q ", t.Text)
	}
	fmt.Fprintf(h, "\x00%q\x00%q", prefix, storeIDs)
	if len(conversation) > 0 {
		fmt.Fprintf(h, "\x00conversation%q", conversation)
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:9])
}

// parseSearch returns the offset that page continues at: 0 for "", or
// that of a cursor of the search hash (EInvalid otherwise).
func parseSearch(page, hash string) (int, error) {
	if page == "" {
		return 0, nil
	}
	bad := memstore.Errorf(memstore.EInvalid, "page %q is not a cursor of this search; search again without it", page)
	raw, ok := strings.CutPrefix(page, "page_")
	if !ok {
		return 0, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return 0, bad
	}
	var c searchCursor
	if err := json.Unmarshal(b, &c); err != nil || c.Kind != searchKind || c.Offset <= 0 || c.Search != hash {
		return 0, bad
	}
	return c.Offset, nil
}

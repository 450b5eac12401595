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

// A Place is where a memory is: its store and its path.
type Place struct{ Store, Path string }

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

// SearchResults is the page of s among its hits, ranked best first. read
// returns a hit's memory with its content, which gives the snippet and is
// then left out of the result. places returns the places of hits' keys,
// for a search of conversations (Search.Conversation), which ranks the
// best hits again with their neighbours (searchtext.WithContext): those
// of the stores of conversations, each conversation within its store;
// it is called for no other search.
func SearchResults[K cmp.Ordered](s Search, hits []*searchtext.Hit[K], read func(key K) (*memstore.Memory, error), places func(keys []K) (map[K]Place, error)) (memstore.Page[memstore.SearchResult], error) {
	if n := searchtext.ContextHits(hits); len(s.Conversation) > 0 && n > 0 {
		keys := make([]K, n)
		for i, h := range hits[:n] {
			keys[i] = h.Key
		}
		byKey, err := places(keys)
		if err != nil {
			return memstore.Page[memstore.SearchResult]{}, err
		}
		// A turn's conversation is its store's directory: the store's
		// ID before its path keeps conversations of two stores apart,
		// and a memory of any other store is no turn ("").
		ps := make([]string, n)
		for i, k := range keys {
			if p := byKey[k]; slices.Contains(s.Conversation, p.Store) {
				ps[i] = p.Store + p.Path
			}
		}
		searchtext.WithContext(hits, ps)
	}
	var page memstore.Page[memstore.SearchResult]
	if s.offset >= len(hits) {
		return page, nil
	}
	end := min(s.offset+s.limit, len(hits))
	for _, h := range hits[s.offset:end] {
		m, err := read(h.Key)
		if err != nil {
			return memstore.Page[memstore.SearchResult]{}, err
		}
		r := memstore.SearchResult{Score: h.Score, Relevance: h.BM25, Snippet: searchtext.Snippet(m.Content, s.Terms)}
		m.Content = ""
		r.Memory = *m
		page.Items = append(page.Items, r)
	}
	if end < len(hits) {
		page.Next = searchPage(end, s.hash)
	}
	return page, nil
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

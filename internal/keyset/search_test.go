package keyset_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/searchtext"
)

// rankedHits are n hits of keys n-1 down to 0, best first.
func rankedHits(n int) []*searchtext.Hit[int] {
	var hits []*searchtext.Hit[int]
	for k := n - 1; k >= 0; k-- {
		hits = append(hits, &searchtext.Hit[int]{Key: k, Score: float64(k)})
	}
	return hits
}

func readHit(k int) (*memstore.Memory, error) {
	return &memstore.Memory{Path: fmt.Sprintf("/%d.md", k), Content: "a pear here"}, nil
}

func TestSearchPages(t *testing.T) {
	stores := []string{"b", "a", "b"}
	q := memstore.SearchQuery{Text: "pear", Limit: 2}
	hits := rankedHits(5)
	var got []string
	for page := 0; ; page++ {
		s, err := keyset.NewSearch(stores, q)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.Stores, []string{"a", "b"}) {
			t.Fatalf("stores %v; want a, b", s.Stores)
		}
		if want := 2*page + 3; s.Need() != want {
			t.Errorf("page %d needs %d hits; want %d", page, s.Need(), want)
		}
		p, err := keyset.SearchResults(s, hits, readHit, keyset.Turns[int]{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Items {
			if r.Memory.Content != "" || r.Snippet != "a pear here" {
				t.Errorf("%s: content %q, snippet %q; want no content, the snippet", r.Memory.Path, r.Memory.Content, r.Snippet)
			}
			got = append(got, fmt.Sprintf("%s=%v", r.Memory.Path, r.Score))
		}
		if p.Next == "" {
			break
		}
		q.Page = p.Next
	}
	if want := []string{"/4.md=4", "/3.md=3", "/2.md=2", "/1.md=1", "/0.md=0"}; !slices.Equal(got, want) {
		t.Errorf("results %v; want %v", got, want)
	}
	// The cursor is of this search only: another query, prefix or set of
	// stores refuses it.
	q.Page = keyset.Cursor{Kind: keyset.Memories, Key: "/a"}.String()
	if _, err := keyset.NewSearch(stores, q); memstore.ErrorCode(err) != memstore.EInvalid {
		t.Errorf("a list's cursor: %v; want EInvalid", err)
	}
	first, err := keyset.NewSearch(stores, memstore.SearchQuery{Text: "pear", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	p, err := keyset.SearchResults(first, hits, readHit, keyset.Turns[int]{})
	if err != nil {
		t.Fatal(err)
	}
	for name, other := range map[string]struct {
		stores []string
		q      memstore.SearchQuery
	}{
		"query":        {stores, memstore.SearchQuery{Text: "apple", Page: p.Next}},
		"prefix":       {stores, memstore.SearchQuery{Text: "pear", PathPrefix: "/a/", Page: p.Next}},
		"stores":       {[]string{"a"}, memstore.SearchQuery{Text: "pear", Page: p.Next}},
		"conversation": {stores, memstore.SearchQuery{Text: "pear", ConversationStores: stores[:1], Page: p.Next}},
	} {
		if _, err := keyset.NewSearch(other.stores, other.q); memstore.ErrorCode(err) != memstore.EInvalid {
			t.Errorf("another %s: %v; want EInvalid", name, err)
		}
	}
	if s, _ := keyset.NewSearch(stores, memstore.SearchQuery{Text: "pear", Page: p.Next}); s.Need() != 2+memstore.DefaultSearchLimit+1 {
		t.Errorf("another page size: needs %d hits; want the default page after 2", s.Need())
	}
}

func TestSearchResultsPastTheEnd(t *testing.T) {
	s, err := keyset.NewSearch([]string{"a"}, memstore.SearchQuery{Text: "pear"})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := keyset.SearchResults(s, rankedHits(0), readHit, keyset.Turns[int]{}); err != nil || len(p.Items) != 0 || p.Next != "" {
		t.Errorf("no hits: %v, %v; want an empty last page", p, err)
	}
	bad := errors.New("disk on fire")
	_, err = keyset.SearchResults(s, rankedHits(3), func(int) (*memstore.Memory, error) { return nil, bad }, keyset.Turns[int]{})
	if !errors.Is(err, bad) {
		t.Errorf("a failed read: %v; want its error", err)
	}
}

// TestSearchConversation: a search of conversations ranks the best hits
// again with their neighbours, and the turns beside them that the words
// did not find, reading their paths once a page, and pages through the
// list so ranked; a failed read of the paths is its error.
func TestSearchConversation(t *testing.T) {
	// Turn 5 scores most alone; turn 2, between turns 1 and 3, gains
	// most from its neighbours; the topic file keeps its own score.
	scores := map[string]float64{"/c/1.md": 2, "/c/2.md": 1, "/c/3.md": 2, "/c/5.md": 3, "/notes.md": 2.5}
	keys := []string{"/c/5.md", "/notes.md", "/c/1.md", "/c/3.md", "/c/2.md"}
	hits := func() []*searchtext.Hit[string] {
		var hs []*searchtext.Hit[string]
		for _, k := range keys {
			hs = append(hs, &searchtext.Hit[string]{Key: k, Tier: searchtext.TierWords, BM25: scores[k], Score: searchtext.Score(scores[k], searchtext.TierWords)})
		}
		return append(hs, &searchtext.Hit[string]{Key: "/c/4.md", Tier: searchtext.TierInside, BM25: 9, Score: searchtext.Score(9, searchtext.TierInside)})
	}
	read := func(k string) (*memstore.Memory, error) { return &memstore.Memory{Path: k, Content: "pear"}, nil }
	// The store also holds turns 6 and 7, which no word found, and turns
	// of another conversation; /c/0.md and /c/-1.md do not exist.
	stored := map[string]bool{"/c/6.md": true, "/c/7.md": true, "/d/4.md": true}
	for _, k := range append(keys, "/c/4.md") {
		stored[k] = true
	}
	reads := 0
	var asked []string
	turns := keyset.Turns[string]{
		Places: func(ks []string) (map[string]keyset.Place, error) {
			reads++
			m := map[string]keyset.Place{}
			for _, k := range ks {
				m[k] = keyset.Place{Store: "a", Path: k}
			}
			return m, nil
		},
		At: func(store string, paths []string) (map[string]string, error) {
			m := map[string]string{}
			for _, p := range paths {
				asked = append(asked, p)
				if store == "a" && stored[p] {
					m[p] = p
				}
			}
			return m, nil
		},
	}
	// 1: 2 + 0.5*1 + 0.25*2 = 3; 2: 1 + 0.5*4 = 3; 3: 2 + 0.5*1 + 0.25*(2+3) = 3.75;
	// 5: 3 + 0.25*2 = 3.5; the topic file 2.5. Turn 4, found only
	// inside a word, scores as a neighbour of 3 and 5: 0.5*(2+3) +
	// 0.25*1 = 2.75; turn 6, beside 5, 0.5*3 = 1.5; turn 7 0.25*3.
	want := []string{"/c/3.md", "/c/5.md", "/c/2.md", "/c/1.md", "/c/4.md", "/notes.md", "/c/6.md", "/c/7.md"}
	var got []string
	q := memstore.SearchQuery{Text: "pear", Limit: 4, ConversationStores: []string{"a"}}
	for {
		s, err := keyset.NewSearch([]string{"a"}, q)
		if err != nil {
			t.Fatal(err)
		}
		p, err := keyset.SearchResults(s, hits(), read, turns)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Items {
			got = append(got, r.Memory.Path)
		}
		if p.Next == "" {
			break
		}
		q.Page = p.Next
	}
	if !slices.Equal(got, want) || reads != 2 {
		t.Errorf("pages %v after %d reads of paths; want %v after 2", got, reads, want)
	}
	// Only turns that are not hits already are looked for.
	slices.Sort(asked)
	if want := []string{"/c/0.md", "/c/0.md", "/c/4.md", "/c/4.md", "/c/6.md", "/c/6.md", "/c/7.md", "/c/7.md"}; !slices.Equal(asked, want) {
		t.Errorf("looked for %v; want %v", asked, want)
	}
	// Within a prefix, only the turns within it.
	asked = nil
	s, _ := keyset.NewSearch([]string{"a"}, memstore.SearchQuery{Text: "pear", Limit: 10, ConversationStores: []string{"a"}, PathPrefix: "/c/5"})
	if _, err := keyset.SearchResults(s, hits(), read, turns); err != nil || len(asked) != 0 {
		t.Errorf("prefix /c/5: looked for %v, %v; want none", asked, err)
	}
	// Without it, the ranking as it was, and no paths read.
	s, _ = keyset.NewSearch([]string{"a"}, memstore.SearchQuery{Text: "pear", Limit: 10})
	p, err := keyset.SearchResults(s, hits(), read, keyset.Turns[string]{})
	if err != nil || len(p.Items) != 6 || p.Items[0].Memory.Path != "/c/5.md" || p.Items[1].Memory.Path != "/notes.md" {
		t.Errorf("without context: %v, %v", p.Items, err)
	}
	bad := errors.New("disk on fire")
	s, _ = keyset.NewSearch([]string{"a"}, memstore.SearchQuery{Text: "pear", ConversationStores: []string{"a"}})
	failing := turns
	failing.Places = func([]string) (map[string]keyset.Place, error) { return nil, bad }
	if _, err := keyset.SearchResults(s, hits(), read, failing); !errors.Is(err, bad) {
		t.Errorf("a failed read of paths: %v; want its error", err)
	}
	failing = turns
	failing.At = func(string, []string) (map[string]string, error) { return nil, bad }
	if _, err := keyset.SearchResults(s, hits(), read, failing); !errors.Is(err, bad) {
		t.Errorf("a failed read of neighbours: %v; want its error", err)
	}
}

// TestSearchConversationStores: context ranks the turns of the stores of
// conversations alone, and turns of two stores at the same paths are not
// neighbours.
func TestSearchConversationStores(t *testing.T) {
	// Store a holds turns 1-3, store b turn 2 alone at the same path as
	// a's, and store c (not of conversations) turns 1-2.
	type key struct{ store, path string }
	keys := []key{{"a", "/c/1.md"}, {"a", "/c/2.md"}, {"a", "/c/3.md"}, {"b", "/c/2.md"}, {"c", "/c/1.md"}, {"c", "/c/2.md"}}
	hits := func() []*searchtext.Hit[int] {
		var hs []*searchtext.Hit[int]
		for i := range keys {
			hs = append(hs, &searchtext.Hit[int]{Key: i, Tier: searchtext.TierWords, BM25: 1, Score: searchtext.Score(1, searchtext.TierWords)})
		}
		return hs
	}
	places := func(ks []int) (map[int]keyset.Place, error) {
		m := map[int]keyset.Place{}
		for _, k := range ks {
			m[k] = keyset.Place{Store: keys[k].store, Path: keys[k].path}
		}
		return m, nil
	}
	s, err := keyset.NewSearch([]string{"a", "b", "c"}, memstore.SearchQuery{Text: "pear", ConversationStores: []string{"b", "a"}})
	if err != nil {
		t.Fatal(err)
	}
	// The stores hold no turns but those found; the turns beside a store
	// of topics' are not looked for.
	var asked []string
	at := func(store string, _ []string) (map[string]int, error) {
		asked = append(asked, store)
		return nil, nil
	}
	p, err := keyset.SearchResults(s, hits(), func(k int) (*memstore.Memory, error) {
		return &memstore.Memory{StoreID: keys[k].store, Path: keys[k].path}, nil
	}, keyset.Turns[int]{Places: places, At: at})
	if err != nil {
		t.Fatal(err)
	}
	// a's turn 2: 1 + 0.5*2 = 2; a's turns 1 and 3: 1 + 0.5 + 0.25 = 1.75;
	// b's turn 2 and c's turns keep 1, c's the newer first.
	score := map[key]float64{}
	for _, r := range p.Items {
		score[key{r.Memory.StoreID, r.Memory.Path}] = r.Score
	}
	if slices.Contains(asked, "c") {
		t.Errorf("turns looked for in stores %q; want none in c, a store of topics", asked)
	}
	want := map[key]float64{{"a", "/c/2.md"}: 2, {"a", "/c/1.md"}: 1.75, {"a", "/c/3.md"}: 1.75, {"b", "/c/2.md"}: 1, {"c", "/c/1.md"}: 1, {"c", "/c/2.md"}: 1}
	for k, bm := range want {
		if w := searchtext.Score(bm, searchtext.TierWords); score[k] != w {
			t.Errorf("%s in store %s scores %v; want %v (BM25 %v)", k.path, k.store, score[k], w, bm)
		}
	}
}

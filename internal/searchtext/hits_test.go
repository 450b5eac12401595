package searchtext_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/memstore/memstore/internal/searchtext"
)

func TestHitsRanked(t *testing.T) {
	hs := searchtext.Hits[int64]{}
	hs.Hit(1, searchtext.TierWords).BM25 += 2
	hs.Hit(2, searchtext.TierWords).BM25 += 3 // newer than 1, as good in the end
	hs.Hit(3, searchtext.TierWords).BM25 += 5
	hs.Hit(4, searchtext.TierInside).BM25 += 9
	hs.Hit(1, searchtext.TierInside).BM25 += 1 // found already: keeps its tier
	for _, c := range []struct {
		tier int
		want []int64
	}{
		{searchtext.TierWords, []int64{3, 2, 1}},
		{searchtext.TierInside, []int64{4}},
	} {
		got := hs.Ranked(c.tier)
		if len(got) != len(c.want) {
			t.Fatalf("tier %d: %d hits; want %v", c.tier, len(got), c.want)
		}
		for i, h := range got {
			if h.Key != c.want[i] {
				t.Errorf("tier %d, hit %d: %d; want %d", c.tier, i, h.Key, c.want[i])
			}
			if s := searchtext.Score(h.BM25, c.tier); h.Score != s {
				t.Errorf("hit %d scores %v; want %v", h.Key, h.Score, s)
			}
		}
	}
	if h := hs[1]; h.BM25 != 3 {
		t.Errorf("hit 1 adds up to %v; want 3", h.BM25)
	}
}

func TestHitsSubstring(t *testing.T) {
	for _, c := range []struct {
		name     string
		had      int // the tier the memory was found in first; 0: none
		tier     int
		inPath   bool
		want     float64
		wantTier int
	}{
		{"content", 0, searchtext.TierWords, false, 1.5, searchtext.TierWords},
		{"path", 0, searchtext.TierWords, true, 1.5 * searchtext.PathWeight, searchtext.TierWords},
		{"adds up", searchtext.TierWords, searchtext.TierWords, false, 1 + 1.5, searchtext.TierWords},
		{"inside only", 0, searchtext.TierInside, false, 1.5, searchtext.TierInside},
		{"inside leaves words alone", searchtext.TierWords, searchtext.TierInside, true, 1, searchtext.TierWords},
	} {
		hs := searchtext.Hits[string]{}
		if c.had != 0 {
			hs.Hit("a", c.had).BM25 = 1
		}
		hs.Substring("a", c.tier, 1.5, c.inPath)
		if h := hs["a"]; h.BM25 != c.want || h.Tier != c.wantTier {
			t.Errorf("%s: BM25 %v in tier %d; want %v in tier %d", c.name, h.BM25, h.Tier, c.want, c.wantTier)
		}
	}
}

// TestRankedWithInside: the lookups inside longer words run only when the
// words do not fill the page, and what they find ranks after the words.
func TestRankedWithInside(t *testing.T) {
	plain := []searchtext.Term{{Text: "config"}, {Text: "parse"}}
	for _, tc := range []struct {
		need    int
		plain   []searchtext.Term
		lookups int
		keys    []int
	}{
		{need: 2, plain: plain, lookups: 0, keys: []int{2, 1}},
		{need: 3, plain: plain, lookups: 2, keys: []int{2, 1, 3}},
		{need: 3, plain: nil, lookups: 0, keys: []int{2, 1}},
	} {
		hs := searchtext.Hits[int]{}
		hs.Hit(1, searchtext.TierWords).BM25 = 1
		hs.Hit(2, searchtext.TierWords).BM25 = 2
		lookups := 0
		got, err := hs.RankedWithInside(tc.need, tc.plain, func(searchtext.Term) error {
			lookups++
			hs.Substring(3, searchtext.TierInside, 9, true) // scores high, ranks last
			return nil
		})
		var keys []int
		for _, h := range got {
			keys = append(keys, h.Key)
		}
		if err != nil || lookups != tc.lookups || !slices.Equal(keys, tc.keys) {
			t.Errorf("need %d, %d plain: %d lookups, keys %v, %v; want %d, %v", tc.need, len(tc.plain), lookups, keys, err, tc.lookups, tc.keys)
		}
	}
	hs := searchtext.Hits[int]{}
	boom := errors.New("boom")
	if _, err := hs.RankedWithInside(1, plain, func(searchtext.Term) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("a failed lookup: %v, want its error", err)
	}
}

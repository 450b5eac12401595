package searchtext

import (
	"cmp"
	"slices"
)

// PathWeight is the weight of a word of a memory's path against 1 for a
// word of its content: a term in the path says more of what a memory is
// about.
const PathWeight = 2.0

// A Hit is a memory found by some terms, known by a backend's key for it,
// in which newer memories sort higher (a row number, a time-ordered ID).
type Hit[K cmp.Ordered] struct {
	Key  K
	Tier int // TierWords or TierInside
	// BM25 adds up the terms' scores, higher the better.
	BM25  float64
	Score float64 // Score(BM25, Tier), once ranked
}

// Hits are the memories one search found, by key.
type Hits[K cmp.Ordered] map[K]*Hit[K]

// Hit returns the hit of key, new in tier if it was not found yet.
func (hs Hits[K]) Hit(key K, tier int) *Hit[K] {
	h := hs[key]
	if h == nil {
		h = &Hit[K]{Key: key, Tier: tier}
		hs[key] = h
	}
	return h
}

// Substring credits key with a term found as a substring, scoring as a
// word found once would (idf, the term's inverse document frequency),
// weighted by PathWeight when in the path. A lookup of TierInside leaves
// the memories of TierWords alone.
func (hs Hits[K]) Substring(key K, tier int, idf float64, inPath bool) {
	h := hs.Hit(key, tier)
	switch {
	case h.Tier != tier:
	case inPath:
		h.BM25 += idf * PathWeight
	default:
		h.BM25 += idf
	}
}

// Ranked scores the hits of a tier (Score) and returns them best first,
// the newer first among equals.
func (hs Hits[K]) Ranked(tier int) []*Hit[K] {
	var hits []*Hit[K]
	for _, h := range hs {
		if h.Tier == tier {
			h.Score = Score(h.BM25, tier)
			hits = append(hits, h)
		}
	}
	slices.SortFunc(hits, byScore)
	return hits
}

// byScore orders hits best first, the newer first among equals.
func byScore[K cmp.Ordered](a, b *Hit[K]) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return cmp.Compare(b.Key, a.Key)
}

// RankedWithInside returns the hits of TierWords, best first, followed,
// only when they are fewer than need, by those that lookInside adds to
// TierInside for each of plain, the plain terms found as words: a memory
// found only inside longer words ranks after every other, so a page that
// the words fill never pays for those lookups.
func (hs Hits[K]) RankedWithInside(need int, plain []Term, lookInside func(Term) error) ([]*Hit[K], error) {
	hits := hs.Ranked(TierWords)
	if len(hits) >= need || len(plain) == 0 {
		return hits, nil
	}
	for _, t := range plain {
		if err := lookInside(t); err != nil {
			return nil, err
		}
	}
	return append(hits, hs.Ranked(TierInside)...), nil
}

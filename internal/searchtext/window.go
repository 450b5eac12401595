package searchtext

import (
	"cmp"
	"slices"
)

// Window bounds the memories each lookup of a search reads, the most
// recently created first: ranking every memory with a common term would
// cost in proportion to how many have it. When a term fills its window,
// a backend also looks up, each within a window, the memories with the
// term in their path and those with every term of the query, whatever
// their age (see WordTerm), so that only older memories with some terms
// but not all, and not in their path, are missed.
//
// Measured with `memstore bench recall --generate 100` (3,022 turns, in
// which names and topics recur in hundreds of them): a window of 100
// missed enough older turns to rank below plain BM25 (recall@10 0.549
// against 0.552); 300 ranks above it (0.584), as well as no window did
// (0.583). At 100,000 memories it costs about 1.14 times the p50 of a
// window of 100, where 1,000 cost about 1.3 times (BenchmarkSearch).
const Window = 300

// A WordTerm is a term of a search found as words, with the memories
// credited with it. Its window's memories are ranked (Rank); memories
// found only by the lookups beyond the window are not (that would cost a
// ranking of every memory with the term), and score from the window's
// scores instead: see InPath and WithAll.
type WordTerm[K cmp.Ordered] struct {
	credited map[K]bool
	scores   []float64
	best     float64 // the highest of scores, which InPath gives
	typical  float64 // see Typical; stale when scores changed since
	stale    bool
}

// NewWordTerm returns a term not found yet.
func NewWordTerm[K cmp.Ordered]() *WordTerm[K] {
	return &WordTerm[K]{credited: map[K]bool{}}
}

// Rank credits key, in the term's window, with its score for the term.
func (w *WordTerm[K]) Rank(hs Hits[K], key K, score float64) {
	hs.Hit(key, TierWords).BM25 += score
	w.credited[key] = true
	if len(w.scores) == 0 || score > w.best {
		w.best = score
	}
	w.scores = append(w.scores, score)
	w.stale = true
}

// Typical is the score of a memory with the term whose own is unknown:
// the median of the window's, unless set by SetTypical.
func (w *WordTerm[K]) Typical() float64 {
	if w.stale {
		w.typical, w.stale = median(w.scores), false
	}
	return w.typical
}

// SetTypical sets the typical score of a term its backend does not rank.
func (w *WordTerm[K]) SetTypical(score float64) { w.typical, w.stale = score, false }

// Found says whether some memory is credited with the term.
func (w *WordTerm[K]) Found() bool { return len(w.credited) > 0 }

// Credit credits key with the term, scoring score, unless it is already.
func (w *WordTerm[K]) Credit(hs Hits[K], key K, score float64) {
	if !w.credited[key] {
		hs.Hit(key, TierWords).BM25 += score
		w.credited[key] = true
	}
}

// InPath credits key, found with the term in its path, unless it is
// already: with the best score of the window, weighted as a match in the
// path.
func (w *WordTerm[K]) InPath(hs Hits[K], key K) {
	if len(w.scores) > 0 {
		w.Credit(hs, key, w.best*PathWeight)
	}
}

// WithAll credits key, found with every one of the terms, with each term
// it is not credited with yet, scoring the term's typical score.
func WithAll[K cmp.Ordered](hs Hits[K], terms []*WordTerm[K], key K) {
	for _, w := range terms {
		w.Credit(hs, key, w.Typical())
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

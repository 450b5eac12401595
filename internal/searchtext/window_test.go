package searchtext_test

import (
	"testing"

	"github.com/memstore/memstore/internal/searchtext"
)

func TestWordTerm(t *testing.T) {
	hs := searchtext.Hits[int64]{}
	a, b := searchtext.NewWordTerm[int64](), searchtext.NewWordTerm[int64]()
	for key, score := range map[int64]float64{10: 1, 11: 3, 12: 2} {
		a.Rank(hs, key, score)
	}
	b.Rank(hs, 12, 5)
	a.InPath(hs, 11) // in the window: keeps its score
	a.InPath(hs, 1)  // older: the window's best, as in the path
	searchtext.WithAll(hs, []*searchtext.WordTerm[int64]{a, b}, 2)
	searchtext.WithAll(hs, []*searchtext.WordTerm[int64]{a, b}, 12)
	b.SetTypical(7)
	searchtext.WithAll(hs, []*searchtext.WordTerm[int64]{b}, 3)
	for key, want := range map[int64]float64{
		10: 1,
		11: 3,
		12: 2 + 5,
		1:  3 * searchtext.PathWeight,
		2:  2 + 5, // the median of each term's window
		3:  7,
	} {
		if h := hs[key]; h == nil || h.BM25 != want {
			t.Errorf("hit %d: %+v; want BM25 %v", key, h, want)
		}
	}
	if !a.Found() || searchtext.NewWordTerm[int64]().Found() {
		t.Error("Found: want true for a ranked term, false for a new one")
	}
}

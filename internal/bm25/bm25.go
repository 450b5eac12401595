// Package bm25 is plain Okapi BM25 over an in-memory set of documents:
// words folded as searchtext folds them (case and diacritics), stemmed
// by Porter's stemmer (Stem), no stop words, no field weights, the
// Lucene form of the inverse document frequency. It is the baseline that
// memstore's own ranking is measured against (internal/recall, `memstore
// bench recall`), not a search memstore serves.
package bm25

import (
	"cmp"
	"slices"

	"github.com/memstore/memstore/internal/searchtext"
)

// The parameters of the baseline: the textbook defaults, as Lucene and
// SQLite's FTS5 have them, so that "plain BM25" means what it usually
// does.
const (
	K1 = 1.2
	B  = 0.75
)

// Tokens are the stemmed, folded words of text, in order.
func Tokens(text string) []string {
	var out []string
	for w := range searchtext.Words(text) {
		out = append(out, Stem(w.Fold))
	}
	return out
}

// An Index holds documents, numbered from 0 in the order added.
type Index struct {
	postings map[string][]posting
	lengths  []float64
	total    float64
}

type posting struct {
	doc int
	tf  float64
}

// New returns an empty index.
func New() *Index { return &Index{postings: map[string][]posting{}} }

// Add indexes a document's text and returns its number.
func (ix *Index) Add(text string) int {
	doc := len(ix.lengths)
	tf := map[string]float64{}
	toks := Tokens(text)
	for _, t := range toks {
		tf[t]++
	}
	for t, n := range tf {
		ix.postings[t] = append(ix.postings[t], posting{doc, n})
	}
	ix.lengths = append(ix.lengths, float64(len(toks)))
	ix.total += float64(len(toks))
	return doc
}

// Len is the number of documents.
func (ix *Index) Len() int { return len(ix.lengths) }

// Scores returns every document's BM25 score for query, 0 for those
// without any of its terms. A term repeated in the query counts once.
func (ix *Index) Scores(query string) []float64 {
	scores := make([]float64, len(ix.lengths))
	n := float64(len(ix.lengths))
	if n == 0 {
		return scores
	}
	avg := ix.total / n
	seen := map[string]bool{}
	for _, t := range Tokens(query) {
		if seen[t] {
			continue
		}
		seen[t] = true
		ps := ix.postings[t]
		idf := searchtext.IDF(float64(len(ps)), n)
		for _, p := range ps {
			scores[p.doc] += idf * p.tf * (K1 + 1) / (p.tf + K1*(1-B+B*ix.lengths[p.doc]/avg))
		}
	}
	return scores
}

// Top returns the numbers of the k documents of highest score above 0,
// best first, the higher number (the later added) first among equals, as
// memstore ranks the newer of two equal memories first: a comparison
// with memstore's ranking then does not turn on which of many equal
// documents (the same sentence said in several conversations) each
// lists first.
func Top(scores []float64, k int) []int {
	var docs []int
	for d, s := range scores {
		if s > 0 {
			docs = append(docs, d)
		}
	}
	slices.SortFunc(docs, func(a, b int) int {
		if c := cmp.Compare(scores[b], scores[a]); c != 0 {
			return c
		}
		return cmp.Compare(b, a)
	})
	return docs[:min(k, len(docs))]
}

package searchtext

import "math"

// Okapi BM25's constants, as FTS5's bm25 has them: k1 bounds what
// repeating a term adds, b how much a long document's length discounts.
const (
	BM25K1 = 1.2
	BM25B  = 0.75
)

// IDF is a term's inverse document frequency in BM25, for a term in df of
// n documents: never below 0, unlike the classic formula, so that a term
// in most documents still counts a little.
func IDF(df, n float64) float64 {
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// BM25 is a term's BM25 score in a document: idf (IDF) for a term found
// tf times in a document of the given length, among documents of average
// length avgLength.
func BM25(idf, tf, length, avgLength float64) float64 {
	return idf * tf * (BM25K1 + 1) / (tf + BM25K1*(1-BM25B+BM25B*length/avgLength))
}

// The tiers of a search hit: how the terms found it.
const (
	// TierWords: by a word, or by a fragment of a word or identifier.
	TierWords = 1
	// TierInside: only inside longer words ("config" in "ParseConfig");
	// such hits rank after every hit of TierWords.
	TierInside = 2
)

// Score is the score of a hit of a tier whose terms' BM25 scores, higher
// the better, add up to bm25: the sum squeezed below 1, plus 1 in
// TierWords, so that every hit of TierWords ranks above TierInside.
func Score(bm25 float64, tier int) float64 {
	s := bm25 / (1 + bm25)
	if tier == TierWords {
		s++
	}
	return s
}

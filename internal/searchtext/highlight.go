package searchtext

import "slices"

// Highlights returns the byte ranges of text where the terms are found,
// in order and not overlapping, by the same matching as Snippet, so that
// what a result shows marked is what made its snippet.
func Highlights(text string, terms []Term) [][2]int {
	toks := slices.Collect(Words(text))
	var out [][2]int
	for i := 0; i < len(toks); i++ {
		for _, t := range terms {
			if termAt(toks, i, t) {
				last := min(i+max(len(t.Folds), 1)-1, len(toks)-1)
				out = append(out, [2]int{toks[i].Start, toks[last].End})
				i = last
				break
			}
		}
	}
	return out
}

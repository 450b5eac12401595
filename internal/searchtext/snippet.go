package searchtext

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// SnippetRunes bounds a snippet's length, "…" included.
const SnippetRunes = 200

// sameWord stands in for the stemmer, for the snippet only: two words
// match when equal or when one begins with most of the other ("run" and
// "running", "study" and "studies").
func sameWord(a, b string) bool {
	n := min(len(a), len(b))
	p := 0
	for p < n && a[p] == b[p] {
		p++
	}
	return a == b || p >= 3 && p >= n-3
}

// termAt says whether term t is found at words[i]: as its words in a row
// (the first may end a word and the last begin one), or inside the word.
func termAt(words []Word, i int, t Term) bool {
	w := t.Folds
	switch len(w) {
	case 0:
		return false
	case 1:
		return sameWord(words[i].Fold, w[0]) || t.Substring && strings.Contains(words[i].Fold, t.Fold)
	}
	last := len(w) - 1
	if i+last >= len(words) || !strings.HasSuffix(words[i].Fold, w[0]) || !strings.HasPrefix(words[i+last].Fold, w[last]) {
		return false
	}
	for j := 1; j < last; j++ {
		if words[i+j].Fold != w[j] {
			return false
		}
	}
	return true
}

// Snippet returns the text around the best match of the terms in
// content, with its whitespace collapsed: all of it when it fits in
// SnippetRunes, or else the stretch where most terms are found, cut at
// word boundaries, with "…" where content goes on. It is "" when no term
// is found in content.
func Snippet(content string, terms []Term) string {
	toks := slices.Collect(Words(content))
	type match struct{ tok, term int }
	var ms []match
	for i := range toks {
		for j, t := range terms {
			if termAt(toks, i, t) {
				ms = append(ms, match{i, j})
				break
			}
		}
	}
	if len(ms) == 0 {
		return ""
	}
	if all := strings.Join(strings.Fields(content), " "); utf8.RuneCountInString(all) <= SnippetRunes {
		return all
	}
	runes := func(a, b int) int { return utf8.RuneCountInString(content[toks[a].Start:toks[b].End]) }
	// The first run of matches within two thirds of a snippet that has
	// the most distinct terms.
	best, most := 0, 0
	for a := range ms {
		seen := map[int]bool{}
		for b := a; b < len(ms) && runes(ms[a].tok, ms[b].tok) <= SnippetRunes*2/3; b++ {
			seen[ms[b].term] = true
		}
		if len(seen) > most {
			best, most = a, len(seen)
		}
	}
	// A few words before the match, then as many after as fit, and more
	// before if the content ends first.
	first := ms[best].tok
	start := first
	for start > 0 && first-start < 5 && runes(start-1, first) <= SnippetRunes/4 {
		start--
	}
	end := start
	for end+1 < len(toks) && runes(start, end+1) <= SnippetRunes-2 {
		end++
	}
	for start > 0 && runes(start-1, end) <= SnippetRunes-2 { // at the end: more before
		start--
	}
	from, to := toks[start].Start, toks[end].End
	if start == 0 {
		from = 0
	}
	if end == len(toks)-1 {
		to = len(content)
	}
	s := strings.Join(strings.Fields(content[from:to]), " ")
	if r := []rune(s); len(r) > SnippetRunes-2 {
		s, to = string(r[:SnippetRunes-2]), -1 // one word longer than a snippet
	}
	if from > 0 {
		s = "…" + s
	}
	if to != len(content) {
		s += "…"
	}
	return s
}

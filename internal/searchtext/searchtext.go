// Package searchtext is the text side of memory search, shared by every
// backend so that a query means the same wherever it runs: it tells the
// words of a text, folds case and diacritics, cuts a query into terms
// without its stop words, cuts the snippet shown with a result, and
// shapes scores. It needs no database. The SQLite backend (sqlite) builds
// its FTS5 queries from the terms and scores its hits here; the memory
// directory's recall (memdir) ranks topic files with the same words, stop
// words and scores.
package searchtext

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// IsWordRune says whether r is part of a word, as for FTS5's unicode61
// tokenizer: letters, digits, and combining marks (diacritics).
func IsWordRune(r rune) bool {
	if r < utf8.RuneSelf { // the commonest, and the same answer
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Co, r)
}

// Fold lower-cases s and removes its diacritics, as the indexes do. It
// leaves look-alikes of other scripts ("а", Cyrillic) and compatibility
// forms ("ｆ", fullwidth) alone: they are other letters.
func Fold(s string) string {
	ascii := true
	for i := 0; i < len(s) && ascii; i++ {
		ascii = s[i] < utf8.RuneSelf
	}
	if ascii {
		return strings.ToLower(s)
	}
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, norm.NFD.String(strings.ToLower(s)))
}

// A Word is a run of word runes of a text, by byte offsets, with its
// folded form.
type Word struct {
	Start, End int
	Fold       string
}

// Words yields the words of s in order. A word of lower-case ASCII, the
// commonest, costs no allocation.
func Words(s string) iter.Seq[Word] {
	return func(yield func(Word) bool) {
		start := -1
		for i, r := range s {
			switch w := IsWordRune(r); {
			case w && start < 0:
				start = i
			case !w && start >= 0:
				if !yield(Word{start, i, Fold(s[start:i])}) {
					return
				}
				start = -1
			}
		}
		if start >= 0 {
			yield(Word{start, len(s), Fold(s[start:])})
		}
	}
}

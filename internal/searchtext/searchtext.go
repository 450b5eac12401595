// Package searchtext is the text side of memory search, shared by every
// backend so that a query means the same wherever it runs: it tells the
// words of a text, folds case and diacritics, cuts a query into terms
// without its stop words, cuts the snippet shown with a result, and
// shapes scores and ranks hits (Hits). It needs no database. The backends
// build their queries from the terms and rank their hits here; the memory
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
	if r < utf8.RuneSelf {
		return asciiKinds[r] != notWord
	}
	return unicodeWordRune(r)
}

func unicodeWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Co, r)
}

// What a rune is to a word, in order, so that a word is the greatest of
// its runes'.
const (
	lowerASCII = iota // its own fold
	upperASCII        // folded by lower-casing
	otherRune         // folded by Fold
	notWord
)

// asciiKinds tells ASCII runes apart without Unicode's tables: the
// commonest runes, taken one by one.
var asciiKinds [utf8.RuneSelf]uint8

func init() {
	for c := range asciiKinds {
		switch r := rune(c); {
		case !unicodeWordRune(r):
			asciiKinds[c] = notWord
		case unicode.IsUpper(r):
			asciiKinds[c] = upperASCII
		default:
			asciiKinds[c] = lowerASCII
		}
	}
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
	// Rune by rune when every rune is in latinFolds: the same, since
	// both lower-casing and decomposition go rune by rune, and the
	// diacritics they leave are removed.
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteByte(byte(r))
		case latinFirst <= r && r < latinFirst+rune(len(latinFolds)):
			b.WriteString(latinFolds[r-latinFirst])
		default:
			return decomposedFold(s)
		}
	}
	return b.String()
}

// decomposedFold is Fold by its definition: lower-cased, decomposed
// (NFD), without the combining marks.
func decomposedFold(s string) string { return StripMarks(strings.ToLower(s)) }

// StripMarks is s decomposed (NFD) without its combining marks: "café"
// becomes "cafe", as search folds words and BERT's tokenizers strip
// accents.
func StripMarks(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, norm.NFD.String(s))
}

// latinFolds are the folds of the runes from latinFirst on: Latin-1's
// letters with diacritics and Latin Extended-A and B (U+00C0 to U+024F),
// the commonest runes of words beyond ASCII.
var latinFolds [0x250 - latinFirst]string

const latinFirst = 0xC0

func init() {
	for i := range latinFolds {
		latinFolds[i] = decomposedFold(string(rune(latinFirst + i)))
	}
}

// A Word is a run of word runes of a text, by byte offsets, with its
// folded form.
type Word struct {
	Start, End int
	Fold       string
}

// Words yields the words of s in order. A word of lower-case ASCII, the
// commonest, is its own fold, and costs no allocation.
func Words(s string) iter.Seq[Word] {
	return func(yield func(Word) bool) {
		start, has := -1, uint8(lowerASCII)
		for i := 0; i < len(s); {
			c, size := s[i], 1
			var kind uint8
			if c < utf8.RuneSelf {
				kind = asciiKinds[c]
			} else {
				var r rune
				r, size = utf8.DecodeRuneInString(s[i:])
				if kind = otherRune; !unicodeWordRune(r) {
					kind = notWord
				}
			}
			switch {
			case kind == notWord:
				if start >= 0 {
					if !yield(word(s, start, i, has)) {
						return
					}
					start = -1
				}
			case start < 0:
				start, has = i, kind
			default:
				has = max(has, kind)
			}
			i += size
		}
		if start >= 0 {
			yield(word(s, start, len(s), has))
		}
	}
}

// word is the word s[start:end], which holds runes of kind has at most.
func word(s string, start, end int, has uint8) Word {
	w := s[start:end]
	switch has {
	case upperASCII:
		w = strings.ToLower(w)
	case otherRune:
		w = Fold(w)
	}
	return Word{start, end, w}
}

package searchtext

import (
	"testing"
	"unicode/utf8"
)

// FuzzSearchText: any query and content give at most MaxTerms terms, words
// in order made of word runes and folded as Fold's definition would, and
// a snippet within SnippetRunes; never a panic.
func FuzzSearchText(f *testing.F) {
	f.Add("what did we decide about the release?", "We decided to release on Friday.")
	f.Add("Éclair at the CAFÉ", "the café on the corner sells ÉCLAIRS")
	f.Add("stackneed 2026-11-03", "haystackneedlehaystack, released 2026-11-03")
	f.Add("don’t \x00 ---", "e\u0301te\u0301 東京タワー 🎉 \xff")
	f.Fuzz(func(t *testing.T, query, content string) {
		terms := ParseQuery(query)
		if len(terms) > MaxTerms {
			t.Fatalf("%d terms", len(terms))
		}
		for _, term := range terms {
			if term.Text == "" || term.Fold != decomposedFold(term.Text) {
				t.Fatalf("term %+v of %q", term, query)
			}
		}
		end := 0
		for w := range Words(content) {
			if w.Start < end || w.End <= w.Start || w.Fold != decomposedFold(content[w.Start:w.End]) {
				t.Fatalf("word %+v of %q after %d", w, content, end)
			}
			for _, r := range content[w.Start:w.End] {
				if !IsWordRune(r) {
					t.Fatalf("word %+v of %q holds %q", w, content, r)
				}
			}
			end = w.End
		}
		if n := utf8.RuneCountInString(Snippet(content, terms)); n > SnippetRunes {
			t.Fatalf("snippet of %d runes", n)
		}
	})
}

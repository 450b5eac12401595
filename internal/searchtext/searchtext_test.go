package searchtext_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memstore/memstore/internal/searchtext"
)

func TestFold(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"   ", "   "},
		{"config", "config"},
		{"ParseConfig", "parseconfig"},
		{"CAFÉ", "cafe"},
		{"Zürich", "zurich"},
		{"e\u0301", "e"}, // decomposed, as precomposed
		{"crème brûlée", "creme brulee"},
		{"ΕΛΛΗΝΙΚΆ", "ελληνικα"},
		{"İstanbul", "istanbul"},
		{"東京タワー", "東京タワー"},
		{"🎉", "🎉"},
		// Look-alikes and compatibility forms stay other letters, as in
		// the indexes.
		{"сafe", "сafe"}, // Cyrillic с
		{"ＣＡＦＥ", "ｃａｆｅ"}, // fullwidth
		{"ﬁle", "ﬁle"},   // ligature
		{"Straße", "straße"},
	}
	for _, tt := range tests {
		if got := searchtext.Fold(tt.in); got != tt.want {
			t.Errorf("Fold(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if searchtext.Fold("сafe") == searchtext.Fold("cafe") {
		t.Error("a Cyrillic look-alike folds to Latin")
	}
	long := strings.Repeat("É", 1<<20)
	if got := searchtext.Fold(long); got != strings.Repeat("e", 1<<20) {
		t.Errorf("Fold of %d bytes: %d bytes, not all e", len(long), len(got))
	}
}

func TestIsWordRune(t *testing.T) {
	for _, r := range "aZ09éßΩж東タ\u0301\ue000²Ⅻ" {
		if !searchtext.IsWordRune(r) {
			t.Errorf("%q is not a word rune", r)
		}
	}
	for _, r := range " \t\n\x00-_'’.\"@/\\🎉\u00a0\u3000" {
		if searchtext.IsWordRune(r) {
			t.Errorf("%q is a word rune", r)
		}
	}
}

func TestWords(t *testing.T) {
	type W = searchtext.Word
	tests := []struct {
		in   string
		want []W
	}{
		{"", nil},
		{" \t\n ", nil},
		{"-- ... --", nil},
		{"one", []W{{0, 3, "one"}}},
		{"Hello, wörld!", []W{{0, 5, "hello"}, {7, 13, "world"}}},
		{"parse_config v2 2026-11-03", []W{{0, 5, "parse"}, {6, 12, "config"}, {13, 15, "v2"}, {16, 20, "2026"}, {21, 23, "11"}, {24, 26, "03"}}},
		{"don't", []W{{0, 3, "don"}, {4, 5, "t"}}},
		{"ÉCLAIRS au café", []W{{0, 8, "eclairs"}, {9, 11, "au"}, {12, 17, "cafe"}}},
		{"x\xffy", []W{{0, 1, "x"}, {2, 3, "y"}}}, // not UTF-8: not a word
		{"e\u0301te\u0301", []W{{0, 7, "ete"}}},   // combining marks are part of the word
		{"東京 🎉タワー", []W{{0, 6, "東京"}, {11, 20, "タワー"}}},
	}
	for _, tt := range tests {
		if got := slices.Collect(searchtext.Words(tt.in)); !slices.Equal(got, tt.want) {
			t.Errorf("Words(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	// A caller may stop early.
	n := 0
	for range searchtext.Words("a b c d") {
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("stopped after %d words, want 2", n)
	}
	long := strings.Repeat("word ", 200_000)
	if n := len(slices.Collect(searchtext.Words(long))); n != 200_000 {
		t.Errorf("%d words in 200,000", n)
	}
}

// texts are the terms' texts.
func texts(terms []searchtext.Term) []string {
	var out []string
	for _, t := range terms {
		out = append(out, t.Text)
	}
	return out
}

func TestParseQuery(t *testing.T) {
	many := make([]string, 40)
	for i := range many {
		many[i] = fmt.Sprintf("word%d", i)
	}
	tests := []struct {
		name, query string
		want        []string
	}{
		{"empty", "", nil},
		{"whitespace", " \t\n\u00a0\u3000 ", nil},
		{"control characters", "\x00\x01\x7f", nil},
		{"words", "deploy friday", []string{"deploy", "friday"}},
		{"question", "what did we decide about the release?", []string{"decide", "release"}},
		{"stop words only", "the of and", []string{"the", "of", "and"}},
		{"stop words only, repeated", strings.Repeat("the of and ", 1000), []string{"the", "of", "and"}},
		{"typographic apostrophe", "don’t panic", []string{"panic"}},
		{"a contraction alone", "Don't", []string{"Don't"}},
		{"possessive", "Tom's band", []string{"Tom", "band"}},
		{"typographic possessive", "TOM’S", []string{"TOM"}},
		{"only a possessive", "'s", []string{"s"}},
		{"punctuation around", `"apple pie" (v2); col:value`, []string{"apple", "pie", "v2", "col:value"}},
		{"punctuation alone, short", "-- ^", nil},
		{"punctuation alone, long enough", "---", []string{"---"}},
		{"separated by a control character", "ap\x00ple", []string{"ap", "ple"}},
		{"once each, folded", "Café café CAFE cafe\u0301", []string{"Café"}},
		{"look-alikes are other terms", "cafe сafe ｃａｆｅ", []string{"cafe", "сafe", "ｃａｆｅ"}},
		{"unicode", "Zürich 東京タワー 🎉", []string{"Zürich", "東京タワー"}},
		{"an emoji alone, short", "🎉", nil},
		{"at most MaxTerms", strings.Join(many, " "), many[:searchtext.MaxTerms]},
		{"stop words do not count", "the " + strings.Join(many, " the "), many[:searchtext.MaxTerms]},
		{"long, repeated", strings.Repeat("needle ", 100_000), []string{"needle"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := texts(searchtext.ParseQuery(tt.query)); !slices.Equal(got, tt.want) {
				t.Errorf("ParseQuery(%.40q) = %q, want %q", tt.query, got, tt.want)
			}
		})
	}
	long := make([]string, 100_000)
	for i := range long {
		long[i] = fmt.Sprint("w", i)
	}
	if got := searchtext.ParseQuery(strings.Join(long, " ")); len(got) != searchtext.MaxTerms {
		t.Errorf("%d terms of 100,000 distinct words, want %d", len(got), searchtext.MaxTerms)
	}
}

// TestTerms checks what a term tells the backends: its words, folded and
// not, whether it is long enough for a substring, and whether it may be
// inside longer words.
func TestTerms(t *testing.T) {
	tests := []struct {
		query string
		want  searchtext.Term
		plain bool
	}{
		{"ParseConfig", searchtext.Term{Text: "ParseConfig", Fold: "parseconfig", Words: []string{"parseconfig"}, Folds: []string{"parseconfig"}, Substring: true}, true},
		{"ZÜRICH", searchtext.Term{Text: "ZÜRICH", Fold: "zurich", Words: []string{"zürich"}, Folds: []string{"zurich"}, Substring: true}, true},
		{"2026-11-03", searchtext.Term{Text: "2026-11-03", Fold: "2026-11-03", Words: []string{"2026", "11", "03"}, Folds: []string{"2026", "11", "03"}, Substring: true}, false},
		{"v2", searchtext.Term{Text: "v2", Fold: "v2", Words: []string{"v2"}, Folds: []string{"v2"}}, false},
		{"ab", searchtext.Term{Text: "ab", Fold: "ab", Words: []string{"ab"}, Folds: []string{"ab"}}, true},
		{"parse_config", searchtext.Term{Text: "parse_config", Fold: "parse_config", Words: []string{"parse", "config"}, Folds: []string{"parse", "config"}, Substring: true}, false},
		{"...", searchtext.Term{Text: "...", Fold: "...", Substring: true}, false},
	}
	for _, tt := range tests {
		got := searchtext.ParseQuery(tt.query)
		if len(got) != 1 {
			t.Errorf("%q: %d terms %+v, want 1", tt.query, len(got), got)
			continue
		}
		g := got[0]
		if g.Text != tt.want.Text || g.Fold != tt.want.Fold || !slices.Equal(g.Words, tt.want.Words) || !slices.Equal(g.Folds, tt.want.Folds) || g.Substring != tt.want.Substring {
			t.Errorf("%q: %+v, want %+v", tt.query, g, tt.want)
		}
		if g.Plain() != tt.plain {
			t.Errorf("%q: plain %v, want %v", tt.query, g.Plain(), tt.plain)
		}
	}
}

func TestStopSets(t *testing.T) {
	tests := []struct {
		word             string
		queries, prompts bool
	}{
		{"the", true, true},
		{"what", true, true},
		{"don't", true, true},
		{"don’t", true, true},
		{"herself", true, true},
		{"few", true, false},
		{"down", true, false},
		{"please", false, true},
		{"sure", false, true},
		{"things", false, true},
		{"release", false, false},
		{"", false, false},
		{"The", false, false}, // words are given folded
	}
	for _, tt := range tests {
		if got := searchtext.Queries.Has(tt.word); got != tt.queries {
			t.Errorf("Queries.Has(%q) = %v", tt.word, got)
		}
		if got := searchtext.Prompts.Has(tt.word); got != tt.prompts {
			t.Errorf("Prompts.Has(%q) = %v", tt.word, got)
		}
	}
}

// TestSnippet checks where snippets are cut.
func TestSnippet(t *testing.T) {
	words := strings.Repeat("alpha beta gamma delta ", 30)
	long := strings.Repeat("lorem ipsum dolor ", 60_000) // about a megabyte
	tests := []struct {
		name, content, query string
		check                func(snippet string) bool
	}{
		{"at the start", "needle " + words, "needle", func(s string) bool { return strings.HasPrefix(s, "needle alpha") && strings.HasSuffix(s, "…") }},
		{"at the end", words + "needle.", "needle", func(s string) bool { return strings.HasPrefix(s, "…") && strings.HasSuffix(s, "delta needle.") }},
		{"stemmed", words + "the needles were " + words, "needle", func(s string) bool { return strings.Contains(s, "the needles were") }},
		{"part of a word", words + "haystackneedlehaystack " + words, "stackneed", func(s string) bool { return strings.Contains(s, "haystackneedlehaystack") }},
		{"most terms", "apple " + words + "apple pear plum " + words + "pear", "apple pear plum", func(s string) bool { return strings.Contains(s, "apple pear plum") }},
		{"one long word", "x " + strings.Repeat("needle", 100), "needle", func(s string) bool { return strings.HasSuffix(s, "…") }},
		{"folded", words + "Crème BRÛLÉE " + words, "creme brulee", func(s string) bool { return strings.Contains(s, "Crème BRÛLÉE") }},
		{"a phrase across punctuation", words + "released on 2026-11-03 at noon " + words, "2026-11-03", func(s string) bool { return strings.Contains(s, "released on 2026-11-03 at noon") }},
		{"multibyte", strings.Repeat("éàü ", 60) + "needle " + strings.Repeat("東京タワー ", 60), "needle", func(s string) bool { return strings.Contains(s, "éàü needle 東京タワー") }},
		{"in the middle of a megabyte", long + "needle " + long, "needle", func(s string) bool {
			return strings.HasPrefix(s, "…") && strings.HasSuffix(s, "…") && strings.Contains(s, "needle")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sn := searchtext.Snippet(tt.content, searchtext.ParseQuery(tt.query))
			if n := utf8.RuneCountInString(sn); n > searchtext.SnippetRunes || n < searchtext.SnippetRunes/2 || !tt.check(sn) {
				t.Errorf("snippet of %d characters: %q", n, sn)
			}
		})
	}
}

// TestSnippetWhole checks the snippets of content that fits, and of no
// match.
func TestSnippetWhole(t *testing.T) {
	tests := []struct{ content, query, want string }{
		{"the  needle\n\tin\u00a0a haystack ", "needle", "the needle in a haystack"},
		{"no match here", "needle", ""},
		{"", "needle", ""},
		{" \n\t ", "needle", ""},
		{"a needle", "", ""}, // no terms
		{"Zürich", "zurich", "Zürich"},
		{"ｃａｆｅ", "cafe", ""}, // a look-alike is not a match
	}
	for _, tt := range tests {
		if got := searchtext.Snippet(tt.content, searchtext.ParseQuery(tt.query)); got != tt.want {
			t.Errorf("Snippet(%q, %q) = %q, want %q", tt.content, tt.query, got, tt.want)
		}
	}
}

func TestScore(t *testing.T) {
	// Every hit of the first tier ranks above every hit of the second,
	// and within a tier, more is better.
	words := []float64{0, 0.5, 3, 1e9}
	for i, b := range words {
		if s := searchtext.Score(b, searchtext.TierInside); s < 0 || s >= 1 {
			t.Errorf("Score(%g, TierInside) = %g, not in [0, 1)", b, s)
		}
		if s := searchtext.Score(b, searchtext.TierWords); s < 1 || s >= 2 {
			t.Errorf("Score(%g, TierWords) = %g, not in [1, 2)", b, s)
		}
		if i > 0 && searchtext.Score(b, searchtext.TierWords) <= searchtext.Score(words[i-1], searchtext.TierWords) {
			t.Errorf("Score(%g) is not above Score(%g)", b, words[i-1])
		}
	}
	if searchtext.Score(0, searchtext.TierWords) <= searchtext.Score(1e9, searchtext.TierInside) {
		t.Error("a TierInside hit ranks with TierWords")
	}
}

func TestBM25(t *testing.T) {
	rare, common := searchtext.IDF(1, 100), searchtext.IDF(60, 100)
	if !(rare > common && common > 0 && searchtext.IDF(100, 100) > 0) {
		t.Errorf("IDF: rare %g, common %g, everywhere %g", rare, common, searchtext.IDF(100, 100))
	}
	base := searchtext.BM25(rare, 1, 10, 10)
	switch {
	case searchtext.BM25(rare, 0, 10, 10) != 0:
		t.Error("a term not found scores")
	case searchtext.BM25(rare, 2, 10, 10) <= base:
		t.Error("a term found twice scores no more than once")
	case searchtext.BM25(rare, 100, 10, 10) >= rare*(searchtext.BM25K1+1):
		t.Error("repeating a term adds without bound")
	case searchtext.BM25(rare, 1, 40, 10) >= base:
		t.Error("a long document's match scores no less than an average one's")
	case searchtext.BM25(common, 1, 10, 10) >= base:
		t.Error("a common term scores no less than a rare one")
	}
}

func TestHighlights(t *testing.T) {
	text := "Running the Config loader; see parseConfig and New York weather."
	got := []string{}
	for _, h := range searchtext.Highlights(text, searchtext.ParseQuery("run config new-york")) {
		got = append(got, text[h[0]:h[1]])
	}
	want := []string{"Running", "Config", "parseConfig", "New York"}
	if !slices.Equal(got, want) {
		t.Errorf("Highlights = %q, want %q", got, want)
	}
	if h := searchtext.Highlights("nothing here", searchtext.ParseQuery("absent")); len(h) != 0 {
		t.Errorf("no match: %v", h)
	}
}

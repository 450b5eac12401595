package searchtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTerms bounds the terms of a query; later ones are ignored.
const MaxTerms = 16

// MinSubstringRunes is the shortest term looked up as a substring: the
// substring indexes hold runs of three characters (trigrams).
const MinSubstringRunes = 3

// A Term is one whitespace-separated piece of a query.
type Term struct {
	Text  string   // as written, without the punctuation around it
	Fold  string   // Text lower-cased and without diacritics
	Words []string // its words: runs of word runes, lower-cased
	Folds []string // its words folded, for the snippet
	// Substring says the term is long enough to be looked up as a
	// substring.
	Substring bool
}

// Plain says whether the term is one word of letters only, which may also
// be part of longer words ("config" in "ParseConfig").
func (t Term) Plain() bool {
	return len(t.Words) == 1 && strings.IndexFunc(t.Text, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
}

// possessives are the endings of a possessive, which is about its noun:
// "Tom's band".
var possessives = []string{"'s", "’s", "'S", "’S"}

// ParseQuery cuts a query into terms: its pieces between whitespace (and
// control characters) without the punctuation around them, possessives
// without their "'s", each once, and without stop words (Queries) unless
// the query has nothing else; at most MaxTerms of them.
func ParseQuery(text string) []Term {
	var terms, stops []Term
	seen := map[string]bool{}
	for _, chunk := range strings.FieldsFunc(text, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		if len(terms) == MaxTerms {
			break // the rest would be cut off
		}
		t := Term{Text: strings.TrimFunc(chunk, func(r rune) bool { return !IsWordRune(r) })}
		for _, s := range possessives {
			if base, ok := strings.CutSuffix(t.Text, s); ok && base != "" {
				t.Text = base
			}
		}
		if t.Text == "" {
			t.Text = chunk // only punctuation: found as a substring, if at all
		}
		t.Fold = Fold(t.Text)
		if seen[t.Fold] {
			continue
		}
		seen[t.Fold] = true
		t.Words = strings.FieldsFunc(strings.ToLower(t.Text), func(r rune) bool { return !IsWordRune(r) })
		for _, w := range t.Words {
			t.Folds = append(t.Folds, Fold(w))
		}
		t.Substring = utf8.RuneCountInString(t.Text) >= MinSubstringRunes
		switch {
		case len(t.Words) == 0 && !t.Substring:
			// Nothing an index can find.
		case Queries.Has(t.Fold):
			stops = append(stops, t)
		default:
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 {
		terms = stops
	}
	return terms[:min(len(terms), MaxTerms)]
}

// A StopSet is the stop words of one kind of text: words so common in it
// that they tell no memory from another, and cost the most to look up.
type StopSet uint8

const (
	// Queries are the stop words of search queries, questions and
	// statements. ParseQuery leaves them out only of a query that has
	// other terms, so the set can be broad. Leaving them out of questions
	// ("what did we decide about the release") was the largest gain
	// measured on conversational data.
	Queries StopSet = 1 << iota
	// Prompts are the stop words of a user's whole prompt, for recall,
	// which leaves them out always: a prompt of stop words only recalls
	// nothing. So the set keeps the words of quantity, place and time a
	// short prompt may be about ("few", "down", "off", "again"), which
	// Queries has, and adds the words of requests made to an agent
	// ("please make sure", "let us"), which say what to do, not which
	// memory is meant.
	Prompts
)

// stopWords holds every stop word, with the sets it is in.
var stopWords = map[string]StopSet{}

func init() {
	for sets, words := range map[StopSet]string{
		Queries | Prompts: `a about after all am an and any are aren't as at be because been before being but by can can't
			cannot could couldn't did didn't do does doesn't doing don't for from had hadn't has hasn't have haven't having he
			he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it
			it's its itself let's me more most mustn't my myself no nor not of on once only or other ought our ours ourselves
			out over own same shan't she she'd she'll she's should shouldn't so some such than that that's the their theirs
			them themselves then there there's these they they'd they'll they're they've this those through to too under until
			up very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while who
			who's whom why why's with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves`,
		Queries: `above again against below between both down during each few further off`,
		Prompts: `also just now will please let lets us make sure thing things`,
	} {
		for _, w := range strings.Fields(words) {
			stopWords[w] |= sets
		}
	}
}

// Has says whether word, folded, is a stop word of the set. A typographic
// apostrophe is taken for a straight one ("don’t").
func (s StopSet) Has(word string) bool {
	return stopWords[strings.ReplaceAll(word, "’", "'")]&s != 0
}

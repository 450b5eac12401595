package bm25_test

import (
	"testing"

	"github.com/memstore/memstore/internal/bm25"
)

// TestStem checks words from Porter's published vocabulary and output.
func TestStem(t *testing.T) {
	for w, want := range map[string]string{
		"caresses": "caress", "ponies": "poni", "cats": "cat", "feed": "feed", "agreed": "agre",
		"plastered": "plaster", "motoring": "motor", "sing": "sing", "conflated": "conflat",
		"troubled": "troubl", "sized": "size", "hopping": "hop", "falling": "fall", "filing": "file",
		"happy": "happi", "relational": "relat", "conditional": "condit", "rational": "ration",
		"digitizer": "digit", "operator": "oper", "hopefulness": "hope", "formality": "formal",
		"triplicate": "triplic", "electrical": "electr", "revival": "reviv", "allowance": "allow",
		"adjustment": "adjust", "adoption": "adopt", "effective": "effect", "probate": "probat",
		"controll": "control", "roll": "roll", "running": "run", "marathon": "marathon",
		"generalizations": "gener", "2026": "2026", "café": "café",
	} {
		if got := bm25.Stem(w); got != want {
			t.Errorf("Stem(%q) = %q, want %q", w, got, want)
		}
	}
}

func TestScores(t *testing.T) {
	ix := bm25.New()
	ix.Add("the cat sat on the mat")
	ix.Add("dogs are running in the park, dogs everywhere")
	ix.Add("a dog ran")
	s := ix.Scores("Dog running")
	if !(s[1] > s[2] && s[2] > 0 && s[0] == 0) {
		t.Errorf("scores %v: want the running dogs first, then the dog, not the cat", s)
	}
	if got := bm25.Top(s, 5); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("Top = %v, want [1 2]", got)
	}
}

// TestTopTies: among documents of equal score the later added comes
// first, as memstore ranks the newer of two equal memories first, so
// that a comparison of the two rankings does not turn on the order of
// equals.
func TestTopTies(t *testing.T) {
	ix := bm25.New()
	for _, text := range []string{"we adopted a dog", "the weather", "we adopted a dog", "we adopted a dog"} {
		ix.Add(text)
	}
	if got := bm25.Top(ix.Scores("adopted dog"), 3); len(got) != 3 || got[0] != 3 || got[1] != 2 || got[2] != 0 {
		t.Errorf("Top = %v, want [3 2 0]", got)
	}
}

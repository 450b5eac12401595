package searchtext_test

import (
	"slices"
	"testing"

	"github.com/memstore/memstore/internal/searchtext"
)

func TestTurnOf(t *testing.T) {
	for p, want := range map[string]searchtext.Turn{
		"/chats/ana/2024-05-01/007.md": {Conversation: "/chats/ana/2024-05-01/", N: 7},
		"/c1/turn-12.md":               {Conversation: "/c1/", N: 12},
		"/conversations/c01/0003.md":   {Conversation: "/conversations/c01/", N: 3},
		"/t5":                          {Conversation: "/", N: 5},
	} {
		if got, ok := searchtext.TurnOf(p); !ok || got != want {
			t.Errorf("TurnOf(%q) = %+v, %v; want %+v", p, got, ok, want)
		}
	}
	for _, p := range []string{"/notes/deploy.md", "/2024/notes.md", "/"} {
		if got, ok := searchtext.TurnOf(p); ok {
			t.Errorf("TurnOf(%q) = %+v; want no turn", p, got)
		}
	}
	// A number too long for a turn reads its first nine digits.
	if got, _ := searchtext.TurnOf("/c/12345678901234567890.md"); got.N != 123456789 {
		t.Errorf("a long number: %+v", got)
	}
}

func TestContextScores(t *testing.T) {
	paths := []string{"/a/1.md", "/a/2.md", "/a/3.md", "/a/4.md", "/b/2.md", "/notes/x.md", "/notes/y.md"}
	scores := []float64{4, 0, 0, 8, 100, 1, 2}
	got := searchtext.ContextScores(paths, scores)
	want := []float64{
		4,                  // 2 and 3 score nothing
		0 + 0.5*4 + 0.25*8, // between 1 and 4
		0 + 0.5*8 + 0.25*4, // next to 4, two from 1
		8 + 0,              // 2 and 3 score nothing; 1 is three away
		100,                // another conversation: alone
		1,                  // no turns: as it was
		2,
	}
	if !slices.Equal(got, want) {
		t.Errorf("ContextScores = %v, want %v", got, want)
	}
	if scores[1] != 0 {
		t.Error("ContextScores changed its input")
	}
}

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

func TestNeighbourPaths(t *testing.T) {
	for p, want := range map[string][]string{
		"/c/0007.md":       {"/c/0006.md", "/c/0008.md", "/c/0005.md", "/c/0009.md"},
		"/c/turn-10.md":    {"/c/turn-09.md", "/c/turn-9.md", "/c/turn-11.md", "/c/turn-08.md", "/c/turn-8.md", "/c/turn-12.md"},
		"/c/9.md":          {"/c/8.md", "/c/10.md", "/c/7.md", "/c/11.md"},
		"/c/1":             {"/c/0", "/c/2", "/c/3"},
		"/c7/2024-05-1.md": {"/c7/2023-05-1.md", "/c7/2025-05-1.md", "/c7/2022-05-1.md", "/c7/2026-05-1.md"},
		"/c/999999999.md":  {"/c/999999998.md", "/c/999999997.md"},
	} {
		if got := searchtext.NeighbourPaths(p); !slices.Equal(got, want) {
			t.Errorf("NeighbourPaths(%q) = %q, want %q", p, got, want)
		}
		// Each one is a turn of the same conversation, as TurnOf reads it.
		self, _ := searchtext.TurnOf(p)
		for _, n := range searchtext.NeighbourPaths(p) {
			if got, ok := searchtext.TurnOf(n); !ok || got.Conversation != self.Conversation || got.N == self.N || max(got.N-self.N, self.N-got.N) > len(searchtext.NeighbourWeights) {
				t.Errorf("%q: neighbour %q is turn %+v", p, n, got)
			}
		}
	}
	for _, p := range []string{"/notes/deploy.md", "/c/12345678901234567890.md", "/"} {
		if got := searchtext.NeighbourPaths(p); got != nil {
			t.Errorf("NeighbourPaths(%q) = %q, want none", p, got)
		}
	}
}

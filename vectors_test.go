package memstore_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memstore/memstore"
)

// The model reads a memory's path and the start of its content, cut at a
// character boundary.
func TestEmbeddingText(t *testing.T) {
	if got := memstore.EmbeddingText("/a.md", "hello"); got != "/a.md\nhello" {
		t.Errorf("EmbeddingText = %q", got)
	}
	long := strings.Repeat("é", memstore.MaxEmbeddingText) // 2 bytes each
	got := memstore.EmbeddingText("/b.md", long)
	if len(got) > memstore.MaxEmbeddingText || !utf8.ValidString(got) || !strings.HasPrefix(got, "/b.md\né") {
		t.Errorf("a long memory's text: %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}

// A claim's share: equal parts, and what a workspace leaves goes to the
// others.
func TestClaimShared(t *testing.T) {
	queued := map[string]int{"a": 100, "b": 1, "c": 3}
	took := map[string]int{}
	err := memstore.ClaimShared([]string{"a", "b", "c"}, 12, func(w string, n int) (int, error) {
		got := min(n, queued[w])
		queued[w] -= got
		took[w] += got
		return got, nil
	})
	if err != nil || took["a"] != 8 || took["b"] != 1 || took["c"] != 3 {
		t.Fatalf("took %v, %v: want b and c all they have, a the rest of 12", took, err)
	}
}

package searchtext

import (
	"fmt"
	"testing"
)

// TestFoldByRune checks Fold's shortcut, rune by rune through latinFolds,
// against its definition, for every rune alone and beside others: a rune
// of the table, a combining mark, ASCII.
func TestFoldByRune(t *testing.T) {
	for r := rune(0); r < 0x3000; r++ {
		for _, f := range []string{"%c", "A%cz", "É%cé", "%c\u0301", "\u0301%c", "%c東"} {
			if s := fmt.Sprintf(f, r); Fold(s) != decomposedFold(s) {
				t.Errorf("Fold(%q) = %q, want %q", s, Fold(s), decomposedFold(s))
			}
		}
	}
}

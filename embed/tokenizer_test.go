package embed

import (
	"strings"
	"testing"
)

// A model's limit on word length is held to maxWordChars: cutting a word
// into pieces costs the square of its length, and a memory may hold one
// long word made to cost it.
func TestLongWordIsUnknown(t *testing.T) {
	tk, err := parseTokenizer([]byte(`{"model":{"type":"WordPiece","max_input_chars_per_word":100000000,"vocab":{"[UNK]":0,"a":1,"##a":2}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ids := tk.encode(strings.Repeat("a", maxWordChars), MaxTokens); len(ids) != maxWordChars {
		t.Errorf("a word of %d characters: %d tokens, want one a character", maxWordChars, len(ids))
	}
	if ids := tk.encode(strings.Repeat("a", maxWordChars+1), MaxTokens); len(ids) != 0 {
		t.Errorf("a word of %d characters: %d tokens, want none (unknown)", maxWordChars+1, len(ids))
	}
}

package main

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestToolAnswerBytes: an answer line is byte for byte what printJSON
// writes for it (encoding/json, then escapeJSON), for text with every
// kind of character either escapes: quotes, backslashes, C0 and C1
// controls, DEL, invalid UTF-8, line separators, format characters in
// and beyond the first plane, and plain text around them.
func TestToolAnswerBytes(t *testing.T) {
	pieces := []string{
		"", "plain text", "é", "日本", "😀", "\"", "\\", "\b", "\f", "\n", "\r", "\t", "\x00", "\x01",
		"\x1f", "\x7f", "\u0080", "\u009f", "\u00a0", "\u00ad", "\u061c", "\u200b", "\u200c", "\u200d",
		"\u200e", "\u2028", "\u2029", "\u202e", "\u2066", "\ufeff", "\ufffd", "\U000e0001", "\U0001bca0",
		"\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80", "<>&", "/memories/a.md",
	}
	r := rand.New(rand.NewPCG(29, 2))
	texts := append([]string(nil), pieces...)
	for range 5000 {
		var b strings.Builder
		for range 1 + r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	for range 2000 { // random bytes
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		texts = append(texts, string(b))
	}
	for range 2000 { // random runes
		var b []byte
		for range 1 + r.IntN(6) {
			b = utf8.AppendRune(b, rune(r.IntN(0x110000)))
		}
		texts = append(texts, string(b))
	}
	for _, text := range texts {
		for _, a := range []toolAnswer{{OK: true, Output: text}, {Error: text}} {
			var want bytes.Buffer
			if err := printJSON(&want, a); err != nil {
				t.Fatal(err)
			}
			if got := appendToolAnswer(nil, a); !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("%+q: answer %q, printJSON %q", text, got, want.Bytes())
			}
		}
	}
}

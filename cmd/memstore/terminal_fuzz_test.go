package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTermText: whatever the text, termText leaves nothing a terminal
// obeys, changes nothing twice, and keeps text without controls as it
// is; the writer, given the text in two writes, prints what termText
// prints of it at once; and JSON escaped by escapeJSON has nothing a
// terminal obeys and decodes to the same text.
func FuzzTermText(f *testing.F) {
	for _, s := range []string{"", "plain\n", "a\r\nb", "safe\rEVIL", hostileText, "\xff\xfe", "日本\u202e語", "👩\u200d💻", "\x1b]8;;x\x1b\\", "end\r"} {
		f.Add(s, 1)
	}
	f.Fuzz(func(t *testing.T, s string, split int) {
		for _, oneLine := range []bool{false, true} {
			out := termText(s, oneLine)
			if bad := obeyed(out); len(bad) > 0 {
				t.Fatalf("termText(%q, %v) = %q keeps %v", s, oneLine, out, bad)
			}
			if oneLine && strings.ContainsAny(out, "\n\r\t") {
				t.Fatalf("termText(%q, true) = %q breaks the line", s, out)
			}
			if again := termText(out, oneLine); again != out {
				t.Fatalf("termText(%q) = %q, and again %q", s, out, again)
			}
			if !needsTermText(s, oneLine) && out != s {
				t.Fatalf("termText(%q) = %q though nothing needed it", s, out)
			}
		}
		var b bytes.Buffer
		w := newTermWriter(&b)
		if split < 0 {
			split = -split
		}
		if len(s) > 0 {
			split %= len(s) + 1
			w.Write([]byte(s[:split]))
			w.Write([]byte(s[split:]))
		}
		w.Flush()
		if b.String() != termText(s, false) {
			t.Fatalf("written in two at %d: %q; at once: %q", split, b.String(), termText(s, false))
		}
		if !utf8.ValidString(s) {
			return
		}
		raw, _ := json.Marshal(s)
		esc := escapeJSON(raw)
		var back string
		if err := json.Unmarshal(esc, &back); err != nil || back != s {
			t.Fatalf("escapeJSON(%s) = %s decodes to %q, %v", raw, esc, back, err)
		}
		if bad := obeyed(string(esc)); len(bad) > 0 {
			t.Fatalf("escapeJSON(%s) = %s keeps %v", raw, esc, bad)
		}
	})
}

package memdir_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/memdir"
)

// lines is n lines of width w, each distinct, joined with LF.
func lines(n, w int) string {
	out := make([]string, n)
	for i := range out {
		tag := fmt.Sprintf("L%04d", i)
		out[i] = tag + strings.Repeat("x", w-len(tag))
	}
	return strings.Join(out, "\n")
}

// TestLoadIndexVectors checks every example of docs/memory-directory.md
// (MEMORY.md limits) and the edges around them: the lines kept, the reason
// in the warning, and that what is kept is a prefix of the input.
func TestLoadIndexVectors(t *testing.T) {
	const tail = ". Only part of it was loaded. Keep index entries to one line under ~200 chars; move detail into topic files."
	tests := []struct {
		name      string
		text      string
		wantLines int    // lines kept
		reason    string // "" when nothing is cut
	}{
		{"200x100", lines(200, 100), 200, ""},
		{"201x50", lines(201, 50), 200, "201 lines (limit: 200)"},
		{"100x300", lines(100, 300), 83, "29.4KB (limit: 24.4KB) — index entries are too long"},
		{"180x147", lines(180, 147), 168, "26KB (limit: 24.4KB) — index entries are too long"},
		{"250x124", lines(250, 124), 200, "250 lines and 30.5KB"},
		{"one 30000 line", strings.Repeat("y", 30000), 1, "29.3KB (limit: 24.4KB) — index entries are too long"},
		// Both limits, where the size is measured on the original: 201
		// lines over the size that, once cut to 200 lines, are under it.
		{"201x124 both", lines(201, 124), 200, "201 lines and 24.5KB"},
		{"empty", "", 1, ""},
		{"exactly 25000 units", strings.Repeat("z", 25000), 1, ""},
		{"25001 units", strings.Repeat("z", 25001), 1, "24.4KB (limit: 24.4KB) — index entries are too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := memdir.LoadIndex(tt.text)
			if tt.reason == "" {
				if x.Content != tt.text || x.Warning != "" || x.Truncated() {
					t.Fatalf("changed: truncated=%v warning=%q", x.Truncated(), x.Warning)
				}
				return
			}
			want := "> WARNING: MEMORY.md is " + tt.reason + tail
			if x.Warning != want {
				t.Fatalf("warning\n got %q\nwant %q", x.Warning, want)
			}
			kept, ok := strings.CutSuffix(x.Content, "\n\n"+want)
			if !ok {
				t.Fatalf("content does not end with the warning: %q", x.Content[max(0, len(x.Content)-200):])
			}
			if !strings.HasPrefix(tt.text, kept) {
				t.Fatal("the kept text is not a prefix of the index")
			}
			if n := strings.Count(kept, "\n") + 1; n != tt.wantLines {
				t.Errorf("kept %d lines, want %d", n, tt.wantLines)
			}
			if memdir.Units(kept) > memdir.MaxIndexUnits {
				t.Errorf("kept %d units, over the limit", memdir.Units(kept))
			}
		})
	}
}

// TestLoadIndexUnits checks that the size is counted in UTF-16 units, not
// bytes: characters outside the BMP count two, others one.
func TestLoadIndexUnits(t *testing.T) {
	tests := []struct {
		text  string
		units int
	}{
		{"abc", 3},
		{"café", 4},   // 5 bytes
		{"日本語", 3},    // 9 bytes
		{"😀", 2},      // 4 bytes
		{"a\xffb", 3}, // an invalid byte is one replacement character
		{strings.Repeat("é", 10), 10},
	}
	for _, tt := range tests {
		if got := memdir.Units(tt.text); got != tt.units {
			t.Errorf("Units(%q) = %d, want %d", tt.text, got, tt.units)
		}
	}
	// 12,600 two-byte characters are 25,200 bytes but 12,600 units: within
	// the limit.
	wide := strings.Repeat("é", 12600)
	if x := memdir.LoadIndex(wide); x.Truncated() {
		t.Errorf("%d units of two-byte characters were cut: %s", memdir.Units(wide), x.Warning)
	}
	// 12,600 emoji are 25,200 units: over it, and the cut never splits one.
	emoji := strings.Repeat("😀", 12600)
	x := memdir.LoadIndex(emoji)
	if !x.SizeCut {
		t.Fatal("25,200 units were not cut")
	}
	kept, _, _ := strings.Cut(x.Content, "\n\n")
	if kept != strings.Repeat("😀", 12500) {
		t.Errorf("kept %d units, want 25,000 in whole characters", memdir.Units(kept))
	}
}

// TestLoadIndexCutAtLimit checks that a line feed exactly at index 25,000
// counts as "at or before" the limit.
func TestLoadIndexCutAtLimit(t *testing.T) {
	text := strings.Repeat("a", 25000) + "\n" + strings.Repeat("b", 100)
	x := memdir.LoadIndex(text)
	kept, _, _ := strings.Cut(x.Content, "\n\n")
	if kept != strings.Repeat("a", 25000) {
		t.Errorf("kept %d units, want the 25,000 before the line feed", len(kept))
	}
}

// TestCleanIndex checks what is removed before counting: frontmatter,
// block HTML comments (not those inline or in code), and white space at
// the ends, JavaScript's way.
func TestCleanIndex(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"plain", "- [A](a.md) — a\n", "- [A](a.md) — a"},
		{"frontmatter", "---\ntitle: x\n---\n\n- [A](a.md) — a\n", "- [A](a.md) — a"},
		{"frontmatter CRLF", "---\r\ntitle: x\r\n---\r\n- [A](a.md) — a", "- [A](a.md) — a"},
		{"unclosed frontmatter kept", "---\ntitle: x\n- [A](a.md) — a", "---\ntitle: x\n- [A](a.md) — a"},
		{"block comment", "<!-- note\nspanning -->\n- [A](a.md) — a", "- [A](a.md) — a"},
		{"comment between entries", "- [A](a.md) — a\n<!-- hidden -->\n- [B](b.md) — b", "- [A](a.md) — a\n- [B](b.md) — b"},
		{"indented block comment", "   <!-- x -->\n- [A](a.md) — a", "- [A](a.md) — a"},
		{"text after the comment kept", "x\n<!-- x --> after\n- [A](a.md) — a", "x\n after\n- [A](a.md) — a"},
		{"inline comment kept", "- [A](a.md) — a <!-- x -->", "- [A](a.md) — a <!-- x -->"},
		{"unclosed comment kept", "<!-- open\n- [A](a.md) — a", "<!-- open\n- [A](a.md) — a"},
		{"comment in code kept", "```\n<!-- x -->\n```", "```\n<!-- x -->\n```"},
		{"comment after code removed", "```\ncode\n```\n<!-- x -->\nend", "```\ncode\n```\nend"},
		{"indented code comment kept", "x\n\n    <!-- x -->", "x\n\n    <!-- x -->"},
		{"JS white space trimmed", "\ufeff\u00a0 - [A](a.md) — a\u3000\n", "- [A](a.md) — a"},
		{"NEL is not JS white space", "\u0085a", "\u0085a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := memstore.CleanIndex(tt.raw); got != tt.want {
				t.Errorf("CleanIndex(%q)\n got %q\nwant %q", tt.raw, got, tt.want)
			}
		})
	}
	// The limits apply to the cleaned text: 250 lines of comment do not
	// count.
	raw := "<!--\n" + strings.Repeat("comment\n", 250) + "-->\n- [A](a.md) — a"
	if x := memdir.LoadIndex(raw); x.Truncated() || x.Lines != 1 {
		t.Errorf("comment lines counted: %d lines, %s", x.Lines, x.Warning)
	}
}

func TestFormatSize(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{
		{0, "0 bytes"},
		{1023, "1023 bytes"},
		{1024, "1KB"},
		{1280, "1.3KB"}, // 1.25 exactly: halves round up, as toFixed does
		{25000, "24.4KB"},
		{26639, "26KB"},
		{30099, "29.4KB"},
		{31249, "30.5KB"},
		{1048575, "1024KB"},
		{1048576, "1MB"},
		{1572864, "1.5MB"},
		{3 << 30, "3GB"},
	}
	for _, tt := range tests {
		if got := memdir.FormatSize(tt.n); got != tt.want {
			t.Errorf("FormatSize(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestReadIndex(t *testing.T) {
	dir := t.TempDir()
	x, err := memdir.ReadIndex(filepath.Join(dir, "MEMORY.md"))
	if err != nil || x.Content != "" {
		t.Fatalf("missing index: %+v, %v", x, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte(lines(201, 10)), 0o600); err != nil {
		t.Fatal(err)
	}
	x, err = memdir.ReadIndex(filepath.Join(dir, "MEMORY.md"))
	if err != nil || !x.LinesCut || x.Lines != 201 {
		t.Fatalf("201 lines: %+v, %v", x.Lines, err)
	}
	if _, err := memdir.ReadIndex(dir); err == nil {
		t.Error("reading a directory as the index did not fail")
	}
}

// bigIndex writes an index of about size bytes: lines of about 100
// characters, with a comment block every 500 lines.
func bigIndex(tb testing.TB, size int) string {
	tb.Helper()
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		if i%500 == 0 {
			b.WriteString("<!-- section kept by hand -->\n")
		}
		fmt.Fprintf(&b, "- [Memory %d](memory_%d.md) — what memory %d is about, in one line of about a hundred chars\n", i, i, i)
	}
	p := filepath.Join(tb.TempDir(), "MEMORY.md")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkPrompt measures memdir prompt's work on a 1 MB index: reading
// and loading it, then writing the prompt with and without a limit.
func BenchmarkPrompt(b *testing.B) {
	p := bigIndex(b, 1<<20)
	for _, max := range []int{0, 10_000} {
		b.Run(fmt.Sprintf("max=%d", max), func(b *testing.B) {
			for b.Loop() {
				x, err := memdir.ReadIndex(p)
				if err != nil {
					b.Fatal(err)
				}
				s, _ := memdir.Prompt{Dir: filepath.Dir(p), Index: x}.Render(max)
				if len(s) < 1000 {
					b.Fatal("short prompt")
				}
			}
		})
	}
}

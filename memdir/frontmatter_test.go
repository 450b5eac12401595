package memdir_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore/memdir"
)

// TestParseFrontmatterShapes reads both shapes of frontmatter and the YAML
// forms memory files use (docs/memory-directory.md, Topic files).
func TestParseFrontmatterShapes(t *testing.T) {
	modified := time.Date(2026, 9, 1, 12, 34, 56, 789e6, time.UTC)
	tests := []struct {
		name, text string
		want       memdir.Frontmatter
		body       string
	}{
		{
			name: "older shape",
			text: "---\nname: Testing\ndescription: how tests run here\ntype: feedback\n---\nUse real databases.\n",
			want: memdir.Frontmatter{Name: "Testing", Description: "how tests run here", Type: "feedback"},
			body: "Use real databases.\n",
		},
		{
			name: "newer shape",
			text: "---\nname: Testing\ndescription: how tests run here\nmetadata:\n  type: project\n  modified: 2026-09-01T12:34:56.789Z\n---\nbody",
			want: memdir.Frontmatter{Name: "Testing", Description: "how tests run here", Type: "project", Modified: modified, ModifiedRaw: "2026-09-01T12:34:56.789Z"},
			body: "body",
		},
		{
			name: "metadata wins over the top level",
			text: "---\nname: n\ntype: user\nmetadata:\n    type: reference\n---\n",
			want: memdir.Frontmatter{Name: "n", Type: "reference"},
		},
		{
			name: "quoted, commented and CRLF",
			text: "---\r\nname: \"Deploy: the \\\"blue\\\" way\"\r\ndescription: 'it''s Friday' # when\r\ntype: project # a comment\r\n---\r\nx",
			want: memdir.Frontmatter{Name: `Deploy: the "blue" way`, Description: "it's Friday", Type: "project"},
			body: "x",
		},
		{
			name: "folded and literal blocks",
			text: "---\nname: n\ndescription: >\n  one line\n  folded\ntype: user\nnotes: |\n  a\n  b\n---\n",
			want: memdir.Frontmatter{Name: "n", Description: "one line folded", Type: "user"},
		},
		{
			name: "lists skipped, date-only modified",
			text: "---\nname: n\ntags:\n  - a\n  - b\nmetadata:\n  type: user\n  modified: 2026-01-02\n  tags:\n    - c\n---\n",
			want: memdir.Frontmatter{Name: "n", Type: "user", Modified: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), ModifiedRaw: "2026-01-02"},
		},
		{
			name: "plain value continued on the next line",
			text: "---\nname: n\ndescription: a long\n  description\n---\n",
			want: memdir.Frontmatter{Name: "n", Description: "a long description"},
		},
		{
			name: "modified that does not parse",
			text: "---\nname: n\nmodified: yesterday\n---\n",
			want: memdir.Frontmatter{Name: "n", ModifiedRaw: "yesterday"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, body, err := memdir.ParseFrontmatter(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if fm.Name != tt.want.Name || fm.Description != tt.want.Description || fm.Type != tt.want.Type ||
				!fm.Modified.Equal(tt.want.Modified) || fm.ModifiedRaw != tt.want.ModifiedRaw {
				t.Errorf("got %+v\nwant %+v", fm, tt.want)
			}
			if body != tt.body {
				t.Errorf("body %q, want %q", body, tt.body)
			}
		})
	}
}

func TestParseFrontmatterErrors(t *testing.T) {
	tests := []struct {
		name, text, err string
	}{
		{"none", "# Title\ntext", "no frontmatter"},
		{"not closed", "---\nname: n\n", "no frontmatter"},
		{"not at the start", "\n---\nname: n\n---\n", "no frontmatter"},
		{"not key: value", "---\nname: n\njust words\n---\n", "line 3: expected 'key: value'"},
		{"no space after the colon", "---\nname:n\n---\n", "line 2: expected 'key: value'"},
		{"unclosed quote", "---\nname: \"n\n---\n", "line 2: the quoted value is not closed"},
		{"text after the quote", "---\nname: 'n' x\n---\n", "line 2: text after the closing quote"},
		{"stray indentation", "---\n  name: n\n---\n", "line 2: unexpected indentation"},
		{"tab indentation", "---\nmetadata:\n\ttype: user\n---\n", "line 3: tabs cannot indent YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, body, err := memdir.ParseFrontmatter(tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
			if tt.err == "no frontmatter" && (!errors.Is(err, memdir.ErrNoFrontmatter) || body != tt.text) {
				t.Errorf("no frontmatter: err %v, body %q", err, body)
			}
		})
	}
}

// TestIndexLine checks the index-line format both ways
// (docs/memory-directory.md, Index lines).
func TestIndexLine(t *testing.T) {
	parse := []struct {
		line string
		want memdir.IndexLine
		ok   bool
	}{
		{"- [Testing](feedback_testing.md) — use real databases", memdir.IndexLine{Title: "Testing", File: "feedback_testing.md", Hook: "use real databases"}, true},
		{"- [Team style](team/style.md) — tabs", memdir.IndexLine{Title: "Team style", File: "team/style.md", Hook: "tabs"}, true},
		{"- [No hook](a.md)", memdir.IndexLine{Title: "No hook", File: "a.md"}, true},
		{"- [Spaces](my%20notes.md) — x", memdir.IndexLine{Title: "Spaces", File: "my notes.md", Hook: "x"}, true},
		{"- [Dash](a.md) - hyphen instead of an em dash", memdir.IndexLine{}, false},
		{"* [Star](a.md) — x", memdir.IndexLine{}, false},
		{"Some prose about memory.", memdir.IndexLine{}, false},
		{"- [](a.md) — empty title", memdir.IndexLine{}, false},
	}
	for _, tt := range parse {
		got, ok := memdir.ParseIndexLine(tt.line)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseIndexLine(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}

	format := []struct {
		l    memdir.IndexLine
		want string
	}{
		{memdir.IndexLine{Title: "Testing", File: "t.md", Hook: "real databases"}, "- [Testing](t.md) — real databases"},
		{memdir.IndexLine{Title: "A [bracketed]\ntitle", File: "my notes (1).md", Hook: "  spread\n over lines "}, "- [A  bracketed  title](my%20notes%20%281%29.md) — spread over lines"},
		{memdir.IndexLine{Title: "T", File: "t.md"}, "- [T](t.md)"},
	}
	for _, tt := range format {
		if got := tt.l.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.l, got, tt.want)
		}
		back, ok := memdir.ParseIndexLine(tt.want)
		if !ok || back.File != tt.l.File {
			t.Errorf("%q does not parse back to %q: %+v", tt.want, tt.l.File, back)
		}
	}

	// A long hook is shortened so that the line stays under 150 units.
	long := memdir.IndexLine{Title: "Deploys", File: "deploys.md", Hook: strings.Repeat("détail ", 40)}
	s := long.String()
	if u := memdir.Units(s); u > memdir.IndexLineTarget || !strings.HasSuffix(s, "…") {
		t.Errorf("long hook: %d units: %q", u, s)
	}
}

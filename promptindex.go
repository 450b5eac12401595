package memstore

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MEMORY.md is the index of a memory directory: the one file an agent
// (Claude Code, memdir) loads into its prompt at the start, up to a cap of
// lines and size, cutting the rest. The server refuses a MEMORY.md that
// the cap would cut (ContentRules), as the hosted API does, so that a
// team's index never loses lines silently; memdir loads and lints the
// index by the same measure.

// The cap on the part of MEMORY.md that is loaded
// (docs/memory-directory.md, MEMORY.md limits). The size is counted in
// UTF-16 code units, the way Claude Code measures a string's length,
// though Claude Code names it in bytes.
const (
	MaxIndexLines = 200
	MaxIndexUnits = 25_000
)

// IndexName is the index's file name.
const IndexName = "MEMORY.md"

// IndexPath is the memory that is a store's index, and the only one the
// cap applies to: a store mounted as a memory directory (Claude Code's
// team memory maps a store's root to its mount, the agent tools to
// /mnt/memory/<store>/) has its index at its root. A MEMORY.md deeper in
// the store is a topic file to such a client, which loads only the root's.
const IndexPath = "/" + IndexName

// A PromptIndex is MEMORY.md's text as it is measured: cleaned (see
// CleanIndex), with its lines (split on LF) and its length in UTF-16 code
// units.
type PromptIndex struct {
	Text         string
	Lines, Units int
}

// MeasureIndex cleans and measures the raw text of MEMORY.md.
func MeasureIndex(raw string) PromptIndex {
	text := CleanIndex(raw)
	return PromptIndex{Text: text, Lines: strings.Count(text, "\n") + 1, Units: TextUnits(text)}
}

// Over reports whether the cap cuts the index.
func (x PromptIndex) Over() bool { return x.Lines > MaxIndexLines || x.Units > MaxIndexUnits }

// CleanIndex is the text of MEMORY.md as it is measured and loaded: YAML
// frontmatter and block HTML comments removed, then trimmed of white
// space (the white space of JavaScript's String.prototype.trim, so that
// the count agrees with Claude Code's).
func CleanIndex(raw string) string {
	if _, body, ok := SplitFrontmatter(raw); ok {
		raw = body
	}
	return TrimJS(stripBlockComments(raw))
}

// TextUnits is the length of s in UTF-16 code units: one per character of the
// Basic Multilingual Plane, two for any other. An invalid UTF-8 byte counts
// as one, the replacement character it decodes to.
func TextUnits(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += utf16.RuneLen(r)
		i += size
	}
	return n
}

// isJSSpace reports whether JavaScript's trim removes r: its white space
// and line terminators.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// TrimJS trims s as JavaScript's String.prototype.trim does.
func TrimJS(s string) string { return strings.TrimFunc(s, isJSSpace) }

// stripBlockComments removes HTML comments that open a block (a line whose
// first non-blank characters, indented at most three spaces, are "<!--")
// outside fenced code, the way a Markdown renderer drops them. As in
// CommonMark, such a block ends at the line holding "-->"; text after the
// comment on that line is kept. A comment that is never closed, one inside
// a paragraph and one inside a code fence are left as they are.
func stripBlockComments(s string) string {
	if !strings.Contains(s, "<!--") {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	b.Grow(len(s))
	var fence string // the open fence's marker, "" outside code
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		body := strings.TrimLeft(line, " ")
		indent := len(line) - len(body)
		if fence != "" {
			if indent <= 3 && strings.HasPrefix(body, fence) && strings.Trim(strings.TrimRight(body, " \t\r\n"), fence[:1]) == "" {
				fence = ""
			}
			b.WriteString(line)
			continue
		}
		if indent <= 3 {
			if f := fenceMarker(body); f != "" {
				fence = f
				b.WriteString(line)
				continue
			}
		}
		if indent > 3 || !strings.HasPrefix(body, "<!--") {
			b.WriteString(line)
			continue
		}
		// Find the line that closes the comment block.
		end := -1
		for j := i; j < len(lines); j++ {
			from := 0
			if j == i {
				from = indent + 4
			}
			if strings.Contains(lines[j][from:], "-->") {
				end = j
				break
			}
		}
		if end < 0 {
			b.WriteString(line)
			continue
		}
		block := strings.Join(lines[i:end+1], "")
		residue := removeComments(block)
		if strings.TrimSpace(residue) != "" {
			b.WriteString(residue)
		}
		i = end
	}
	return b.String()
}

// fenceMarker is the marker of a code fence opened by line (three or more
// backticks or tildes), or "".
func fenceMarker(line string) string {
	if len(line) < 3 || (line[0] != '`' && line[0] != '~') {
		return ""
	}
	n := 0
	for n < len(line) && line[n] == line[0] {
		n++
	}
	if n < 3 || (line[0] == '`' && strings.Contains(line[n:], "`")) {
		return ""
	}
	return line[:n]
}

// removeComments removes every closed "<!-- ... -->" span of s.
func removeComments(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "<!--")
		if i < 0 {
			break
		}
		j := strings.Index(s[i+4:], "-->")
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		s = s[i+4+j+3:]
	}
	b.WriteString(s)
	return b.String()
}

// SplitFrontmatter splits text into its frontmatter block (the lines
// between an opening line "---" and the next line "---") and the body
// after the closing line. ok is false when text does not start with a
// complete block.
func SplitFrontmatter(text string) (block, body string, ok bool) {
	first, rest, found := strings.Cut(text, "\n")
	if !found || strings.TrimRight(first, " \t\r") != "---" {
		return "", text, false
	}
	for i := 0; i <= len(rest); {
		j := strings.IndexByte(rest[i:], '\n')
		end := len(rest)
		if j >= 0 {
			end = i + j
		}
		if strings.TrimRight(rest[i:end], " \t\r") == "---" {
			body = ""
			if end < len(rest) {
				body = rest[end+1:]
			}
			return rest[:i], body, true
		}
		if j < 0 {
			break
		}
		i = end + 1
	}
	return "", text, false
}

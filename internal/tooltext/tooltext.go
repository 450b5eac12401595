// Package tooltext holds the text that memstore writes for models the same
// way in several places: the numbered lines, occurrences of a string to
// replace and refused percent-escapes of the memory tool (memorytool) and
// the agent memory tools (agenttool), so that a model that knows one tool
// reads the other, and the Markdown list items of the memory prompt
// (agenttool) and the daily log (memdir).
package tooltext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// LineNumberWidth is the width of the right-aligned line numbers.
const LineNumberWidth = 6

// AppendNumbered appends lines to sb, each prefixed by its 1-based number
// (starting at first) right-aligned in LineNumberWidth and a TAB, separated
// by LF with no trailing LF.
func AppendNumbered(sb *strings.Builder, lines []string, first int) {
	var num [20]byte
	for i, line := range lines {
		if i > 0 {
			sb.WriteByte('\n')
		}
		n := strconv.AppendInt(num[:0], int64(first+i), 10)
		for pad := LineNumberWidth - len(n); pad > 0; pad-- {
			sb.WriteByte(' ')
		}
		sb.Write(n)
		sb.WriteByte('\t')
		sb.WriteString(line)
	}
}

// Occurrences returns the byte offsets where old starts in content,
// counting overlapping matches: "aa" in "aaa" is two occurrences, because
// replacing either would give a different text, so it is not unique.
func Occurrences(content, old string) []int {
	var at []int
	for off := 0; off <= len(content)-len(old); {
		i := strings.Index(content[off:], old)
		if i < 0 {
			break
		}
		at = append(at, off+i)
		_, n := utf8.DecodeRuneInString(content[off+i:])
		off += i + max(n, 1)
	}
	return at
}

// LineIndex returns the 0-based line (LF-separated) on which byte offset
// off lies.
func LineIndex(content string, off int) int {
	return strings.Count(content[:off], "\n")
}

// percentTraps are percent-escapes that only appear in a path to smuggle
// traversal past a filter that decodes: an encoded '.', '/', '\', '%', NUL,
// and the overlong-UTF-8 leads C0 and C1 (%c0%ae is an old spelling of '.').
var percentTraps = [...]string{"%2e", "%2f", "%5c", "%25", "%00", "%c0", "%c1"}

// PercentTrap returns the first of those escapes that p holds, in either
// case, or "". Nothing in memstore decodes paths, so they would be
// harmless literal names; they are refused anyway, as the memory tool docs
// advise, so that no layer that does decode can ever see them.
func PercentTrap(p string) string {
	if !strings.Contains(p, "%") {
		return ""
	}
	lower := strings.ToLower(p)
	for _, trap := range percentTraps {
		if strings.Contains(lower, trap) {
			return trap
		}
	}
	return ""
}

// AppendListItem appends the rest of a Markdown list item whose marker
// ("- ...") b already holds: the lines of text, trailing spaces trimmed,
// each line after the first indented two spaces so that it stays in the
// item (blank lines stay blank), and a final LF.
func AppendListItem(b *strings.Builder, text string) {
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, " \t")
		if i > 0 {
			b.WriteByte('\n')
			if line != "" {
				b.WriteString("  ")
			}
		}
		b.WriteString(line)
	}
	b.WriteByte('\n')
}

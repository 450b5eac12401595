package agenttool

import (
	"strconv"
	"strings"
)

// Line numbering is the memory tool's (internal/tooltext), so a model that
// knows one tool reads the other.

// splitLines returns the lines of a text as an editor counts them: a final
// line break ends the last line rather than starting an empty one, and an
// empty text has no lines.
func splitLines(content string) []string {
	if content == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(content, "\n"), "\n")
}

// count returns "1 line", "2 lines": n and the word that fits it.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// bytesText returns "1 byte", "120 bytes".
func bytesText(n int64) string { return count(int(n), "byte", "bytes") }

// linesText returns "1 line", "42 lines".
func linesText(n int) string { return count(n, "line", "lines") }

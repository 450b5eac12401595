// Package textdiff is the one home of memstore's line diffs: the unified
// diff of two texts, for the command line and the console alike, and its
// lines classified for display.
package textdiff

import (
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// Unified is the unified diff from one text to another, with
// udiff.DefaultContextLines lines of context; "" when they are equal.
func Unified(fromLabel, toLabel, from, to string) (string, error) {
	return udiff.ToUnified(fromLabel, toLabel, from, udiff.Lines(from, to), udiff.DefaultContextLines)
}

// Binary reports whether a text is better not shown line by line: it
// holds a NUL byte, as git decides.
func Binary(text string) bool { return strings.IndexByte(text, 0) >= 0 }

// The kinds of Line.
const (
	Context = ""     // a line both texts have
	Add     = "add"  // a line only the new text has
	Del     = "del"  // a line only the old text has
	Hunk    = "hunk" // an @@ line
	Head    = "head" // a --- or +++ line
)

// A Line is one line of a unified diff, without its newline, with its
// kind (for a stylesheet, or a count).
type Line struct {
	Kind string
	Text string
}

// Lines splits a unified diff into its classified lines.
func Lines(unified string) []Line {
	var out []Line
	inHead := true
	for _, l := range strings.SplitAfter(unified, "\n") {
		if l == "" {
			continue
		}
		kind := Context
		switch {
		case inHead && (strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++")):
			kind = Head
		case strings.HasPrefix(l, "@@"):
			kind, inHead = Hunk, false
		case strings.HasPrefix(l, "+"):
			kind = Add
		case strings.HasPrefix(l, "-"):
			kind = Del
		}
		out = append(out, Line{kind, strings.TrimSuffix(l, "\n")})
	}
	return out
}

// Count is the number of lines a unified diff adds and deletes.
func Count(unified string) (added, deleted int) {
	for _, l := range Lines(unified) {
		switch l.Kind {
		case Add:
			added++
		case Del:
			deleted++
		}
	}
	return added, deleted
}

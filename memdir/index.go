package memdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/memstore/memstore"
)

// The limits on the part of MEMORY.md that is loaded
// (docs/memory-directory.md, MEMORY.md limits): memstore's, which the
// server also holds a store's /MEMORY.md to.
const (
	MaxIndexLines = memstore.MaxIndexLines
	MaxIndexUnits = memstore.MaxIndexUnits
)

// The thresholds above which lint warns that the index is close to its
// limits (docs/memory-directory.md, Lint).
const (
	NearIndexLines = 140
	NearIndexUnits = 20_000
)

// indexName is the index's file name, in the directory and in team/.
const indexName = memstore.IndexName

// An Index is MEMORY.md as loaded into an agent's context: cleaned,
// measured, and cut to the limits with a warning when it is over them.
type Index struct {
	// Content is what an agent sees: the kept text, followed by the
	// warning when it was cut.
	Content string
	// Lines and Units measure the cleaned text before any cut: its lines
	// (split on LF) and its length in UTF-16 code units.
	Lines, Units int
	// LinesCut and SizeCut say which limits the cleaned text was over.
	LinesCut, SizeCut bool
	// Warning is the warning appended to Content ("" when nothing was
	// cut), without the blank line that separates it.
	Warning string
}

// Truncated reports whether part of the index was left out.
func (x Index) Truncated() bool { return x.LinesCut || x.SizeCut }

// LoadIndex cleans the raw text of MEMORY.md (see CleanIndex) and applies
// the limits (docs/memory-directory.md, MEMORY.md limits): more than
// MaxIndexLines lines keeps the first MaxIndexLines; if the cleaned text
// is over MaxIndexUnits and what is kept still is, it is cut at the last
// line feed at or before MaxIndexUnits (or hard at MaxIndexUnits when
// there is none); a cut adds a warning that names the reason.
func LoadIndex(raw string) Index {
	m := memstore.MeasureIndex(raw)
	text := m.Text
	x := Index{Lines: m.Lines, Units: m.Units}
	x.LinesCut = x.Lines > MaxIndexLines
	x.SizeCut = x.Units > MaxIndexUnits
	if !x.LinesCut && !x.SizeCut {
		x.Content = text
		return x
	}
	kept := text
	if x.LinesCut {
		kept = firstLines(text, MaxIndexLines)
	}
	if Units(kept) > MaxIndexUnits {
		head := prefixUnits(kept, MaxIndexUnits)
		// The line feed may sit exactly at index MaxIndexUnits, just past
		// the prefix; it counts as "at or before".
		if i := strings.LastIndexByte(kept[:min(len(kept), len(head)+1)], '\n'); i > 0 {
			kept = kept[:i]
		} else {
			kept = head
		}
	}
	var reason string
	switch {
	case x.LinesCut && x.SizeCut:
		reason = fmt.Sprintf("%d lines and %s", x.Lines, FormatSize(x.Units))
	case x.LinesCut:
		reason = fmt.Sprintf("%d lines (limit: %d)", x.Lines, MaxIndexLines)
	default:
		reason = fmt.Sprintf("%s (limit: %s) — index entries are too long", FormatSize(x.Units), FormatSize(MaxIndexUnits))
	}
	x.Warning = "> WARNING: " + indexName + " is " + reason + ". Only part of it was loaded. Keep index entries to one line under ~200 chars; move detail into topic files."
	x.Content = kept + "\n\n" + x.Warning
	return x
}

// ReadIndex reads and loads the index at path. A missing file is an empty
// index, not an error: a new directory has none yet.
func ReadIndex(path string) (Index, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return LoadIndex(""), nil
	}
	if err != nil {
		return Index{}, err
	}
	return LoadIndex(string(b)), nil
}

// Units is the length of s in UTF-16 code units (memstore.TextUnits), the
// way Claude Code measures a string's length.
func Units(s string) int { return memstore.TextUnits(s) }

// prefixUnits is the longest prefix of s at most n UTF-16 units long.
// It never splits a character; for one outside the Basic Multilingual
// Plane that straddles the limit, it stops before it, where Claude Code
// would keep a lone surrogate that has no UTF-8 form.
func prefixUnits(s string, n int) string {
	u := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1
		}
		if u+w > n {
			return s[:i]
		}
		u += w
	}
	return s
}

// firstLines is the first n lines of s, split on LF, without the LF that
// ends the last one kept.
func firstLines(s string, n int) string {
	i := 0
	for range n {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return s
		}
		i += j + 1
	}
	return s[:i-1]
}

// FormatSize writes a size the way the index warning does: under 1,024 as
// "{n} bytes", then in KB, MB or GB with one decimal, a trailing ".0"
// dropped (25000 is "24.4KB", 26639 is "26KB"). Halves round up, as
// JavaScript's toFixed does.
func FormatSize(n int) string {
	if n < 1024 {
		return strconv.Itoa(n) + " bytes"
	}
	units := []string{"KB", "MB", "GB"}
	div := 1024
	for i, u := range units {
		if i == len(units)-1 || n < div*1024 {
			tenths := (n*10 + div/2) / div
			s := strconv.Itoa(tenths / 10)
			if d := tenths % 10; d != 0 {
				s += "." + strconv.Itoa(d)
			}
			return s + u
		}
		div *= 1024
	}
	panic("unreachable")
}

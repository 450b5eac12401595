package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memstore/memstore"
)

// Output helpers shared by the store commands: JSON for scripts, aligned
// tables and key-value blocks for people.

// printJSON writes v as one line of JSON, with <, > and & left as they are
// (memory content is text for people, not HTML).
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// newTable returns a writer that aligns tab-separated columns; call Flush
// when done.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// row writes one table row of cells, made safe for a terminal.
func row(w io.Writer, cells ...string) {
	for i, c := range cells {
		cells[i] = cell(c)
	}
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

// cell makes s fit in one table cell: control and format characters
// (tabs, newlines, terminal escapes) become spaces, and an empty value
// becomes "-".
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}

// shorten cuts s to at most n characters, marking the cut with "…".
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// fmtTime is a time for people: UTC, RFC 3339, to the second.
func fmtTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// fmtTimePtr is fmtTime of an optional time, "" when unset.
func fmtTimePtr(t *time.Time) string {
	if t == nil {
		return ""
	}
	return fmtTime(*t)
}

// fmtActor is an actor as type:id.
func fmtActor(a memstore.Actor) string {
	return string(a.Type) + ":" + a.ID
}

// shortSHA is the first 12 hex digits of a content hash, enough to tell
// versions apart at a glance.
func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// block writes key-value lines with aligned values.
func block(w io.Writer, pairs ...[2]string) error {
	tw := newTable(w)
	for _, p := range pairs {
		fmt.Fprintf(tw, "%s:\t%s\n", p[0], cell(p[1]))
	}
	return tw.Flush()
}

// parseArgs parses flags wherever they appear among the arguments, as
// people type them (memstore ls /notes/ --depth 2), and returns the
// positional arguments. Everything after "--" is positional.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parse(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// progress reports a long operation's advance on stderr, one line at most
// every interval, so that a large export neither floods a terminal nor a
// log.
type progress struct {
	w        io.Writer
	verb     string // "exported", "imported"
	total    int    // 0 when unknown
	done     int
	last     time.Time
	interval time.Duration
}

func newProgress(w io.Writer, verb string, total int) *progress {
	return &progress{w: w, verb: verb, total: total, last: time.Now(), interval: 250 * time.Millisecond}
}

// step counts one item done and reports when the interval has passed.
func (p *progress) step() {
	p.done++
	if now := time.Now(); now.Sub(p.last) >= p.interval {
		p.last = now
		if p.total > 0 {
			fmt.Fprintf(p.w, "%s %d/%d\n", p.verb, p.done, max(p.total, p.done))
		} else {
			fmt.Fprintf(p.w, "%s %d\n", p.verb, p.done)
		}
	}
}

// plural is n and the noun's form for it: one (n is 1) or many.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

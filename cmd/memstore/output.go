package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/memstore/memstore"
)

// Output helpers shared by the store commands: JSON for scripts, aligned
// tables and key-value blocks for people.

// printJSON writes v as one line of JSON, with <, > and & left as they are
// (memory content is text for people, not HTML), and every character
// that termText would change escaped as \uXXXX: the same value to a JSON
// parser, and nothing a terminal obeys.
func printJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeJSON(b.Bytes()))
	return err
}

// printJSONList writes items as one JSON array of their wire forms, as
// every list command's --json does.
func printJSONList[T, J any](w io.Writer, items []T, wire func(*T) J) error {
	out := make([]J, len(items))
	for i := range items {
		out[i] = wire(&items[i])
	}
	return printJSON(w, out)
}

// escapeJSON escapes, in JSON text that encoding/json wrote, the
// characters it leaves as they are and a terminal may obey (DEL, the C1
// controls, format characters such as the bidirectional ones). Outside
// strings JSON has only ASCII, so every such character is in a string,
// where \uXXXX means the same. Inside a string JSON has no raw C0
// control, so a tab, newline or carriage return is whitespace between
// values, and stays.
func escapeJSON(b []byte) []byte {
	escape := func(r rune) bool { return r != '\t' && r != '\n' && r != '\r' && unsafeRune(r) }
	i := bytes.IndexFunc(b, escape)
	if i < 0 {
		return b
	}
	out := append([]byte(nil), b[:i]...)
	for _, r := range string(b[i:]) {
		if !escape(r) {
			out = utf8.AppendRune(out, r)
			continue
		}
		if r > 0xFFFF {
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
	}
	return out
}

// appendJSONString appends s as a JSON string: the bytes that
// escapeJSON gives of what encoding/json (with SetEscapeHTML(false))
// writes for s, in one pass and without either's copies, for output
// written line by line at speed (memstore tool).
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0 // s[start:i] is still to be copied as it is
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != 0x7f {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default: // the other C0 controls, and DEL (escapeJSON's)
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case unsafeRune(r):
			// U+2028 and U+2029 (encoding/json's), the C1 controls and
			// format characters (escapeJSON's).
			dst = append(dst, s[start:i]...)
			if r > 0xffff {
				hi, lo := utf16.EncodeRune(r)
				dst = fmt.Appendf(dst, `\u%04x\u%04x`, hi, lo)
			} else {
				dst = fmt.Appendf(dst, `\u%04x`, r)
			}
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// newTable returns a writer that aligns tab-separated columns; call Flush
// when done.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// printTable writes a list for people: a table of header and one row of
// cells per item, or, when there are no items, the note none on standard
// error.
func printTable[T any](e env, items []T, none string, header []string, cells func(*T) []string) error {
	if len(items) == 0 {
		fmt.Fprintln(e.stderr, none)
		return nil
	}
	tw := newTable(e.stdout)
	row(tw, header...)
	for i := range items {
		row(tw, cells(&items[i])...)
	}
	return tw.Flush()
}

// row writes one table row of cells, made safe for a terminal.
func row(w io.Writer, cells ...string) {
	for i, c := range cells {
		cells[i] = cell(c)
	}
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

// cell makes s fit in one table cell, or one line of a message: what
// breaks a line (tabs, newlines, carriage returns and the Unicode line
// separators) becomes a space, any other control made visible as termText
// does, and an empty value becomes "-".
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return termText(s, true)
}

// Text from a store or a server (memory content, paths, names, titles,
// metadata, error messages: anything an agent or another program wrote)
// may hold what a terminal obeys instead of showing: ESC sequences that
// recolour, clear or move the cursor (CSI), that set the window title,
// the clipboard (OSC 52) or a link hiding its target (OSC 8); BEL; a
// backspace or a carriage return that overwrites what was printed; the
// C1 controls (U+009B alone is a CSI to many terminals); and the
// bidirectional controls, which reorder what a line shows. termText is
// the one rule for all of them. Main sends every command's standard
// output and error through it (newTermWriter), and JSON, from printJSON
// or in JSON lines for a program (tool, mcp, export -), has the same
// characters escaped (escapeJSON), which changes no value: nothing a
// command prints is obeyed, except what a command prints exactly when
// asked (--raw).

// termText makes s safe to print on a terminal: each C0 control becomes
// its visible symbol (ESC ␛, BEL ␇, backspace ␈, a carriage return not
// followed by a newline ␍), DEL ␡, every other control or format
// character (C1, bidirectional controls, U+2028 and U+2029) <U+XXXX>,
// and a byte that is not UTF-8 <XX>. Newlines, tabs and CR LF stay, unless
// oneLine, which makes them and the other line breaks spaces. The joiners
// U+200C and U+200D stay: words and emoji need them and they move
// nothing.
func termText(s string, oneLine bool) string {
	if !needsTermText(s, oneLine) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			fmt.Fprintf(&b, "<%02X>", s[i])
			i++
			continue
		}
		i += size
		switch {
		case oneLine && (r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r' || r == '\u0085' || r == '\u2028' || r == '\u2029'):
			b.WriteByte(' ')
		case r == '\t' || r == '\n' || r == '\r' && strings.HasPrefix(s[i:], "\n"):
			b.WriteRune(r)
		case r < 0x20:
			b.WriteRune(0x2400 + r) // the Control Pictures block
		case r == 0x7f:
			b.WriteRune('\u2421')
		case unsafeRune(r):
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// needsTermText reports whether termText would change s.
func needsTermText(s string, oneLine bool) bool {
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return true
			}
		case r == '\t' || r == '\n':
			if oneLine {
				return true
			}
		case r == '\r':
			if oneLine || !strings.HasPrefix(s[i+1:], "\n") {
				return true
			}
		case unsafeRune(r):
			return true
		}
	}
	return false
}

// unsafeRune reports whether a terminal may act on r rather than show it:
// a control character (C0, DEL, C1) or a format character other than the
// joiners, or a Unicode line or paragraph separator.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f, r == '\u2028', r == '\u2029':
		return true
	case r < 0xad, r == '\u200c', r == '\u200d':
		return false
	}
	return unicode.Is(unicode.Cf, r)
}

// safeWriter passes what is written through conv: termText for what
// people read (newTermWriter), escapeJSON for JSON lines a program reads
// (newJSONWriter). A write may end inside a character, or with a carriage
// return that the next write's newline makes a CR LF: that tail waits for
// the next write, or Flush.
type safeWriter struct {
	mu   sync.Mutex
	w    io.Writer
	conv func(string) string
	tail []byte
}

// newTermWriter makes what is written to w safe for a terminal.
func newTermWriter(w io.Writer) *safeWriter {
	return &safeWriter{w: w, conv: func(s string) string { return termText(s, false) }}
}

// newJSONWriter escapes, in the JSON text written to w, what a terminal
// would obey: the same JSON to a parser (see escapeJSON).
func newJSONWriter(w io.Writer) *safeWriter {
	return &safeWriter{w: w, conv: func(s string) string { return string(escapeJSON([]byte(s))) }}
}

func (t *safeWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	buf := p
	if len(t.tail) > 0 {
		buf = append(t.tail, p...)
		t.tail = nil
	}
	cut := len(buf)
	if start := lastRuneStart(buf); start >= 0 && !utf8.FullRune(buf[start:]) {
		cut = start
	} else if cut > 0 && buf[cut-1] == '\r' {
		cut--
	}
	t.tail = append(t.tail, buf[cut:]...)
	if cut == 0 {
		return len(p), nil
	}
	if _, err := io.WriteString(t.w, t.conv(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what waits for a next write.
func (t *safeWriter) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.tail) == 0 {
		return nil
	}
	s := t.conv(string(t.tail))
	t.tail = nil
	_, err := io.WriteString(t.w, s)
	return err
}

// lastRuneStart is the index of the last byte of b that may start a
// character, within the last utf8.UTFMax bytes; -1 if none.
func lastRuneStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return -1
}

// addRawFlag defines --raw on a command that prints memory content, and
// returns where the content goes: standard output as it is with --raw,
// else through termText.
func addRawFlag(fs *flag.FlagSet, e env) func() io.Writer {
	raw := fs.Bool("raw", false, "print the content exactly as stored, terminal control characters and all (otherwise shown as visible symbols)")
	return func() io.Writer {
		if *raw {
			return e.raw()
		}
		return e.stdout
	}
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

// fmtActor is an actor as type:id, or "operator" for the operator.
func fmtActor(a memstore.Actor) string {
	if a == memstore.OperatorActor {
		return memstore.OperatorName
	}
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

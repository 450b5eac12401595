package agenttool_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/agenttool"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

func TestRead(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	notes := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Notes"})
	text := "line one\nline two\n\tindented\nlast, unterminated"
	sqlitetest.Create(t, db, ws, notes.ID, "/n.md", text, admin)
	sqlitetest.Create(t, db, ws, notes.ID, "/empty.md", "", admin)
	sqlitetest.Create(t, db, ws, notes.ID, "/blank-lines.md", "\n\n", admin)
	ts := newToolset(t, services(db), newSession(attach{store: notes}))
	header := fmt.Sprintf("/mnt/memory/notes/n.md: %d bytes, 4 lines, content_sha256 %s\n", len(text), sha(text))
	tests := []struct {
		name string
		args map[string]any
		want string // an error when it starts with "Error: "
	}{
		{"whole", map[string]any{"path": "/mnt/memory/notes/n.md"}, header +
			"     1\tline one\n     2\tline two\n     3\t\tindented\n     4\tlast, unterminated"},
		{"from a line", map[string]any{"path": "/n.md", "start_line": 3}, header +
			"     3\t\tindented\n     4\tlast, unterminated"},
		{"a range", map[string]any{"path": "/n.md", "start_line": 2, "end_line": 3}, header +
			"     2\tline two\n     3\t\tindented"},
		{"one line", map[string]any{"path": "/n.md", "start_line": 4, "end_line": 4}, header +
			"     4\tlast, unterminated"},
		{"to a line", map[string]any{"path": "/n.md", "end_line": 1}, header + "     1\tline one"},
		{"past the end means the end", map[string]any{"path": "/n.md", "start_line": 4, "end_line": 99}, header + "     4\tlast, unterminated"},
		{"start past the end", map[string]any{"path": "/n.md", "start_line": 5}, "Error: start_line 5 is past the end of /mnt/memory/notes/n.md, which has 4 lines."},
		{"end before start", map[string]any{"path": "/n.md", "start_line": 3, "end_line": 2}, "Error: end_line 2 is before start_line 3; give end_line >= start_line."},
		{"empty", map[string]any{"path": "/empty.md"}, "/mnt/memory/notes/empty.md: 0 bytes, 0 lines, content_sha256 " + sha("") + "\n(the memory is empty)"},
		{"blank lines", map[string]any{"path": "/blank-lines.md"}, "/mnt/memory/notes/blank-lines.md: 2 bytes, 2 lines, content_sha256 " + sha("\n\n") + "\n     1\t\n     2\t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, ts, "memory_read", tt.args)
			if r.Text != tt.want || r.IsError != strings.HasPrefix(tt.want, "Error: ") {
				t.Errorf("got (is error %v):\n%s\nwant:\n%s", r.IsError, r.Text, tt.want)
			}
		})
	}
}

// TestReadLong reads a memory too long for one result in parts, following
// the notes, and gets back exactly its lines.
func TestReadLong(t *testing.T) {
	db := sqlitetest.Open(t, sqliteOptions)
	notes := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "Notes"})
	var lines []string
	for i := range 3000 {
		lines = append(lines, fmt.Sprintf("line %04d: %s", i+1, strings.Repeat("x", 20)))
	}
	text := strings.Join(lines, "\n") + "\n"
	if len(text) <= agenttool.MaxReadBytes {
		t.Fatalf("the memory is only %d bytes", len(text))
	}
	sqlitetest.Create(t, db, ws, notes.ID, "/long.md", text, admin)
	huge := strings.Repeat("y", agenttool.MaxReadBytes+10)
	sqlitetest.Create(t, db, ws, notes.ID, "/one-line.md", huge, admin)
	ts := newToolset(t, services(db), newSession(attach{store: notes}))

	var got []string
	start, reads := 1, 0
	for reads = 1; reads < 10; reads++ {
		out := ok(t, ts, "memory_read", map[string]any{"path": "/long.md", "start_line": start})
		if len(out) > agenttool.MaxReadBytes+500 {
			t.Fatalf("read %d is %d bytes", reads, len(out))
		}
		body := strings.Split(out, "\n")[1:] // after the header
		next := 0
		if note := body[len(body)-1]; strings.HasPrefix(note, "[Lines ") {
			want := fmt.Sprintf("of 3000 are shown; the rest was cut at the %d-byte limit of one read. Continue with start_line ", agenttool.MaxReadBytes)
			if !strings.Contains(note, want) {
				t.Fatalf("note %q", note)
			}
			next, _ = strconv.Atoi(strings.TrimSuffix(note[strings.LastIndex(note, " ")+1:], ".]"))
			body = body[:len(body)-2] // the note and the blank line before it
		}
		for _, l := range body {
			num, line, found := strings.Cut(l, "\t")
			n, err := strconv.Atoi(strings.TrimSpace(num))
			if !found || err != nil || n != len(got)+1 {
				t.Fatalf("bad line %q after %d lines", l, len(got))
			}
			got = append(got, line)
		}
		if next == 0 {
			break
		}
		if next != len(got)+1 {
			t.Fatalf("continue at %d after %d lines", next, len(got))
		}
		start = next
	}
	if reads < 2 || strings.Join(got, "\n")+"\n" != text {
		t.Fatalf("%d reads gave %d lines, want the 3000 lines of the memory", reads, len(got))
	}

	// A line longer than the limit is shown whole: it could not be read
	// otherwise.
	out := ok(t, ts, "memory_read", map[string]any{"path": "/one-line.md"})
	if !strings.HasSuffix(out, "     1\t"+huge) {
		t.Errorf("the long line is not shown whole (%d bytes)", len(out))
	}
}

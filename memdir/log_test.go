package memdir_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore/memdir"
)

func TestLogEntry(t *testing.T) {
	at := time.Date(2026, 3, 5, 9, 7, 0, 0, time.Local)
	tests := []struct {
		name, text, want string
	}{
		{"one line", "deployed v2", "- 09:07 deployed v2\n"},
		{"continuation", "deployed v2\nrollback plan ready", "- 09:07 deployed v2\n  rollback plan ready\n"},
		{"CRLF and blank lines", "a\r\n\r\nb\r\n\r\n", "- 09:07 a\n\n  b\n"},
		{"trailing white space", "a   \n  b  \t\n", "- 09:07 a\n    b\n"},
		{"leading blank lines", "\n\na", "- 09:07 a\n"},
	}
	for _, tt := range tests {
		got, err := memdir.LogEntry(at, tt.text)
		if err != nil || got != tt.want {
			t.Errorf("%s: LogEntry(%q) = %q, %v; want %q", tt.name, tt.text, got, err, tt.want)
		}
	}
	for _, empty := range []string{"", "  \n\t\n"} {
		if _, err := memdir.LogEntry(at, empty); err == nil {
			t.Errorf("LogEntry(%q) did not fail", empty)
		}
	}
}

func TestAppendLogCreates(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "logs", "2026", "03", "2026-03-05.md")
	at := time.Date(2026, 3, 5, 9, 7, 0, 0, time.Local)
	if _, err := memdir.AppendLog(p, at, "first"); err != nil {
		t.Fatal(err)
	}
	if _, err := memdir.AppendLog(p, at.Add(time.Minute), "second\nmore"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := "- 09:07 first\n- 09:08 second\n  more\n"; string(b) != want {
		t.Errorf("log %q, want %q", b, want)
	}
	for path, mode := range map[string]os.FileMode{p: 0o600, filepath.Dir(p): 0o700, filepath.Join(dir, "logs"): 0o700} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v (%v)", path, fi.Mode().Perm(), mode, err)
		}
	}
	// A file left without a final line feed: the entry starts a new line.
	if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := memdir.AppendLog(p, at, "next"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "partial\n- 09:07 next\n" {
		t.Errorf("after a partial line: %q", b)
	}
	// Bad input changes nothing.
	if _, err := memdir.AppendLog(p, at, " "); err == nil {
		t.Error("empty text was logged")
	}
	if b, _ := os.ReadFile(p); string(b) != "partial\n- 09:07 next\n" {
		t.Errorf("empty text changed the log: %q", b)
	}
}

// entryText is the text of writer w's entry i: several long lines, so
// that an entry is written in more than a few bytes.
func entryText(w, i int) string {
	var lines []string
	for l := range 5 {
		lines = append(lines, fmt.Sprintf("w%d-e%d-l%d %s", w, i, l, strings.Repeat("z", 300)))
	}
	return strings.Join(lines, "\n")
}

// checkLog checks that the log holds every entry of writers × entries,
// each exactly once and whole.
func checkLog(tb testing.TB, path string, writers, entries int) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	seen := map[string]int{}
	for _, e := range strings.SplitAfter(string(b), "\n- ") {
		e = strings.TrimSuffix(e, "- ")
		e = strings.TrimPrefix(e, "- ")
		// "HH:MM w1-e2-l0 ...\n  w1-e2-l1 ...\n..."
		ls := strings.Split(strings.TrimSuffix(e, "\n"), "\n")
		if len(ls) != 5 || len(e) < 6 {
			tb.Fatalf("entry of %d lines: %.80q", len(ls), e)
		}
		id := strings.Fields(ls[0][6:])[0]
		id = strings.TrimSuffix(id, "-l0")
		for l, line := range ls {
			want := fmt.Sprintf("%s-l%d %s", id, l, strings.Repeat("z", 300))
			if l == 0 && line[6:] != want || l > 0 && line != "  "+want {
				tb.Fatalf("entry %s line %d is %.80q", id, l, line)
			}
		}
		seen[id]++
	}
	for w := range writers {
		for i := range entries {
			if id := fmt.Sprintf("w%d-e%d", w, i); seen[id] != 1 {
				tb.Errorf("entry %s appears %d times", id, seen[id])
			}
		}
	}
	if len(seen) != writers*entries {
		tb.Errorf("%d entries, want %d", len(seen), writers*entries)
	}
}

// TestAppendLogGoroutines checks that concurrent writers in one process
// neither lose nor interleave an entry.
func TestAppendLogGoroutines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "logs", "day.md")
	const writers, entries = 16, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range entries {
				if _, err := memdir.AppendLog(p, time.Now(), entryText(w, i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	checkLog(t, p, writers, entries)
}

// TestAppendLogProcesses checks the same across processes: the test binary
// runs itself as the writers.
func TestAppendLogProcesses(t *testing.T) {
	if p := os.Getenv("MEMDIR_TEST_LOG_WRITER"); p != "" {
		w, _ := strconv.Atoi(os.Getenv("MEMDIR_TEST_LOG_ID"))
		n, _ := strconv.Atoi(os.Getenv("MEMDIR_TEST_LOG_ENTRIES"))
		for i := range n {
			if _, err := memdir.AppendLog(p, time.Now(), entryText(w, i)); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	p := filepath.Join(t.TempDir(), "logs", "day.md")
	const writers, entries = 4, 100
	cmds := make([]*exec.Cmd, writers)
	for w := range writers {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAppendLogProcesses$")
		cmd.Env = append(os.Environ(), "MEMDIR_TEST_LOG_WRITER="+p, "MEMDIR_TEST_LOG_ID="+strconv.Itoa(w), "MEMDIR_TEST_LOG_ENTRIES="+strconv.Itoa(entries))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[w] = cmd
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	checkLog(t, p, writers, entries)
}

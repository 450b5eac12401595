package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestMemdirLogProcesses runs memstore memdir log in several processes at
// once, each several times, and checks that the log holds every entry
// exactly once, whole: none lost, none interleaved with another.
func TestMemdirLogProcesses(t *testing.T) {
	bin, err := exec.LookPath("memstore") // the test binary, put on PATH by TestMain
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "memory")
	const workers, each = 8, 8
	text := func(w, i int) string {
		var lines []string
		for l := range 4 {
			lines = append(lines, fmt.Sprintf("w%d-e%d-l%d %s", w, i, l, strings.Repeat("x", 500)))
		}
		return strings.Join(lines, "\n")
	}
	paths := make(chan string, workers*each)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				out, err := exec.Command(bin, "memdir", "log", "--dir", dir, "--json", text(w, i)).Output()
				if err != nil {
					t.Errorf("worker %d entry %d: %v", w, i, err)
					return
				}
				var res struct{ Path string }
				if err := json.Unmarshal(out, &res); err != nil {
					t.Errorf("worker %d entry %d: %v: %q", w, i, err, out)
					return
				}
				paths <- res.Path
			}
		})
	}
	wg.Wait()
	close(paths)
	if t.Failed() {
		return
	}
	// Around midnight, entries go to two days' logs; read them all.
	var log strings.Builder
	seenPath := map[string]bool{}
	for p := range paths {
		if seenPath[p] {
			continue
		}
		seenPath[p] = true
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		log.Write(b)
	}

	seen := map[string]int{}
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	if len(lines) != workers*each*4 {
		t.Fatalf("%d lines, want %d", len(lines), workers*each*4)
	}
	for i := 0; i < len(lines); i += 4 {
		first := lines[i]
		if len(first) < 8 || !strings.HasPrefix(first, "- ") || first[4] != ':' {
			t.Fatalf("line %d does not start an entry: %.60q", i+1, first)
		}
		id, _, _ := strings.Cut(first[8:], "-l0 ")
		for l := range 4 {
			want := fmt.Sprintf("%s-l%d %s", id, l, strings.Repeat("x", 500))
			got := lines[i+l]
			if l == 0 {
				got = got[8:]
			} else {
				got = strings.TrimPrefix(got, "  ")
			}
			if got != want {
				t.Fatalf("line %d of entry %s is %.60q", l, id, lines[i+l])
			}
		}
		seen[id]++
	}
	for w := range workers {
		for i := range each {
			if id := fmt.Sprintf("w%d-e%d", w, i); seen[id] != 1 {
				t.Errorf("entry %s logged %d times", id, seen[id])
			}
		}
	}
}

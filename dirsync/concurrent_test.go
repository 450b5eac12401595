package dirsync_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/memstore/memstore/dirsync"
)

// TestTwoDirectoriesConcurrently syncs two directories with one store at
// the same time, round after round, each adding to the index and to a
// shared file and editing, creating and deleting files of its own; then
// checks that they converge with the store and that nothing the store
// acknowledged, nor anything either directory wrote, was lost.
func TestTwoDirectoriesConcurrently(t *testing.T) {
	s := newServer(t, serverOptions{})
	s.put(t, "/MEMORY.md", "# Index\n")
	s.put(t, "/shared.md", "start\n")
	dirs := []string{t.TempDir(), t.TempDir()}
	names := []string{"one", "two"}
	for _, d := range dirs {
		mustSync(t, s.options(d))
	}

	const rounds = 12
	own := make([]map[string]string, len(dirs)) // what each directory means its own files to be
	var wg sync.WaitGroup
	for i, dir := range dirs {
		own[i] = map[string]string{}
		wg.Go(func() {
			name := names[i]
			o := s.options(dir)
			o.Device = name
			for r := range rounds {
				appendLine(t, dir, "MEMORY.md", fmt.Sprintf("- [%s %d](%s.md) — line", name, r, name))
				appendLine(t, dir, "shared.md", fmt.Sprintf("%s %d", name, r))
				rel := fmt.Sprintf("%s/f%d.md", name, r%4)
				own[i]["/"+rel] = fmt.Sprintf("%s round %d\n", name, r)
				write(t, dir, map[string]string{rel: own[i]["/"+rel]})
				if r%5 == 4 {
					gone := fmt.Sprintf("%s/f%d.md", name, (r+1)%4)
					if _, ok := own[i]["/"+gone]; ok {
						remove(t, dir, gone)
						delete(own[i], "/"+gone)
					}
				}
				if _, err := dirsync.Sync(t.Context(), o); err != nil {
					t.Errorf("%s, round %d: %v", name, r, err)
				}
			}
		})
	}
	wg.Wait()
	for range 2 {
		for _, d := range dirs {
			mustSync(t, s.options(d))
		}
	}

	store := s.files(t)
	copies := map[string]string{} // every conflict copy, by directory and name
	for i, d := range dirs {
		files, c := tree(t, d)
		if diff := diffMaps(store, files); diff != "" {
			t.Errorf("directory %s and the store differ:\n%s", names[i], diff)
		}
		for name, content := range c {
			copies[filepath.Join(names[i], name)] = content
		}
		for p, want := range own[i] {
			if store[p] != want {
				t.Errorf("%s in the store = %q, want %q", p, store[p], want)
			}
		}
		for p := range store {
			if strings.HasPrefix(p, "/"+names[i]+"/") && own[i][p] == "" {
				t.Errorf("%s, deleted by %s, is in the store", p, names[i])
			}
		}
	}

	// Every line the store ever acknowledged is in the final version of
	// its file: pushes are conditional, merges keep every line, and a
	// conflict never pushes.
	shared := regexp.MustCompile(`^(one|two) \d+\n$`)
	for _, content := range s.contents(t) {
		for line := range strings.Lines(content) {
			file := "/MEMORY.md"
			if shared.MatchString(line) {
				file = "/shared.md"
			} else if !strings.HasPrefix(line, "- [") {
				continue
			}
			if !strings.Contains(store[file], line) {
				t.Errorf("the acknowledged line %q is not in %s", line, file)
			}
		}
	}
	// Every line either side wrote is in the final file, or, for the
	// shared file, in a conflict copy that directory kept.
	for i, name := range names {
		for r := range rounds {
			if line := fmt.Sprintf("- [%s %d](%s.md) — line\n", name, r, name); !strings.Contains(store["/MEMORY.md"], line) {
				t.Errorf("index line %q lost", line)
			}
			line := fmt.Sprintf("%s %d\n", name, r)
			found := strings.Contains(store["/shared.md"], line)
			for where, c := range maps.All(copies) {
				found = found || strings.HasPrefix(where, names[i]+string(filepath.Separator)) && strings.Contains(c, line)
			}
			if !found {
				t.Errorf("shared line %q lost", line)
			}
		}
	}
	t.Logf("%d conflict copies", len(copies))
}

package dirsync_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/dirsync"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// syncedStore makes a store of n memories of about 1 kB and a directory
// holding the same files, which a first sync finds in step.
func syncedStore(tb testing.TB, n int) (*server, string) {
	tb.Helper()
	s := newServer(tb, serverOptions{})
	dir := tb.TempDir()
	body := strings.Repeat("a memory line that takes some room\n", 30)
	files := map[string]string{}
	for i := range n {
		p := fmt.Sprintf("/topic-%02d/note-%04d.md", i%40, i)
		sqlitetest.Create(tb, s.DB, s.ws.ID, s.store, p, body+p, s.by)
		files[p[1:]] = body + p
	}
	write(tb, dir, files)
	if rep := mustSync(tb, s.options(dir)); len(rep.Changes) != 0 || rep.Unchanged != n {
		tb.Fatalf("first sync: %d changes, %d unchanged; want 0, %d", len(rep.Changes), rep.Unchanged, n)
	}
	s.takeRequests()
	return s, dir
}

// TestNothingToDoListsOnly: a sync with nothing to do over 2,000 files
// makes one request, the export of the store without content, and no
// request per file.
func TestNothingToDoListsOnly(t *testing.T) {
	const n = 2000
	s, dir := syncedStore(t, n)
	rep := mustSync(t, s.options(dir))
	if len(rep.Changes)+len(rep.Conflicts)+len(rep.Skipped) != 0 || rep.Unchanged != n {
		t.Fatalf("report: %d changes, %d conflicts, %d skipped, %d unchanged", len(rep.Changes), len(rep.Conflicts), len(rep.Skipped), rep.Unchanged)
	}
	reqs := s.takeRequests()
	want := "GET /v1/memory_stores/" + s.store + "/memories/export"
	if len(reqs) != 1 {
		t.Errorf("%d requests, want 1", len(reqs))
	}
	for _, r := range reqs {
		if r != want {
			t.Errorf("request %q, want only %q", r, want)
		}
	}
}

// BenchmarkNothingToDo is one sync pass over 2,000 files in step with
// their store, over loopback HTTP to a server on SQLite; beside it, the
// listing alone that any such pass must make, for the ratio.
func BenchmarkNothingToDo(b *testing.B) {
	s, dir := syncedStore(b, 2000)
	o := s.options(dir)
	b.Run("sync", func(b *testing.B) {
		s.takeRequests()
		for b.Loop() {
			if _, err := dirsync.Sync(b.Context(), o); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(s.takeRequests()))/float64(b.N), "requests/op")
	})
	b.Run("list-only", func(b *testing.B) {
		c := s.client()
		for b.Loop() {
			f := memstore.MemoryFilter{Limit: 100}
			for {
				page, err := c.Memories(b.Context(), nil, s.store, f)
				if err != nil {
					b.Fatal(err)
				}
				if page.Next == "" {
					break
				}
				f.Page = page.Next
			}
		}
	})
}

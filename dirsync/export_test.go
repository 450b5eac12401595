package dirsync_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// TestNewMountOneRequest: the first sync of a store of 250 memories
// into an empty directory pulls them all in one request, the store's
// export with content, and none per memory; the next sync, with a
// memory changed in the store, exports without content and reads that
// memory alone.
func TestNewMountOneRequest(t *testing.T) {
	s := newServer(t, serverOptions{})
	want := map[string]string{}
	for i := range 250 {
		p := fmt.Sprintf("/notes/note-%03d.md", i)
		sqlitetest.Create(t, s.DB, s.ws.ID, s.store, p, "note "+p, s.by)
		want[p] = "note " + p
	}
	dir := t.TempDir()
	if rep := mustSync(t, s.options(dir)); len(rep.Changes) != 250 {
		t.Fatalf("first sync: %d changes, want 250 pulls", len(rep.Changes))
	}
	s.inStep(t, dir, want)
	reqs := s.takeRequests()
	if len(reqs) != 1 || reqs[0] != "GET /v1/memory_stores/"+s.store+"/memories/export" {
		t.Errorf("the first sync made %d requests (%v), want the export alone", len(reqs), reqs[:min(len(reqs), 5)])
	}

	s.put(t, "/notes/note-007.md", "changed")
	want["/notes/note-007.md"] = "changed"
	if rep := mustSync(t, s.options(dir)); len(rep.Changes) != 1 {
		t.Fatalf("second sync: %+v, want one pull", rep.Changes)
	}
	s.inStep(t, dir, want)
	reqs = s.takeRequests()
	if len(reqs) != 2 || !strings.HasSuffix(reqs[0], "/memories/export") || !strings.Contains(reqs[1], "/memories/mem_") {
		t.Errorf("the second sync made %v, want the export and one read", reqs)
	}
}

// TestSyncWithoutExport: against a server without the export stream
// (an older memstore), a sync lists the store page by page as before.
func TestSyncWithoutExport(t *testing.T) {
	s := newServer(t, serverOptions{wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/memories/export") {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprintf(w, `{"type":"error","error":{"type":"not_found_error","message":"no such endpoint: GET %s"}}`, r.URL.Path)
				return
			}
			h.ServeHTTP(w, r)
		})
	}})
	sqlitetest.Create(t, s.DB, s.ws.ID, s.store, "/a.md", "a", s.by)
	dir := t.TempDir()
	if rep := mustSync(t, s.options(dir)); len(rep.Changes) != 1 {
		t.Fatalf("sync: %+v, want one pull", rep.Changes)
	}
	s.inStep(t, dir, map[string]string{"/a.md": "a"})
}

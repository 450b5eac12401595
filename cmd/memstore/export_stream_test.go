package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// TestExportOneRequest: memstore export reads a store through the
// export stream, one request for the whole store (and one more, of the
// basic view, to count it), never page by page nor memory by memory.
func TestExportOneRequest(t *testing.T) {
	clearEnv(t)
	db := sqlitetest.Open(t, sqlite.Options{})
	ws := sqlitetest.Workspace(t, db, memstore.DefaultWorkspace)
	key, secret := sqlitetest.APIKey(t, db, ws.ID, "cli")
	st := sqlitetest.Store(t, db, ws.ID, memstore.StoreCreate{Name: "notes"})
	const n = 250
	for i := range n {
		sqlitetest.Create(t, db, ws.ID, st.ID, fmt.Sprintf("/notes/%03d.md", i), fmt.Sprintf("note %d", i), memstore.Actor{Type: memstore.ActorAPIKey, ID: key.ID})
	}
	core := memstore.NewCore(db)
	api := httpapi.New(httpapi.Config{Stores: core, Memories: core, Versions: core, Keys: core})
	var mu sync.Mutex
	var requests []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.Method+" "+r.URL.Path+"?view="+r.URL.Query().Get("view"))
		mu.Unlock()
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	dir := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := run(t, "", "export", "--store", st.ID, dir, "--url", srv.URL, "--api-key", secret)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "exported 250 memories") {
		t.Errorf("export said %q", stdout)
	}
	for _, i := range []int{0, 123, n - 1} {
		got, err := os.ReadFile(filepath.Join(dir, "notes", fmt.Sprintf("%03d.md", i)))
		if err != nil || string(got) != fmt.Sprintf("note %d", i) {
			t.Errorf("notes/%03d.md: %q, %v", i, got, err)
		}
	}
	exports, others := 0, []string{}
	for _, r := range requests {
		switch {
		case strings.HasSuffix(strings.SplitN(r, "?", 2)[0], "/memories/export"):
			exports++
		case strings.Contains(r, "/memories"):
			others = append(others, r)
		}
	}
	if exports != 2 || len(others) != 0 {
		t.Errorf("export made %d export requests and %v; want 2 exports and no other request for memories", exports, others)
	}
}

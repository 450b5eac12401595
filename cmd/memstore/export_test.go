package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// TestExportJSONLinesFailsWhole: an export to FILE.jsonl that fails part
// way (here the server refuses the memories' content after answering
// the count) leaves the previous export as it was, with no temporary
// file beside it.
func TestExportJSONLinesFailsWhole(t *testing.T) {
	clearEnv(t)
	db := sqlitetest.Open(t, sqlite.Options{})
	ws := sqlitetest.Workspace(t, db, memstore.DefaultWorkspace)
	_, secret := sqlitetest.APIKey(t, db, ws.ID, "cli")
	core := memstore.NewCore(db)
	api := httpapi.New(httpapi.Config{Stores: core, Memories: core, Versions: core, Keys: db})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Query().Get("view") == "full" {
			http.Error(w, "unavailable", http.StatusBadRequest)
			return
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	backend := []string{"--url", srv.URL, "--api-key", secret}
	for _, args := range [][]string{{"stores", "create", "notes"}, {"put", "/a.md"}} {
		if code, _, stderr := run(t, "a\n", append(args, backend...)...); code != 0 {
			t.Fatalf("memstore %v: exit %d: %s", args, code, stderr)
		}
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "all.jsonl")
	if err := os.WriteFile(out, []byte("previous export\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "", append([]string{"export", out}, backend...)...)
	if code == 0 || !strings.Contains(stderr, "unavailable") {
		t.Fatalf("export: exit %d, %q; want the server's failure", code, stderr)
	}
	if got, err := os.ReadFile(out); err != nil || string(got) != "previous export\n" {
		t.Errorf("the previous export now holds %q, %v", got, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %v; want only all.jsonl", entries)
	}
}

// TestKeyFileNeverReplaced: a key file is never written over; the error
// says the file exists and does not hold the new key, and leaves it as it
// was. A missing directory is named.
func TestKeyFileNeverReplaced(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "m.db.key")
	if err := os.WriteFile(name, []byte("old key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, want string }{
		{name, name + " already exists and was left unchanged (it does not hold this key)"},
		{filepath.Join(dir, "missing", "m.db.key"), "open directory " + filepath.Join(dir, "missing") + ": no such file or directory"},
	} {
		if err := writeKeyFile(tt.name, "new key"); err == nil || err.Error() != tt.want {
			t.Errorf("writeKeyFile(%s): %v; want %q", tt.name, err, tt.want)
		}
	}
	if got, err := os.ReadFile(name); err != nil || string(got) != "old key\n" {
		t.Errorf("the key file now holds %q, %v", got, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %v; want only m.db.key", entries)
	}
}

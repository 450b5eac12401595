package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportJSONLinesFailsWhole: an export to FILE.jsonl that fails part
// way (here the server refuses the memories' content after answering
// the count) leaves the previous export as it was, with no temporary
// file beside it.
func TestExportJSONLinesFailsWhole(t *testing.T) {
	clearEnv(t)
	api, secret := newStoresAPI(t)
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

// TestTransferCredentialNames: an export to a directory writes no file
// named as keys, credentials or shell start-up files are, and an import
// from a directory reads none into the store; each is reported, and the
// other files go through.
func TestTransferCredentialNames(t *testing.T) {
	clearEnv(t)
	db := notesDatabase(t)
	for p, content := range map[string]string{"/authorized_keys": "ssh-ed25519 AAAA attacker\n", "/fish/config.fish": "touch pwned\n", "/ok.md": "fine\n"} {
		if code, _, stderr := run(t, content, "put", "--db", db, p); code != 0 {
			t.Fatalf("put %s: %s", p, stderr)
		}
	}
	out := filepath.Join(t.TempDir(), "ssh")
	code, _, stderr := run(t, "", "export", "--db", db, out)
	if code != 0 || !strings.Contains(stderr, "/authorized_keys") || !strings.Contains(stderr, "/fish/config.fish") {
		t.Errorf("export: exit %d: %s; want both refused paths reported", code, stderr)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 || entries[0].Name() != "ok.md" {
		t.Errorf("export wrote %v; want only ok.md", entries)
	}

	in := t.TempDir()
	for name, content := range map[string]string{"id_ed25519": "key\n", "Known_Hosts": "host\n", "credentials": "[default]\n", "mine.md": "mine\n"} {
		if err := os.WriteFile(filepath.Join(in, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	db2 := notesDatabase(t)
	code, _, stderr = run(t, "", "import", "--db", db2, in)
	if code != 0 {
		t.Errorf("import: exit %d: %s; want 0, the other files imported", code, stderr)
	}
	for _, name := range []string{"id_ed25519", "Known_Hosts", "credentials"} {
		if !strings.Contains(stderr, "skipped "+filepath.Join(in, name)+": ") {
			t.Errorf("import did not report %s skipped: %s", name, stderr)
		}
	}
	code, ls, _ := run(t, "", "ls", "--db", db2, "--depth", "0")
	if code != 0 || !strings.Contains(ls, "/mine.md") || strings.Count(ls, "\n/") != 1 {
		t.Errorf("the store after import: exit %d, %q; want /mine.md alone", code, ls)
	}
}

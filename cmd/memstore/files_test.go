//go:build unix

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/memstore/memstore/internal/private"
)

// TestFilesArePrivate: every file memstore writes (the database and the
// files beside it, the key file, exports) is its owner's only and every
// directory it makes is 0700, even under a umask of 0, and an export
// replacing a file readable by all makes it private. The umask is the
// process's, so no test of this package runs in parallel.
func TestFilesArePrivate(t *testing.T) {
	clearEnv(t)
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	top := t.TempDir()
	db := filepath.Join(top, "data", "m.db")
	note := filepath.Join(top, "note.md")
	if err := os.WriteFile(note, []byte("aardvark"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Files an export replaces, readable by all before.
	out := filepath.Join(top, "out")
	for name, content := range map[string]string{"old.jsonl": "old", "out/a.md": "old"} {
		p := filepath.Join(top, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"stores", "create", "notes"},
		{"put", "/a.md", note},
		{"put", "/deep/b.md", note},
		{"export", filepath.Join(top, "old.jsonl")},
		{"export", filepath.Join(top, "new.jsonl")},
		{"export", out},
		{"grep", "aardvark"}, // a search: the index has its -wal and -shm
	} {
		if code, stdout, stderr := run(t, "", append([]string{"--db", db}, args...)...); code != 0 {
			t.Fatalf("memstore %v: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
	if err := writeKeyFile(db+".key", "secret"); err != nil {
		t.Fatal(err)
	}
	var files int
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == top || p == out || p == note {
			return err // the test's own
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := private.FileMode
		if d.IsDir() {
			want = private.DirMode
		} else {
			files++
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s has mode %#o, want %#o", p, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// m.db, m.db-search, m.db.key, old.jsonl, new.jsonl, out/a.md, out/deep/b.md
	if files < 7 {
		t.Errorf("checked %d files, want at least 7", files)
	}
}

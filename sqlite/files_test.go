//go:build unix

package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/memstore/memstore/internal/private"
	"github.com/memstore/memstore/sqlite"
)

// withUmask runs fn with the process's umask set to mask. The umask is
// the process's, so no test of this package runs in parallel.
func withUmask(mask int, fn func()) {
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	fn()
}

// checkPrivate fails the test for each file of dir whose mode is not
// private.FileMode, and returns how many files it checked.
func checkPrivate(tb testing.TB, dir, what string) int {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			tb.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != private.FileMode {
			tb.Errorf("%s: %s has mode %#o, want %#o", what, e.Name(), got, private.FileMode)
		}
	}
	return len(entries)
}

// TestFilesArePrivate: every file memstore makes beside the database (the
// database, the search index and SQLite's -wal and -shm files of both)
// is its owner's only, whatever the umask; and an index file that an
// older version made readable by all is made private at Open.
func TestFilesArePrivate(t *testing.T) {
	ctx := context.Background()
	for _, mask := range []int{0, 0o022} {
		withUmask(mask, func() {
			dir := t.TempDir()
			path := filepath.Join(dir, "m.db")
			db, err := sqlite.Open(ctx, path, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := mustStore(t, db)
			mustCreate(t, db, s.ID, "/a.md", "aardvark")
			if err := db.WaitSearchIndex(ctx); err != nil {
				t.Fatal(err)
			}
			// Open, the database and the index have their -wal and -shm.
			if n := checkPrivate(t, dir, "open"); n != 6 {
				t.Errorf("umask %#o: %d files beside the database, want 6", mask, n)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(sqlite.IndexPath(path), 0o644); err != nil {
				t.Fatal(err)
			}
			db = mustOpenAt(t, path, sqlite.Options{})
			if !found(t, db, s.ID, "aardvark", "/a.md") {
				t.Error("the memory is not found after reopening")
			}
			checkPrivate(t, dir, "reopened")
		})
	}
}

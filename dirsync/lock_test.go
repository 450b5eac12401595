//go:build unix

package dirsync_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/memstore/memstore/dirsync"
)

// TestBusy: a sync of a directory another sync holds fails at once with
// ErrBusy and changes nothing.
func TestBusy(t *testing.T) {
	s, dir := pulled(t, "/a.md", "a\n")
	f, err := os.OpenFile(filepath.Join(dir, ".memstore-sync.lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	s.put(t, "/a.md", "a2\n")
	if _, err := dirsync.Sync(t.Context(), s.options(dir)); !errors.Is(err, dirsync.ErrBusy) {
		t.Fatalf("sync of a locked directory: %v; want ErrBusy", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.md")); string(data) != "a\n" {
		t.Errorf("a.md = %q; the busy sync wrote", data)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	mustSync(t, s.options(dir))
	if data, _ := os.ReadFile(filepath.Join(dir, "a.md")); string(data) != "a2\n" {
		t.Errorf("a.md = %q after the lock was released", data)
	}
}

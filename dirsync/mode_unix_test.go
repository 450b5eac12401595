//go:build unix

package dirsync_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/memstore/memstore/dirsync"
)

// TestNewFilesPrivateWhateverUmask: a pulled file, a conflict copy and
// the state file are 0600 even under a umask that would make them
// read-only (0277). The umask is the process's, so this test does not
// run in parallel.
func TestNewFilesPrivateWhateverUmask(t *testing.T) {
	s := newServer(t, serverOptions{})
	s.put(t, "/remote.md", "r\n")
	s.put(t, "/differs.md", "theirs\n")
	dir := t.TempDir()
	write(t, dir, map[string]string{"differs.md": "mine\n"})
	old := syscall.Umask(0o277)
	defer syscall.Umask(old)
	mustSync(t, s.options(dir))
	syscall.Umask(old)
	for _, name := range []string{"remote.md", "differs.conflict-laptop-20260901T123456Z.md", dirsync.StateFile} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", name, fi.Mode().Perm(), err)
		}
	}
}

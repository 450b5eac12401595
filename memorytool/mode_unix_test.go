//go:build unix

package memorytool_test

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/memstore/memstore/memorytool"
)

// TestFilesPrivateWhateverUmask: created and edited files are 0600, as
// promised, even under a umask that would make them read-only (0277).
// The umask is the process's, so this test does not run in parallel.
func TestFilesPrivateWhateverUmask(t *testing.T) {
	tool, dir := mustOpen(t, memorytool.Options{})
	old := syscall.Umask(0o277)
	defer syscall.Umask(old)
	for _, in := range []map[string]any{create("/memories/n.md", "a\n"), create("/memories/e.md", "b\n"), strReplace("/memories/e.md", "b", "c")} {
		if got := do(t, tool, in); got.IsError {
			t.Fatalf("%v: %q", in, got.Content)
		}
	}
	syscall.Umask(old)
	assertMode(t, filepath.Join(dir, "n.md"), 0o600)
	assertMode(t, filepath.Join(dir, "e.md"), 0o600)
}

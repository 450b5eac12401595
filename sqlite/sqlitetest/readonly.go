package sqlitetest

import (
	"os"
	"os/exec"
	"testing"
)

// ReadOnly makes the file or directory at path read-only for this process
// until the test ends. Root ignores file modes, so as root it sets the
// file system's immutable attribute instead (chattr +i), which binds root
// too; the test is skipped where that cannot be done.
func ReadOnly(tb testing.TB, path string) {
	tb.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	if os.Geteuid() != 0 {
		mode := os.FileMode(0o400)
		if fi.IsDir() {
			mode = 0o500
		}
		if err := os.Chmod(path, mode); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { os.Chmod(path, fi.Mode().Perm()) })
		return
	}
	chattr, err := exec.LookPath("chattr")
	if err != nil {
		tb.Skip("running as root, which ignores file modes, without chattr to make a file immutable instead")
	}
	if out, err := exec.Command(chattr, "+i", path).CombinedOutput(); err != nil {
		tb.Skipf("running as root, which ignores file modes, on a file system that cannot make a file immutable instead: %v: %s", err, out)
	}
	// Registered last, so it runs before the removal of the test's
	// directories.
	tb.Cleanup(func() {
		if out, err := exec.Command(chattr, "-i", path).CombinedOutput(); err != nil {
			tb.Errorf("chattr -i %s: %v: %s", path, err, out)
		}
	})
}

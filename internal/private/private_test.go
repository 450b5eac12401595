//go:build unix

package private

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestModes: a file is made with FileMode whatever the umask (a umask of
// 0277 would make it read-only), an existing file is narrowed by
// Restrict, and Create leaves an existing file alone.
func TestModes(t *testing.T) {
	old := syscall.Umask(0o277)
	defer syscall.Umask(old)
	dir := t.TempDir()
	mode := func(name string) os.FileMode {
		t.Helper()
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	made := filepath.Join(dir, "made")
	if ok, err := Create(made); err != nil || !ok {
		t.Fatalf("Create: %v %v", ok, err)
	}
	if got := mode(made); got != FileMode {
		t.Errorf("Create: mode %#o, want %#o", got, FileMode)
	}
	wide := filepath.Join(dir, "wide")
	for _, name := range []string{wide, made} {
		if err := os.WriteFile(name, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(name, 0o664); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := Create(made); err != nil || ok {
		t.Fatalf("Create of an existing file: %v %v", ok, err)
	}
	if got := mode(made); got != 0o664 {
		t.Errorf("Create changed an existing file's mode to %#o", got)
	}
	if err := Restrict(wide); err != nil {
		t.Fatal(err)
	}
	if got := mode(wide); got != FileMode {
		t.Errorf("Restrict: mode %#o, want %#o", got, FileMode)
	}
	if err := Restrict(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("Restrict of a missing file: %v", err)
	}
}

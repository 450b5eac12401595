package private

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// writeAt is WriteAt on the directory of name, opened for it.
func writeAt(name string, data []byte, exclusive bool, opts ...Option) error {
	dir, err := os.Open(filepath.Dir(name))
	if err != nil {
		return err
	}
	defer dir.Close()
	return WriteAt(int(dir.Fd()), filepath.Base(name), data, exclusive, opts...)
}

// TestWriteAt: WriteAt gives what WriteFileIn and WriteNewIn give: the
// mode whatever the umask, KeepMode's, the whole content, an exclusive
// write that refuses an existing file and leaves it unchanged, and no
// temporary file left behind.
func TestWriteAt(t *testing.T) {
	for _, mask := range []int{0, 0o277} {
		old := syscall.Umask(mask)
		tests := []struct {
			name      string
			had       fs.FileMode // 0: no file before
			exclusive bool
			opts      []Option
			want      fs.FileMode
			wantErr   error
		}{
			{"new", 0, false, nil, FileMode, nil},
			{"over 0644", 0o644, false, nil, FileMode, nil},
			{"KeepMode over 0750", 0o750, false, []Option{KeepMode()}, 0o640, nil},
			{"exclusive, new", 0, true, nil, FileMode, nil},
			{"exclusive over a file", 0o644, true, nil, 0o644, fs.ErrExist},
			{"TempPrefix", 0, false, []Option{TempPrefix(".tmp-1-")}, FileMode, nil},
		}
		data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
		for _, tt := range tests {
			dir := t.TempDir()
			name := filepath.Join(dir, "f")
			if tt.had != 0 {
				if err := os.WriteFile(name, []byte("old"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(name, tt.had); err != nil {
					t.Fatal(err)
				}
			}
			err := writeAt(name, data, tt.exclusive, tt.opts...)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Errorf("umask %#o, %s: error %v, want %v", mask, tt.name, err, tt.wantErr)
			}
			want := data
			if tt.wantErr != nil {
				want = []byte("old")
			}
			if got, err := os.ReadFile(name); err != nil || !bytes.Equal(got, want) {
				t.Errorf("umask %#o, %s: %d bytes (%v), want %d", mask, tt.name, len(got), err, len(want))
			}
			if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != tt.want {
				t.Errorf("umask %#o, %s: mode %v (%v), want %#o", mask, tt.name, fi.Mode().Perm(), err, tt.want)
			}
			if got := entries(t, dir); !slices.Equal(got, []string{"f"}) {
				t.Errorf("umask %#o, %s: directory holds %v; want only f", mask, tt.name, got)
			}
		}
		syscall.Umask(old)
	}
}

// TestWriteAtFailure: a write that cannot be put in place (a directory
// where the file should go) says why, names the destination, leaves the
// directory as it was and no temporary file.
func TestWriteAtFailure(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "f"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, exclusive := range []bool{false, true} {
		err := writeAt(filepath.Join(dir, "f"), []byte("x"), exclusive)
		if err == nil || !strings.HasPrefix(err.Error(), "f ") && !strings.HasSuffix(err.Error(), " f: is a directory") {
			t.Errorf("exclusive %v: error %v; want one naming f", exclusive, err)
		}
		if exclusive != errors.Is(err, fs.ErrExist) {
			t.Errorf("exclusive %v: error %v; fs.ErrExist only when exclusive", exclusive, err)
		}
		if fi, err := os.Lstat(filepath.Join(dir, "f")); err != nil || !fi.IsDir() {
			t.Errorf("exclusive %v: f is no longer the directory", exclusive)
		}
		if got := entries(t, dir); !slices.Equal(got, []string{"f"}) {
			t.Errorf("exclusive %v: directory holds %v; want only f", exclusive, got)
		}
	}
}

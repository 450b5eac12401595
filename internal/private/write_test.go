//go:build unix

package private

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

// inRoot calls fn with dir opened as a root.
func inRoot(dir string, fn func(*os.Root) error) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return fn(root)
}

// TestWriteModes: every writer gives FileMode whatever the umask (0 would
// leave 0600 as asked, 0277 would make it read-only), and KeepMode keeps
// a replaced file's mode but its execute bits. The umask is the process's,
// so this test does not run in parallel.
func TestWriteModes(t *testing.T) {
	for _, mask := range []int{0, 0o277} {
		old := syscall.Umask(mask)
		tests := []struct {
			name  string
			had   fs.FileMode // 0: no file before
			write func(name string) error
			want  fs.FileMode
		}{
			{"WriteFile, new", 0, func(n string) error { return WriteFile(n, []byte("x")) }, FileMode},
			{"WriteFile over 0644", 0o644, func(n string) error { return WriteFile(n, []byte("x")) }, FileMode},
			{"WriteFile KeepMode over 0644", 0o644, func(n string) error { return WriteFile(n, []byte("x"), KeepMode()) }, 0o644},
			{"WriteFile KeepMode over 0750", 0o750, func(n string) error { return WriteFile(n, []byte("x"), KeepMode()) }, 0o640},
			{"WriteFile KeepMode, new", 0, func(n string) error { return WriteFile(n, []byte("x"), KeepMode()) }, FileMode},
			{"WriteNew", 0, func(n string) error { return WriteNew(n, []byte("x")) }, FileMode},
			{"Begin, Commit", 0, func(n string) error {
				p, err := Begin(n)
				if err != nil {
					return err
				}
				defer p.Discard()
				return p.Commit()
			}, FileMode},
		}
		for _, tt := range tests {
			name := filepath.Join(t.TempDir(), "f")
			if tt.had != 0 {
				if err := os.WriteFile(name, []byte("old"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(name, tt.had); err != nil {
					t.Fatal(err)
				}
			}
			if err := tt.write(name); err != nil {
				t.Errorf("umask %#o, %s: %v", mask, tt.name, err)
				continue
			}
			if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != tt.want {
				t.Errorf("umask %#o, %s: mode %v (%v), want %#o", mask, tt.name, fi.Mode().Perm(), err, tt.want)
			}
		}
		syscall.Umask(old)
	}
}

// TestWriteReplaces: a reader of a file that is being replaced sees the
// old content or the new, never a part, and no temporary file is left.
func TestWriteReplaces(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	contents := [][]byte{bytes.Repeat([]byte("a"), 1<<16), bytes.Repeat([]byte("b"), 1<<17)}
	if err := WriteFile(name, contents[0]); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 1; i <= 60; i++ {
			if err := WriteFile(name, contents[i%2]); err != nil {
				t.Error(err)
				break
			}
		}
		close(done)
	})
	defer wg.Wait() // a failed read ends the test only once the writes end
	for reads := 0; ; reads++ {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, contents[0]) && !bytes.Equal(got, contents[1]) {
			t.Fatalf("read %d: %d bytes, neither the old content nor the new", reads, len(got))
		}
		select {
		case <-done:
		default:
			continue
		}
		break
	}
	wg.Wait()
	if got, err := os.ReadFile(name); err != nil || !bytes.Equal(got, contents[0]) {
		t.Errorf("after the last write: %d bytes, %v; want the 60th write's", len(got), err)
	}
	if got := entries(t, dir); !slices.Equal(got, []string{"f"}) {
		t.Errorf("directory holds %v; want only f", got)
	}
}

// TestWriteFailures: a write that cannot be done says why, leaves the
// destination as it was and leaves no temporary file.
func TestWriteFailures(t *testing.T) {
	tests := []struct {
		name    string
		write   func(dir string) error
		want    string   // in the error
		is      error    // the error matches it, if not nil
		entries []string // the directory's after the failure
	}{
		{"WriteNew over a file", func(dir string) error {
			return WriteNew(filepath.Join(dir, "f"), []byte("new"))
		}, "/f already exists and was left unchanged", fs.ErrExist, []string{"f"}},
		{"WriteNewIn over a file", func(dir string) error {
			return inRoot(dir, func(root *os.Root) error { return WriteNewIn(root, "f", []byte("new"), TempPrefix(".mine-")) })
		}, "f already exists and was left unchanged", fs.ErrExist, []string{"f"}},
		{"WriteNew over a dangling link", func(dir string) error {
			if err := os.Symlink("nowhere", filepath.Join(dir, "link")); err != nil {
				return err
			}
			return WriteNew(filepath.Join(dir, "link"), []byte("new"))
		}, "/link already exists", fs.ErrExist, []string{"f", "link"}},
		{"a missing directory", func(dir string) error {
			return WriteFile(filepath.Join(dir, "missing", "f"), []byte("new"))
		}, "open directory " + "DIR/missing: no such file or directory", fs.ErrNotExist, []string{"f"}},
		{"a missing directory below a root", func(dir string) error {
			return inRoot(dir, func(root *os.Root) error { return WriteFileIn(root, "missing/f", []byte("new")) })
		}, "open directory missing: no such file or directory", fs.ErrNotExist, []string{"f"}},
		{"a directory outside the root", func(dir string) error {
			return inRoot(dir, func(root *os.Root) error { return WriteFileIn(root, "../f", []byte("new")) })
		}, "open directory ..: path escapes from parent", nil, []string{"f"}},
		{"a directory in the way", func(dir string) error {
			if err := os.MkdirAll(filepath.Join(dir, "d", "sub"), 0o700); err != nil {
				return err
			}
			return WriteFile(filepath.Join(dir, "d"), []byte("new"))
		}, "write DIR/d: file exists", nil, []string{"d", "f"}},
		{"not a file name", func(dir string) error {
			return WriteFile(dir+"/", []byte("new"))
		}, "not a file name", nil, []string{"f"}},
		{"discarded", func(dir string) error {
			p, err := Begin(filepath.Join(dir, "f"))
			if err != nil {
				return err
			}
			if _, err := p.Write([]byte("new")); err != nil {
				return err
			}
			p.Discard()
			if err := p.Commit(); err != nil {
				return err
			}
			return nil
		}, "write DIR/f: file already closed", fs.ErrClosed, []string{"f"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := t.TempDir()
			dir := filepath.Join(top, "dir")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			f := filepath.Join(dir, "f")
			if err := os.WriteFile(f, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(f, 0o644); err != nil {
				t.Fatal(err)
			}
			err := tt.write(dir)
			if err == nil {
				t.Fatal("no error")
			}
			if want := strings.ReplaceAll(tt.want, "DIR", dir); !strings.Contains(err.Error(), want) {
				t.Errorf("error %q; want it to say %q", err, want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("f changed mode: %v, %v", fi.Mode().Perm(), err)
			}
			if got, err := os.ReadFile(f); err != nil || string(got) != "old" {
				t.Errorf("f holds %q, %v; want it unchanged", got, err)
			}
			if got := entries(t, dir); !slices.Equal(got, tt.entries) {
				t.Errorf("directory holds %v; want %v", got, tt.entries)
			}
			if got := entries(t, top); !slices.Equal(got, []string{"dir"}) {
				t.Errorf("the directory above holds %v; want only dir", got)
			}
		})
	}
}

// TestWriteTempName: the temporary file is there only while the write
// is, under the name asked for, and WriteNew puts new content in place.
func TestWriteTempName(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		opts   []Option
		prefix string
	}{
		{nil, ".f.tmp-"},
		{[]Option{TempPrefix(".mine.tmp-")}, ".mine.tmp-"},
	} {
		name := filepath.Join(dir, "f")
		p, err := Begin(name, tt.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Write([]byte("new")); err != nil {
			t.Fatal(err)
		}
		if got := entries(t, dir); len(got) != 1 || !strings.HasPrefix(got[0], tt.prefix) || len(got[0]) != len(tt.prefix)+16 {
			t.Errorf("while writing, the directory holds %v; want one %s file", got, tt.prefix)
		}
		if err := p.Commit(); err != nil {
			t.Fatal(err)
		}
		p.Discard() // after Commit, nothing
		if got := entries(t, dir); !slices.Equal(got, []string{"f"}) {
			t.Errorf("after Commit, the directory holds %v; want only f", got)
		}
		if got, err := os.ReadFile(name); err != nil || string(got) != "new" {
			t.Errorf("f holds %q, %v", got, err)
		}
		if err := os.Remove(name); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteNew(filepath.Join(dir, "key"), []byte("secret\n")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "key")); err != nil || string(got) != "secret\n" {
		t.Errorf("key holds %q, %v", got, err)
	}
	if got := entries(t, dir); !slices.Equal(got, []string{"key"}) {
		t.Errorf("after WriteNew, the directory holds %v; want only key", got)
	}
}

package memorytool

import (
	"io/fs"
	"os"
	"path"
)

// dirReader is an open directory that a listing reads: the portable one
// over an *os.File in the root (osDir), and on Linux one over a bare
// descriptor (fdDir in fast_linux.go) that reads and stats entries at the
// open directory without the os package's bookkeeping.
type dirReader interface {
	// entries are the directory's names but . and .., each with whether
	// the directory says it is a symlink.
	entries() ([]dirEntry, error)
	// lstat is the entry name itself, no symlink followed; ok is false if
	// it cannot be looked at (gone since it was read).
	lstat(name string) (fi entryInfo, ok bool)
	// sub opens the subdirectory name for reading, refusing a symlink.
	sub(name string) (dirReader, bool)
	close()
}

type dirEntry struct {
	name string
	link bool
}

// entryInfo is what a listing needs of an entry.
type entryInfo struct {
	size                int64
	dir, regular, links bool
}

func infoOf(fi fs.FileInfo) entryInfo {
	return entryInfo{size: fi.Size(), dir: fi.IsDir(), regular: fi.Mode().IsRegular(), links: fi.Mode()&fs.ModeSymlink != 0}
}

// osDir is the directory dir (relative to root) open as f.
type osDir struct {
	root  *os.Root
	f     *os.File
	dir   string
	infos map[string]fs.DirEntry
}

func (d *osDir) entries() ([]dirEntry, error) {
	list, err := d.f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	d.infos = make(map[string]fs.DirEntry, len(list))
	out := make([]dirEntry, len(list))
	for i, e := range list {
		out[i] = dirEntry{e.Name(), e.Type()&fs.ModeSymlink != 0}
		d.infos[e.Name()] = e
	}
	return out, nil
}

// lstat uses what ReadDir found at the open directory, or else looks the
// entry up in the root.
func (d *osDir) lstat(name string) (entryInfo, bool) {
	if e, ok := d.infos[name]; ok {
		if fi, err := e.Info(); err == nil {
			return infoOf(fi), true
		}
	}
	fi, err := d.root.Lstat(path.Join(d.dir, name))
	if err != nil {
		return entryInfo{}, false
	}
	return infoOf(fi), true
}

func (d *osDir) sub(name string) (dirReader, bool) {
	return openDir(d.root, path.Join(d.dir, name))
}

func (d *osDir) close() { d.f.Close() }

// openDir opens the directory dir of root for a listing, refusing a
// symlink as its last element.
func openDir(root *os.Root, dir string) (dirReader, bool) {
	f, err := openNoFollow(root, dir)
	if err != nil {
		return nil, false
	}
	return &osDir{root: root, f: f, dir: dir}, true
}

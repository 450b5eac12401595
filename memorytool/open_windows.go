package memorytool

import (
	"io/fs"
	"os"
	"syscall"
)

// openNoFollow opens name in root for reading, refusing a symlink or
// junction as its last component (ELOOP) and anything that is not a file
// or directory (ENXIO). Windows has no O_NOFOLLOW, and os.Root follows
// links that stay inside the root, so the entry is checked with Lstat
// first, and the file opened is then checked to be that same entry: a
// link swapped in between is refused, not followed.
func openNoFollow(root *os.Root, name string) (*os.File, error) {
	before, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if err := openable(name, before); err != nil {
		return nil, err
	}
	f, err := root.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	after, err := f.Stat()
	if err == nil && !os.SameFile(before, after) {
		err = &fs.PathError{Op: "open", Path: name, Err: syscall.ELOOP}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// openable refuses what openNoFollow must not open, as the open(2) of
// Unix would: a link with ELOOP, a socket or device with ENXIO.
func openable(name string, fi fs.FileInfo) error {
	switch m := fi.Mode(); {
	case m&(fs.ModeSymlink|fs.ModeIrregular) != 0:
		return &fs.PathError{Op: "open", Path: name, Err: syscall.ELOOP}
	case !m.IsRegular() && !m.IsDir():
		return &fs.PathError{Op: "open", Path: name, Err: syscall.ENXIO}
	}
	return nil
}

// Package private makes the files that hold memories or credentials (a
// database and everything beside it, key files, exports, memory
// directories) readable and writable by their owner only. The mode is set
// on the open file itself, so it does not depend on the umask: SQLite, for
// one, makes its files 0644 whatever the umask allows.
//
// It is also the one writer of such files (WriteFile, WriteNew, Begin):
// whole or not at all, synced, with its directory synced. Writing lives
// here rather than in a package of its own because the mode is part of
// every write, and this package is where the modes are kept.
package private

import (
	"io/fs"
	"os"
)

// FileMode is the mode of every such file.
const FileMode fs.FileMode = 0o600

// DirMode is the mode of the directories memstore makes for them.
const DirMode fs.FileMode = 0o700

// Create makes the file name with FileMode if there is none, and leaves
// an existing one as it is; it reports whether it made it.
func Create(name string) (made bool, err error) {
	f, err := os.OpenFile(name, os.O_RDONLY|os.O_CREATE|os.O_EXCL, FileMode)
	if os.IsExist(err) {
		return false, nil
	}
	if f, err = restrict(f, err); err != nil {
		return false, err
	}
	return true, f.Close()
}

// Restrict gives the file name FileMode if it grants anything to others
// than its owner; a missing file is no error.
func Restrict(name string) error {
	fi, err := os.Stat(name)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return err
	case fi.Mode().Perm()&^FileMode == 0:
		return nil
	}
	return os.Chmod(name, FileMode)
}

func restrict(f *os.File, err error) (*os.File, error) {
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(FileMode); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

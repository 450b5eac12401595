package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// withLog is a database file and the files SQLite keeps beside it in WAL
// mode: the write-ahead log and its index (-shm).
func withLog(file string) []string { return []string{file, file + "-wal", file + "-shm"} }

// ErrReadOnly is (wrapped in) Open's error when this user may not write
// the database, the search index, or the files beside them. memstore
// writes even to serve reads (the use of keys, the search indexes), so it
// does not start on a database it could only read.
var ErrReadOnly = errors.New("read-only")

// writable checks that this user may write file, its -wal and -shm files,
// and their directory when one of those is missing and so must be made.
// SQLite would open a file it may not write read-only, and fail only at
// the first write.
func writable(file string) error {
	need := func(name, what string) error {
		err := canWrite(name)
		if err == nil {
			return nil
		}
		return fmt.Errorf("%s %s is %w for this user (%v): memstore needs to write the database, its search index, the -wal and -shm files beside them and their directory; check their permissions", what, name, ErrReadOnly, err)
	}
	dirNeeded := false
	for _, f := range withLog(file) {
		if _, err := os.Stat(f); os.IsNotExist(err) {
			dirNeeded = true
			continue
		}
		if err := need(f, "file"); err != nil {
			return err
		}
	}
	if dirNeeded {
		return need(filepath.Dir(file), "directory")
	}
	return nil
}

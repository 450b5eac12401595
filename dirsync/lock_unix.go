//go:build unix

package dirsync

import (
	"errors"
	"os"
	"syscall"

	"github.com/memstore/memstore/internal/private"
)

// lock takes the directory's sync lock, so that two syncs of one
// directory (a --watch and a one-off run) never interleave their plans.
// It is an advisory lock on a file of its own, released by the kernel if
// the process dies.
func lock(root *os.Root) (unlock func(), err error) {
	f, err := root.OpenFile(lockFile, os.O_RDWR|os.O_CREATE, private.FileMode)
	if err != nil {
		return nil, localErr("lock the directory", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, localErr("lock the directory", err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

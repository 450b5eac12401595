//go:build linux || darwin || netbsd || openbsd || dragonfly

package memdir

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f, waiting for it, and
// returns the function that releases it. flock locks are held by the
// open file, so two descriptors in one process exclude each other too.
func lockFile(f *os.File) (unlock func(), err error) {
	fd := int(f.Fd())
	for {
		err = syscall.Flock(fd, syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return func() { _ = syscall.Flock(fd, syscall.LOCK_UN) }, nil
}

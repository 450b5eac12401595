//go:build linux || darwin

package npmtest

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive lock on dir's .npmtest.lock, waiting for any
// other process that holds it, and returns its release. The lock goes
// with the process, should it die holding it.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, ".npmtest.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

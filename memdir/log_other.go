//go:build !(linux || darwin || netbsd || openbsd || dragonfly)

package memdir

import "os"

// lockFile is a no-op where the syscall package has no flock (Windows,
// FreeBSD, Solaris): a single append-mode write per entry is then all
// that keeps concurrent writers apart.
func lockFile(f *os.File) (unlock func(), err error) { return func() {}, nil }

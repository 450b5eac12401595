//go:build unix

package memorytool

import (
	"os"
	"syscall"
)

// openNoFollow opens name in root for reading, refusing a symlink as its
// last component (ELOOP) and without blocking on a FIFO (the open
// succeeds, and the caller sees it is not a regular file). The kernel
// checks both in the open itself, so nothing can be swapped in between.
func openNoFollow(root *os.Root, name string) (*os.File, error) {
	return root.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

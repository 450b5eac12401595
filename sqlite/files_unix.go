//go:build unix

package sqlite

import "syscall"

// canWrite asks access(2) whether this user may write the file or
// directory name: it knows of modes, read-only mounts and immutable files.
func canWrite(name string) error { return syscall.Access(name, 2 /* W_OK */) }

package private

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"

	"golang.org/x/sys/unix"
)

// WriteAt is WriteFileIn (or, with exclusive, WriteNewIn) for the file
// base in the directory open as dirfd, for a caller that has opened and
// checked that directory already: the same synced temporary file beside
// the destination, renamed (or linked) into place, then the directory
// synced, on the descriptor itself. No path is walked again, and the
// temporary file is written through its bare descriptor, so a write takes
// a dozen system calls rather than thirty. base must be a single name.
func WriteAt(dirfd int, base string, data []byte, exclusive bool, opts ...Option) (err error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	mode := uint32(FileMode)
	if o.keepMode {
		var st unix.Stat_t
		if unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			mode = st.Mode & 0o777 &^ 0o111
		}
	}
	prefix := o.prefix(base)
	var tmp string
	fd := -1
	for range tempAttempts {
		tmp = fmt.Sprintf("%s%016x", prefix, rand.Uint64())
		fd, err = Retry(func() (int, error) {
			return unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(FileMode))
		})
		if err != unix.EEXIST {
			break
		}
	}
	switch {
	case err == unix.EEXIST:
		return fmt.Errorf("write %s: no free temporary name beside it after %d tries", base, tempAttempts)
	case err != nil:
		return fail("create a file beside", base, err)
	}
	placed := false
	defer func() {
		if fd >= 0 {
			unix.Close(fd)
		}
		if !placed {
			unix.Unlinkat(dirfd, tmp, 0)
		}
	}()
	// Set on the open file, so that the umask has no say.
	if err := unix.Fchmod(fd, mode); err != nil {
		return fail("set the mode of", base, err)
	}
	for rest := data; len(rest) > 0; {
		n, err := Retry(func() (int, error) { return unix.Write(fd, rest) })
		if err == nil && n == 0 {
			err = io.ErrShortWrite
		}
		if err != nil {
			return fail("write", base, err)
		}
		rest = rest[n:]
	}
	err = unix.Fsync(fd)
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	fd = -1
	if err != nil {
		return fail("write", base, err)
	}
	if exclusive {
		err = unix.Linkat(dirfd, tmp, dirfd, base, 0)
		if errors.Is(err, unix.EEXIST) {
			return &existsError{base}
		}
		// The temporary name goes before the directory is synced, so
		// that a crash cannot bring it back (the deferred unlink).
	} else {
		err = unix.Renameat(dirfd, tmp, dirfd, base)
		placed = err == nil
	}
	if err != nil {
		return fail("write", base, err)
	}
	if exclusive {
		unix.Unlinkat(dirfd, tmp, 0)
		placed = true
	}
	SyncDirFD(dirfd)
	return nil
}

// SyncDirFD is SyncDir for a directory open as fd.
func SyncDirFD(fd int) { unix.Fsync(fd) }

// Retry repeats a system call that a signal interrupted.
func Retry(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if err != unix.EINTR {
			return n, err
		}
	}
}

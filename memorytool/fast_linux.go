package memorytool

import (
	"io"
	"os"
	"path"
	"sync/atomic"

	"github.com/memstore/memstore/internal/private"
	"golang.org/x/sys/unix"
)

// The fast path (Linux): a command on a path without symlinks takes one
// openat2 for the directory that holds the entry, refusing any symlink on
// the way and anything beneath which the root does not lie, then works
// on that open directory by name. Everything else (a symlink anywhere, a
// missing directory, a kernel without openat2) takes the general path of
// resolve.go, with the same results.

// fastRoot is the root directory as a descriptor for openat2.
type fastRoot struct {
	f   *os.File
	off atomic.Bool // openat2 is missing or refused: general path only
}

func (r *fastRoot) open(root *os.Root) {
	if f, err := root.Open("."); err == nil {
		r.f = f
		f.Fd() // a directory: the blocking mode Fd sets changes nothing
	}
}

// disable sends every command the general way from now on.
func (r *fastRoot) disable() { r.off.Store(true) }

func (r *fastRoot) close() {
	if r.f != nil {
		r.f.Close()
	}
}

// resolveFast is resolve for the cleaned path rel (not the root) when its
// directory exists and has no symlink on the way, and its last element is
// missing or not a symlink; ok is false otherwise, and the caller takes
// the general path. The target carries the open directory: close it.
func (l *Local) resolveFast(p, rel string) (t target, ok bool) {
	if l.fast.f == nil || l.fast.off.Load() {
		return target{}, false
	}
	dir, base := path.Split(rel)
	dir = path.Clean(dir) // "." for an entry of the root
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	var fd int
	var err error
	// EAGAIN (a rename raced the walk) leaves the path to the general
	// code rather than retrying without end.
	for {
		fd, err = unix.Openat2(int(l.fast.f.Fd()), dir, &how)
		if err != unix.EINTR {
			break
		}
	}
	if err == unix.ENOSYS || err == unix.EPERM {
		l.fast.off.Store(true)
	}
	if err != nil {
		return target{}, false
	}
	var st unix.Stat_t
	err = unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == nil && st.Mode&unix.S_IFMT != unix.S_IFLNK:
		t.exists = true
		t.regular = st.Mode&unix.S_IFMT == unix.S_IFREG
	case err == unix.ENOENT:
	default:
		unix.Close(fd)
		return target{}, false
	}
	t.model, t.full, t.real, t.dir, t.base = p, rel, rel, dir, base
	t.fast, t.dirFD = true, fd
	return t, true
}

// close releases the directory that resolveFast opened.
func (t target) close() {
	if t.fast {
		unix.Close(t.dirFD)
	}
}

// readFast reads t, a regular file when resolved, through its open
// directory. ok is false if it is no longer a regular file: the caller
// takes the general path, which says what it is.
func readFast(t target) (b []byte, ok bool, err error) {
	fd, err := private.Retry(func() (int, error) {
		return unix.Openat(t.dirFD, t.base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, false, nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, false, nil
	}
	b, err = readSized(fdReader(fd), st.Size)
	return b, true, err
}

// fdReader reads a bare descriptor.
type fdReader int

func (r fdReader) Read(b []byte) (int, error) {
	n, err := private.Retry(func() (int, error) { return unix.Read(int(r), b) })
	if n == 0 && err == nil && len(b) > 0 {
		return 0, io.EOF
	}
	return max(n, 0), err
}

// writeFast writes t through its open directory; see private.WriteAt.
func (l *Local) writeFast(t target, data []byte, exclusive bool) error {
	return private.WriteAt(t.dirFD, t.base, data, exclusive, l.temp)
}

// removeFast removes the file t through its open directory and syncs it.
func removeFast(t target) error {
	if err := unix.Unlinkat(t.dirFD, t.base, 0); err != nil {
		return err
	}
	private.SyncDirFD(t.dirFD)
	return nil
}

// renameFast moves from to to through their open directories and syncs
// both.
func renameFast(from, to target) error {
	if err := unix.Renameat(from.dirFD, from.base, to.dirFD, to.base); err != nil {
		return err
	}
	private.SyncDirFD(from.dirFD)
	private.SyncDirFD(to.dirFD)
	return nil
}

package memorytool

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path"
	"sync"
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
//
// With unchecked (an edit, which reads the file first), the entry is not
// looked at: it is taken for a regular file, and readFast, which opens it
// refusing a symlink, says what it is.
func (l *Local) resolveFast(p, rel string, unchecked bool) (t target, ok bool) {
	dir, base := path.Split(rel)
	dir = path.Clean(dir) // "." for an entry of the root
	fd, ok := l.fast.openat2(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if !ok {
		return target{}, false
	}
	var st unix.Stat_t
	var err error
	if !unchecked {
		err = unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
	}
	switch {
	case unchecked:
		t.exists, t.regular, t.unchecked = true, true, true
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

// openat2 opens rel (cleaned, "." for the root) below the root with
// flags, refusing any symlink on the way or anything that leads out of
// the root. ok is false if it cannot: the caller takes the general path,
// which says why.
func (r *fastRoot) openat2(rel string, flags uint64) (fd int, ok bool) {
	if r.f == nil || r.off.Load() {
		return -1, false
	}
	how := unix.OpenHow{
		Flags:   flags,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	var err error
	// EAGAIN (a rename raced the walk) leaves the path to the general
	// code rather than retrying without end.
	for {
		fd, err = unix.Openat2(int(r.f.Fd()), rel, &how)
		if err != unix.EINTR {
			break
		}
	}
	if err == unix.ENOSYS || err == unix.EPERM {
		r.off.Store(true)
	}
	return fd, err == nil
}

// viewFast is View for a path that is a regular file or a directory with
// no symlink on the way or at its end: one openat2 of the path itself,
// refusing a symlink anywhere and without waiting on a FIFO, then the
// file is read, or the directory listed, through that descriptor. ok is
// false for anything else (missing, a symlink, a FIFO): the general path
// says what it is. The caller holds the lock.
func (l *Local) viewFast(ctx context.Context, p, rel string, viewRange []int) (out string, ok bool, err error) {
	fd, ok := l.fast.openat2(rel, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC)
	if !ok {
		return "", false, nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return "", false, nil
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		b, err := readSized(fdReader(fd), st.Size)
		if err != nil {
			return "", true, l.pathError(p, err, false)
		}
		out, err := renderFile(p, l.loaded(target{model: p, real: rel}, b), viewRange, l.opts.MaxViewChars)
		return out, true, err
	case unix.S_IFDIR:
		out, err := l.list(ctx, p, fdDir(fd), rel, st.Size)
		return out, true, err
	}
	return "", false, nil
}

// fdDir is a directory open as a bare descriptor, for a listing: its
// entries are read with getdents64 and looked at with fstatat at the
// descriptor, and a subdirectory is opened by its single name, with
// O_NOFOLLOW, at the descriptor. The descriptor was opened beneath the
// root, and no name walks further than one step down.
type fdDir int

// direntBufs holds getdents64 buffers for reuse: a listing reads many
// directories, each into a buffer of this size.
var direntBufs = sync.Pool{New: func() any { return new([8 << 10]byte) }}

func (d fdDir) entries() ([]dirEntry, error) {
	var out []dirEntry
	p := direntBufs.Get().(*[8 << 10]byte)
	defer direntBufs.Put(p)
	buf := p[:]
	for {
		n, err := private.Retry(func() (int, error) { return unix.Getdents(int(d), buf) })
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		// struct linux_dirent64: ino (8 bytes), off (8), reclen (2),
		// type (1), then the name, NUL-terminated and padded.
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			typ := b[18]
			b = b[reclen:]
			if string(name) == "." || string(name) == ".." {
				continue
			}
			// DT_UNKNOWN (some file systems): lstat tells a symlink.
			out = append(out, dirEntry{string(name), typ == unix.DT_LNK})
		}
	}
}

func (d fdDir) lstat(name string) (entryInfo, bool) {
	var st unix.Stat_t
	if unix.Fstatat(int(d), name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return entryInfo{}, false
	}
	mode := st.Mode & unix.S_IFMT
	return entryInfo{size: st.Size, dir: mode == unix.S_IFDIR, regular: mode == unix.S_IFREG, links: mode == unix.S_IFLNK}, true
}

func (d fdDir) sub(name string) (dirReader, bool) {
	fd, err := private.Retry(func() (int, error) {
		return unix.Openat(int(d), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, false
	}
	return fdDir(fd), true
}

func (d fdDir) close() { unix.Close(int(d)) }

// close releases the directory that resolveFast opened.
func (t target) close() {
	if t.fast {
		unix.Close(t.dirFD)
	}
}

// readFast reads t, a regular file when resolved, through its open
// directory. ok is false if it is no longer a regular file: the caller
// takes the general path, which says what it is. For an unchecked t, a
// missing file is its error, and a symlink errStatFirst.
func readFast(t target) (b []byte, ok bool, err error) {
	fd, err := private.Retry(func() (int, error) {
		return unix.Openat(t.dirFD, t.base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	})
	switch {
	case t.unchecked && err == unix.ENOENT:
		return nil, true, err // missing
	case t.unchecked && err == unix.ELOOP:
		return nil, true, errStatFirst // a symlink: the general path
	case err != nil:
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

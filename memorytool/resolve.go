package memorytool

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
)

// maxSymlinkHops is Linux's MAXSYMLINKS: realpath(3) gives up with ELOOP
// after following this many links.
const maxSymlinkHops = 40

// target is a model path resolved against the host directory. Resolution
// follows the reference: the lexical path must stay inside the root, and the
// deepest existing ancestor, with its symlinks resolved, must too. All three
// paths are relative to the root and contain no symlinks in their existing
// directory part, so an os.Root can use them.
type target struct {
	model string // as the model sent it, for messages
	full  string // lexically cleaned; "." for the root itself
	// real is the path with every existing component's symlinks resolved
	// (the reference's realPath): reads and "does it exist" go here.
	real string
	// dir and base name full's own directory entry, with dir resolved:
	// writes, deletes and renames go here, so they act on a symlink itself
	// rather than its target, as the reference does.
	dir, base string
	// exists: the whole path resolved. dirMissing: full's directory does
	// not exist yet (create and rename make it).
	exists, dirMissing bool
	// fast: resolved by resolveFast, with dir open as dirFD (closed by
	// close) and no symlink on the way; regular: full is a regular file.
	fast, regular bool
	dirFD         int
	// unchecked: exists and regular are assumed, not looked at: the read
	// that opens the file checks them (readFast; edits only).
	unchecked bool
}

// errStatFirst is what an edit's read says when the file it opened
// without a stat first is a symlink: command then resolves the path in
// full and runs the edit again.
var errStatFirst = errors.New("memorytool: a symlink where a file was opened")

// resolve checks a model path and locates it under the root, for a
// command that holds it as how says (removing: the missing-path wording of
// delete and rename).
func (l *Local) resolve(p string, how access) (target, error) {
	short := how == removing
	rel, err := cleanPath(p)
	if err != nil {
		return target{}, err
	}
	t := target{model: p, full: rel, real: ".", exists: true}
	if rel == "." {
		return t, nil
	}
	if t, ok := l.resolveFast(p, rel, how == editing); ok {
		return t, nil
	}
	comps := strings.Split(rel, "/")
	last := comps[len(comps)-1]
	hops := 0
	dirAbs, i, err := l.walk(l.dir, comps[:len(comps)-1], &hops)
	var existing string // the deepest existing ancestor, resolved
	switch {
	case err == nil:
		existing = dirAbs
		realAbs, _, err := l.walk(dirAbs, []string{last}, &hops)
		switch {
		case err == nil:
			existing = realAbs
			t.real = realAbs
		case errors.Is(err, fs.ErrNotExist):
			t.exists = false
			t.real = path.Join(dirAbs, last)
		default:
			return target{}, l.pathError(p, err, short)
		}
		t.dir = dirAbs
	case errors.Is(err, fs.ErrNotExist):
		existing = dirAbs
		t.exists, t.dirMissing = false, true
		t.real = path.Join(append([]string{dirAbs}, comps[i:]...)...)
		t.dir = path.Dir(t.real)
	default:
		return target{}, l.pathError(p, err, short)
	}
	if _, ok := l.within(existing); !ok {
		return target{}, errSymlinkEscape()
	}
	// Stricter than the reference: the directory that holds the entry must
	// be inside too (a link out and a link back in is refused).
	var okReal, okDir bool
	t.real, okReal = l.within(t.real)
	t.dir, okDir = l.within(t.dir)
	if !okReal || !okDir {
		return target{}, errSymlinkEscape()
	}
	t.base = last
	return t, nil
}

// entry is the root-relative path of t's own directory entry.
func (t target) entry() string { return path.Join(t.dir, t.base) }

// within converts an absolute host path to one relative to the root,
// reporting whether it lies inside.
func (l *Local) within(abs string) (string, bool) {
	if abs == l.dir {
		return ".", true
	}
	prefix := l.dir
	if prefix != "/" {
		prefix += "/"
	}
	if !strings.HasPrefix(abs, prefix) {
		return "", false
	}
	return abs[len(prefix):], true
}

// walk resolves comps below the absolute, symlink-free directory dir the way
// realpath(3) does, and returns the result. On failure it also returns the
// index of the component that failed and the directory reached before it;
// a symlink whose target is missing fails as a missing component.
//
// Resolution only looks at names (lstat, readlink), also outside the root
// when a link points there; nothing is opened until the result has been
// checked to lie inside the root, and then only through the os.Root.
func (l *Local) walk(dir string, comps []string, hops *int) (string, int, error) {
	for i, c := range comps {
		switch c {
		case "", ".":
			continue
		case "..":
			dir = path.Dir(dir)
			continue
		}
		next := path.Join(dir, c)
		fi, err := os.Lstat(next)
		if err != nil {
			return dir, i, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			dir = next
			continue
		}
		if *hops++; *hops > maxSymlinkHops {
			return dir, i, syscall.ELOOP
		}
		link, err := os.Readlink(next)
		if err != nil {
			return dir, i, err
		}
		from := dir
		if path.IsAbs(link) {
			from = "/"
		}
		resolved, _, err := l.walk(from, strings.Split(link, "/"), hops)
		if err != nil {
			return dir, i, err
		}
		dir = resolved
	}
	return dir, len(comps), nil
}

// pathError turns an operating-system error about model path p into a
// message that names only p (docs/memory-tool.md, No host paths); the
// reference passes the raw error, with absolute host paths, to the model.
// short selects the missing-path wording of delete and rename.
func (l *Local) pathError(p string, err error, short bool) error {
	var errno syscall.Errno
	switch {
	case IsModelError(err):
		return err
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		if short {
			return errNoSuchPath(p)
		}
		return errNotFound(p)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return errTooLong(p)
	case errors.Is(err, syscall.ELOOP):
		return errLoop(p)
	case errors.As(err, &errno):
		return errorf("The path %s cannot be accessed: %s", p, errno.Error())
	}
	return errorf("The path %s cannot be accessed", p)
}

package private

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// tempAttempts bounds the tries for a free temporary name: with 64
// random bits, a second try is already unlikely.
const tempAttempts = 8

// tempMark follows the destination's name in a temporary file's default
// name, "." + base + tempMark + random hex digits.
const tempMark = ".tmp-"

// Option changes how WriteFile, WriteNew or Begin make a file.
type Option func(*options)

type options struct {
	keepMode   bool
	tempPrefix *string
}

// KeepMode gives a file that replaces a regular file that file's
// permissions, less its execute bits (what is written is data, never a
// program to run); a new file still gets FileMode. It is for files in a
// user's own directory, whose modes are the user's choice.
func KeepMode() Option { return func(o *options) { o.keepMode = true } }

// TempPrefix names temporary files prefix followed by random hex digits,
// for a directory whose owner tells its own temporary files by name.
func TempPrefix(prefix string) Option { return func(o *options) { o.tempPrefix = &prefix } }

// prefix is the start of the name of a temporary file for base.
func (o *options) prefix(base string) string {
	if o.tempPrefix != nil {
		return *o.tempPrefix
	}
	return "." + base + tempMark
}

// existsError is WriteNew's answer when the destination is taken.
type existsError struct{ name string }

func (e *existsError) Error() string {
	return e.name + " already exists and was left unchanged"
}

func (e *existsError) Unwrap() error { return fs.ErrExist }

// Pending is a file being written: a temporary file beside its
// destination, which Commit puts in place and Discard removes. Until
// Commit, the destination is as it was.
type Pending struct {
	dir   *os.Root // the destination's directory
	f     *os.File // the temporary file; nil once closed
	tmp   string   // its name in dir; "" once renamed or removed
	base  string   // the destination's name in dir
	name  string   // the destination as the caller named it, for errors
	ended bool
}

// Begin starts replacing the file name: see Pending. The file gets
// FileMode whatever the umask, unless an option says otherwise.
func Begin(name string, opts ...Option) (*Pending, error) {
	return beginIn(nil, name, opts)
}

// beginIn is Begin for the file name below root, or for name itself when
// root is nil.
func beginIn(root *os.Root, name string, opts []Option) (*Pending, error) {
	dir, base, err := split(name)
	if err != nil {
		return nil, err
	}
	open := os.OpenRoot
	if root != nil {
		open = root.OpenRoot
	}
	d, err := open(dir)
	if err != nil {
		return nil, dirError(dir, err)
	}
	return begin(d, base, name, opts)
}

// split is name's directory and its last element, which must name a file.
func split(name string) (dir, base string, err error) {
	dir, base = filepath.Dir(name), filepath.Base(name)
	if name == "" || os.IsPathSeparator(name[len(name)-1]) || base == "." || base == ".." {
		return "", "", fmt.Errorf("write %q: not a file name", name)
	}
	return dir, base, nil
}

// dirError says that the directory to write in could not be opened.
func dirError(dir string, err error) error {
	return &fs.PathError{Op: "open directory", Path: dir, Err: cause(err)}
}

// begin makes the temporary file for base in dir; the Pending owns dir.
func begin(dir *os.Root, base, name string, opts []Option) (*Pending, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	mode := FileMode
	if o.keepMode {
		if fi, err := dir.Lstat(base); err == nil && fi.Mode().IsRegular() {
			mode = fi.Mode().Perm() &^ 0o111
		}
	}
	prefix := o.prefix(base)
	p := &Pending{dir: dir, base: base, name: name}
	for range tempAttempts {
		tmp := fmt.Sprintf("%s%016x", prefix, rand.Uint64())
		f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FileMode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			p.Discard()
			return nil, fail("create a file beside", name, err)
		}
		p.f, p.tmp = f, tmp
		// Set on the open file, so that the umask has no say.
		if err := f.Chmod(mode); err != nil {
			p.Discard()
			return nil, fail("set the mode of", name, err)
		}
		return p, nil
	}
	p.Discard()
	return nil, fmt.Errorf("write %s: no free temporary name beside it after %d tries", name, tempAttempts)
}

// Write adds b to the content.
func (p *Pending) Write(b []byte) (int, error) {
	if p.f == nil {
		return 0, fail("write", p.name, fs.ErrClosed)
	}
	n, err := p.f.Write(b)
	if err != nil {
		err = fail("write", p.name, err)
	}
	return n, err
}

// Commit makes the content durable and puts it in place, replacing the
// destination (a reader sees the old content or the new, never a part),
// then syncs the directory so that the replacement, once acknowledged,
// survives a crash. On failure the destination is as it was.
func (p *Pending) Commit() error { return p.commit(false) }

// commit puts the file in place; exclusive links it there instead of
// renaming, which fails if the destination exists rather than replace it.
func (p *Pending) commit(exclusive bool) error {
	defer p.Discard()
	if p.ended || p.f == nil {
		return fail("write", p.name, fs.ErrClosed)
	}
	err := p.f.Sync()
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	p.f = nil
	if err != nil {
		return fail("write", p.name, err)
	}
	if exclusive {
		err = p.dir.Link(p.tmp, p.base)
		if errors.Is(err, fs.ErrExist) {
			return &existsError{p.name}
		}
		// The temporary name goes before the directory is synced, so
		// that a crash cannot bring it back.
		p.removeTemp()
	} else if err = p.dir.Rename(p.tmp, p.base); err == nil {
		p.tmp = ""
	}
	if err != nil {
		return fail("write", p.name, err)
	}
	SyncDir(p.dir, ".")
	return nil
}

// Discard removes the temporary file, leaving the destination as it was;
// after Commit it does nothing, so it may be deferred.
func (p *Pending) Discard() {
	if p.ended {
		return
	}
	p.ended = true
	if p.f != nil {
		p.f.Close()
		p.f = nil
	}
	p.removeTemp()
	p.dir.Close()
}

func (p *Pending) removeTemp() {
	if p.tmp != "" {
		p.dir.Remove(p.tmp)
		p.tmp = ""
	}
}

// WriteFile replaces the file name with data, durably and atomically (see
// Pending.Commit). The file gets FileMode whatever the umask, unless an
// option says otherwise; a temporary file beside it, named "." + its name
// + ".tmp-" + random digits, exists only while it is written.
func WriteFile(name string, data []byte, opts ...Option) error {
	p, err := Begin(name, opts...)
	return put(p, err, data, false)
}

// WriteFileIn is WriteFile for the file name below root.
func WriteFileIn(root *os.Root, name string, data []byte, opts ...Option) error {
	p, err := beginIn(root, name, opts)
	return put(p, err, data, false)
}

// WriteNew writes data to the new file name as WriteFile does, but never
// replaces anything: if name exists, the error says so (it matches
// fs.ErrExist) and the file is left unchanged. The file appears whole or
// not at all, which needs a file system with hard links.
func WriteNew(name string, data []byte, opts ...Option) error {
	p, err := Begin(name, opts...)
	return put(p, err, data, true)
}

// WriteNewIn is WriteNew for the file name below root.
func WriteNewIn(root *os.Root, name string, data []byte, opts ...Option) error {
	p, err := beginIn(root, name, opts)
	return put(p, err, data, true)
}

// put writes data to the file p that began with err, and commits it.
func put(p *Pending, err error, data []byte, exclusive bool) error {
	if err != nil {
		return err
	}
	if _, err := p.Write(data); err != nil {
		p.Discard()
		return err
	}
	return p.commit(exclusive)
}

// SyncDir makes a change to the entries of directory name in root
// durable. Best effort: some file systems cannot sync a directory, and
// the change itself is done.
func SyncDir(root *os.Root, name string) {
	if f, err := root.Open(name); err == nil {
		f.Sync()
		f.Close()
	}
}

// fail names the destination in err, rather than the temporary file the
// system's error names, keeping the system's reason.
func fail(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: cause(err)}
}

// cause is the system's reason inside a path or link error.
func cause(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}

package memorytool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/private"
)

// Options are memstore's additions to the memory tool. All are off by
// default, so that default results equal the reference implementation's.
type Options struct {
	// MaxFileBytes refuses a create, str_replace or insert whose resulting
	// file would be larger. 0 means no limit.
	MaxFileBytes int64
	// MaxViewChars cuts view's output at a line boundary once it reaches
	// this many characters (code points), with a note giving the
	// view_range to ask for next. 0 means no limit.
	MaxViewChars int
	// ExpireAfter removes files that were neither read nor written for this
	// long. A sweep runs before a command at most once a minute. 0 means
	// files never expire.
	ExpireAfter time.Duration
	// DenySecrets refuses to store text that looks like a credential (API
	// keys, private keys, tokens), naming the kind but never echoing it.
	DenySecrets bool
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// sweepInterval is how often expired files are looked for.
const sweepInterval = time.Minute

// Local is a Handler over a host directory: /memories is the directory, and
// nothing outside it can be reached, whatever the path or the symlinks in
// the tree. Its results equal the reference implementation's (the
// TypeScript SDK's BetaLocalFilesystemMemoryTool) except where memstore is
// deliberately stricter or clearer; see the package documentation.
//
// Local is safe for concurrent use: edits are serialised within a process,
// and every write goes to a temporary file that is synced and then renamed
// into place, so a reader never sees half a file.
type Local struct {
	root *os.Root
	fast fastRoot // the root for the fast path (fast_linux.go)
	dir  string   // the directory's real path, for symlink containment
	opts Options
	// temp names temporary files .tmp-PID-, then random digits, as the
	// reference names its own.
	temp private.Option

	mu        sync.RWMutex // writers exclude each other and readers
	sweepMu   sync.Mutex
	lastSweep time.Time
}

var _ Handler = (*Local)(nil)

// OpenLocal opens the host directory dir as /memories, creating it (mode
// 0700) if it does not exist.
func OpenLocal(dir string, opts Options) (*Local, error) {
	if err := os.MkdirAll(dir, private.DirMode); err != nil {
		return nil, fmt.Errorf("create memory directory: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("memory directory: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("memory directory: %w", err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("open memory directory: %w", err)
	}
	temp := private.TempPrefix(fmt.Sprintf(".tmp-%d-", os.Getpid()))
	l := &Local{root: root, dir: real, opts: opts, temp: temp}
	l.fast.open(root)
	return l, nil
}

// Close releases the directory.
func (l *Local) Close() error {
	l.fast.close()
	return l.root.Close()
}

// Dir is the host directory that /memories maps to, symlinks resolved.
func (l *Local) Dir() string { return l.dir }

// View implements Handler.
func (l *Local) View(ctx context.Context, p string, viewRange []int) (string, error) {
	if out, ok, err := l.viewFastLocked(ctx, p, viewRange); ok {
		return out, err
	}
	return l.command(p, viewing, func(t target) (string, error) {
		if !t.exists {
			// Missing, or a dangling symlink, which the reference (lstat)
			// sees as an unsupported file type.
			if !t.dirMissing {
				if _, err := l.root.Lstat(t.real); err == nil {
					return "", errUnsupportedType(p)
				}
			}
			return "", errNotFound(p)
		}
		if t.regular {
			if b, ok, err := readFast(t); ok {
				if err != nil {
					return "", l.pathError(p, err, false)
				}
				return renderFile(p, l.loaded(t, b), viewRange, l.opts.MaxViewChars)
			}
		}
		f, fi, err := l.open(t, errUnsupportedType)
		if err != nil {
			return "", err
		}
		defer f.Close()
		switch {
		case fi.IsDir():
			return l.list(ctx, p, &osDir{root: l.root, f: f, dir: t.real}, t.real, fi.Size())
		case fi.Mode().IsRegular():
			content, err := l.read(t, f, fi)
			if err != nil {
				return "", err
			}
			return renderFile(p, content, viewRange, l.opts.MaxViewChars)
		}
		return "", errUnsupportedType(p)
	})
}

// viewFastLocked runs viewFast as command would, after the expiry sweep
// and under the shared lock; ok is false if the general path must run.
func (l *Local) viewFastLocked(ctx context.Context, p string, viewRange []int) (string, bool, error) {
	l.housekeep()
	rel, err := cleanPath(p)
	if err != nil {
		return "", true, err
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.viewFast(ctx, p, rel, viewRange)
}

// How a command holds the directory: the lock it takes, and how it words
// a missing path.
type access int

const (
	viewing  access = iota // view: a shared lock
	writing                // create: an exclusive lock
	editing                // str_replace, insert: exclusive, and the file is opened without a stat first
	removing               // delete, rename: exclusive, with their shorter missing-path wording
)

// command runs a command's body on the model path p, resolved: after the
// expiry sweep, and under the lock that how asks for.
func (l *Local) command(p string, how access, body func(t target) (string, error)) (string, error) {
	l.housekeep()
	if how == viewing {
		l.mu.RLock()
		defer l.mu.RUnlock()
	} else {
		l.mu.Lock()
		defer l.mu.Unlock()
	}
	t, err := l.resolve(p, how)
	if err != nil {
		return "", err
	}
	out, err := func() (string, error) {
		defer t.close()
		return body(t)
	}()
	if err == errStatFirst {
		// An edit found a symlink where it opened a file: the path is
		// resolved in full, and the edit starts again.
		if t, err = l.resolve(p, writing); err != nil {
			return "", err
		}
		defer t.close()
		return body(t)
	}
	return out, err
}

// list renders view's directory listing: children and grandchildren,
// depth-first, each level in UTF-16 order, without hidden names,
// node_modules, or entries whose symlinks dangle, loop or lead outside.
// d is the directory rel, of size size.
func (l *Local) list(ctx context.Context, p string, d dirReader, rel string, size int64) (string, error) {
	var items []listItem
	if err := l.collect(ctx, d, rel, "", 1, &items); err != nil {
		return "", l.pathError(p, err, false)
	}
	return renderListing(p, size, items, l.opts.MaxViewChars), nil
}

// collect adds the entries of directory dir, open as d, to items.
func (l *Local) collect(ctx context.Context, d dirReader, dir, prefix string, depth int, items *[]listItem) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := d.entries()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(entries))
	links := make(map[string]bool)
	for _, e := range entries {
		name := e.name
		// A name that is not UTF-8 cannot be named by the model, and the
		// reference, which decodes names, fails to stat it and skips it.
		if strings.HasPrefix(name, ".") || name == "node_modules" || !utf8.ValidString(name) {
			continue
		}
		names = append(names, name)
		if e.link {
			links[name] = true
		}
	}
	sortUTF16(names)
	for _, name := range names {
		child := path.Join(dir, name)
		var fi entryInfo
		ok := false
		if !links[name] {
			// At the open directory: for an entry that is not a symlink,
			// what root.Lstat would return, without walking the path again.
			fi, ok = d.lstat(name)
			links[name] = ok && fi.links
		}
		if links[name] {
			hops := 0
			abs, _, err := l.walk(path.Join(l.dir, dir), []string{name}, &hops)
			if err != nil {
				continue // dangling or looping
			}
			if child, ok = l.within(abs); !ok {
				continue // leads outside the root
			}
			rfi, err := l.root.Lstat(child)
			if err != nil {
				continue
			}
			fi, ok = infoOf(rfi), true
		}
		if !ok {
			continue
		}
		rel := prefix + name
		switch {
		case fi.dir:
			*items = append(*items, listItem{fi.size, rel + "/"})
			if depth < 2 {
				// An unreadable subdirectory is listed without its entries,
				// and so is one swapped for a symlink since it was looked at.
				var sub dirReader
				if links[name] {
					sub, ok = openDir(l.root, child)
				} else {
					sub, ok = d.sub(name)
				}
				if ok {
					_ = l.collect(ctx, sub, child, rel+"/", depth+1, items)
					sub.close()
				}
			}
		case fi.regular:
			*items = append(*items, listItem{fi.size, rel})
		}
	}
	return ctx.Err()
}

// open opens the existing entry at t.real for reading, without blocking on
// a FIFO, and returns it with what fstat says of it: one open serves to
// tell a file from a directory and to read it. Something that cannot be
// opened for reading as a file or directory (a socket, or a symlink that
// appeared since resolution) is reported with notAFile.
func (l *Local) open(t target, notAFile func(string) error) (*os.File, fs.FileInfo, error) {
	f, err := openNoFollow(l.root, t.real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, errVanished(t.model)
	case errors.Is(err, syscall.ENXIO), errors.Is(err, syscall.ELOOP):
		return nil, nil, notAFile(t.model)
	case err != nil:
		return nil, nil, l.pathError(t.model, err, false)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, l.pathError(t.model, err, false)
	}
	return f, fi, nil
}

// read returns the decoded content of the regular file f, open at t.real.
func (l *Local) read(t target, f *os.File, fi fs.FileInfo) (string, error) {
	b, err := readSized(f, fi.Size())
	if err != nil {
		return "", l.pathError(t.model, err, false)
	}
	return l.loaded(t, b), nil
}

// loaded records that t was read, and returns its content b decoded.
func (l *Local) loaded(t target, b []byte) string {
	if l.opts.ExpireAfter > 0 {
		// Record the read: expiry looks at the last read or write, and
		// atime is not reliably kept by every mount. Best effort.
		_ = l.root.Chtimes(t.real, l.opts.now(), time.Time{})
	}
	return decodeUTF8(b)
}

// readSized reads f to the end into a buffer made for size bytes, as
// os.ReadFile does, rather than growing one from 512 bytes as io.ReadAll
// does. The file may still grow or shrink meanwhile, and a size beyond
// 64 MiB is not trusted for the first allocation. A read of a regular
// file that gives less than asked ends at the end of the file, so when it
// stops exactly at size, no further read is made only to see the end.
func readSized(f io.Reader, size int64) ([]byte, error) {
	b := make([]byte, 0, min(max(size+1, 512), 64<<20))
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF || err == nil && n > 0 && int64(len(b)) == size && len(b) < cap(b) {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// Create implements Handler.
func (l *Local) Create(ctx context.Context, p, text string) (string, error) {
	return l.command(p, writing, func(t target) (string, error) {
		if t.full == "." {
			return "", errExists(p)
		}
		if err := l.opts.guard(p, text, int64(len(text))); err != nil {
			return "", err
		}
		if err := l.mkdirs(t); err != nil {
			return "", err
		}
		// The file appears whole or not at all, and never replaces anything.
		if err := l.write(t, []byte(text), true); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return "", errExists(p)
			}
			return "", l.pathError(p, err, false)
		}
		return okCreated(p), nil
	})
}

// StrReplace implements Handler.
func (l *Local) StrReplace(ctx context.Context, p, oldStr, newStr string) (string, error) {
	return l.edit(p, newStr, func(content string) (string, string, error) {
		return replace(p, content, oldStr, newStr)
	})
}

// Insert implements Handler.
func (l *Local) Insert(ctx context.Context, p string, line int, text string) (string, error) {
	return l.edit(p, text, func(content string) (string, string, error) {
		updated, err := insert(content, line, text)
		return updated, okInserted(p), err
	})
}

// edit reads the regular file at p, applies change, and writes the result
// atomically to p's own directory entry (so an edited symlink becomes a
// regular file, as in the reference). added is the text the edit brings in,
// for the secrets guard.
func (l *Local) edit(p, added string, change func(string) (string, string, error)) (string, error) {
	return l.command(p, editing, func(t target) (string, error) {
		if !t.exists {
			return "", errNotFound(p)
		}
		content, err := l.readFile(t)
		if err != nil {
			return "", err
		}
		updated, out, err := change(content)
		if err != nil {
			return "", err
		}
		if err := l.opts.guard(p, added, int64(len(updated))); err != nil {
			return "", err
		}
		// A synced temporary file renamed over p's own directory entry.
		if err := l.write(t, []byte(updated), false); err != nil {
			return "", l.pathError(p, err, false)
		}
		return out, nil
	})
}

// readFile returns the content of t, which must be a regular file.
func (l *Local) readFile(t target) (string, error) {
	if t.regular {
		if b, ok, err := readFast(t); ok {
			if err == errStatFirst {
				return "", err
			}
			if err != nil {
				return "", l.pathError(t.model, err, false)
			}
			return l.loaded(t, b), nil
		}
	}
	f, fi, err := l.open(t, errNotAFile)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return "", errNotAFile(t.model)
	}
	return l.read(t, f, fi)
}

// write puts data in t's own directory entry, a synced temporary file
// renamed over it or, with exclusive, linked to it (private.WriteFileIn
// and WriteNewIn).
func (l *Local) write(t target, data []byte, exclusive bool) error {
	switch {
	case t.fast:
		return l.writeFast(t, data, exclusive)
	case exclusive:
		return private.WriteNewIn(l.root, t.entry(), data, l.temp)
	}
	return private.WriteFileIn(l.root, t.entry(), data, l.temp)
}

// Delete implements Handler.
func (l *Local) Delete(ctx context.Context, p string) (string, error) {
	return l.command(p, removing, func(t target) (string, error) {
		if t.full == "." {
			return "", errDeleteRoot()
		}
		if t.dirMissing {
			return "", errNoSuchPath(p)
		}
		if t.fast && !t.exists {
			return "", errNoSuchPath(p)
		}
		if t.regular {
			if err := removeFast(t); err != nil {
				return "", l.pathError(p, err, true)
			}
			return okDeleted(p), nil
		}
		if _, err := l.root.Lstat(t.entry()); err != nil {
			return "", l.pathError(p, err, true)
		}
		if err := l.root.RemoveAll(t.entry()); err != nil {
			return "", l.pathError(p, err, true)
		}
		private.SyncDir(l.root, t.dir)
		return okDeleted(p), nil
	})
}

// Rename implements Handler. The checks run in the reference's order: the
// destination is checked before the source, and the destination's parent
// directories are created even when the source turns out to be missing.
func (l *Local) Rename(ctx context.Context, oldPath, newPath string) (string, error) {
	return l.command(oldPath, removing, func(from target) (string, error) {
		to, err := l.resolve(newPath, removing)
		if err != nil {
			return "", err
		}
		defer to.close()
		if from.full == "." {
			return "", errRenameRoot()
		}
		if to.exists {
			return "", errDestinationExists(newPath)
		}
		if err := l.mkdirs(to); err != nil {
			return "", errNoSuchPath(newPath)
		}
		if from.dirMissing {
			return "", errNoSuchPath(oldPath)
		}
		if from.fast && to.fast {
			if !from.exists {
				return "", errNoSuchPath(oldPath)
			}
			if err := renameFast(from, to); err != nil {
				return "", l.renameError(oldPath, newPath, err)
			}
			return okRenamed(oldPath, newPath), nil
		}
		if err := l.root.Rename(from.entry(), to.entry()); err != nil {
			return "", l.renameError(oldPath, newPath, err)
		}
		private.SyncDir(l.root, from.dir)
		private.SyncDir(l.root, to.dir)
		return okRenamed(oldPath, newPath), nil
	})
}

// renameError is the message for a rename that the system refused.
func (l *Local) renameError(oldPath, newPath string, err error) error {
	if errors.Is(err, syscall.EINVAL) {
		return errIntoItself(oldPath)
	}
	if errors.Is(err, syscall.ENOTDIR) {
		// A directory onto a non-directory that the existence check
		// missed (a dangling link): the source exists, the destination
		// is taken. The reference leaks a raw ENOTDIR here.
		return errDestinationExists(newPath)
	}
	return l.pathError(oldPath, err, true)
}

// guard applies the optional limits to a write: added is the text the
// command brings in, size the resulting file's size in bytes.
func (o Options) guard(p, added string, size int64) error {
	if o.DenySecrets {
		if kind, found := memstore.FindCredential(added); found {
			return errSecret(p, kind)
		}
	}
	if o.MaxFileBytes > 0 && size > o.MaxFileBytes {
		return errTooBig(p, size, o.MaxFileBytes)
	}
	return nil
}

// mkdirs creates the missing directories above t (mode 0700), as mkdir -p
// would, but never through a symlink: a dangling link where a directory
// should be is a missing path, not a place to create the link's target.
func (l *Local) mkdirs(t target) error {
	if !t.dirMissing {
		return nil
	}
	// t.dir is an existing resolved directory followed by missing names.
	parts := strings.Split(t.dir, "/")
	for i := range parts {
		dir := path.Join(parts[:i+1]...)
		fi, err := l.root.Lstat(dir)
		if err == nil && fi.IsDir() {
			continue
		}
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return errNotFound(t.model)
		}
		if err := l.root.Mkdir(dir, private.DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
			return l.pathError(t.model, err, false)
		}
	}
	return nil
}

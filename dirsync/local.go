package dirsync

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/localfile"
	"github.com/memstore/memstore/internal/private"
)

// Names in the directory that belong to the syncs themselves and are
// never synced.
const (
	// StateFile holds the store's ID and the base of every path.
	StateFile = ".memstore-sync.json"
	// ownPrefix begins the sync's own files: the state, its temporary
	// files, the lock.
	ownPrefix = ".memstore-sync"
	lockFile  = ".memstore-sync.lock"
	// sdkMarker is the file the official SDK's environment worker keeps at
	// the root of a store's folder; never a memory.
	sdkMarker = ".anthropic-memory-store"
	// teamDir is the team scope's directory inside a memory directory.
	teamDir = "team"
	// indexName is the file merged by line union.
	indexName = "MEMORY.md"
)

// ownTemp names the sync's temporary files after ownPrefix, so that a
// scan takes one left by a crash for the sync's own, never a memory.
var ownTemp = private.TempPrefix(ownPrefix + ".tmp-")

// conflictName matches the files the sync keeps for the losing side of a
// conflict: they stay local, for a person to resolve.
var conflictName = regexp.MustCompile(`\.conflict-[A-Za-z0-9-]+-\d{8}T\d{6}Z(-\d+)?(\.[^./]*)?$`)

// conflictTimeFormat is the UTC time in a conflict file's name.
const conflictTimeFormat = "20060102T150405Z"

// ownName reports whether name, a file at rel's place, is one of the
// sync's own files or another tool's bookkeeping, left out silently.
func ownName(rel string) bool {
	base := path.Base(rel)
	switch {
	case strings.HasPrefix(base, ownPrefix):
		return true
	case rel == sdkMarker:
		return true
	case conflictName.MatchString(base):
		return true
	}
	return false
}

// localTree is the synced directory, reached only through an os.Root so
// that nothing outside it is ever touched.
type localTree struct {
	root *os.Root // nil: a missing directory in a dry run
}

// scan is what a pass found in the directory.
type scan struct {
	files   map[string]string // memory path → sha256 of the file
	skipped []Skip
	// blocked holds memory paths, of files or directories, that no write
	// may go to or through, with why.
	blocked map[string]string
}

// isBlocked says why p or one of its directories is blocked, "" if none.
func (sc *scan) isBlocked(p string) string {
	for q := p; q != "/" && q != "."; q = path.Dir(q) {
		if why, ok := sc.blocked[q]; ok {
			return why
		}
	}
	return ""
}

// scan hashes every regular file of the tree, except the sync's own and,
// in the private scope, team/. An unreadable directory fails the scan:
// read as empty, it would look like deleted files.
func (t *localTree) scan(s *syncer) (*scan, error) {
	sc := &scan{files: map[string]string{}, blocked: map[string]string{}}
	if t.root == nil {
		return sc, nil
	}
	block := func(rel, why string) {
		p := "/" + rel
		sc.blocked[p] = why
		sc.skipped = append(sc.skipped, Skip{Path: p, Side: "local", Reason: why})
	}
	err := fs.WalkDir(t.root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		typ := d.Type()
		switch {
		case typ.IsDir():
			// Hidden directories (.git/ most of all) are left alone
			// silently, as are the sync's own files and hidden files: a
			// memory directory may well be a repository.
			if s.o.Scope == ScopePrivate && rel == teamDir || localfile.ExecName(d.Name()) != "" {
				return fs.SkipDir
			}
			return nil
		case ownName(rel), localfile.ExecName(d.Name()) != "":
			return nil
		case typ&fs.ModeSymlink != 0:
			block(rel, "a symbolic link: never followed nor written through")
			return nil
		case !typ.IsRegular():
			block(rel, "not a regular file")
			return nil
		}
		p := "/" + rel
		if why := s.pathProblem(p); why != "" {
			block(rel, why)
			return nil
		}
		data, err := t.read(rel)
		switch {
		case errors.Is(err, errTooBig):
			block(rel, fmt.Sprintf("over %d bytes, the limit of a memory", memstore.MaxContentBytes))
			return nil
		case errors.Is(err, errNotText):
			block(rel, localfile.NotText)
			return nil
		case errors.Is(err, errNotRegular):
			block(rel, "not a regular file")
			return nil
		case err != nil:
			return err
		}
		sc.files[p] = sha256Hex(data)
		return nil
	})
	if err != nil {
		return nil, localErr("read directory", err)
	}
	return sc, nil
}

var (
	errTooBig     = errors.New("file too large for a memory")
	errNotText    = errors.New("file is not text")
	errNotRegular = errors.New("not a regular file")
	errSymlink    = errors.New("a symbolic link is in the way")
	errNotDir     = errors.New("a file is in the way of a directory")
	errChanged    = errors.New("the file changed during the sync")
)

// read returns the content of regular file rel, which must be memory-sized
// text; a missing file is (nil, nil).
func (t *localTree) read(rel string) ([]byte, error) {
	if t.root == nil {
		return nil, nil
	}
	fi, err := t.root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errNotRegular
	}
	f, err := t.root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Open follows a link that replaced the file since the Lstat, but
	// never out of the root; the file itself must still be regular.
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, errNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, memstore.MaxContentBytes+1))
	switch {
	case err != nil:
		return nil, err
	case len(data) > memstore.MaxContentBytes:
		return nil, errTooBig
	case !localfile.Text(data):
		return nil, errNotText
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// hash returns the sha256 of file rel, "" when there is none.
func (t *localTree) hash(rel string) (string, error) {
	data, err := t.read(rel)
	if err != nil || data == nil {
		return "", err
	}
	return sha256Hex(data), nil
}

// checkDirs makes sure that the directories above rel are real
// directories, never symbolic links, making the missing ones when mk is
// set. It returns false when one is missing (and mk is not set).
func (t *localTree) checkDirs(rel string, mk bool) (bool, error) {
	dir := path.Dir(rel)
	if dir == "." {
		return true, nil
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		d := strings.Join(parts[:i+1], "/")
		fi, err := t.root.Lstat(d)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			return false, errSymlink
		case err == nil && !fi.IsDir():
			return false, errNotDir
		case err == nil:
			continue
		case !errors.Is(err, fs.ErrNotExist):
			return false, err
		case !mk:
			return false, nil
		}
		if err := t.root.Mkdir(d, private.DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
			return false, err
		}
		// Made by someone else meanwhile: check it again.
		if fi, err := t.root.Lstat(d); err != nil {
			return false, err
		} else if !fi.IsDir() {
			return false, errSymlink
		}
	}
	return true, nil
}

// write replaces file rel with data, atomically (a synced temporary file
// renamed into place), if the file still has the hash expect ("" for
// none): a file edited since the scan is left alone (errChanged). The
// directories above it are made as needed, never through a link.
func (t *localTree) write(rel string, data []byte, expect string) error {
	// A directory made for this file may be removed, empty, by the
	// deletion of its last file in the same pass: make it again.
	for range 3 {
		err := t.writeOnce(rel, data, expect)
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return t.writeOnce(rel, data, expect)
}

func (t *localTree) writeOnce(rel string, data []byte, expect string) error {
	if _, err := t.checkDirs(rel, true); err != nil {
		return err
	}
	if fi, err := t.root.Lstat(rel); err == nil && !fi.Mode().IsRegular() {
		return errNotRegular
	}
	if cur, err := t.hash(rel); err != nil {
		return err
	} else if cur != expect {
		return errChanged
	}
	// The file's own permissions, but never executable: content from the
	// store is not to be run.
	return private.WriteFileIn(t.root, rel, data, private.KeepMode(), ownTemp)
}

// create writes data to a new file rel, failing if it exists.
func (t *localTree) create(rel string, data []byte) error {
	if _, err := t.checkDirs(rel, true); err != nil {
		return err
	}
	return private.WriteNewIn(t.root, rel, data, ownTemp)
}

// remove deletes file rel if it still has the hash expect, then the
// directories above it that this left empty.
func (t *localTree) remove(rel, expect string) error {
	ok, err := t.checkDirs(rel, false)
	if err != nil || !ok {
		return err
	}
	if cur, err := t.hash(rel); err != nil {
		return err
	} else if cur != expect {
		return errChanged
	}
	if err := t.root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// Remove refuses a directory that is not empty, which ends the climb.
	for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
		if t.root.Remove(dir) != nil {
			break
		}
	}
	return nil
}

// keep writes data beside rel as a conflict copy and returns its name
// relative to the directory.
func (t *localTree) keep(rel string, data []byte, device, stamp string) (string, error) {
	name := conflictCopyName(rel, device, stamp, 1)
	for n := 2; ; n++ {
		err := t.create(name, data)
		if !errors.Is(err, fs.ErrExist) || n > 100 {
			return name, err
		}
		name = conflictCopyName(rel, device, stamp, n)
	}
}

// conflictCopyName is <stem>.conflict-<device>-<stamp>[-n]<ext> beside rel,
// the stem (and, if need be, the extension) shortened so that the name
// stays within localfile.MaxNameBytes.
func conflictCopyName(rel, device, stamp string, n int) string {
	dir, base := path.Split(rel)
	ext := path.Ext(base)
	if ext == base { // a name such as ".env"
		ext = ""
	}
	stem := strings.TrimSuffix(base, ext)
	mark := ".conflict-" + device + "-" + stamp
	if n > 1 {
		mark += fmt.Sprintf("-%d", n)
	}
	room := localfile.MaxNameBytes - len(mark) - len(ext)
	if room < 1 {
		ext = ""
		room = localfile.MaxNameBytes - len(mark)
	}
	return dir + cutUTF8(stem, room) + mark + ext
}

// cutUTF8 is s cut to at most n bytes, never inside a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

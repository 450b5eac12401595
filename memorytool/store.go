package memorytool

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/memstore/memstore"
)

// storeDirSize is the size a Store lists for a directory: 4096 bytes, which
// prints as 4K, what a directory shows in Local's listings on the common
// Linux filesystems. A store keeps no directory entries to measure, and a
// sum of the sizes below would cost a walk of the whole subtree.
const storeDirSize = 4096

// storePageSize is the page size of the lists a Store walks.
const storePageSize = 100

// Store is a Handler over a memory store: /memories/a/b.md is the memory
// at path /a/b.md. Directories are path prefixes: one exists while some
// memory lies below it, and /memories always exists. Its results equal
// Local's wherever the two can behave alike; the package documentation
// lists where they cannot.
//
// Store is safe for concurrent use. Its own changes are serialised, so
// that concurrent commands of one agent do not fail each other; a change
// made by anyone else between a command's read and its write is detected
// through the memory's content hash and reported to the model, and nothing
// is overwritten.
type Store struct {
	svc     memstore.MemoryService
	caller  *memstore.Caller
	id      string
	opts    Options
	writeMu sync.Mutex
}

var _ Handler = (*Store)(nil)

// NewStore returns the Handler over the memory store storeID, kept by
// svc, called as caller, whose actor the changes are recorded as. An
// httpapi.Client works as svc with a nil caller: it calls as its own
// credential, which the server records.
//
// Options apply as they do to Local, except ExpireAfter: a store keeps
// every version of its memories and records no reads, so it is refused
// rather than ignored.
func NewStore(svc memstore.MemoryService, caller *memstore.Caller, storeID string, opts Options) (*Store, error) {
	switch {
	case svc == nil:
		return nil, errors.New("memory tool over a store: no memory service")
	case storeID == "":
		return nil, errors.New("memory tool over a store: no store ID")
	case opts.ExpireAfter != 0:
		return nil, errors.New("memory tool over a store: expiry (ExpireAfter) works only on a local directory")
	case opts.MaxFileBytes < 0 || opts.MaxViewChars < 0:
		return nil, errors.New("memory tool over a store: MaxFileBytes and MaxViewChars must be 0 or more")
	}
	return &Store{svc: svc, caller: caller, id: storeID, opts: opts}, nil
}

// resolve checks a model path and returns the store path it names: "/"
// for /memories itself.
func (s *Store) resolve(p string) (string, error) {
	rel, err := cleanPath(p)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "/", nil
	}
	sp := "/" + rel
	return sp, checkStorePath(p, sp)
}

// checkStorePath refuses a path that a memory store cannot hold (model
// path p, store path sp): longer than 1,024 bytes, deeper than 20 levels,
// or with control characters or text not in NFC.
func checkStorePath(p, sp string) error {
	err := memstore.ValidatePath(sp)
	switch {
	case err == nil:
		return nil
	case len(sp) > memstore.MaxPathBytes:
		return errTooLong(p)
	}
	return errorf("The path %s cannot be kept in a memory store: %s", p, memstore.ErrorMessage(err))
}

// modelPath is the model's path of store path sp.
func modelPath(sp string) string { return Root + sp }

// file returns the memory at exactly store path sp, with its content when
// full, or nil when there is none. A missing store is left for the next
// call to report: the lookup's ENotFound does not tell it from a missing
// memory.
func (s *Store) file(ctx context.Context, sp string, full bool) (*memstore.Memory, error) {
	m, err := memstore.FindMemory(ctx, s.svc, s.caller, s.id, sp)
	if err == nil && full {
		m, err = s.svc.Memory(ctx, s.caller, s.id, m.ID)
	}
	if memstore.ErrorCode(err) == memstore.ENotFound {
		return nil, nil
	}
	return m, err
}

// isDir reports whether some memory lies below store path sp.
func (s *Store) isDir(ctx context.Context, sp string) (bool, error) {
	if sp == "/" {
		return true, nil
	}
	page, err := s.svc.Memories(ctx, s.caller, s.id, memstore.MemoryFilter{PathPrefix: sp + "/", Limit: 1})
	return len(page.Items) > 0, err
}

// occupied reports whether store path sp is a file or a directory.
func (s *Store) occupied(ctx context.Context, sp string) (bool, error) {
	m, err := s.file(ctx, sp, false)
	if err != nil || m != nil {
		return m != nil, err
	}
	return s.isDir(ctx, sp)
}

// below returns every memory below store path sp (not sp itself), without
// content, in byte order of path, walking all pages.
func (s *Store) below(ctx context.Context, sp string) ([]memstore.Memory, error) {
	var out []memstore.Memory
	err := s.each(ctx, memstore.MemoryFilter{PathPrefix: dirPrefix(sp), Limit: storePageSize}, func(it memstore.ListItem) {
		if it.Memory != nil {
			out = append(out, *it.Memory)
		}
	})
	return out, err
}

// each calls fn for every item of the list f selects, page by page.
func (s *Store) each(ctx context.Context, f memstore.MemoryFilter, fn func(memstore.ListItem)) error {
	for {
		page, err := s.svc.Memories(ctx, s.caller, s.id, f)
		if err != nil {
			return err
		}
		for _, it := range page.Items {
			fn(it)
		}
		if page.Next == "" {
			return nil
		}
		f.Page = page.Next
	}
}

// dirPrefix is the list prefix of the memories below store path sp.
func dirPrefix(sp string) string {
	if sp == "/" {
		return "/"
	}
	return sp + "/"
}

// View implements Handler.
func (s *Store) View(ctx context.Context, p string, viewRange []int) (string, error) {
	sp, err := s.resolve(p)
	if err != nil {
		return "", err
	}
	if sp != "/" {
		m, err := s.file(ctx, sp, true)
		if err != nil {
			return "", s.fail(p, err, opRead)
		}
		if m != nil {
			return renderFile(p, m.Content, viewRange, s.opts.MaxViewChars)
		}
	}
	items, found, err := s.listing(ctx, sp)
	switch {
	case err != nil:
		return "", s.fail(p, err, opRead)
	case !found:
		return "", errNotFound(p)
	}
	return renderListing(p, storeDirSize, items, s.opts.MaxViewChars), nil
}

// storeEntry is a name in a directory listing.
type storeEntry struct {
	dir      bool
	size     int64
	children map[string]*storeEntry // of a directory at the first level
}

// listing returns the entries of the directory at store path sp two levels
// deep, in Local's order and with its rules: depth-first, each level in
// UTF-16 order, without names starting with "." or named node_modules.
// found is false when sp is not a directory. One list with depth 2 gives
// both levels: memories one or two segments down, and a prefix for each
// directory two segments down.
func (s *Store) listing(ctx context.Context, sp string) (items []listItem, found bool, err error) {
	prefix := dirPrefix(sp)
	top := make(map[string]*storeEntry)
	err = s.each(ctx, memstore.MemoryFilter{PathPrefix: prefix, Depth: 2, Limit: storePageSize}, func(it memstore.ListItem) {
		found = true
		rest, size := it.Prefix, int64(storeDirSize)
		if it.Memory != nil {
			rest, size = it.Memory.Path, it.Memory.ContentSize
		}
		rest = strings.TrimSuffix(strings.TrimPrefix(rest, prefix), "/")
		first, second, nested := strings.Cut(rest, "/")
		if hiddenName(first) {
			return
		}
		if !nested {
			top[first] = &storeEntry{dir: it.Memory == nil, size: size}
			return
		}
		dir := top[first]
		if dir == nil || dir.children == nil {
			dir = &storeEntry{dir: true, size: storeDirSize, children: make(map[string]*storeEntry)}
			top[first] = dir
		}
		if !hiddenName(second) {
			dir.children[second] = &storeEntry{dir: it.Memory == nil, size: size}
		}
	})
	if err != nil {
		return nil, false, err
	}
	if !found && sp != "/" { // /memories exists even when empty
		return nil, false, nil
	}
	for _, name := range sortedNames(top) {
		e := top[name]
		if !e.dir {
			items = append(items, listItem{e.size, name})
			continue
		}
		items = append(items, listItem{e.size, name + "/"})
		for _, child := range sortedNames(e.children) {
			c := e.children[child]
			rel := name + "/" + child
			if c.dir {
				rel += "/"
			}
			items = append(items, listItem{c.size, rel})
		}
	}
	return items, true, nil
}

// hiddenName reports whether listings leave a name out, as Local's do.
func hiddenName(name string) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules"
}

func sortedNames(m map[string]*storeEntry) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sortUTF16(names)
	return names
}

// Create implements Handler. Parent directories need no making: they are
// prefixes of the new path.
func (s *Store) Create(ctx context.Context, p, text string) (string, error) {
	sp, err := s.resolve(p)
	if err != nil {
		return "", err
	}
	if sp == "/" {
		return "", errExists(p)
	}
	if err := s.guard(p, text, text); err != nil {
		return "", err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	// IfNotExists, so that a server that upserts on create still never
	// overwrites.
	_, err = s.svc.CreateMemory(ctx, s.caller, s.id, memstore.MemoryCreate{Path: sp, Content: text, IfNotExists: true})
	switch memstore.ErrorCode(err) {
	case "":
		return okCreated(p), nil
	case memstore.EPathConflict, memstore.EPreconditionFailed:
	default:
		return "", s.fail(p, err, opCreate)
	}
	// The path is taken, or a file lies above it, which Local reports as
	// a missing path (a path through a regular file).
	taken, err := s.occupied(ctx, sp)
	switch {
	case err != nil:
		return "", s.fail(p, err, opRead)
	case taken:
		return "", errExists(p)
	}
	return "", errNotFound(p)
}

// StrReplace implements Handler.
func (s *Store) StrReplace(ctx context.Context, p, oldStr, newStr string) (string, error) {
	return s.edit(ctx, p, newStr, func(content string) (string, string, error) {
		return replace(p, content, oldStr, newStr)
	})
}

// Insert implements Handler.
func (s *Store) Insert(ctx context.Context, p string, line int, text string) (string, error) {
	return s.edit(ctx, p, text, func(content string) (string, string, error) {
		updated, err := insert(content, line, text)
		return updated, okInserted(p), err
	})
}

// edit reads the memory at p, applies change and writes the result, if
// the memory's content is still what was read. added is the text the edit
// brings in, for the secrets guard.
func (s *Store) edit(ctx context.Context, p, added string, change func(string) (string, string, error)) (string, error) {
	sp, err := s.resolve(p)
	if err != nil {
		return "", err
	}
	if sp == "/" {
		return "", errNotAFile(p)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	m, err := s.file(ctx, sp, true)
	if err != nil {
		return "", s.fail(p, err, opRead)
	}
	if m == nil {
		dir, err := s.isDir(ctx, sp)
		switch {
		case err != nil:
			return "", s.fail(p, err, opRead)
		case dir:
			return "", errNotAFile(p)
		}
		return "", errNotFound(p)
	}
	updated, out, err := change(m.Content)
	if err != nil {
		return "", err
	}
	if err := s.guard(p, added, updated); err != nil {
		return "", err
	}
	_, err = s.svc.UpdateMemory(ctx, s.caller, s.id, m.ID, memstore.MemoryUpdate{Content: &updated, IfSHA256: m.ContentSHA256})
	if err != nil {
		return "", s.fail(p, err, opChange)
	}
	return out, nil
}

// Delete implements Handler. A directory is deleted one memory at a time,
// each only if its content is still what the listing saw; on a failure the
// result says how far it got.
func (s *Store) Delete(ctx context.Context, p string) (string, error) {
	sp, err := s.resolve(p)
	if err != nil {
		return "", err
	}
	if sp == "/" {
		return "", errDeleteRoot()
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	m, err := s.file(ctx, sp, false)
	if err != nil {
		return "", s.fail(p, err, opRead)
	}
	if m != nil {
		err := s.svc.DeleteMemory(ctx, s.caller, s.id, m.ID, m.ContentSHA256)
		if err != nil && memstore.ErrorCode(err) != memstore.ENotFound { // gone already: done
			return "", s.fail(p, err, opChange)
		}
		return okDeleted(p), nil
	}
	all, err := s.below(ctx, sp)
	if err != nil {
		return "", s.fail(p, err, opRead)
	}
	if len(all) == 0 {
		return "", errNoSuchPath(p)
	}
	for i, m := range all {
		err := s.svc.DeleteMemory(ctx, s.caller, s.id, m.ID, m.ContentSHA256)
		if err == nil || memstore.ErrorCode(err) == memstore.ENotFound {
			continue
		}
		reason := s.fail(modelPath(m.Path), err, opChange)
		if i == 0 {
			return "", reason
		}
		return "", errorf("Only %d of the %d files below %s were deleted; the others are still there. Deleting %s failed: %s",
			i, len(all), p, modelPath(m.Path), reason)
	}
	return okDeleted(p), nil
}

// Rename implements Handler. A file keeps its memory, with its ID and
// versions, under the new path. A directory is moved one memory at a time:
// each keeps its ID and versions, but the move as a whole is not atomic,
// and on a failure the result says how far it got. The checks run in
// Local's order: the destination before the source.
func (s *Store) Rename(ctx context.Context, oldPath, newPath string) (string, error) {
	from, err := s.resolve(oldPath)
	if err != nil {
		return "", err
	}
	to, err := s.resolve(newPath)
	if err != nil {
		return "", s.missingFirst(ctx, err, [2]string{oldPath, from})
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if from == "/" {
		return "", s.missingFirst(ctx, errRenameRoot(), [2]string{newPath, to})
	}
	taken := to == "/"
	if !taken {
		if taken, err = s.occupied(ctx, to); err != nil {
			return "", s.fail(newPath, err, opRead)
		}
	}
	if taken {
		return "", s.missingFirst(ctx, errDestinationExists(newPath), [2]string{oldPath, from})
	}
	m, err := s.file(ctx, from, false)
	if err != nil {
		return "", s.fail(oldPath, err, opRead)
	}
	if m != nil {
		if strings.HasPrefix(to, from+"/") {
			// Below the file itself: a path through a regular file.
			return "", errNoSuchPath(newPath)
		}
		if err := s.move(ctx, m, to, oldPath, newPath); err != nil {
			if memstore.ErrorCode(err) == memstore.ENotFound {
				return "", errNoSuchPath(oldPath) // deleted meanwhile
			}
			return "", err
		}
		return okRenamed(oldPath, newPath), nil
	}
	all, err := s.below(ctx, from)
	switch {
	case err != nil:
		return "", s.fail(oldPath, err, opRead)
	case len(all) == 0:
		return "", s.missingFirst(ctx, errNoSuchPath(oldPath), [2]string{oldPath, from}, [2]string{newPath, to})
	case strings.HasPrefix(to, from+"/"):
		return "", s.missingFirst(ctx, errIntoItself(oldPath), [2]string{newPath, to})
	}
	// Check every new path first, so that no memory moves when one of
	// them cannot be held.
	for _, m := range all {
		np := to + m.Path[len(from):]
		if err := checkStorePath(modelPath(np), np); err != nil {
			return "", errorf("Cannot move %s to %s: %s", oldPath, newPath, err)
		}
	}
	moved := 0
	for i := range all {
		m := &all[i]
		err := s.move(ctx, m, to+m.Path[len(from):], oldPath, newPath)
		switch {
		case err == nil:
			moved++
			continue
		case memstore.ErrorCode(err) == memstore.ENotFound:
			continue // deleted meanwhile: nothing to move
		case moved == 0:
			return "", err
		}
		return "", errorf("Only %d of the %d files below %s were moved to %s; the others are still below %s. Moving %s failed: %s",
			moved, len(all), oldPath, newPath, oldPath, modelPath(m.Path), err)
	}
	return okRenamed(oldPath, newPath), nil
}

// missingFirst returns, for a rename that fails with err, the answer that
// Local gives first when one of paths (model and store path pairs) lies
// below a file: Local resolves both paths before anything else, and a path
// through a regular file fails there as missing. A store learns this only
// by looking at each ancestor, so it is looked for only when the rename
// fails anyway.
func (s *Store) missingFirst(ctx context.Context, err error, paths ...[2]string) error {
	for _, p := range paths {
		below, lerr := s.belowFile(ctx, p[1])
		switch {
		case lerr != nil:
			return s.fail(p[0], lerr, opRead)
		case below:
			return errNoSuchPath(p[0])
		}
	}
	return err
}

// belowFile reports whether an ancestor of store path sp is a file.
func (s *Store) belowFile(ctx context.Context, sp string) (bool, error) {
	for i := len(sp) - 1; i > 0; i-- {
		if sp[i] != '/' {
			continue
		}
		if m, err := s.file(ctx, sp[:i], false); err != nil || m != nil {
			return m != nil, err
		}
	}
	return false, nil
}

// move gives memory m the store path to, for the rename of oldPath to
// newPath. A memory deleted meanwhile is the service's ENotFound, for the
// caller to word.
func (s *Store) move(ctx context.Context, m *memstore.Memory, to, oldPath, newPath string) error {
	_, err := s.svc.UpdateMemory(ctx, s.caller, s.id, m.ID, memstore.MemoryUpdate{Path: &to})
	switch memstore.ErrorCode(err) {
	case "", memstore.ENotFound:
		return err
	case memstore.EPathConflict:
		// Taken meanwhile, or a file lies above the destination, which
		// Local reports as a missing path.
		var e *memstore.Error
		if errors.As(err, &e) && e.ConflictingPath != "" && strings.HasPrefix(to, e.ConflictingPath+"/") {
			return errNoSuchPath(newPath)
		}
		return errDestinationExists(newPath)
	}
	return s.fail(oldPath, err, opChange)
}

// guard applies the Options' limits and the store's own content rules to
// a write: added is the text the command brings in, content the memory's
// resulting content.
func (s *Store) guard(p, added, content string) error {
	size := int64(len(content))
	if err := s.opts.guard(p, added, size); err != nil {
		return err
	}
	if size > memstore.MaxContentBytes {
		return errTooBig(p, size, memstore.MaxContentBytes)
	}
	if err := memstore.ValidateContent(content); err != nil {
		return errorf("The text for %s cannot be kept in a memory store: %s", p, memstore.ErrorMessage(err))
	}
	return nil
}

// storeOp is what a command was doing when the store failed it.
type storeOp int

const (
	opRead   storeOp = iota // looking something up
	opCreate                // creating a memory
	opChange                // changing or deleting an existing memory
)

// fail turns an error of the memory service about model path p into a
// message for the model.
func (s *Store) fail(p string, err error, op storeOp) error {
	var e *memstore.Error
	if !errors.As(err, &e) || e.Code == memstore.EInternal {
		// Unreachable server, a backend failure: the details are for the
		// operator, not the model.
		if op != opRead {
			return errorf("The memory store failed while changing %s; view it to see whether the change was made.", p)
		}
		return errorf("The memory store failed while reading %s; try again.", p)
	}
	if memstore.IsArchived(e) {
		return errorf("%s cannot be changed: %s", p, e.Error())
	}
	switch e.Code {
	case memstore.EPreconditionFailed:
		return errorf("The file %s was changed by someone else while this command ran, so nothing was written. View it again and retry.", p)
	case memstore.ENotFound:
		if op == opChange {
			return errVanished(p)
		}
		return errorf("The memory store is not available: %s", e.Error())
	case memstore.EPermission:
		return errorf("Permission denied for %s: %s", p, e.Error())
	case memstore.EUnauthenticated:
		return errorf("The memory store refused the credential: %s", e.Error())
	case memstore.EConflict:
		if e.Retry {
			return errorf("The memory store is busy; %s was not changed. Try again.", p)
		}
		return errorf("%s cannot be changed: %s", p, e.Error())
	}
	return errorf("The memory store refused the command on %s: %s", p, e.Error())
}

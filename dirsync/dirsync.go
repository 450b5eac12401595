// Package dirsync keeps a local directory and a memory store in step, both
// ways: the memory directory of a project (or its team/ part) shared across
// devices and with a team through a store on a memstore server.
//
// File a/b.md is memory /a/b.md. The directory keeps, in
// .memstore-sync.json, the store's ID and the content_sha256 on which both
// sides last agreed for each path (the base). A pass lists the store
// without content, hashes the local files, and decides each path three
// ways, base B, local L, remote R:
//
//   - equal: nothing to do;
//   - only the local side changed: push (an update with a content_sha256
//     precondition, a create when new, a delete guarded by the base hash
//     when deleted: deletions propagate);
//   - only the remote side changed: pull (an atomic write), or delete the
//     file when the memory was deleted;
//   - both changed: MEMORY.md files are merged by line union (local order,
//     then the remote-only lines) and pushed; for any other file one side
//     wins at the path (the remote by default) and the other side's version
//     is kept beside it as <stem>.conflict-<device>-<UTC time><ext>, and the
//     conflict is reported. A deletion never beats an edit: the edit is
//     restored or re-created.
//
// Every write to the store carries a precondition, so a sync never
// overwrites what it has not seen; when another writer moved first (a
// 409), the pass is planned again, at most twice. This is what lets it
// share a store with other directories and with the official SDK's own
// directory sync (lib/environments in anthropic-sdk-go), which follows the
// same rules, without losing a change either side had acknowledged.
//
// Nothing from the store is written before its path is checked: a path
// that would leave the directory, even percent-encoded, or reach it through
// a symbolic link is refused and reported. Hidden files and directories
// (a name beginning with ".": .git/, .env, .ssh/), which hold what other
// tools read or run, are never synced: the store's are refused and
// reported, the directory's left alone; and a file written from the store
// is never executable. Nor is a file synced, in any directory, whose name
// is one that tools read keys or credentials from or run at a shell's
// start (authorized_keys, id_*, known_hosts, config, credentials, _netrc,
// config.fish; localfile.CredentialName): the store's are refused, the
// directory's kept back, both reported. A path that cannot be a file here
// is refused and reported too: a name over 255 bytes, a path too long for
// the system, a name the system refuses, or one that reads as ".", ".."
// or a separator once percent-decoded or once look-alike characters are
// folded (NFKC).
// Files over a memory's limit (memstore.MaxContentBytes), files that are
// not text (not UTF-8, or with a NUL byte) and anything that is not a
// regular file are skipped and reported, and neither side of such a path
// is touched. A file that holds a private key or another credential
// (memstore.FindCredential) is never uploaded, in either scope; the report names
// the kind of credential, never the text.
package dirsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/private"
)

// Scope is which part of a memory directory a sync covers.
type Scope string

// The scopes.
const (
	// ScopePrivate syncs the directory except its team/ subdirectory,
	// which belongs to the team scope and its own store.
	ScopePrivate Scope = "private"
	// ScopeTeam syncs a team directory, under the same rules.
	ScopeTeam Scope = "team"
)

// The sides a preference names.
const (
	PreferRemote = "remote"
	PreferLocal  = "local"
)

// Options say what to sync with what.
type Options struct {
	// Memories is the store's service: a memstore server's client, or any
	// implementation.
	Memories memstore.MemoryService
	// Caller is who the sync calls Memories as; nil for a server's
	// client, which calls as its own credential.
	Caller *memstore.Caller
	// StoreID is the memory store.
	StoreID string
	// Dir is the directory synced: the memory directory for ScopePrivate,
	// its team/ subdirectory for ScopeTeam. It is made when missing.
	Dir string
	// Scope is ScopePrivate when "".
	Scope Scope
	// Prefer is the side that keeps the path when a file other than
	// MEMORY.md changed on both sides: PreferRemote (the default) or
	// PreferLocal. The other side's version is kept beside it either way.
	Prefer string
	// DryRun plans and reports without writing anything, anywhere.
	DryRun bool
	// Device names this machine in conflict files' names; "device" when
	// empty. Characters other than letters, digits and "-" become "-".
	Device string
	// Now is the clock for conflict files' names; time.Now when nil.
	Now func() time.Time
}

// Errors a sync can end with, to tell whose fault it was: match them with
// errors.Is.
var (
	// ErrLocal is a failure of the local directory (reading, writing, the
	// state file).
	ErrLocal = errors.New("local directory")
	// ErrRemote is a failure of the store: the server refused the
	// credential, could not be reached, or answered with an error that
	// concerns the whole store.
	ErrRemote = errors.New("memory store")
	// ErrOtherStore is a directory already synced with another store.
	ErrOtherStore = errors.New("directory synced with another store")
	// ErrBusy is a directory another sync is working on.
	ErrBusy = errors.New("another sync is running on this directory")
)

// opError is an error of one operation, of kind ErrLocal or ErrRemote.
type opError struct {
	kind error
	op   string
	err  error
}

func (e *opError) Error() string   { return e.op + ": " + e.err.Error() }
func (e *opError) Unwrap() []error { return []error{e.kind, e.err} }

func localErr(op string, err error) error  { return &opError{ErrLocal, op, err} }
func remoteErr(op string, err error) error { return &opError{ErrRemote, op, err} }

// The kinds of change a sync makes.
const (
	OpPush         = "push"          // an update of a memory from its file
	OpCreate       = "create"        // a new memory from a file
	OpDeleteRemote = "delete_remote" // a memory deleted because its file was
	OpPull         = "pull"          // a file written from its memory
	OpDeleteLocal  = "delete_local"  // a file deleted because its memory was
	OpMerge        = "merge"         // a MEMORY.md merged and pushed
)

// A Change is something a sync did, or would do in a dry run.
type Change struct {
	Path string `json:"path"` // the memory's path, e.g. /notes/a.md
	Op   string `json:"op"`
	// Note says why, when it is not plain: "restored" (deleted here,
	// changed in the store), "re-created" (deleted in the store, changed
	// here).
	Note string `json:"note,omitempty"`
}

// A Conflict is a file that changed on both sides.
type Conflict struct {
	Path string `json:"path"`
	// Winner is whose version is now at Path: "remote" or "local".
	Winner string `json:"winner"`
	// Kept is the file holding the other version, relative to the
	// directory, with "/" separators.
	Kept string `json:"kept"`
}

// A Skip is a path left alone, with why.
type Skip struct {
	Path string `json:"path"`
	// Side is where the reason lies: "local" or "remote".
	Side   string `json:"side"`
	Reason string `json:"reason"`
	// Rule is the kind of credential found, for a file kept out of the
	// store for its content; never the text itself.
	Rule string `json:"rule,omitempty"`
}

// Report is what a sync did.
type Report struct {
	StoreID   string     `json:"memory_store_id"`
	Dir       string     `json:"dir"`
	Scope     Scope      `json:"scope"`
	DryRun    bool       `json:"dry_run"`
	Changes   []Change   `json:"changes"`
	Conflicts []Conflict `json:"conflicts"`
	Skipped   []Skip     `json:"skipped"`
	// Unchanged counts the paths that were already in step.
	Unchanged int `json:"unchanged"`
	// Passes is how many times the sync planned: more than one when
	// another writer moved during the sync.
	Passes int `json:"passes"`
}

// Findings reports whether the sync has something to tell a person:
// conflicts or skipped paths.
func (r *Report) Findings() bool { return len(r.Conflicts) > 0 || len(r.Skipped) > 0 }

// maxPasses bounds the planning: the first pass and at most two more when
// another writer moved under it (a 409).
const maxPasses = 3

// Sync runs one sync of o.Dir with o.StoreID and reports what it did. The
// error, if any, matches ErrLocal, ErrRemote, ErrOtherStore or ErrBusy; a
// Report is returned with it, holding what was done before it.
func Sync(ctx context.Context, o Options) (*Report, error) {
	s, err := newSyncer(o)
	if err != nil {
		return &Report{StoreID: o.StoreID, Dir: o.Dir, Scope: o.Scope, DryRun: o.DryRun}, err
	}
	return s.run(ctx)
}

// oneOf checks that the option named what is one of its two values,
// and sets it to the first, its default, when it is "".
func oneOf[T ~string](what string, v *T, def, other T) error {
	switch *v {
	case "":
		*v = def
	case def, other:
	default:
		return fmt.Errorf("dirsync: %s %q: want %q or %q", what, *v, def, other)
	}
	return nil
}

// check validates the options and fills in defaults.
func (o *Options) check() error {
	switch {
	case o.Memories == nil:
		return errors.New("dirsync: no memory service")
	case o.StoreID == "":
		return errors.New("dirsync: no store ID")
	case o.Dir == "":
		return errors.New("dirsync: no directory")
	}
	if err := oneOf("scope", &o.Scope, ScopePrivate, ScopeTeam); err != nil {
		return err
	}
	if err := oneOf("prefer", &o.Prefer, PreferRemote, PreferLocal); err != nil {
		return err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Device = deviceName(o.Device)
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return localErr("directory "+o.Dir, err)
	}
	o.Dir = abs
	return nil
}

// deviceName makes a device name safe for a file name.
func deviceName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			b[i] = '-'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	if len(b) == 0 {
		return "device"
	}
	return string(b)
}

// openDir opens the synced directory, making it when missing (unless in
// a dry run, where a missing directory is an empty one: nil).
func openDir(o *Options) (*os.Root, error) {
	if _, err := os.Stat(o.Dir); errors.Is(err, os.ErrNotExist) {
		if o.DryRun {
			return nil, nil
		}
		if err := os.MkdirAll(o.Dir, private.DirMode); err != nil {
			return nil, localErr("make directory", err)
		}
	}
	real, err := filepath.EvalSymlinks(o.Dir)
	if err != nil {
		return nil, localErr("directory", err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, localErr("open directory", err)
	}
	return root, nil
}

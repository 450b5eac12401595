package memstore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"strings"
	"time"
)

// The rules of the domain that need stored data: what a write does given
// what the store holds, in which order its errors are decided, and what
// counts as no change. They live here once, so that every backend applies
// them the same way.
//
// Two shapes, by what a rule reads. The writes of memories read several
// things in turn (the memory, then perhaps whatever overlaps its new path),
// so the Core runs them inside the backend's transaction, over a MemoryTx
// that offers only those reads and the two changes. The other rules read
// one record the backend has already fetched in its transaction, so they
// are plain functions the backend calls there: StoreUpdate.Apply,
// Session.TakesTokens, CheckToken and SnapshotAttachments. PageSize reads
// nothing: it sizes every list's page.

// A MemoryTx is one store's memories inside a backend's write
// transaction: the reads and the two changes that the Core's rules for
// creating, updating and deleting memories are made of. Reads see the
// transaction's own changes. Its methods are only valid while the
// function given to MemoryStorage.WriteMemory runs.
type MemoryTx interface {
	// Archived reports whether the store is archived.
	Archived() bool
	// Memory returns the store's live memory id, with its content
	// (ENotFound).
	Memory(id string) (*Memory, error)
	// MemoryAt returns the live memory at exactly path, with its content,
	// or nil when there is none.
	MemoryAt(path string) (*Memory, error)
	// Overlapping returns a live memory, other than the one whose ID is
	// self, at path or at an ancestor or a descendant of it (the first in
	// path order), or nil when there is none: its ID and Path at least,
	// which an error names. It costs O(depth of path), whatever the
	// store's size.
	Overlapping(path, self string) (*Memory, error)
	// Count returns how many live memories the store holds.
	Count() (int, error)
	// Put records m's new state: a version of operation op (OpCreated or
	// OpModified) made by by, then the memory itself. A created memory
	// gets its ID and CreatedAt from Put; every one gets its VersionID
	// and UpdatedAt, the version's CreatedAt.
	Put(m *Memory, op Operation, by Actor) error
	// Delete records m's "deleted" version, made by by, keeping its path,
	// and removes the memory with its content.
	Delete(m *Memory, by Actor) error
}

// ContentSHA256 is the lowercase hex SHA-256 of content, as
// Memory.ContentSHA256 holds it.
func ContentSHA256(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// createMemory is CreateMemory's rule, in a transaction of the store:
// archived (EConflict); with Upsert and without IfNotExists, the memory at
// exactly the path takes the content (unchanged when it is the same);
// then the path must be free (EPathConflict, or EPreconditionFailed with
// IfNotExists) and the store below its limit max, when max > 0 (EInvalid).
// sum is mc.Content's hash, computed before the transaction.
func createMemory(tx MemoryTx, storeID string, mc MemoryCreate, sum string, by Actor, max int) (*Memory, error) {
	if tx.Archived() {
		return nil, ErrArchived(storeID)
	}
	if mc.Upsert && !mc.IfNotExists {
		m, err := tx.MemoryAt(mc.Path)
		switch {
		case err != nil:
			return nil, err
		case m != nil && m.Content == mc.Content:
			return m, nil
		case m != nil:
			return m, modify(tx, m, mc.Path, mc.Content, sum, by)
		}
	}
	o, err := tx.Overlapping(mc.Path, "")
	switch {
	case err != nil:
		return nil, err
	case o != nil && mc.IfNotExists:
		return nil, Errorf(EPreconditionFailed, "%s", pathConflict(mc.Path, o).Message)
	case o != nil:
		return nil, pathConflict(mc.Path, o)
	}
	if max > 0 {
		n, err := tx.Count()
		if err != nil {
			return nil, err
		}
		if n >= max {
			return nil, Errorf(EInvalid, "memory store %s holds %d memories, its limit; delete some before creating more", storeID, n)
		}
	}
	m := &Memory{StoreID: storeID, Path: mc.Path, Content: mc.Content, ContentSHA256: sum, ContentSize: int64(len(mc.Content))}
	return m, tx.Put(m, OpCreated, by)
}

// updateMemory is UpdateMemory's rule, deciding in the order of the API's
// contract: the memory (ENotFound), archived (EConflict), an update that
// changes nothing (success, whatever its precondition, so that a retry
// succeeds), the precondition (EPreconditionFailed), then a new path's
// overlaps (EPathConflict, or a successful no-op with RenameIfFree).
// newSum is the hash of u.Content when that is set.
func updateMemory(tx MemoryTx, storeID, id string, u MemoryUpdate, newSum string, by Actor) (*Memory, error) {
	m, err := tx.Memory(id)
	if err != nil {
		return nil, err
	}
	if tx.Archived() {
		return nil, ErrArchived(storeID)
	}
	path, content, sum := m.Path, m.Content, m.ContentSHA256
	if u.Path != nil {
		path = *u.Path
	}
	if u.Content != nil {
		content, sum = *u.Content, newSum
	}
	if path == m.Path && content == m.Content {
		return m, nil
	}
	if err := precondition(m, u.IfSHA256); err != nil {
		return nil, err
	}
	if path != m.Path {
		o, err := tx.Overlapping(path, id)
		switch {
		case err != nil:
			return nil, err
		case o != nil && u.RenameIfFree:
			return m, nil
		case o != nil:
			return nil, pathConflict(path, o)
		}
	}
	return m, modify(tx, m, path, content, sum, by)
}

// deleteMemory is DeleteMemory's rule: the memory (ENotFound), then the
// precondition (EPreconditionFailed). An archived store's memories may be
// deleted.
func deleteMemory(tx MemoryTx, id, ifSHA256 string, by Actor) error {
	m, err := tx.Memory(id)
	if err != nil {
		return err
	}
	if err := precondition(m, ifSHA256); err != nil {
		return err
	}
	return tx.Delete(m, by)
}

// modify gives m a new path and content, whose hash is sum.
func modify(tx MemoryTx, m *Memory, path, content, sum string, by Actor) error {
	m.Path, m.Content, m.ContentSHA256, m.ContentSize = path, content, sum, int64(len(content))
	return tx.Put(m, OpModified, by)
}

// precondition refuses a change to m unless its content has hash want
// (any case), when want is set.
func precondition(m *Memory, want string) error {
	if want != "" && !strings.EqualFold(want, m.ContentSHA256) {
		return Errorf(EPreconditionFailed, "memory %s has content_sha256 %s, not %s", m.ID, m.ContentSHA256, want)
	}
	return nil
}

// pathConflict is the error for path, taken or overlapped by o.
func pathConflict(path string, o *Memory) *Error {
	msg := fmt.Sprintf("path %q is taken by memory %s", path, o.ID)
	if o.Path != path {
		msg = fmt.Sprintf("path %q overlaps %q of memory %s", path, o.Path, o.ID)
	}
	return &Error{Code: EPathConflict, Message: msg, ConflictingMemoryID: o.ID, ConflictingPath: o.Path}
}

// Apply is UpdateStore's rule, for a backend to run on the store s it
// read in its transaction: an archived store is not updated (EConflict);
// the metadata the patch makes must be valid (EInvalid); an update that
// changes nothing reports changed false and leaves s as it was, UpdatedAt
// included. Otherwise s takes the new name, description and metadata, and
// the backend stores them with UpdatedAt set to now.
func (u StoreUpdate) Apply(s *Store) (changed bool, err error) {
	if s.ArchivedAt != nil {
		return false, Errorf(EConflict, "memory store %s is archived and cannot be updated", s.ID)
	}
	name, desc, meta := s.Name, s.Description, maps.Clone(s.Metadata)
	if meta == nil {
		meta = map[string]string{}
	}
	if u.Name != nil {
		name = *u.Name
	}
	if u.Description != nil {
		desc = *u.Description
	}
	for k, v := range u.Metadata {
		if v == nil {
			delete(meta, k)
		} else {
			meta[k] = *v
		}
	}
	if err := ValidateMetadata(meta); err != nil {
		return false, err
	}
	if name == s.Name && desc == s.Description && maps.Equal(meta, s.Metadata) {
		return false, nil
	}
	s.Name, s.Description, s.Metadata = name, desc, meta
	return true, nil
}

// TakesTokens refuses a new token for an archived session (EConflict).
func (s *Session) TakesTokens() error {
	if s.ArchivedAt != nil {
		return Errorf(EConflict, "session %s is archived; it takes no new tokens", s.ID)
	}
	return nil
}

// CheckToken decides whether token t of session s authenticates at now:
// not revoked, not expired, and its session not archived
// (EUnauthenticated, saying which).
func CheckToken(t *SessionToken, s *Session, now time.Time) error {
	switch {
	case t.RevokedAt != nil:
		return Errorf(EUnauthenticated, "session token %s has been revoked", t.ID)
	case t.ExpiresAt != nil && !now.Before(*t.ExpiresAt):
		return Errorf(EUnauthenticated, "session token %s expired at %s", t.ID, t.ExpiresAt.Format(time.RFC3339))
	case s.ArchivedAt != nil:
		return Errorf(EUnauthenticated, "session %s is archived; its tokens no longer work", s.ID)
	}
	return nil
}

// SnapshotAttachments is the rule of a new session's stores, for a
// backend to run in the transaction that inserts the session, so that a
// store archived or renamed concurrently is seen wholly before or wholly
// after: each store must exist in the workspace and not be archived
// (EInvalid naming the resource); its name and description are copied
// into the attachment as they are now; access defaults to read-write;
// mount paths are assigned. store looks a store up by ID, returning nil
// when the workspace has none.
func SnapshotAttachments(want []AttachmentCreate, store func(id string) (*Store, error)) ([]Attachment, error) {
	atts := make([]Attachment, len(want))
	for i, a := range want {
		s, err := store(a.StoreID)
		switch {
		case err != nil:
			return nil, err
		case s == nil:
			return nil, Errorf(EInvalid, "resources[%d]: memory store %s was not found in this workspace", i, a.StoreID)
		case s.ArchivedAt != nil:
			return nil, Errorf(EInvalid, "resources[%d]: memory store %s is archived; an archived store cannot be attached to a session", i, a.StoreID)
		}
		atts[i] = Attachment{StoreID: a.StoreID, Access: a.Access, Instructions: a.Instructions, Name: s.Name, Description: s.Description}
		if atts[i].Access == "" {
			atts[i].Access = AccessReadWrite
		}
	}
	AssignMountPaths(atts)
	return atts, nil
}

// PageSize is the number of items a list's page holds for a requested
// limit: DefaultPageSize for 0, at most MaxFullPageSize when the items
// carry content; EInvalid outside 1-MaxPageSize.
func PageSize(limit int, full bool) (int, error) {
	switch {
	case limit == 0:
		limit = DefaultPageSize
	case limit < 0 || limit > MaxPageSize:
		return 0, Errorf(EInvalid, "limit %d must be between 1 and %d", limit, MaxPageSize)
	}
	if full {
		limit = min(limit, MaxFullPageSize)
	}
	return limit, nil
}

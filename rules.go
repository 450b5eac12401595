package memstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// The rules of the domain that need stored data: what a write does given
// what the store holds, in which order its errors are decided, and what
// counts as no change. They live here once, so that every backend applies
// them the same way.
//
// Two shapes, by what a rule reads. The writes of memories and of
// sessions read several things in turn (the memory, then perhaps
// whatever overlaps its new path; the session, then the stores it
// attaches and its count of live tokens), so the Core runs them inside
// the backend's transaction, over a MemoryTx or a SessionTx that offers
// only those reads and the changes. StoreUpdate.Apply reads one record
// the backend has already fetched in its transaction, so it is a plain
// function the backend calls there. PageSize reads nothing: it sizes
// every list's page.

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
	// CheckQuota returns q.Check of how many live memories the store
	// holds: q's refusal when they leave no room for one more. q is
	// Limited. A backend that checks the cap in its database compares
	// the count with q.Max there, and decides by q.Check whenever that
	// comparison refuses.
	CheckQuota(q Quota) error
	// Put records m's new state: a version of e's operation (e is
	// EventMemoryCreated, EventMemoryModified or EventMemoryRenamed)
	// made by by, its event e in the store's feed, then the memory
	// itself. A created memory gets its ID and CreatedAt from Put; every
	// one gets its VersionID and UpdatedAt, the version's CreatedAt.
	Put(m *Memory, e EventType, by Actor) error
	// Delete records m's "deleted" version, made by by, keeping its path,
	// with its memory.deleted event, and removes the memory with its
	// content.
	Delete(m *Memory, by Actor) error
}

// ContentSHA256 is the lowercase hex SHA-256 of content, as
// Memory.ContentSHA256 holds it.
func ContentSHA256(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// createMemory is CreateMemory's rule, in a transaction of the store:
// archived (EInvalid, ErrArchived); with Upsert and without IfNotExists,
// the memory at exactly the path takes the content (unchanged when it is
// the same); then the path must be free (EPathConflict, or
// EPreconditionFailed with IfNotExists, both naming the memory in the
// way) and the store within its quota q of memories (EInvalid). sum is
// mc.Content's hash, computed before the transaction.
func createMemory(tx MemoryTx, storeID string, mc MemoryCreate, sum string, by Actor, q Quota) (*Memory, error) {
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
		e := pathConflict(mc.Path, o)
		e.Code = EPreconditionFailed
		return nil, e
	case o != nil:
		return nil, pathConflict(mc.Path, o)
	}
	if q.Limited() {
		if err := tx.CheckQuota(q); err != nil {
			return nil, err
		}
	}
	m := &Memory{StoreID: storeID, Path: mc.Path, Content: mc.Content, ContentSHA256: sum, ContentSize: int64(len(mc.Content))}
	return m, tx.Put(m, EventMemoryCreated, by)
}

// updateMemory is UpdateMemory's rule, deciding in the order of the API's
// contract: the memory (ENotFound), archived (EInvalid, ErrArchived), an
// update that changes nothing (success, whatever its precondition, so
// that a retry succeeds), the index cap of what the memory becomes
// (EInvalid, rules), the precondition (EPreconditionFailed), then a new
// path's overlaps (EPathConflict, or a successful no-op with
// RenameIfFree). newSum is the hash of u.Content when that is set.
func updateMemory(tx MemoryTx, storeID, id string, u MemoryUpdate, newSum string, by Actor, rules ContentRules) (*Memory, error) {
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
	// Here, where the path and the content it will have are both known: a
	// rename may make a memory the index.
	if err := rules.checkIndex(path, content); err != nil {
		return nil, err
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

// deleteMemory is DeleteMemory's rule: the memory (ENotFound), archived
// (EInvalid, ErrArchived: an archived store's memories are read-only, as
// on the hosted API), then the precondition (EPreconditionFailed).
func deleteMemory(tx MemoryTx, storeID, id, ifSHA256 string, by Actor) error {
	m, err := tx.Memory(id)
	if err != nil {
		return err
	}
	if tx.Archived() {
		return ErrArchived(storeID)
	}
	if err := precondition(m, ifSHA256); err != nil {
		return err
	}
	return tx.Delete(m, by)
}

// modify gives m a new path and content, whose hash is sum.
func modify(tx MemoryTx, m *Memory, path, content, sum string, by Actor) error {
	e := changeEvent(m, path)
	m.Path, m.Content, m.ContentSHA256, m.ContentSize = path, content, sum, int64(len(content))
	return tx.Put(m, e, by)
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

// Apply is UpdateStore's rule, which the core runs on the store s as a
// backend's transaction read it (StoreTx): an archived store is not
// updated (EInvalid, ErrStoreArchived); the metadata the patch makes must
// be valid (EInvalid); an update that changes nothing reports changed
// false and leaves s as it was, UpdatedAt included. Otherwise s takes the
// new name, description and metadata, which StoreTx.Update keeps with
// UpdatedAt set to now.
func (u StoreUpdate) Apply(s *Store) (changed bool, err error) {
	if s.ArchivedAt != nil {
		return false, ErrStoreArchived(s.ID)
	}
	name, desc, meta := s.Name, s.Description, patchMetadata(s.Metadata, u.Metadata)
	if u.Name != nil {
		name = *u.Name
	}
	if u.Description != nil {
		desc = *u.Description
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

// patchMetadata is meta, never nil, after a merge patch: a key mapped to
// nil is removed, any other set. meta itself is left as it was.
func patchMetadata(meta map[string]string, patch map[string]*string) map[string]string {
	out := maps.Clone(meta)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range patch {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = *v
		}
	}
	return out
}

// Apply is UpdateSession's rule, a sessionChange: an archived session
// is not changed (EConflict); the metadata and fields the patches make
// must be valid (EInvalid); an update that changes nothing reports
// changed false and leaves s as it was.
func (u SessionUpdate) Apply(s *Session) (changed bool, err error) {
	if err := s.changeable(); err != nil {
		return false, err
	}
	title, meta, fields := s.Title, patchMetadata(s.Metadata, u.Metadata), maps.Clone(s.Fields)
	if u.Title != nil {
		title = *u.Title
	}
	if fields == nil {
		fields = map[string]json.RawMessage{}
	}
	for k, v := range u.Fields {
		if v == nil {
			delete(fields, k)
		} else {
			fields[k] = v
		}
	}
	if err := ValidateMetadata(meta); err != nil {
		return false, err
	}
	if err := validateSessionFields(fields); err != nil {
		return false, err
	}
	if title == s.Title && maps.Equal(meta, s.Metadata) && maps.EqualFunc(fields, s.Fields, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
		return false, nil
	}
	s.Title, s.Metadata, s.Fields = title, meta, fields
	return true, nil
}

// changeable refuses every change to an archived session (EConflict):
// archiving ends it.
func (s *Session) changeable() error {
	if s.ArchivedAt != nil {
		return Errorf(EConflict, "session %s is archived and cannot be changed", s.ID)
	}
	return nil
}

// attachStore is AttachStore's rule: the session live, the store not yet
// attached (EConflict), fewer than MaxSessionStores attached (EInvalid),
// then the store snapshotted by the rules of a new session's stores, at
// the end of the session's attachments with a mount path of its own.
func attachStore(s *Session, a AttachmentCreate, store func(id string) (*Store, error)) error {
	if err := s.changeable(); err != nil {
		return err
	}
	if s.Attachment(a.StoreID) != nil {
		return Errorf(EConflict, "memory store %s is already attached to session %s; update its resource to change its access or instructions", a.StoreID, s.ID)
	}
	if len(s.Attachments) >= MaxSessionStores {
		return Errorf(EInvalid, "%s", LimitReached("session "+s.ID, MaxSessionStores, "attached memory stores", "detach one first", ""))
	}
	att, err := snapshot("resource", a, store)
	if err != nil {
		return err
	}
	s.Attachments = append(s.Attachments, att)
	AssignMountPaths(s.Attachments)
	return nil
}

// updateAttachment is UpdateAttachment's rule: the session live
// (EConflict), the store attached (ENotFound); no change reports changed
// false.
func updateAttachment(s *Session, storeID string, u AttachmentUpdate) (changed bool, err error) {
	if err := s.changeable(); err != nil {
		return false, err
	}
	a := s.Attachment(storeID)
	if a == nil {
		return false, errNotAttached(s, storeID)
	}
	was := *a
	if u.Access != nil {
		a.Access = *u.Access
		if a.Access == "" {
			a.Access = AccessReadWrite
		}
	}
	if u.Instructions != nil {
		a.Instructions = *u.Instructions
	}
	return *a != was, nil
}

// detachStore is DetachStore's rule: the session live (EConflict), the
// store attached (ENotFound). The other attachments keep their order and
// mount paths.
func detachStore(s *Session, storeID string) error {
	if err := s.changeable(); err != nil {
		return err
	}
	if s.Attachment(storeID) == nil {
		return errNotAttached(s, storeID)
	}
	s.Attachments = slices.DeleteFunc(s.Attachments, func(a Attachment) bool { return a.StoreID == storeID })
	return nil
}

func errNotAttached(s *Session, storeID string) error {
	return Errorf(ENotFound, "session %s has no memory_store resource %s: that store is not attached to it", s.ID, storeID)
}

// createSession is CreateSession's rule, in a transaction of the
// workspace's sessions at now: the workspace within its quota q of live
// sessions (EInvalid), the stores snapshotted (snapshotAttachments), then
// the session stored with its first token, whose secret is returned.
func createSession(tx SessionTx, workspaceID string, sc SessionCreate, q Quota, now time.Time) (*Session, *SessionToken, string, error) {
	if q.Limited() {
		n, err := tx.LiveSessions(q.Max())
		if err != nil {
			return nil, nil, "", err
		}
		if err := q.Check(n); err != nil {
			return nil, nil, "", err
		}
	}
	s := newSession(workspaceID, sc, now)
	atts, err := snapshotAttachments(sc.Stores, tx.Store)
	if err != nil {
		return nil, nil, "", err
	}
	s.Attachments = atts
	if err := tx.CreateSession(s); err != nil {
		return nil, nil, "", err
	}
	t, secret, err := newToken(tx, s, sc.TokenTTL, now)
	if err != nil {
		return nil, nil, "", err
	}
	return s, t, secret, nil
}

// createSessionToken is CreateSessionToken's rule, at now: the session
// (ENotFound) live (EConflict), within its quota q of live tokens
// (EInvalid), then the token stored.
func createSessionToken(tx SessionTx, sessionID string, ttl time.Duration, q Quota, now time.Time) (*SessionToken, string, error) {
	s, err := tx.Session(sessionID)
	if err != nil {
		return nil, "", err
	}
	if err := s.takesTokens(); err != nil {
		return nil, "", err
	}
	if q.Limited() {
		n, err := tx.LiveTokens(sessionID, now, q.Max())
		if err != nil {
			return nil, "", err
		}
		if err := q.Check(n); err != nil {
			return nil, "", err
		}
	}
	return newToken(tx, s, ttl, now)
}

// newToken stores a token of session s made at now, expiring after ttl
// when ttl is positive and never otherwise, and returns it with its
// secret, of which only the hash is kept.
func newToken(tx SessionTx, s *Session, ttl time.Duration, now time.Time) (*SessionToken, string, error) {
	secret := NewSecret(SessionTokenPrefix)
	t := &SessionToken{SessionID: s.ID, WorkspaceID: s.WorkspaceID, Hint: SecretHint(secret), CreatedAt: now}
	if ttl > 0 {
		exp := now.Add(ttl)
		t.ExpiresAt = &exp
	}
	if err := tx.CreateToken(t, HashSecret(secret)); err != nil {
		return nil, "", err
	}
	return t, secret, nil
}

// A sessionChange is a rule of the changes to a live session, run by
// changeSession on the session it read; store looks a store of the
// workspace up by ID, nil when there is none.
type sessionChange func(s *Session, store func(id string) (*Store, error)) (changed bool, err error)

// changeSession runs change on session id (ENotFound) and, when it
// reports a change, stores the session with UpdatedAt set to now. A
// change of its attachments or of its ConversationKey is announced
// (Revocation.Refresh), so that whatever holds the session's callers
// reads them again.
func changeSession(tx SessionTx, id string, now time.Time, change sessionChange) (*Session, error) {
	s, err := tx.Session(id)
	if err != nil {
		return nil, err
	}
	before, conversation := slices.Clone(s.Attachments), s.Metadata[ConversationKey]
	changed, err := change(s, tx.Store)
	if err != nil {
		return nil, err
	}
	if !changed {
		return s, nil
	}
	s.UpdatedAt = now
	attached := !slices.Equal(before, s.Attachments)
	if err := tx.UpdateSession(s, attached); err != nil {
		return nil, err
	}
	// Its callers hold its attachments and what its searches are
	// (ConversationKey): a change of either has them read again.
	if attached || s.Metadata[ConversationKey] != conversation {
		return s, tx.Announce(Revocation{SessionID: id, Refresh: true})
	}
	return s, nil
}

// archiveSession is ArchiveSession's rule: the first archive, at now,
// sets both ArchivedAt and UpdatedAt, later ones change nothing. Every
// token of the session stops (checkToken refuses the tokens of an
// archived session; RevokedAt keeps meaning an explicit revocation).
func archiveSession(tx SessionTx, id string, now time.Time) (*Session, error) {
	s, err := tx.Session(id)
	if err != nil {
		return nil, err
	}
	if s.ArchivedAt == nil {
		s.ArchivedAt, s.UpdatedAt = &now, now
		if err := tx.UpdateSession(s, false); err != nil {
			return nil, err
		}
	}
	return s, tx.Announce(Revocation{SessionID: id})
}

// deleteSession is DeleteSession's rule: the session and its tokens go
// (ENotFound), and every token stops.
func deleteSession(tx SessionTx, id string) error {
	if err := tx.DeleteSession(id); err != nil {
		return err
	}
	return tx.Announce(Revocation{SessionID: id})
}

// revokeSessionToken is RevokeSessionToken's rule: the first revocation,
// at now, is kept, and the token stops.
func revokeSessionToken(tx SessionTx, id string, now time.Time) (*SessionToken, error) {
	t, err := tx.RevokeToken(id, now)
	if err != nil {
		return nil, err
	}
	return t, tx.Announce(Revocation{SessionID: t.SessionID, TokenID: t.ID})
}

// takesTokens refuses a new token for an archived session (EConflict).
func (s *Session) takesTokens() error {
	if s.ArchivedAt != nil {
		return Errorf(EConflict, "session %s is archived; it takes no new tokens", s.ID)
	}
	return nil
}

// checkKey is the rule by which API key k, read again (nil when it is
// gone), still stands for caller c: it is c's, in c's workspace, and not
// revoked (EUnauthenticated otherwise).
func checkKey(k *APIKey, c *Caller) error {
	switch {
	case k == nil || k.ID != c.Actor.ID || k.WorkspaceID != c.WorkspaceID:
		return Errorf(EUnauthenticated, "API key %s no longer exists", c.Actor.ID)
	case k.RevokedAt != nil:
		return errKeyRevoked(k.ID)
	}
	return nil
}

func errKeyRevoked(id string) error {
	return Errorf(EUnauthenticated, "API key %s has been revoked", id)
}

// checkToken decides whether token t of session s authenticates at now:
// not revoked, not expired, and its session not archived
// (EUnauthenticated, saying which).
func checkToken(t *SessionToken, s *Session, now time.Time) error {
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

// snapshotAttachments is the rule of a new session's stores, run in the
// transaction that inserts the session, so that a store archived or
// renamed concurrently is seen wholly before or wholly after: each store
// must exist in the workspace and not be archived (EInvalid naming the
// resource); its name and description are copied into the attachment as
// they are now; access defaults to read-write; mount paths are assigned.
// store looks a store up by ID, returning nil when the workspace has
// none.
func snapshotAttachments(want []AttachmentCreate, store func(id string) (*Store, error)) ([]Attachment, error) {
	atts := make([]Attachment, len(want))
	for i, a := range want {
		var err error
		if atts[i], err = snapshot(fmt.Sprintf("resources[%d]", i), a, store); err != nil {
			return nil, err
		}
	}
	AssignMountPaths(atts)
	return atts, nil
}

// snapshot is the attachment a makes, by snapshotAttachments's rule, its
// mount path still to assign; what names a in messages.
func snapshot(what string, a AttachmentCreate, store func(id string) (*Store, error)) (Attachment, error) {
	s, err := store(a.StoreID)
	switch {
	case err != nil:
		return Attachment{}, err
	case s == nil:
		return Attachment{}, Errorf(EInvalid, "%s: memory store %s was not found in this workspace", what, a.StoreID)
	case s.ArchivedAt != nil:
		return Attachment{}, Errorf(EInvalid, "%s: memory store %s is archived; an archived store cannot be attached to a session", what, a.StoreID)
	}
	att := Attachment{StoreID: a.StoreID, Access: a.Access, Instructions: a.Instructions, Name: s.Name, Description: s.Description}
	if att.Access == "" {
		att.Access = AccessReadWrite
	}
	return att, nil
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

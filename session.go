package memstore

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Access is what a session may do with the memories of an attached store.
type Access string

// The kinds of access.
const (
	AccessReadWrite Access = "read_write" // read, list, search and write
	AccessReadOnly  Access = "read_only"  // read, list and search only
)

// Limits of sessions (docs/api.md, Limits).
const (
	MaxSessionStores = 8
	MaxInstructions  = 4096 // characters
	// MaxSessionFieldsBytes bounds a session's kept fields (Fields),
	// names and values together, so that every list of sessions stays
	// small enough to page through.
	MaxSessionFieldsBytes = 16 << 10
)

// MountRoot is the directory under which an agent finds each attached
// store, at MountRoot + slug.
const MountRoot = "/mnt/memory/"

// SessionTokenPrefix begins every session token, and tells one apart from
// an API key (APIKeyPrefix) before any lookup.
const SessionTokenPrefix = "st-memstore-"

// An Attachment is a store attached to a session.
type Attachment struct {
	StoreID      string
	Access       Access // never "": AccessReadWrite when not given
	Instructions string // guidance for the agent; "" when none
	// Name and Description are the store's at the time of attachment:
	// later changes to the store do not reach the session.
	Name        string
	Description string
	// MountPath is where the agent finds the store: MountRoot and a slug
	// of the name, unique within the session (see AssignMountPaths).
	MountPath string
}

// Writable reports whether the attachment allows writes.
func (a *Attachment) Writable() bool { return a.Access != AccessReadOnly }

// A Session is one run of an agent with stores attached, the only way an
// agent reaches memory. memstore runs no agent: it keeps the session so
// that the session's tokens reach exactly its stores, with the access and
// instructions given at creation.
type Session struct {
	ID          string // sesn_...
	WorkspaceID string
	Title       string
	Metadata    map[string]string // never nil
	Attachments []Attachment      // in the order given at creation
	// Fields are the create request's other top-level fields (agent,
	// environment_id, ...), kept verbatim so that they can be returned as
	// sent. Never nil.
	Fields     map[string]json.RawMessage
	CreatedAt  time.Time
	UpdatedAt  time.Time
	ArchivedAt *time.Time // nil while the session's tokens may work
}

// newSession is the session that c makes in a workspace at now, its ID
// still to give: its metadata and fields copied, empty rather than nil,
// its attachments still to snapshot.
func newSession(workspaceID string, c SessionCreate, now time.Time) *Session {
	s := &Session{
		WorkspaceID: workspaceID, Title: c.Title,
		Metadata: maps.Clone(c.Metadata), Fields: maps.Clone(c.Fields),
		CreatedAt: now, UpdatedAt: now,
	}
	if s.Metadata == nil {
		s.Metadata = map[string]string{}
	}
	if s.Fields == nil {
		s.Fields = map[string]json.RawMessage{}
	}
	return s
}

// KeptJSON is the metadata and the other fields of s as a backend keeps
// them: a JSON object each.
func (s *Session) KeptJSON() (metadata, fields string, err error) {
	m, err := json.Marshal(s.Metadata)
	if err != nil {
		return "", "", err
	}
	f, err := json.Marshal(s.Fields)
	return string(m), string(f), err
}

// SetKeptJSON sets the metadata and the other fields of s from the JSON
// objects a backend keeps (KeptJSON), empty rather than nil.
func (s *Session) SetKeptJSON(metadata, fields []byte) error {
	if err := json.Unmarshal(metadata, &s.Metadata); err != nil {
		return err
	}
	if err := json.Unmarshal(fields, &s.Fields); err != nil {
		return err
	}
	if s.Metadata == nil {
		s.Metadata = map[string]string{}
	}
	if s.Fields == nil {
		s.Fields = map[string]json.RawMessage{}
	}
	return nil
}

// Attachment returns the attachment of a store, or nil when the store is
// not attached.
func (s *Session) Attachment(storeID string) *Attachment {
	for i := range s.Attachments {
		if s.Attachments[i].StoreID == storeID {
			return &s.Attachments[i]
		}
	}
	return nil
}

// AttachmentCreate attaches a store to a new session.
type AttachmentCreate struct {
	StoreID      string
	Access       Access // "" means AccessReadWrite
	Instructions string
}

// SessionCreate is what a new session is made of.
type SessionCreate struct {
	Title    string
	Metadata map[string]string
	Stores   []AttachmentCreate
	Fields   map[string]json.RawMessage
	// TokenTTL, when positive, makes the session's first token expire
	// after that long; otherwise it lasts until revoked.
	TokenTTL time.Duration
}

// A SessionToken is a bearer credential for one session. As with an API
// key, only a hash of its secret is kept.
type SessionToken struct {
	ID          string // sesntok_...
	SessionID   string
	WorkspaceID string
	Hint        string // the end of the secret, see SecretHint
	CreatedAt   time.Time
	ExpiresAt   *time.Time // nil: no expiry
	RevokedAt   *time.Time
}

// SessionFilter selects sessions for a list, newest first unless
// Ascending. Every field set narrows the list.
type SessionFilter struct {
	StoreID string // only sessions with this store attached
	// AgentID keeps only sessions whose kept agent field is this agent
	// (SessionAgentID).
	AgentID         string
	IncludeArchived bool // archived sessions are left out otherwise
	// Statuses keeps only sessions in one of these statuses; a status
	// names archived sessions (StatusTerminated) lists them whatever
	// IncludeArchived. The Core resolves it into IncludeArchived and
	// ArchivedOnly, which are all that backends read.
	Statuses     []SessionStatus
	ArchivedOnly bool
	// Bounds on CreatedAt: after (GT), from (GTE), before (LT), up to (LTE).
	CreatedAtGT, CreatedAtGTE, CreatedAtLT, CreatedAtLTE *time.Time
	Ascending                                            bool   // oldest first
	Limit                                                int    // page size, 1-100
	Page                                                 string // cursor from a previous page's Next
}

// SessionStatus is a session's status as the SDKs name it. memstore runs
// no agent, so a session is never running nor rescheduling: it is idle
// until archived, then terminated.
type SessionStatus string

// The statuses.
const (
	StatusIdle         SessionStatus = "idle"
	StatusTerminated   SessionStatus = "terminated"   // archived
	StatusRunning      SessionStatus = "running"      // never, in memstore
	StatusRescheduling SessionStatus = "rescheduling" // never, in memstore
)

// Status is the session's status: StatusTerminated once archived,
// StatusIdle before.
func (s *Session) Status() SessionStatus {
	if s.ArchivedAt != nil {
		return StatusTerminated
	}
	return StatusIdle
}

// SessionAgentID is the ID of the agent a session's kept fields name: the
// agent field itself when it is a string (the SDKs' short form), its id
// when it is an object, "" otherwise. The backends' agent filters (their
// queries over the kept fields) follow the same rule.
func SessionAgentID(fields map[string]json.RawMessage) string {
	raw, ok := fields[AgentField]
	if !ok {
		return ""
	}
	var id string
	if json.Unmarshal(raw, &id) == nil {
		return id
	}
	var obj struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		return obj.ID
	}
	return ""
}

// AgentField is the kept field that names a session's agent.
const AgentField = "agent"

// resolveStatuses checks f.Statuses and turns them into IncludeArchived and
// ArchivedOnly; none reports that no session can be in them (running or
// rescheduling alone).
func (f *SessionFilter) resolveStatuses() (none bool, err error) {
	if len(f.Statuses) == 0 {
		return false, nil
	}
	idle, terminated := false, false
	for _, st := range f.Statuses {
		switch st {
		case StatusIdle:
			idle = true
		case StatusTerminated:
			terminated = true
		case StatusRunning, StatusRescheduling:
		default:
			return false, Errorf(EInvalid, "statuses[] must be among %s, %s, %s and %s, not %q",
				StatusIdle, StatusRunning, StatusRescheduling, StatusTerminated, st)
		}
	}
	f.IncludeArchived, f.ArchivedOnly = terminated, terminated && !idle
	return !idle && !terminated, nil
}

// matches reports whether s, read afresh, passes f: the filter of a
// session caller's list, its own session alone.
func (f *SessionFilter) matches(s *Session) bool {
	at := s.CreatedAt
	switch {
	case f.StoreID != "" && s.Attachment(f.StoreID) == nil,
		f.AgentID != "" && SessionAgentID(s.Fields) != f.AgentID,
		s.ArchivedAt != nil && !f.IncludeArchived,
		s.ArchivedAt == nil && f.ArchivedOnly,
		f.CreatedAtGT != nil && !at.After(*f.CreatedAtGT),
		f.CreatedAtGTE != nil && at.Before(*f.CreatedAtGTE),
		f.CreatedAtLT != nil && !at.Before(*f.CreatedAtLT),
		f.CreatedAtLTE != nil && at.After(*f.CreatedAtLTE):
		return false
	}
	return true
}

// SessionUpdate changes a session; nil fields are left as they are.
// Metadata is a merge patch (a key mapped to nil is removed), and so is
// Fields, over the kept fields: a field mapped to nil is removed, any
// other replaces the field.
type SessionUpdate struct {
	Title    *string
	Metadata map[string]*string
	Fields   map[string]json.RawMessage
}

// AttachmentUpdate changes a store's attachment to a live session; nil
// fields are left as they are.
type AttachmentUpdate struct {
	Access       *Access
	Instructions *string
}

// SessionTokenFilter selects a page of a session's tokens, oldest first.
type SessionTokenFilter struct {
	Limit int    // page size, 1-100
	Page  string // cursor from a previous page's Next
}

// SessionService keeps the sessions of the caller's workspace and their
// tokens (ENotFound for another workspace's session). Everything but
// reading its own session needs an API key: a session caller sees its own
// session alone, and is refused the rest (EPermission).
type SessionService interface {
	// CreateSession validates sc (ValidateSessionCreate) and attaches its
	// stores, snapshotting their names and descriptions, then makes the
	// session's first token and returns it with its secret, which is not
	// kept. A store that is not in the workspace, or is archived, is
	// EInvalid naming it, as are the other rules of docs/api.md (Creating a
	// session); a workspace holding its limit of live sessions refuses
	// another (ErrSessionLimit).
	CreateSession(ctx context.Context, c *Caller, sc SessionCreate) (*Session, *SessionToken, string, error)
	// Session returns a session, archived or not (ENotFound).
	Session(ctx context.Context, c *Caller, id string) (*Session, error)
	// Sessions lists sessions newest first (EInvalid for a bad filter or
	// cursor). A session caller's list is its own session alone, when it
	// has f.StoreID attached or f.StoreID is "": that is how the holder
	// of a token learns its session.
	Sessions(ctx context.Context, c *Caller, f SessionFilter) (Page[Session], error)
	// ArchiveSession ends a session: its tokens stop working and no new
	// ones can be made. Archiving again changes nothing (ENotFound).
	ArchiveSession(ctx context.Context, c *Caller, id string) (*Session, error)
	// CreateSessionToken makes another token for a session, expiring
	// after ttl when ttl > 0 (ENotFound; EConflict when archived;
	// ErrTokenLimit when the session holds its limit of live tokens).
	CreateSessionToken(ctx context.Context, c *Caller, sessionID string, ttl time.Duration) (*SessionToken, string, error)
	// SessionTokens lists a session's tokens, revoked and expired ones
	// included, oldest first (ENotFound; EInvalid for a bad filter or
	// cursor).
	SessionTokens(ctx context.Context, c *Caller, sessionID string, f SessionTokenFilter) (Page[SessionToken], error)
	// SessionToken returns a token, revoked, expired or not (ENotFound).
	SessionToken(ctx context.Context, c *Caller, id string) (*SessionToken, error)
	// RevokeSessionToken stops a token from working, for good. Revoking
	// again changes nothing (ENotFound).
	RevokeSessionToken(ctx context.Context, c *Caller, id string) (*SessionToken, error)
	// UpdateSession applies u (EInvalid, ENotFound; EConflict when the
	// session is archived). An update that changes nothing leaves
	// UpdatedAt alone.
	UpdateSession(ctx context.Context, c *Caller, id string, u SessionUpdate) (*Session, error)
	// DeleteSession removes a session with its tokens, which stop working
	// at once (ENotFound). The versions its tokens wrote keep their actor,
	// the session's ID.
	DeleteSession(ctx context.Context, c *Caller, id string) error
	// AttachStore attaches another store to a live session by the rules of
	// session creation (SnapshotAttachments), within MaxSessionStores
	// (EInvalid; EConflict when archived or already attached). The
	// session's tokens reach it from their next request.
	AttachStore(ctx context.Context, c *Caller, sessionID string, a AttachmentCreate) (*Session, error)
	// UpdateAttachment changes the access or instructions of a store's
	// attachment (ENotFound when not attached; EConflict when archived).
	UpdateAttachment(ctx context.Context, c *Caller, sessionID, storeID string, u AttachmentUpdate) (*Session, error)
	// DetachStore removes a store's attachment: the session's tokens no
	// longer reach the store from their next request (ENotFound when not
	// attached; EConflict when archived).
	DetachStore(ctx context.Context, c *Caller, sessionID, storeID string) (*Session, error)
	// AuthenticateSession returns the caller a session token stands for:
	// the session's workspace, a session actor and the session itself
	// (EUnauthenticated for an unknown, revoked or expired token or an
	// archived session, and for any secret that is not a session token;
	// the message never repeats the secret). It is the credential layer,
	// as KeyService.Authenticate is, for session tokens alone: it takes
	// no caller.
	AuthenticateSession(ctx context.Context, secret string) (*Caller, error)
}

// SessionStorage keeps the sessions of workspaces and their tokens. It is
// trusted: only a Core calls it, once the caller may and the input is
// valid (see Core). Its reads do what the SessionService methods of the
// same name do, inside the workspace workspaceID; every change goes
// through WriteSessions, where the Core's rules decide it.
type SessionStorage interface {
	Session(ctx context.Context, workspaceID, id string) (*Session, error)
	Sessions(ctx context.Context, workspaceID string, f SessionFilter) (Page[Session], error)
	SessionTokens(ctx context.Context, workspaceID, sessionID string, f SessionTokenFilter) (Page[SessionToken], error)
	SessionToken(ctx context.Context, workspaceID, id string) (*SessionToken, error)
	// SessionTokenBySecret returns the token whose secret has hash
	// secretHash, of whichever workspace, with its session, both read
	// in one snapshot (ENotFound): one indexed read, then the session.
	SessionTokenBySecret(ctx context.Context, secretHash string) (*SessionToken, *Session, error)
	// WriteSessions runs fn in one write transaction of the workspace's
	// sessions, over a SessionTx, and commits what it changed when fn
	// returns nil; otherwise it changes nothing and returns fn's error.
	// fn may run more than once (a transaction the database aborted
	// runs again), so it must have no effect outside tx. The
	// revocations fn announces reach this process's listeners once
	// committed.
	WriteSessions(ctx context.Context, workspaceID string, fn func(tx SessionTx) error) error
	// Now is the time by the backend's clock, as it keeps times (see
	// KeyStorage.Now).
	Now() time.Time
}

// A SessionTx is a workspace's sessions inside a backend's write
// transaction: the reads and changes that the Core's rules for creating
// and changing sessions and their tokens are made of (rules.go). Reads
// see the transaction's own changes. A session read here stays locked
// against other changes, and a store read here against being archived or
// renamed, until the transaction ends. Its methods are only valid while
// the function given to SessionStorage.WriteSessions runs.
type SessionTx interface {
	// Session returns a session of the workspace with its attachments
	// (ENotFound).
	Session(id string) (*Session, error)
	// Store returns a store of the workspace, or nil when it has none.
	Store(id string) (*Store, error)
	// LiveSessions counts the workspace's sessions that are not
	// archived, up to max. Concurrent counts of them wait for one
	// another, on every process, until the transaction ends, so that a
	// Quota checked on the count cannot be passed by two at once.
	LiveSessions(max int) (int, error)
	// LiveTokens counts a session's tokens that are neither revoked nor
	// expired at now, up to max, waiting as LiveSessions does.
	LiveTokens(sessionID string, now time.Time, max int) (int, error)
	// CreateSession stores s, a new session of the workspace, with its
	// attachments in their order, giving it an ID.
	CreateSession(s *Session) error
	// UpdateSession stores s's title, metadata, fields, UpdatedAt and
	// ArchivedAt and, when attachments is set, its attachments in their
	// order, in place of those it had.
	UpdateSession(s *Session, attachments bool) error
	// DeleteSession removes a session of the workspace with its
	// attachments and tokens (ENotFound).
	DeleteSession(id string) error
	// CreateToken stores t, a new token of one of the workspace's
	// sessions, with the hash of its secret, giving it an ID.
	CreateToken(t *SessionToken, secretHash string) error
	// RevokeToken sets the RevokedAt of a token of the workspace to at,
	// unless it has one already, and returns the token (ENotFound).
	RevokeToken(id string, at time.Time) (*SessionToken, error)
	// LastEventSeq is the sequence number of a session's last event, 0
	// when it has none.
	LastEventSeq(sessionID string) (int64, error)
	// ToolUseEvent is the ID of the latest agent.tool_use event of a
	// session whose ToolUseID is toolUseID, "" when none.
	ToolUseEvent(sessionID, toolUseID string) (string, error)
	// AppendEvent stores e, a new event of one of the workspace's
	// sessions with its Seq given, giving it an ID; the session's
	// listeners hear of it once committed (EventNotifier, with the
	// session's ID).
	AppendEvent(e *SessionEvent) error
	// Announce tells every process that shares the database of r, this
	// one included, once the transaction commits, and nobody if it does
	// not (see RevocationNotifier).
	Announce(r Revocation) error
}

// ValidateSessionCreate checks what can be checked without a database:
// the number of stores, each store named once, the access values and the
// length of the instructions, the title, the metadata and the other
// fields (validateSessionFields). Each message names the offending
// resources[] entry or field.
func ValidateSessionCreate(c SessionCreate) error {
	if len(c.Stores) > MaxSessionStores {
		return Errorf(EInvalid, "a session takes at most %d memory stores; %d were given", MaxSessionStores, len(c.Stores))
	}
	seen := make(map[string]int, len(c.Stores))
	for i, a := range c.Stores {
		what := fmt.Sprintf("resources[%d]", i)
		if a.StoreID == "" {
			return Errorf(EInvalid, "%s.memory_store_id is required", what)
		}
		if err := ValidateID(what+".memory_store_id", a.StoreID); err != nil {
			return err
		}
		if j, ok := seen[a.StoreID]; ok {
			return Errorf(EInvalid, "%s: memory store %s is already attached by resources[%d]", what, a.StoreID, j)
		}
		seen[a.StoreID] = i
		if err := validateAttachment(what, &a.Access, &a.Instructions); err != nil {
			return err
		}
	}
	if err := validateTitle(c.Title); err != nil {
		return err
	}
	if err := validateSessionFields(c.Fields); err != nil {
		return err
	}
	return ValidateMetadata(c.Metadata)
}

// validateAttachment checks an attachment's access and instructions,
// those that are given, naming what (a resources[] entry, or a field's
// prefix) in its messages.
func validateAttachment(what string, access *Access, instructions *string) error {
	if access != nil {
		switch *access {
		case "", AccessReadWrite, AccessReadOnly:
		default:
			return Errorf(EInvalid, "%s.access must be %s or %s, not %q", what, AccessReadWrite, AccessReadOnly, *access)
		}
	}
	if instructions != nil {
		if !utf8.ValidString(*instructions) {
			return Errorf(EInvalid, "%s.instructions is not valid UTF-8", what)
		}
		if n := utf8.RuneCountInString(*instructions); n > MaxInstructions {
			return Errorf(EInvalid, "%s.instructions is %d characters; the limit is %d", what, n, MaxInstructions)
		}
	}
	return nil
}

// validateTitle checks a session's title.
func validateTitle(title string) error {
	if n := utf8.RuneCountInString(title); n > MaxStoreName || !utf8.ValidString(title) {
		return Errorf(EInvalid, "title must be valid text of at most %d characters", MaxStoreName)
	}
	return nil
}

// ValidateSessionUpdate checks what can be checked of u without the
// session: its title, each pair of its metadata patch and each of its
// fields. What the patches make is checked by SessionUpdate.Apply.
func ValidateSessionUpdate(u SessionUpdate) error {
	if u.Title != nil {
		if err := validateTitle(*u.Title); err != nil {
			return err
		}
	}
	if err := validateMetadataPatch(u.Metadata); err != nil {
		return err
	}
	set := make(map[string]json.RawMessage, len(u.Fields))
	for k, v := range u.Fields {
		if v != nil {
			set[k] = v
		}
	}
	return validateSessionFields(set)
}

// validateSessionFields checks the kept fields: each named by text
// (ValidateText) and valid JSON (kept as sent, the one form every backend
// can give back as it came) that every backend can read
// (ValidateJSONText), nested at most MaxJSONDepth levels, all of them
// together at most MaxSessionFieldsBytes. The messages name the field at
// fault, the first in name order.
func validateSessionFields(fields map[string]json.RawMessage) error {
	names := slices.Sorted(maps.Keys(fields))
	total, largest := 0, ""
	for _, k := range names {
		if err := ValidateText("the name of the field "+strconv.Quote(shortName(k)), k); err != nil {
			return err
		}
		if !json.Valid(fields[k]) {
			return Errorf(EInvalid, "%q is not valid JSON", shortName(k))
		}
		if err := ValidateJSONText(strconv.Quote(shortName(k)), fields[k]); err != nil {
			return err
		}
		if err := ValidateJSONDepth(k, fields[k]); err != nil {
			return err
		}
		total += len(k) + len(fields[k])
		if largest == "" || len(fields[k]) > len(fields[largest]) {
			largest = k
		}
	}
	if total > MaxSessionFieldsBytes {
		return Errorf(EInvalid, "the session's other fields (%s) take %d bytes, %s alone %d; the limit is %d bytes in all",
			fieldNames(names), total, shortName(largest), len(fields[largest]), MaxSessionFieldsBytes)
	}
	return nil
}

// fieldNames lists the first few of names for a message, each shortened,
// so that a message stays short however many fields a body has.
func fieldNames(names []string) string {
	const most = 5
	shown := make([]string, 0, most+1)
	for i, n := range names {
		if i == most {
			shown = append(shown, fmt.Sprintf("and %d more", len(names)-most))
			break
		}
		shown = append(shown, shortName(n))
	}
	return strings.Join(shown, ", ")
}

// shortName is a field name as a message shows it: its first 40 bytes,
// cut at a character.
func shortName(n string) string {
	const most = 40
	if len(n) <= most {
		return n
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(n[cut]) {
		cut--
	}
	return n[:cut] + "..."
}

// AssignMountPaths sets the MountPath of each attachment that has none:
// MountRoot and the slug of its name (Slug), or of its store ID when the
// name has no letter or digit; a slug already taken in the session gets
// "-2", "-3", ... An attachment that has a mount path keeps it, so that a
// mount path never changes while its store stays attached.
func AssignMountPaths(atts []Attachment) {
	taken := make(map[string]bool, len(atts))
	for _, a := range atts {
		if a.MountPath != "" {
			taken[strings.TrimPrefix(a.MountPath, MountRoot)] = true
		}
	}
	for i := range atts {
		if atts[i].MountPath != "" {
			continue
		}
		base := Slug(atts[i].Name)
		if base == "" {
			base = Slug(atts[i].StoreID)
		}
		slug := base
		for n := 2; taken[slug]; n++ {
			slug = fmt.Sprintf("%s-%d", base, n)
		}
		taken[slug] = true
		atts[i].MountPath = MountRoot + slug
	}
}

// maxSlug bounds a slug, in bytes, so that mount paths stay short.
const maxSlug = 64

// Slug turns a store name into a directory name: lowercase letters and
// digits (of any script) with single "-" between words ("User
// Preferences" → "user-preferences"); "" when name has none.
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			dash = b.Len() > 0
			continue
		}
		need := utf8.RuneLen(r)
		if dash {
			need++
		}
		if b.Len()+need > maxSlug {
			break
		}
		if dash {
			b.WriteByte('-')
			dash = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

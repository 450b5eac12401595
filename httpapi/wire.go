package httpapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"time"

	"github.com/memstore/memstore"
)

// The JSON objects of the API (docs/api.md, Objects), one type per object,
// used by the server to write them and by the client to read them. Every
// nullable key is a pointer so that it is written as null rather than left
// out.

// Object type discriminators.
const (
	typeStore        = "memory_store"
	typeStoreDeleted = "memory_store_deleted"
	typeMemory       = "memory"
	typePrefix       = "memory_prefix"
	typeDeleted      = "memory_deleted"
	typeVersion      = "memory_version"
	typeError        = "error"
	typeSession      = "session"
	typeSessionToken = "session_token"
	// The answers to deleting a session and one of its resources.
	typeSessionDeleted  = "session_deleted"
	typeResourceDeleted = "session_resource_deleted"
	typeSearchResult    = "memory_search_result"
	typeMemoryPrompt    = "memory_prompt"
	typeEvent           = "memory_store_event"
	typeEventPage       = "memory_store_event_page"
)

// Timestamp is a time on the wire: RFC 3339 in UTC with a Z, fractional
// seconds only when there are some (Go's RFC3339Nano).
type Timestamp time.Time

// MarshalJSON writes t in UTC.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(time.RFC3339Nano)+2)
	b = append(b, '"')
	b = time.Time(t).UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), nil
}

// UnmarshalJSON reads any RFC 3339 time.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	*t = Timestamp(v.UTC())
	return nil
}

// orZero is *p, or the zero value when p is nil (a null on the wire).
func orZero[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

func timestampPtr(t *time.Time) *Timestamp {
	if t == nil {
		return nil
	}
	v := Timestamp(*t)
	return &v
}

func timePtr(t *Timestamp) *time.Time {
	if t == nil {
		return nil
	}
	v := time.Time(*t)
	return &v
}

// StoreJSON is a memory_store object.
type StoreJSON struct {
	Type        string            `json:"type"`
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Metadata    map[string]string `json:"metadata"`
	CreatedAt   Timestamp         `json:"created_at"`
	UpdatedAt   Timestamp         `json:"updated_at"`
	ArchivedAt  *Timestamp        `json:"archived_at"`
}

// NewStoreJSON is the wire form of s.
func NewStoreJSON(s *memstore.Store) StoreJSON {
	md := s.Metadata
	if md == nil {
		md = map[string]string{}
	}
	return StoreJSON{
		Type: typeStore, ID: s.ID, Name: s.Name, Description: s.Description, Metadata: md,
		CreatedAt: Timestamp(s.CreatedAt), UpdatedAt: Timestamp(s.UpdatedAt),
		ArchivedAt: timestampPtr(s.ArchivedAt),
	}
}

// Store is the domain form of j (without its workspace, which the wire
// does not carry).
func (j *StoreJSON) Store() *memstore.Store {
	md := j.Metadata
	if md == nil {
		md = map[string]string{}
	}
	return &memstore.Store{
		ID: j.ID, Name: j.Name, Description: j.Description, Metadata: md,
		CreatedAt: time.Time(j.CreatedAt), UpdatedAt: time.Time(j.UpdatedAt),
		ArchivedAt: timePtr(j.ArchivedAt),
	}
}

// DeletedJSON is the answer to a deletion: memory_store_deleted or
// memory_deleted.
type DeletedJSON struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// SessionDeleted is the answer to the deletion of session id.
func SessionDeleted(id string) DeletedJSON { return DeletedJSON{Type: typeSessionDeleted, ID: id} }

// ResourceDeleted is the answer to the detachment of resource id.
func ResourceDeleted(id string) DeletedJSON { return DeletedJSON{Type: typeResourceDeleted, ID: id} }

// StoreDeleted is the answer to the deletion of store id.
func StoreDeleted(id string) DeletedJSON { return DeletedJSON{Type: typeStoreDeleted, ID: id} }

// MemoryDeleted is the answer to the deletion of memory id.
func MemoryDeleted(id string) DeletedJSON { return DeletedJSON{Type: typeDeleted, ID: id} }

// MemoryJSON is a memory object. Content is null in the basic view.
// SizeBytes repeats ContentSizeBytes under the research preview's name
// (docs/api.md, Differences from the hosted API).
type MemoryJSON struct {
	Type             string    `json:"type"`
	ID               string    `json:"id"`
	MemoryStoreID    string    `json:"memory_store_id"`
	Path             string    `json:"path"`
	Content          *string   `json:"content"`
	ContentSHA256    string    `json:"content_sha256"`
	ContentSizeBytes int64     `json:"content_size_bytes"`
	SizeBytes        int64     `json:"size_bytes"`
	MemoryVersionID  string    `json:"memory_version_id"`
	CreatedAt        Timestamp `json:"created_at"`
	UpdatedAt        Timestamp `json:"updated_at"`
}

// NewMemoryJSON is the wire form of m, with its content when full.
func NewMemoryJSON(m *memstore.Memory, full bool) MemoryJSON {
	return MemoryJSON{
		Type: typeMemory, ID: m.ID, MemoryStoreID: m.StoreID, Path: m.Path,
		Content:       fullContent(m.Content, full),
		ContentSHA256: m.ContentSHA256, ContentSizeBytes: m.ContentSize, SizeBytes: m.ContentSize,
		MemoryVersionID: m.VersionID,
		CreatedAt:       Timestamp(m.CreatedAt), UpdatedAt: Timestamp(m.UpdatedAt),
	}
}

// fullContent is content in the full view, and null in the basic one.
func fullContent(content string, full bool) *string {
	if !full {
		return nil
	}
	return &content
}

// Memory is the domain form of j; Content is "" when j has none.
func (j *MemoryJSON) Memory() *memstore.Memory {
	return &memstore.Memory{
		ID: j.ID, StoreID: j.MemoryStoreID, Path: j.Path,
		ContentSHA256: j.ContentSHA256, ContentSize: j.ContentSizeBytes,
		Content: orZero(j.Content), VersionID: j.MemoryVersionID,
		CreatedAt: time.Time(j.CreatedAt), UpdatedAt: time.Time(j.UpdatedAt),
	}
}

// PrefixJSON is a memory_prefix list item.
type PrefixJSON struct {
	Type string `json:"type"`
	Path string `json:"path"`
}

// ListItemJSON is an item of a memories list: a memory or a prefix.
type ListItemJSON struct {
	Memory *MemoryJSON
	Prefix *PrefixJSON
}

// MarshalJSON writes whichever of the two is set.
func (j ListItemJSON) MarshalJSON() ([]byte, error) {
	if j.Memory != nil {
		return json.Marshal(j.Memory)
	}
	return json.Marshal(j.Prefix)
}

// UnmarshalJSON reads a memory or a prefix by its type.
func (j *ListItemJSON) UnmarshalJSON(b []byte) error {
	var t struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return err
	}
	switch t.Type {
	case typeMemory:
		j.Memory = new(MemoryJSON)
		return json.Unmarshal(b, j.Memory)
	case typePrefix:
		j.Prefix = new(PrefixJSON)
		return json.Unmarshal(b, j.Prefix)
	}
	return fmt.Errorf("unknown list item type %q", t.Type)
}

// NewListItemJSON is the wire form of it.
func NewListItemJSON(it *memstore.ListItem, full bool) ListItemJSON {
	if it.Memory != nil {
		m := NewMemoryJSON(it.Memory, full)
		return ListItemJSON{Memory: &m}
	}
	return ListItemJSON{Prefix: &PrefixJSON{Type: typePrefix, Path: it.Prefix}}
}

// ListItem is the domain form of j.
func (j *ListItemJSON) ListItem() memstore.ListItem {
	if j.Memory != nil {
		return memstore.ListItem{Memory: j.Memory.Memory()}
	}
	if j.Prefix != nil {
		return memstore.ListItem{Prefix: j.Prefix.Path}
	}
	return memstore.ListItem{}
}

// ActorJSON is an actor: its type and the one ID field that type has.
type ActorJSON struct {
	Type             string `json:"type"`
	SessionID        string `json:"session_id,omitempty"`
	APIKeyID         string `json:"api_key_id,omitempty"`
	UserID           string `json:"user_id,omitempty"`
	ServiceAccountID string `json:"service_account_id,omitempty"`
}

// NewActorJSON is the wire form of a.
func NewActorJSON(a memstore.Actor) *ActorJSON {
	j := &ActorJSON{Type: string(a.Type)}
	switch a.Type {
	case memstore.ActorSession:
		j.SessionID = a.ID
	case memstore.ActorAPIKey:
		j.APIKeyID = a.ID
	case memstore.ActorUser:
		j.UserID = a.ID
	case memstore.ActorServiceAccount:
		j.ServiceAccountID = a.ID
	}
	return j
}

// Actor is the domain form of j.
func (j *ActorJSON) Actor() memstore.Actor {
	id := j.SessionID + j.APIKeyID + j.UserID + j.ServiceAccountID // exactly one is set
	return memstore.Actor{Type: memstore.ActorType(j.Type), ID: id}
}

// VersionJSON is a memory_version object, with a null for every value it
// lacks (docs/api.md, memory_version).
type VersionJSON struct {
	Type             string     `json:"type"`
	ID               string     `json:"id"`
	MemoryStoreID    string     `json:"memory_store_id"`
	MemoryID         string     `json:"memory_id"`
	Operation        string     `json:"operation"`
	Path             *string    `json:"path"`
	Content          *string    `json:"content"`
	ContentSHA256    *string    `json:"content_sha256"`
	ContentSizeBytes *int64     `json:"content_size_bytes"`
	CreatedAt        Timestamp  `json:"created_at"`
	CreatedBy        *ActorJSON `json:"created_by"`
	RedactedAt       *Timestamp `json:"redacted_at"`
	RedactedBy       *ActorJSON `json:"redacted_by"`
}

// NewVersionJSON is the wire form of v, with its content when full.
func NewVersionJSON(v *memstore.Version, full bool) VersionJSON {
	j := VersionJSON{
		Type: typeVersion, ID: v.ID, MemoryStoreID: v.StoreID, MemoryID: v.MemoryID,
		Operation: string(v.Operation), CreatedAt: Timestamp(v.CreatedAt),
		CreatedBy: NewActorJSON(v.CreatedBy), RedactedAt: timestampPtr(v.RedactedAt),
	}
	if v.RedactedBy != nil {
		j.RedactedBy = NewActorJSON(*v.RedactedBy)
	}
	if !v.Redacted() {
		j.Path = new(v.Path)
	}
	if v.HasContent {
		j.ContentSHA256, j.ContentSizeBytes = new(v.ContentSHA256), new(v.ContentSize)
		j.Content = fullContent(v.Content, full)
	}
	return j
}

// Version is the domain form of j.
func (j *VersionJSON) Version() *memstore.Version {
	v := &memstore.Version{
		ID: j.ID, StoreID: j.MemoryStoreID, MemoryID: j.MemoryID,
		Operation: memstore.Operation(j.Operation), CreatedAt: time.Time(j.CreatedAt),
		Path: orZero(j.Path), Content: orZero(j.Content), ContentSize: orZero(j.ContentSizeBytes),
		RedactedAt: timePtr(j.RedactedAt),
	}
	if j.ContentSHA256 != nil {
		v.HasContent = true
		v.ContentSHA256 = *j.ContentSHA256
	}
	if j.CreatedBy != nil {
		v.CreatedBy = j.CreatedBy.Actor()
	}
	if j.RedactedBy != nil {
		a := j.RedactedBy.Actor()
		v.RedactedBy = &a
	}
	return v
}

// PageJSON is the envelope of every list (docs/api.md, Pagination).
// NextPage is null on the last page, and a page with a NextPage is never
// empty.
type PageJSON[T any] struct {
	Data     []T     `json:"data"`
	NextPage *string `json:"next_page"`
}

// ErrorJSON is the error envelope (docs/api.md, Errors).
type ErrorJSON struct {
	Type      string      `json:"type"`
	Error     ErrorDetail `json:"error"`
	RequestID string      `json:"request_id,omitempty"`
}

// ErrorDetail is the error inside the envelope. The conflicting_* fields
// are present on memory_path_conflict_error, and on the
// memory_precondition_failed_error of a create whose not_exists
// precondition failed. Detail is memstore's own account of a refusal
// whose message is the hosted API's fixed wording.
type ErrorDetail struct {
	Type                string  `json:"type"`
	Message             string  `json:"message"`
	Detail              string  `json:"detail,omitempty"`
	ConflictingMemoryID *string `json:"conflicting_memory_id,omitempty"`
	ConflictingPath     *string `json:"conflicting_path,omitempty"`
}

// Precondition is the precondition object of a create or update body
// (docs/api.md, Preconditions).
type Precondition struct {
	Type          string  `json:"type"` // "content_sha256" or "not_exists"
	ContentSHA256 *string `json:"content_sha256,omitempty"`
}

// The precondition types.
const (
	PreconditionSHA256    = "content_sha256"
	PreconditionNotExists = "not_exists"
)

// StoreCreateRequest is the body of POST /v1/memory_stores.
type StoreCreateRequest struct {
	Name        *string           `json:"name"`
	Description *string           `json:"description,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

// StoreUpdateRequest is the body of POST /v1/memory_stores/{id}: absent
// or null fields are unchanged, and metadata is a merge patch where a null
// value removes the key.
type StoreUpdateRequest struct {
	Name        *string            `json:"name,omitempty"`
	Description *string            `json:"description,omitempty"`
	Metadata    map[string]*string `json:"metadata,omitempty"`
}

// MemoryCreateRequest is the body of POST .../memories.
type MemoryCreateRequest struct {
	Path         *string       `json:"path"`
	Content      *string       `json:"content"`
	Precondition *Precondition `json:"precondition,omitempty"`
}

// MemoryUpdateRequest is the body of POST (or PATCH) .../memories/{id}.
type MemoryUpdateRequest struct {
	Content      *string       `json:"content,omitempty"`
	Path         *string       `json:"path,omitempty"`
	Precondition *Precondition `json:"precondition,omitempty"`
}

// SessionResourceJSON is a memory_store resource of a session: the
// attachment with its snapshots and mount path (docs/api.md, Session
// objects). Its ID, the resource_id of the resources endpoints, is the
// store's: a store is attached to a session at most once.
type SessionResourceJSON struct {
	ID            string  `json:"id"`
	Type          string  `json:"type"`
	MemoryStoreID string  `json:"memory_store_id"`
	Access        string  `json:"access"`
	Instructions  *string `json:"instructions"`
	Name          string  `json:"name"`
	Description   string  `json:"description"`
	MountPath     string  `json:"mount_path"`
}

// SessionJSON is a session object, as far as memstore keeps one: its
// memory_store resources, title, metadata and times, plus every other
// field of the create request as it was sent (agent, environment_id, ...).
// The fields the SDKs require that memstore has no value of, as it runs
// no agent, carry honest empty values (sessionDefaults and the zeros of
// Stats, Usage and OutcomeEvaluations). Token, the secret of the
// session's first token, is present only in the answer to the create.
type SessionJSON struct {
	Type       string                `json:"type"`
	ID         string                `json:"id"`
	Title      string                `json:"title"`
	Metadata   map[string]string     `json:"metadata"`
	Resources  []SessionResourceJSON `json:"resources"`
	Status     string                `json:"status"`
	CreatedAt  Timestamp             `json:"created_at"`
	UpdatedAt  Timestamp             `json:"updated_at"`
	ArchivedAt *Timestamp            `json:"archived_at"`
	// Stats, Usage and OutcomeEvaluations are the SDKs' accounts of an
	// agent's runs: zeros and empty, since memstore runs none.
	Stats              SessionStatsJSON `json:"stats"`
	Usage              SessionUsageJSON `json:"usage"`
	OutcomeEvaluations []struct{}       `json:"outcome_evaluations"`
	// Token and TokenID are memstore's own: the first token of a new
	// session, shown once.
	Token          string     `json:"token,omitempty"`
	TokenID        string     `json:"token_id,omitempty"`
	TokenExpiresAt *Timestamp `json:"token_expires_at,omitempty"`

	// Fields are the other fields, kept as sent.
	Fields map[string]json.RawMessage `json:"-"`
}

// SessionStatsJSON is a session's timing. DurationSeconds is the time
// since the session was created, as the SDKs define it: until now while it
// is live, frozen at its archiving once archived. ActiveSeconds, the time
// an agent ran, is 0: memstore runs none.
type SessionStatsJSON struct {
	ActiveSeconds   float64 `json:"active_seconds"`
	DurationSeconds float64 `json:"duration_seconds"`
}

// SessionUsageJSON is a session's token usage: none, as memstore runs no
// agent.
type SessionUsageJSON struct {
	ActiveSeconds        float64 `json:"active_seconds"`
	InputTokens          int64   `json:"input_tokens"`
	OutputTokens         int64   `json:"output_tokens"`
	CacheReadInputTokens int64   `json:"cache_read_input_tokens"`
	CacheCreation        struct {
		Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
		Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
	} `json:"cache_creation"`
}

// sessionKeys are the keys that SessionJSON writes itself; a kept field of
// the same name never overrides them.
var sessionKeys = map[string]bool{
	"type": true, "id": true, "title": true, "metadata": true, "resources": true, "status": true,
	"created_at": true, "updated_at": true, "archived_at": true,
	"stats": true, "usage": true, "outcome_evaluations": true,
	"token": true, "token_id": true, "token_expires_at": true,
}

// emptyAgent is the agent of a session whose create named none: every
// field the SDKs require, empty. A session whose agent was sent as an ID
// (the SDKs' short form) gets it with that id; one sent as an object
// gets those of its fields that the object lacks (wireAgent).
const emptyAgent = `{"type":"agent","id":"","version":0,"name":"","description":"","system":"","model":{"id":""},` +
	`"tools":[],"mcp_servers":[],"skills":[],"multiagent":null,"execution_identity":{"type":"service_account"}}`

// sessionDefaults are the fields the SDKs require of a session that are
// kept as sent when the create sent them, and otherwise take these
// values. A client reading a session drops a field equal to its default,
// as the server made it up.
var sessionDefaults = map[string]json.RawMessage{
	memstore.AgentField: json.RawMessage(emptyAgent),
	"environment_id":    json.RawMessage(`""`),
	"budget":            json.RawMessage(`null`),
	"vault_ids":         json.RawMessage(`[]`),
}

// wireAgent is the agent field as a session object shows it, the agent
// object the SDKs expect: an agent sent as an ID becomes emptyAgent with
// that id; one sent as an object is shown with what it holds, and
// emptyAgent's value for each field it lacks (memstore knows nothing of
// an agent but what it was sent); any other is shown as sent.
func wireAgent(kept json.RawMessage) json.RawMessage {
	var agent map[string]json.RawMessage
	_ = json.Unmarshal([]byte(emptyAgent), &agent)
	var id string
	var sent map[string]json.RawMessage
	switch {
	case json.Unmarshal(kept, &id) == nil:
		agent["id"], _ = json.Marshal(id)
	case json.Unmarshal(kept, &sent) == nil && sent != nil:
		maps.Copy(agent, sent)
	default:
		return kept
	}
	b, _ := json.Marshal(agent)
	return b
}

// keptAgent is the agent field that wireAgent showed as a, as near as it
// can tell: the ID an agent made of one was sent as, else a without the
// fields wireAgent adds that hold the value it adds (so a field sent with
// that very value is read as not sent, which means the same).
func keptAgent(a json.RawMessage) json.RawMessage {
	var agent map[string]json.RawMessage
	if json.Unmarshal(a, &agent) != nil || agent == nil {
		return a
	}
	var id string
	if json.Unmarshal(agent["id"], &id) == nil {
		if b, _ := json.Marshal(id); jsonSame(a, wireAgent(b)) {
			return b
		}
	}
	var empty map[string]json.RawMessage
	_ = json.Unmarshal([]byte(emptyAgent), &empty)
	for k, v := range empty {
		if w, ok := agent[k]; ok && jsonSame(w, v) {
			delete(agent, k)
		}
	}
	b, _ := json.Marshal(agent)
	return b
}

// MarshalJSON writes the session's own keys and its kept fields.
func (j SessionJSON) MarshalJSON() ([]byte, error) {
	type plain SessionJSON
	b, err := json.Marshal(plain(j))
	if err != nil {
		return b, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	for k, v := range sessionDefaults {
		all[k] = v
	}
	for k, v := range j.Fields {
		if !sessionKeys[k] {
			all[k] = v
		}
	}
	if a, ok := j.Fields[memstore.AgentField]; ok {
		all[memstore.AgentField] = wireAgent(a)
	}
	return json.Marshal(all)
}

// UnmarshalJSON reads the session's own keys and keeps the rest in Fields.
func (j *SessionJSON) UnmarshalJSON(b []byte) error {
	type plain SessionJSON
	if err := json.Unmarshal(b, (*plain)(j)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	j.Fields = map[string]json.RawMessage{}
	for k, v := range all {
		if d, ok := sessionDefaults[k]; !sessionKeys[k] && (!ok || !jsonSame(v, d)) {
			j.Fields[k] = v
		}
	}
	if a, ok := j.Fields[memstore.AgentField]; ok {
		j.Fields[memstore.AgentField] = keptAgent(a)
	}
	return nil
}

// jsonSame reports whether a and b are the same JSON value.
func jsonSame(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// NewSessionJSON is the wire form of s.
func NewSessionJSON(s *memstore.Session) SessionJSON {
	md := s.Metadata
	if md == nil {
		md = map[string]string{}
	}
	j := SessionJSON{
		Type: typeSession, ID: s.ID, Title: s.Title, Metadata: md,
		Resources: make([]SessionResourceJSON, len(s.Attachments)),
		Status:    string(s.Status()), CreatedAt: Timestamp(s.CreatedAt), UpdatedAt: Timestamp(s.UpdatedAt),
		ArchivedAt: timestampPtr(s.ArchivedAt), OutcomeEvaluations: []struct{}{}, Fields: s.Fields,
		Stats: SessionStatsJSON{DurationSeconds: sessionDuration(s, time.Now())},
	}
	for i := range s.Attachments {
		j.Resources[i] = NewSessionResourceJSON(&s.Attachments[i])
	}
	return j
}

// sessionDuration is s's stats.duration_seconds at now: the seconds from
// its creation to now, or to its archiving once archived; never negative
// (a clock set back), to the millisecond.
func sessionDuration(s *memstore.Session, now time.Time) float64 {
	end := now
	if s.ArchivedAt != nil {
		end = *s.ArchivedAt
	}
	return max(end.Sub(s.CreatedAt).Truncate(time.Millisecond).Seconds(), 0)
}

// NewSessionResourceJSON is the wire form of an attachment.
func NewSessionResourceJSON(a *memstore.Attachment) SessionResourceJSON {
	r := SessionResourceJSON{
		ID: a.StoreID, Type: typeStore, MemoryStoreID: a.StoreID, Access: string(a.Access),
		Name: a.Name, Description: a.Description, MountPath: a.MountPath,
	}
	if a.Instructions != "" {
		r.Instructions = &a.Instructions
	}
	return r
}

// NewCreatedSessionJSON is the answer to a session create: the session with
// its first token's secret, shown this once.
func NewCreatedSessionJSON(s *memstore.Session, tok *memstore.SessionToken, secret string) SessionJSON {
	j := NewSessionJSON(s)
	j.Token, j.TokenID, j.TokenExpiresAt = secret, tok.ID, timestampPtr(tok.ExpiresAt)
	return j
}

// Session is the domain form of j (without its workspace, which the wire
// does not carry). Resources other than memory stores are left out.
func (j *SessionJSON) Session() *memstore.Session {
	md := j.Metadata
	if md == nil {
		md = map[string]string{}
	}
	fields := j.Fields
	if fields == nil {
		fields = map[string]json.RawMessage{}
	}
	s := &memstore.Session{
		ID: j.ID, Title: j.Title, Metadata: md, Fields: fields,
		CreatedAt: time.Time(j.CreatedAt), UpdatedAt: time.Time(j.UpdatedAt), ArchivedAt: timePtr(j.ArchivedAt),
	}
	for _, r := range j.Resources {
		if r.Type != typeStore {
			continue
		}
		a := memstore.Attachment{
			StoreID: r.MemoryStoreID, Access: memstore.Access(r.Access),
			Name: r.Name, Description: r.Description, MountPath: r.MountPath,
		}
		if a.Access == "" {
			a.Access = memstore.AccessReadWrite
		}
		if r.Instructions != nil {
			a.Instructions = *r.Instructions
		}
		s.Attachments = append(s.Attachments, a)
	}
	return s
}

// SessionTokenJSON is a session token (memstore's own object). Token, the
// secret, is present only in the answer to its creation.
type SessionTokenJSON struct {
	Type      string     `json:"type"`
	ID        string     `json:"id"`
	SessionID string     `json:"session_id"`
	Token     string     `json:"token,omitempty"`
	Hint      string     `json:"hint"`
	CreatedAt Timestamp  `json:"created_at"`
	ExpiresAt *Timestamp `json:"expires_at"`
	RevokedAt *Timestamp `json:"revoked_at"`
}

// NewSessionTokenJSON is the wire form of t, with its secret when given.
func NewSessionTokenJSON(t *memstore.SessionToken, secret string) SessionTokenJSON {
	return SessionTokenJSON{
		Type: typeSessionToken, ID: t.ID, SessionID: t.SessionID, Token: secret, Hint: t.Hint,
		CreatedAt: Timestamp(t.CreatedAt), ExpiresAt: timestampPtr(t.ExpiresAt), RevokedAt: timestampPtr(t.RevokedAt),
	}
}

// SessionToken is the domain form of j.
func (j *SessionTokenJSON) SessionToken() *memstore.SessionToken {
	return &memstore.SessionToken{
		ID: j.ID, SessionID: j.SessionID, Hint: j.Hint, CreatedAt: time.Time(j.CreatedAt),
		ExpiresAt: timePtr(j.ExpiresAt), RevokedAt: timePtr(j.RevokedAt),
	}
}

// SessionTokenRequest is the body of POST /v1/sessions/{id}/tokens (and the
// token part of a session create): a lifetime in seconds, none when absent.
type SessionTokenRequest struct {
	ExpiresInSeconds *int64 `json:"expires_in_seconds,omitempty"`
}

// SearchResultJSON is one hit of a search (memstore's own object): the
// memory in the basic view, its score and a snippet.
type SearchResultJSON struct {
	Type    string     `json:"type"`
	Memory  MemoryJSON `json:"memory"`
	Score   float64    `json:"score"`
	Snippet string     `json:"snippet"`
}

// NewSearchResultJSON is the wire form of r.
func NewSearchResultJSON(r *memstore.SearchResult) SearchResultJSON {
	return SearchResultJSON{Type: typeSearchResult, Memory: NewMemoryJSON(&r.Memory, false), Score: r.Score, Snippet: r.Snippet}
}

// SearchResult is the domain form of j.
func (j *SearchResultJSON) SearchResult() memstore.SearchResult {
	return memstore.SearchResult{Memory: *j.Memory.Memory(), Score: j.Score, Snippet: j.Snippet}
}

// MemoryPromptJSON is the memory section of a session's system prompt
// (memstore's own object).
type MemoryPromptJSON struct {
	Type      string `json:"type"`
	SessionID string `json:"session_id"`
	Prompt    string `json:"prompt"`
}

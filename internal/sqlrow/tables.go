package sqlrow

import (
	"database/sql/driver"
	"encoding/json"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
)

// kinds are the tables of each kind of record, by kind.
var kinds = map[memstore.RecordKind]interface {
	dump(Snapshot, memstore.RecordSink) error
	rows() *Table
}{
	memstore.KindWorkspaces: workspaces, memstore.KindAPIKeys: apiKeys, memstore.KindUsers: users, memstore.KindSignIns: signIns,
	memstore.KindStores: stores, memstore.KindMemories: memories, memstore.KindVersions: versions, memstore.KindEvents: events,
	memstore.KindSessions: sessions, memstore.KindSessionTokens: sessionTokens, memstore.KindWebhooks: webhooks,
	memstore.KindCursors: cursors, memstore.KindDeliveries: deliveries,
}

var workspaces = &kind[memstore.Workspace]{
	table: &Table{Kind: memstore.KindWorkspaces, Name: "workspaces", Key: "id", Columns: "id, name, created_at"},
	scan: func(r Row) (*memstore.Workspace, error) {
		var (
			w  memstore.Workspace
			at int64
		)
		err := r.Scan(&w.ID, &w.Name, &at)
		w.CreatedAt = keyset.Time(at)
		return &w, err
	},
	values: func(w *memstore.Workspace) []any { return []any{w.ID, w.Name, keyset.Nanos(w.CreatedAt)} },
	put:    memstore.RecordSink.Workspace,
}

var apiKeys = &kind[memstore.APIKeyRecord]{
	table: &Table{Kind: memstore.KindAPIKeys, Name: "api_keys", Key: "id",
		Columns: "id, workspace_id, name, hint, created_at, last_used_at, revoked_at, secret_sha256"},
	scan: func(r Row) (*memstore.APIKeyRecord, error) {
		var (
			k             memstore.APIKeyRecord
			at            int64
			used, revoked *int64
		)
		err := r.Scan(&k.ID, &k.WorkspaceID, &k.Name, &k.Hint, &at, &used, &revoked, &k.SecretSHA256)
		k.CreatedAt, k.LastUsedAt, k.RevokedAt = keyset.Time(at), keyset.NullTime(used), keyset.NullTime(revoked)
		return &k, err
	},
	values: func(k *memstore.APIKeyRecord) []any {
		return []any{k.ID, k.WorkspaceID, k.Name, k.Hint, keyset.Nanos(k.CreatedAt), keyset.NullNanos(k.LastUsedAt), keyset.NullNanos(k.RevokedAt), k.SecretSHA256}
	},
	put: memstore.RecordSink.APIKey,
}

var users = &kind[memstore.User]{
	table: &Table{Kind: memstore.KindUsers, Name: "users", Key: "id",
		Columns: "id, workspace_id, name, role, password_hash, created_at, updated_at"},
	scan: func(r Row) (*memstore.User, error) {
		var (
			u                memstore.User
			role             string
			created, updated int64
		)
		err := r.Scan(&u.ID, &u.WorkspaceID, &u.Name, &role, &u.PasswordHash, &created, &updated)
		u.Role, u.CreatedAt, u.UpdatedAt = memstore.Role(role), keyset.Time(created), keyset.Time(updated)
		return &u, err
	},
	values: func(u *memstore.User) []any {
		return []any{u.ID, u.WorkspaceID, u.Name, string(u.Role), u.PasswordHash, keyset.Nanos(u.CreatedAt), keyset.Nanos(u.UpdatedAt)}
	},
	put: memstore.RecordSink.User,
}

// signIns are read in the order of the hashes of their secrets, which
// is no order of time, so that two copies dump them alike.
var signIns = &kind[memstore.SignIn]{
	table: &Table{Kind: memstore.KindSignIns, Name: "user_sign_ins", Key: "secret_sha256",
		Columns: "secret_sha256, user_id, workspace_id, link, created_at, last_seen_at, expires_at"},
	scan: func(r Row) (*memstore.SignIn, error) {
		var (
			s                      memstore.SignIn
			created, seen, expires int64
		)
		err := r.Scan(&s.SecretHash, &s.UserID, &s.WorkspaceID, &s.Link, &created, &seen, &expires)
		s.CreatedAt, s.LastSeenAt, s.ExpiresAt = keyset.Time(created), keyset.Time(seen), keyset.Time(expires)
		return &s, err
	},
	values: func(s *memstore.SignIn) []any {
		return []any{s.SecretHash, s.UserID, s.WorkspaceID, s.Link, keyset.Nanos(s.CreatedAt), keyset.Nanos(s.LastSeenAt), keyset.Nanos(s.ExpiresAt)}
	},
	put: memstore.RecordSink.SignIn,
}

// stores are written without their counts of memories and content,
// which the restore of their memories makes.
var stores = &kind[memstore.Store]{
	table: &Table{Kind: memstore.KindStores, Name: "stores", Key: "id",
		Columns: "id, workspace_id, name, description, metadata, created_at, updated_at, archived_at", Derived: "memory_count, content_size"},
	scan: func(r Row) (*memstore.Store, error) {
		var (
			s                memstore.Store
			desc, meta       []byte
			created, updated int64
			archived         *int64
		)
		if err := r.Scan(&s.ID, &s.WorkspaceID, &s.Name, &desc, &meta, &created, &updated, &archived, &s.MemoryCount, &s.ContentSize); err != nil {
			return nil, err
		}
		s.Description, s.CreatedAt, s.UpdatedAt, s.ArchivedAt = string(desc), keyset.Time(created), keyset.Time(updated), keyset.NullTime(archived)
		return &s, unmarshal(meta, &s.Metadata)
	},
	values: func(s *memstore.Store) []any {
		return []any{s.ID, s.WorkspaceID, s.Name, text(s.Description), jsonText{s.Metadata}, keyset.Nanos(s.CreatedAt), keyset.Nanos(s.UpdatedAt), keyset.NullNanos(s.ArchivedAt)}
	},
	put: memstore.RecordSink.Store,
}

var memories = &kind[memstore.Memory]{
	table: &Table{Kind: memstore.KindMemories, Name: "memories", Key: "id",
		Columns: "id, store_id, path, content, sha256, size, version_id, created_at, updated_at"},
	scan: func(r Row) (*memstore.Memory, error) {
		var (
			m                memstore.Memory
			content          []byte
			created, updated int64
		)
		err := r.Scan(&m.ID, &m.StoreID, &m.Path, &content, &m.ContentSHA256, &m.ContentSize, &m.VersionID, &created, &updated)
		m.Content, m.CreatedAt, m.UpdatedAt = string(content), keyset.Time(created), keyset.Time(updated)
		return &m, err
	},
	values: func(m *memstore.Memory) []any {
		return []any{m.ID, m.StoreID, m.Path, text(m.Content), m.ContentSHA256, m.ContentSize, m.VersionID, keyset.Nanos(m.CreatedAt), keyset.Nanos(m.UpdatedAt)}
	},
	put: memstore.RecordSink.Memory,
}

// versions keep no path once redacted, and no content (nor its hash and
// size) once redacted or for a deletion.
var versions = &kind[memstore.Version]{
	table: &Table{Kind: memstore.KindVersions, Name: "versions", Key: "id",
		Columns: "id, store_id, memory_id, operation, path, content, sha256, size, created_at, actor_type, actor_id, redacted_at, redactor_type, redactor_id"},
	scan: func(r Row) (*memstore.Version, error) {
		var (
			v                     memstore.Version
			op, actor             string
			path, sum, rtype, rid *string
			content               []byte
			size, redacted        *int64
			created               int64
		)
		if err := r.Scan(&v.ID, &v.StoreID, &v.MemoryID, &op, &path, &content, &sum, &size, &created, &actor, &v.CreatedBy.ID, &redacted, &rtype, &rid); err != nil {
			return nil, err
		}
		v.Operation, v.CreatedBy.Type, v.Content = memstore.Operation(op), memstore.ActorType(actor), string(content)
		v.Path, v.ContentSHA256, v.HasContent = deref(path), deref(sum), sum != nil // a deletion and a redacted version have no hash
		if size != nil {
			v.ContentSize = *size
		}
		v.CreatedAt, v.RedactedAt = keyset.Time(created), keyset.NullTime(redacted)
		if redacted != nil {
			v.RedactedBy = &memstore.Actor{Type: memstore.ActorType(deref(rtype)), ID: deref(rid)}
		}
		return &v, nil
	},
	values: func(v *memstore.Version) []any {
		var path, content, sum, size, rtype, rid any
		if v.Path != "" {
			path = v.Path
		}
		if v.HasContent {
			content, sum, size = text(v.Content), v.ContentSHA256, v.ContentSize
		}
		if v.RedactedBy != nil {
			rtype, rid = string(v.RedactedBy.Type), v.RedactedBy.ID
		}
		return []any{v.ID, v.StoreID, v.MemoryID, string(v.Operation), path, content, sum, size, keyset.Nanos(v.CreatedAt),
			string(v.CreatedBy.Type), v.CreatedBy.ID, keyset.NullNanos(v.RedactedAt), rtype, rid}
	},
	put: memstore.RecordSink.Version,
}

// events are copied as they are kept: their store, number, type, version
// (none for a store's), actor and time.
var events = &kind[memstore.Event]{
	table: &Table{Kind: memstore.KindEvents, Name: "events", Key: "store_id, seq",
		Columns: "store_id, seq, type, version_id, actor_type, actor_id, created_at"},
	scan: func(r Row) (*memstore.Event, error) {
		var (
			e          memstore.Event
			typ, actor string
			version    *string
			at         int64
		)
		err := r.Scan(&e.StoreID, &e.Seq, &typ, &version, &actor, &e.Actor.ID, &at)
		e.Type, e.VersionID, e.Actor.Type, e.CreatedAt = memstore.EventType(typ), deref(version), memstore.ActorType(actor), keyset.Time(at)
		return &e, err
	},
	values: func(e *memstore.Event) []any {
		var version any
		if e.VersionID != "" {
			version = e.VersionID
		}
		return []any{e.StoreID, e.Seq, string(e.Type), version, string(e.Actor.Type), e.Actor.ID, keyset.Nanos(e.CreatedAt)}
	},
	put: memstore.RecordSink.Event,
}

// sessions come with their attachments, which are rows of
// SessionStores.
var sessions = &kind[memstore.Session]{
	table: &Table{Kind: memstore.KindSessions, Name: "sessions", Key: "id",
		Columns: "id, workspace_id, title, metadata, fields, created_at, updated_at, archived_at"},
	scan: func(r Row) (*memstore.Session, error) {
		var (
			s                   memstore.Session
			title, meta, fields []byte
			created, updated    int64
			archived            *int64
		)
		if err := r.Scan(&s.ID, &s.WorkspaceID, &title, &meta, &fields, &created, &updated, &archived); err != nil {
			return nil, err
		}
		s.Title, s.CreatedAt, s.UpdatedAt, s.ArchivedAt = string(title), keyset.Time(created), keyset.Time(updated), keyset.NullTime(archived)
		if err := unmarshal(meta, &s.Metadata); err != nil {
			return nil, err
		}
		return &s, unmarshal(fields, &s.Fields)
	},
	values: func(s *memstore.Session) []any {
		return []any{s.ID, s.WorkspaceID, text(s.Title), jsonText{s.Metadata}, jsonText{s.Fields},
			keyset.Nanos(s.CreatedAt), keyset.Nanos(s.UpdatedAt), keyset.NullNanos(s.ArchivedAt)}
	},
	put:      memstore.RecordSink.Session,
	complete: Snapshot.Attach,
}

// SessionStores holds the attachments of sessions, by position: a
// restore writes them with their session (restorer.Session), a dump
// reads them through the backend (Snapshot.Attach).
var SessionStores = &Table{Kind: memstore.KindSessions, Name: "session_stores", Key: "session_id, position",
	Columns: "session_id, position, store_id, access, instructions, name, description, mount_path, created_at"}

// attachmentValues are the values of the row of attachment i of s.
func attachmentValues(s *memstore.Session, i int) []any {
	a := &s.Attachments[i]
	return []any{s.ID, i, a.StoreID, string(a.Access), text(a.Instructions), a.Name, text(a.Description), a.MountPath, keyset.Nanos(s.CreatedAt)}
}

var sessionTokens = &kind[memstore.SessionTokenRecord]{
	table: &Table{Kind: memstore.KindSessionTokens, Name: "session_tokens", Key: "id",
		Columns: "id, session_id, workspace_id, hint, created_at, expires_at, revoked_at, secret_sha256"},
	scan: func(r Row) (*memstore.SessionTokenRecord, error) {
		var (
			t                memstore.SessionTokenRecord
			at               int64
			expires, revoked *int64
		)
		err := r.Scan(&t.ID, &t.SessionID, &t.WorkspaceID, &t.Hint, &at, &expires, &revoked, &t.SecretSHA256)
		t.CreatedAt, t.ExpiresAt, t.RevokedAt = keyset.Time(at), keyset.NullTime(expires), keyset.NullTime(revoked)
		return &t, err
	},
	values: func(t *memstore.SessionTokenRecord) []any {
		return []any{t.ID, t.SessionID, t.WorkspaceID, t.Hint, keyset.Nanos(t.CreatedAt), keyset.NullNanos(t.ExpiresAt), keyset.NullNanos(t.RevokedAt), t.SecretSHA256}
	},
	put: memstore.RecordSink.SessionToken,
}

var webhooks = &kind[memstore.WebhookEndpoint]{
	table: &Table{Kind: memstore.KindWebhooks, Name: "webhook_endpoints", Key: "id",
		Columns: "id, workspace_id, name, description, url, enabled_events, state, disabled_reason, secret, created_at, updated_at"},
	scan: func(r Row) (*memstore.WebhookEndpoint, error) {
		var (
			w                memstore.WebhookEndpoint
			state            string
			created, updated int64
		)
		err := r.Scan(&w.ID, &w.WorkspaceID, &w.Name, &w.Description, &w.URL, &w.EnabledEvents, &state, &w.DisabledReason, &w.Secret, &created, &updated)
		w.State, w.CreatedAt, w.UpdatedAt = memstore.WebhookState(state), keyset.Time(created), keyset.Time(updated)
		return &w, err
	},
	values: func(w *memstore.WebhookEndpoint) []any {
		return []any{w.ID, w.WorkspaceID, w.Name, w.Description, w.URL, w.EnabledEvents, string(w.State), w.DisabledReason, w.Secret,
			keyset.Nanos(w.CreatedAt), keyset.Nanos(w.UpdatedAt)}
	},
	put: memstore.RecordSink.Webhook,
}

// cursors replace those that the restore of their endpoint started at
// the end of each store's feed. Owed to 0 is kept as NULL.
var cursors = &kind[memstore.WebhookCursor]{
	table: &Table{Kind: memstore.KindCursors, Name: "webhook_cursors", Key: "endpoint_id, store_id",
		Columns:  "endpoint_id, store_id, seq, owed_to",
		Conflict: "ON CONFLICT (endpoint_id, store_id) DO UPDATE SET seq = excluded.seq, owed_to = excluded.owed_to"},
	scan: func(r Row) (*memstore.WebhookCursor, error) {
		var (
			c    memstore.WebhookCursor
			owed *int64
		)
		err := r.Scan(&c.EndpointID, &c.StoreID, &c.Seq, &owed)
		if owed != nil {
			c.OwedTo = *owed
		}
		return &c, err
	},
	values: func(c *memstore.WebhookCursor) []any {
		var owed any
		if c.OwedTo != 0 {
			owed = c.OwedTo
		}
		return []any{c.EndpointID, c.StoreID, c.Seq, owed}
	},
	put: memstore.RecordSink.WebhookCursor,
}

// deliveries are copied as they stand, pending ones with their attempts
// and next attempt. A last attempt of 0 is none.
var deliveries = &kind[memstore.WebhookDelivery]{
	table: &Table{Kind: memstore.KindDeliveries, Name: "webhook_deliveries", Key: "endpoint_id, event_id",
		Columns: "endpoint_id, event_id, workspace_id, type, store_id, memory_id, version_id, event_at, state, attempts, next_attempt_at, last_attempt_at, last_status, last_error"},
	scan: func(r Row) (*memstore.WebhookDelivery, error) {
		var (
			d              memstore.WebhookDelivery
			state          string
			at, next, last int64
		)
		e := &d.Event
		err := r.Scan(&d.EndpointID, &e.ID, &e.WorkspaceID, &e.Type, &e.StoreID, &e.MemoryID, &e.VersionID, &at,
			&state, &d.Attempts, &next, &last, &d.LastStatus, &d.LastError)
		d.State, e.CreatedAt, d.NextAttemptAt = memstore.DeliveryState(state), keyset.Time(at), keyset.Time(next)
		if last != 0 {
			t := keyset.Time(last)
			d.LastAttemptAt = &t
		}
		return &d, err
	},
	values: func(d *memstore.WebhookDelivery) []any {
		var last int64
		if d.LastAttemptAt != nil {
			last = keyset.Nanos(*d.LastAttemptAt)
		}
		e := &d.Event
		return []any{d.EndpointID, e.ID, e.WorkspaceID, e.Type, e.StoreID, e.MemoryID, e.VersionID, keyset.Nanos(e.CreatedAt),
			string(d.State), d.Attempts, keyset.Nanos(d.NextAttemptAt), last, d.LastStatus, d.LastError}
	},
	put: memstore.RecordSink.WebhookDelivery,
}

// text is the value of a text column that PostgreSQL keeps as bytea:
// never nil, which would be NULL.
func text(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return []byte(s)
}

// deref is the string p points to, "" for NULL.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// jsonText is the value of metadata or fields: their JSON, as text.
type jsonText struct{ v any }

func (j jsonText) Value() (driver.Value, error) {
	b, err := json.Marshal(j.v)
	return string(b), err
}

// unmarshal reads metadata or fields, an empty map for null.
func unmarshal[V any](b []byte, m *map[string]V) error {
	if err := json.Unmarshal(b, m); err != nil {
		return err
	}
	if *m == nil {
		*m = map[string]V{}
	}
	return nil
}

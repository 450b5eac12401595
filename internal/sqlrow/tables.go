package sqlrow

import (
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
	memstore.KindSessions: sessions, memstore.KindSessionTokens: sessionTokens, memstore.KindSessionEvents: sessionEvents, memstore.KindWebhooks: webhooks,
	memstore.KindCursors: cursors, memstore.KindDeliveries: deliveries, memstore.KindDreams: dreams,
}

var workspaces = byFields(&Table{Kind: memstore.KindWorkspaces, Name: "workspaces", Key: "id",
	Columns: "id, name, created_at"},
	func(w *memstore.Workspace) []any { return []any{&w.ID, &w.Name, nanos{&w.CreatedAt}} },
	memstore.RecordSink.Workspace)

var apiKeys = byFields(&Table{Kind: memstore.KindAPIKeys, Name: "api_keys", Key: "id",
	Columns: "id, workspace_id, name, hint, created_at, last_used_at, revoked_at, secret_sha256"},
	func(k *memstore.APIKeyRecord) []any {
		return []any{&k.ID, &k.WorkspaceID, &k.Name, &k.Hint, nanos{&k.CreatedAt}, nullNanos{&k.LastUsedAt}, nullNanos{&k.RevokedAt}, &k.SecretSHA256}
	},
	memstore.RecordSink.APIKey)

var users = byFields(&Table{Kind: memstore.KindUsers, Name: "users", Key: "id",
	Columns: "id, workspace_id, name, role, password_hash, created_at, updated_at"},
	userFields, memstore.RecordSink.User)

func userFields(u *memstore.User) []any {
	return []any{&u.ID, &u.WorkspaceID, &u.Name, enum(&u.Role), &u.PasswordHash, nanos{&u.CreatedAt}, nanos{&u.UpdatedAt}}
}

// signIns are read in the order of the hashes of their secrets, which
// is no order of time, so that two copies dump them alike.
var signIns = byFields(&Table{Kind: memstore.KindSignIns, Name: "user_sign_ins", Key: "secret_sha256",
	Columns: "secret_sha256, user_id, workspace_id, link, created_at, last_seen_at, expires_at"},
	signInFields, memstore.RecordSink.SignIn)

func signInFields(s *memstore.SignIn) []any {
	return []any{&s.SecretHash, &s.UserID, &s.WorkspaceID, &s.Link, nanos{&s.CreatedAt}, nanos{&s.LastSeenAt}, nanos{&s.ExpiresAt}}
}

// stores are written without their counts of memories and content,
// which the restore of their memories makes.
var stores = byFields(&Table{Kind: memstore.KindStores, Name: "stores", Key: "id",
	Columns: "id, workspace_id, name, description, metadata, created_at, updated_at, archived_at", Derived: "memory_count, content_size"},
	func(s *memstore.Store) []any {
		return []any{&s.ID, &s.WorkspaceID, &s.Name, byteText{&s.Description}, jsonMap[string]{&s.Metadata},
			nanos{&s.CreatedAt}, nanos{&s.UpdatedAt}, nullNanos{&s.ArchivedAt}, &s.MemoryCount, &s.ContentSize}
	},
	memstore.RecordSink.Store)

var memories = byFields(&Table{Kind: memstore.KindMemories, Name: "memories", Key: "id",
	Columns: "id, store_id, path, content, sha256, size, version_id, created_at, updated_at"},
	func(m *memstore.Memory) []any {
		return []any{&m.ID, &m.StoreID, &m.Path, byteText{&m.Content}, &m.ContentSHA256, &m.ContentSize, &m.VersionID, nanos{&m.CreatedAt}, nanos{&m.UpdatedAt}}
	},
	memstore.RecordSink.Memory)

// versions keep no path once redacted, and no content, hash or size
// once redacted or for a deletion: then these columns are NULL.
var versions = &kind[memstore.Version]{
	table: &Table{Kind: memstore.KindVersions, Name: "versions", Key: "id",
		Columns: "id, store_id, memory_id, operation, path, content, sha256, size, created_at, actor_type, actor_id, redacted_at, redactor_type, redactor_id"},
	scan: func(r Row) (*memstore.Version, error) {
		var (
			v               memstore.Version
			content         []byte
			sum, rtype, rid *string
			size            *int64
		)
		if err := r.Scan(&v.ID, &v.StoreID, &v.MemoryID, enum(&v.Operation), emptyNull{&v.Path}, &content, &sum, &size,
			nanos{&v.CreatedAt}, enum(&v.CreatedBy.Type), &v.CreatedBy.ID, nullNanos{&v.RedactedAt}, &rtype, &rid); err != nil {
			return nil, err
		}
		v.Content, v.HasContent = string(content), sum != nil // a deletion and a redacted version have no hash
		if sum != nil && size != nil {
			v.ContentSHA256, v.ContentSize = *sum, *size
		}
		if v.RedactedAt != nil {
			v.RedactedBy = &memstore.Actor{Type: memstore.ActorType(deref(rtype)), ID: deref(rid)}
		}
		return &v, nil
	},
	values: func(v *memstore.Version) ([]any, error) {
		var content, sum, size, rtype, rid any
		if v.HasContent {
			content, sum, size = text(v.Content), v.ContentSHA256, v.ContentSize
		}
		if v.RedactedBy != nil {
			rtype, rid = string(v.RedactedBy.Type), v.RedactedBy.ID
		}
		return []any{v.ID, v.StoreID, v.MemoryID, string(v.Operation), nullIfEmpty(v.Path), content, sum, size, keyset.Nanos(v.CreatedAt),
			string(v.CreatedBy.Type), v.CreatedBy.ID, keyset.NullNanos(v.RedactedAt), rtype, rid}, nil
	},
	put: memstore.RecordSink.Version,
}

// events are copied as they are kept: their store, number, type, version
// (none for a store's), actor and time.
var events = byFields(&Table{Kind: memstore.KindEvents, Name: "events", Key: "store_id, seq",
	Columns: "store_id, seq, type, version_id, actor_type, actor_id, created_at"},
	func(e *memstore.Event) []any {
		return []any{&e.StoreID, &e.Seq, enum(&e.Type), emptyNull{&e.VersionID}, enum(&e.Actor.Type), &e.Actor.ID, nanos{&e.CreatedAt}}
	},
	memstore.RecordSink.Event)

// sessions come with their attachments, rows of SessionStores: a dump
// reads them through the backend (Snapshot.Attach), a restore writes
// them after their session (restorer.Session).
var sessions = func() *kind[memstore.Session] {
	k := byFields(&Table{Kind: memstore.KindSessions, Name: "sessions", Key: "id",
		Columns: "id, workspace_id, title, metadata, fields, created_at, updated_at, archived_at"},
		func(s *memstore.Session) []any {
			return []any{&s.ID, &s.WorkspaceID, byteText{&s.Title}, jsonMap[string]{&s.Metadata}, jsonMap[json.RawMessage]{&s.Fields},
				nanos{&s.CreatedAt}, nanos{&s.UpdatedAt}, nullNanos{&s.ArchivedAt}}
		},
		memstore.RecordSink.Session)
	k.complete = Snapshot.Attach
	return k
}()

// SessionStores holds the stores attached to sessions, by position.
var SessionStores = &Table{Kind: memstore.KindSessions, Name: "session_stores", Key: "session_id, position",
	Columns: "session_id, position, store_id, access, instructions, name, description, mount_path, created_at"}

// attachmentValues are the values of the row of attachment i of s.
func attachmentValues(s *memstore.Session, i int) []any {
	a := &s.Attachments[i]
	return []any{s.ID, i, a.StoreID, string(a.Access), text(a.Instructions), a.Name, text(a.Description), a.MountPath, keyset.Nanos(s.CreatedAt)}
}

// sessionTokens are a token's row as the API reads it (tokenFields),
// then the hash of its secret.
var sessionTokens = byFields(&Table{Kind: memstore.KindSessionTokens, Name: "session_tokens", Key: "id",
	Columns: tokenColumns + ", secret_sha256"},
	func(t *memstore.SessionTokenRecord) []any {
		return append(tokenFields(&t.SessionToken), &t.SecretSHA256)
	},
	memstore.RecordSink.SessionToken)

const tokenColumns = "id, session_id, workspace_id, hint, created_at, expires_at, revoked_at"

func tokenFields(t *memstore.SessionToken) []any {
	return []any{&t.ID, &t.SessionID, &t.WorkspaceID, &t.Hint, nanos{&t.CreatedAt}, nullNanos{&t.ExpiresAt}, nullNanos{&t.RevokedAt}}
}

// sessionEvents are copied as they are kept: ID, session, number, type,
// body, time, and a tool use's block ID (NULL for none).
var sessionEvents = byFields(&Table{Kind: memstore.KindSessionEvents, Name: "session_events", Key: "session_id, seq",
	Columns: "session_id, seq, id, workspace_id, type, body, processed_at, tool_use_id"},
	func(e *memstore.SessionEvent) []any {
		return []any{&e.SessionID, &e.Seq, &e.ID, &e.WorkspaceID, &e.Type, rawJSON{&e.Body}, nanos{&e.ProcessedAt}, emptyNull{&e.ToolUseID}}
	},
	memstore.RecordSink.SessionEvent)

var webhooks = byFields(&Table{Kind: memstore.KindWebhooks, Name: "webhook_endpoints", Key: "id",
	Columns: "id, workspace_id, name, description, url, enabled_events, state, disabled_reason, secret, created_at, updated_at"},
	func(w *memstore.WebhookEndpoint) []any {
		return []any{&w.ID, &w.WorkspaceID, &w.Name, &w.Description, &w.URL, &w.EnabledEvents, enum(&w.State), &w.DisabledReason, &w.Secret,
			nanos{&w.CreatedAt}, nanos{&w.UpdatedAt}}
	},
	memstore.RecordSink.Webhook)

// cursors replace those that the restore of their endpoint started at
// the end of each store's feed. Nothing owed (0) is kept as NULL.
var cursors = byFields(&Table{Kind: memstore.KindCursors, Name: "webhook_cursors", Key: "endpoint_id, store_id",
	Columns:  "endpoint_id, store_id, seq, owed_to",
	Conflict: "ON CONFLICT (endpoint_id, store_id) DO UPDATE SET seq = excluded.seq, owed_to = excluded.owed_to"},
	func(c *memstore.WebhookCursor) []any {
		return []any{&c.EndpointID, &c.StoreID, &c.Seq, zeroNull{&c.OwedTo}}
	},
	memstore.RecordSink.WebhookCursor)

// deliveries are copied as they stand, pending ones with their attempts
// and next attempt. No last attempt is kept as 0.
var deliveries = byFields(&Table{Kind: memstore.KindDeliveries, Name: "webhook_deliveries", Key: "endpoint_id, event_id",
	Columns: "endpoint_id, event_id, workspace_id, type, store_id, memory_id, version_id, event_at, state, attempts, next_attempt_at, last_attempt_at, last_status, last_error, dream_id"},
	func(d *memstore.WebhookDelivery) []any {
		e := &d.Event
		return []any{&d.EndpointID, &e.ID, &e.WorkspaceID, &e.Type, &e.StoreID, &e.MemoryID, &e.VersionID, nanos{&e.CreatedAt},
			enum(&d.State), &d.Attempts, nanos{&d.NextAttemptAt}, zeroNanos{&d.LastAttemptAt}, &d.LastStatus, &d.LastError, &e.DreamID}
	},
	memstore.RecordSink.WebhookDelivery)

// dreams keep their sessions input as a JSON list, and a failed dream's
// error as a JSON object (NULL for none).
var dreams = byFields(&Table{Kind: memstore.KindDreams, Name: "dreams", Key: "id",
	Columns: "id, workspace_id, status, input_store_id, session_ids, model_id, model_speed, instructions, output_behavior, " +
		"output_store_id, session_id, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, " +
		"error, cancel_requested, attempts, owner, lease_until, created_at, updated_at, started_at, ended_at, archived_at"},
	func(d *memstore.Dream) []any {
		u := &d.Usage
		return []any{&d.ID, &d.WorkspaceID, enum(&d.Status), &d.InputStoreID, jsonValue[[]string]{&d.SessionIDs}, &d.Model.ID, &d.Model.Speed,
			&d.Instructions, &d.OutputBehavior, &d.OutputStoreID, &d.SessionID,
			&u.InputTokens, &u.OutputTokens, &u.CacheCreationInputTokens, &u.CacheReadInputTokens,
			jsonValue[*memstore.DreamError]{&d.Error}, &d.CancelRequested, &d.Attempts, &d.Owner, nullNanos{&d.LeaseUntil},
			nanos{&d.CreatedAt}, nanos{&d.UpdatedAt}, nullNanos{&d.StartedAt}, nullNanos{&d.EndedAt}, nullNanos{&d.ArchivedAt}}
	},
	memstore.RecordSink.Dream)

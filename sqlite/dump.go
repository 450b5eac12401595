package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
)

var (
	_ memstore.Dumper   = (*DB)(nil)
	_ memstore.Restorer = (*DB)(nil)
)

// Dump implements memstore.Dumper, in one read transaction: under WAL, a
// snapshot that writes made meanwhile do not reach.
func (db *DB) Dump(ctx context.Context, sink memstore.RecordSink) error {
	err := db.read(ctx, func(tx *txn) error {
		d := dumper{ctx: ctx, tx: tx, sink: sink}
		for _, dump := range []func() error{
			func() error {
				return dumpTable(d, memstore.KindWorkspaces, "workspaces", "rowid", "id, name, created_at", scanWorkspace, nil, sink.Workspace)
			},
			func() error {
				return dumpTable(d, memstore.KindAPIKeys, "api_keys", "rowid", keyColumns+", secret_sha256", scanKeyRecord, nil, sink.APIKey)
			},
			func() error {
				return dumpTable(d, memstore.KindUsers, "users", "id", userColumns, scanUser, nil, sink.User)
			},
			func() error {
				return dumpTable(d, memstore.KindSignIns, "user_sign_ins", "secret_sha256", signInColumns, scanSignIn, nil, sink.SignIn)
			},
			func() error {
				return dumpTable(d, memstore.KindStores, "stores", "rowid", storeColumns, scanStore, nil, sink.Store)
			},
			func() error {
				return dumpTable(d, memstore.KindMemories, "memories", "rowid", memoryColumns(true), scanMemory, nil, sink.Memory)
			},
			func() error {
				return dumpTable(d, memstore.KindVersions, "versions", "rowid", versionColumns(true), scanVersion, nil, sink.Version)
			},
			func() error {
				return dumpTable(d, memstore.KindEvents, "events", "store_id, seq", eventRecordColumns, scanEventRecord, nil, sink.Event)
			},
			func() error {
				return dumpTable(d, memstore.KindSessions, "sessions s", "rowid", sessionColumns, scanSession, attach, sink.Session)
			},
			func() error {
				return dumpTable(d, memstore.KindSessionTokens, "session_tokens", "rowid", tokenColumns+", secret_sha256", scanTokenRecord, nil, sink.SessionToken)
			},
			func() error {
				return dumpTable(d, memstore.KindWebhooks, "webhook_endpoints", "rowid", webhookColumns, scanWebhook, nil, sink.Webhook)
			},
			func() error {
				return dumpTable(d, memstore.KindCursors, "webhook_cursors", "endpoint_id, store_id", "endpoint_id, store_id, seq, coalesce(owed_to, 0)", scanCursor, nil, sink.WebhookCursor)
			},
			func() error {
				return dumpTable(d, memstore.KindDeliveries, "webhook_deliveries d", "d.endpoint_id, d.event_id", deliveryColumns, scanDeliveryOnly, nil, sink.WebhookDelivery)
			},
		} {
			if err := dump(); err != nil {
				return err
			}
		}
		return nil
	})
	return wrap(err, "dump the database")
}

// dumper is what every table's dump shares.
type dumper struct {
	ctx  context.Context
	tx   *txn
	sink memstore.RecordSink
}

// dumpTable hands every row of table to put, memstore.DumpPage rows at a
// time in the order of key (columns unique to a row: "rowid" but for a
// table without one), after announcing them. complete, when not nil,
// completes each page before put sees it. A page is read whole before put
// sees any of it, so that put may take its time without holding a
// statement open.
func dumpTable[T any](d dumper, kind memstore.RecordKind, table, key, cols string, scan func(interface{ Scan(...any) error }) (*T, error), complete func(context.Context, *txn, []*T) error, put func(*T) error) error {
	if err := d.ctx.Err(); err != nil {
		return err
	}
	var total int64
	if err := d.tx.queryRow(d.ctx, `SELECT count(*) FROM `+table).Scan(&total); err != nil {
		return err
	}
	if err := d.sink.Begin(kind, total); err != nil {
		return err
	}
	var after []any // the last row's key, nil before the first page
	for {
		page, last, err := dumpPage(d, table, key, cols, scan, after)
		if err != nil || len(page) == 0 {
			return err
		}
		if complete != nil {
			if err := complete(d.ctx, d.tx, page); err != nil {
				return err
			}
		}
		for _, r := range page {
			if err := put(r); err != nil {
				return err
			}
		}
		after = last
		if err := d.ctx.Err(); err != nil {
			return err
		}
	}
}

// dumpPage reads the page of table after the key after (from the start
// when nil), and the key of its last row.
func dumpPage[T any](d dumper, table, key, cols string, scan func(interface{ Scan(...any) error }) (*T, error), after []any) ([]*T, []any, error) {
	n := strings.Count(key, ",") + 1
	where := ""
	if after != nil {
		where = ` WHERE (` + key + `) > (?` + strings.Repeat(", ?", n-1) + `)`
	}
	rows, err := d.tx.query(d.ctx, `SELECT `+cols+`, `+key+` FROM `+table+where+` ORDER BY `+key+` LIMIT ?`, append(after, memstore.DumpPage)...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var page []*T
	last := make([]any, n)
	dest := make([]any, n)
	for i := range last {
		dest[i] = &last[i]
	}
	for rows.Next() {
		r, err := scan(extraColumns{rows, dest})
		if err != nil {
			return nil, nil, err
		}
		page = append(page, r)
	}
	return page, last, rows.Err()
}

// extraColumns scans a row whose last columns go to extra, after those
// the row's own scan function reads: so that a table's one scan function
// serves a query with more columns.
type extraColumns struct {
	row   interface{ Scan(...any) error }
	extra []any
}

func (r extraColumns) Scan(dest ...any) error { return r.row.Scan(append(dest, r.extra...)...) }

func scanWorkspace(row interface{ Scan(...any) error }) (*memstore.Workspace, error) {
	var (
		w       memstore.Workspace
		created int64
	)
	if err := row.Scan(&w.ID, &w.Name, &created); err != nil {
		return nil, err
	}
	w.CreatedAt = fromNanos(created)
	return &w, nil
}

func scanKeyRecord(row interface{ Scan(...any) error }) (*memstore.APIKeyRecord, error) {
	var r memstore.APIKeyRecord
	k, err := scanKey(extraColumns{row, []any{&r.SecretSHA256}})
	if err != nil {
		return nil, err
	}
	r.APIKey = *k
	return &r, nil
}

func scanTokenRecord(row interface{ Scan(...any) error }) (*memstore.SessionTokenRecord, error) {
	var r memstore.SessionTokenRecord
	t, err := scanToken(extraColumns{row, []any{&r.SecretSHA256}})
	if err != nil {
		return nil, err
	}
	r.SessionToken = *t
	return &r, nil
}

// Restore implements memstore.Restorer, in one write transaction of the
// writer: other writes wait for it, and the indexer indexes the memories
// for search once it has committed, as after any write. The database is
// refused unless empty (memstore.ErrNotEmpty), and each record must pass
// memstore.CheckRecords.
func (db *DB) Restore(ctx context.Context, fill func(memstore.RecordSink) error) error {
	ran := false
	err := db.write(ctx, func(tx *txn) error {
		if ran {
			// A write closure may run again (DB.write), but fill
			// consumes a stream that cannot: fail instead, undoing all.
			return errors.New("the restore was interrupted; run it again")
		}
		ran = true
		var full bool
		if err := tx.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM workspaces) OR EXISTS (SELECT 1 FROM api_keys)
			OR EXISTS (SELECT 1 FROM stores) OR EXISTS (SELECT 1 FROM sessions)`).Scan(&full); err != nil {
			return err
		}
		if full {
			return memstore.ErrNotEmpty()
		}
		return fill(memstore.CheckRecords(&restorer{ctx: ctx, tx: tx}))
	})
	return wrap(err, "restore the database")
}

// restorer writes records in the transaction of a Restore.
type restorer struct {
	ctx context.Context
	tx  *txn
}

func (r *restorer) exec(query string, args ...any) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	_, err := r.tx.exec(r.ctx, query, args...)
	return err
}

func (r *restorer) Begin(memstore.RecordKind, int64) error { return nil }

func (r *restorer) Workspace(w *memstore.Workspace) error {
	return r.exec(`INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)`, w.ID, w.Name, nanos(w.CreatedAt))
}

func (r *restorer) APIKey(k *memstore.APIKeyRecord) error {
	return r.exec(`INSERT INTO api_keys (id, workspace_id, name, secret_sha256, hint, created_at, last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.WorkspaceID, k.Name, k.SecretSHA256, k.Hint, nanos(k.CreatedAt), keyset.NullNanos(k.LastUsedAt), keyset.NullNanos(k.RevokedAt))
}

func (r *restorer) User(u *memstore.User) error {
	return r.exec(`INSERT INTO users (`+userColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		u.ID, u.WorkspaceID, u.Name, string(u.Role), u.PasswordHash, nanos(u.CreatedAt), nanos(u.UpdatedAt))
}

func (r *restorer) SignIn(s *memstore.SignIn) error {
	return r.exec(`INSERT INTO user_sign_ins (`+signInColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		s.SecretHash, s.UserID, s.WorkspaceID, s.Link, nanos(s.CreatedAt), nanos(s.LastSeenAt), nanos(s.ExpiresAt))
}

// signInColumns are the columns of a sign-in, as scanSignIn reads them.
const signInColumns = "secret_sha256, user_id, workspace_id, link, created_at, last_seen_at, expires_at"

func scanSignIn(row interface{ Scan(...any) error }) (*memstore.SignIn, error) {
	var (
		s                      memstore.SignIn
		created, seen, expires int64
	)
	if err := row.Scan(&s.SecretHash, &s.UserID, &s.WorkspaceID, &s.Link, &created, &seen, &expires); err != nil {
		return nil, err
	}
	s.CreatedAt, s.LastSeenAt, s.ExpiresAt = fromNanos(created), fromNanos(seen), fromNanos(expires)
	return &s, nil
}

func (r *restorer) Store(s *memstore.Store) error {
	meta, err := json.Marshal(s.Metadata)
	if err != nil {
		return err
	}
	return r.exec(`INSERT INTO stores (id, workspace_id, name, description, metadata, created_at, updated_at, archived_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.WorkspaceID, s.Name, s.Description, string(meta), nanos(s.CreatedAt), nanos(s.UpdatedAt), keyset.NullNanos(s.ArchivedAt))
}

// Memory inserts the memory's row, which the search triggers queue for
// the indexer.
func (r *restorer) Memory(m *memstore.Memory) error {
	return r.exec(`INSERT INTO memories (id, store_id, path, content, sha256, size, version_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.StoreID, m.Path, m.Content, m.ContentSHA256, m.ContentSize, m.VersionID, nanos(m.CreatedAt), nanos(m.UpdatedAt))
}

func (r *restorer) Event(e *memstore.Event) error {
	var vid any
	if e.VersionID != "" {
		vid = e.VersionID
	}
	return r.exec(`INSERT INTO events (store_id, seq, type, version_id, actor_type, actor_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		e.StoreID, e.Seq, string(e.Type), vid, string(e.Actor.Type), e.Actor.ID, nanos(e.CreatedAt))
}

func (r *restorer) Version(v *memstore.Version) error {
	var path, content, sum, size, rtype, rid any
	if v.Path != "" { // none once redacted
		path = v.Path
	}
	if v.HasContent {
		content, sum, size = v.Content, v.ContentSHA256, v.ContentSize
	}
	if v.RedactedBy != nil {
		rtype, rid = string(v.RedactedBy.Type), v.RedactedBy.ID
	}
	return r.exec(`INSERT INTO versions (id, store_id, memory_id, operation, path, content, sha256, size, created_at, actor_type, actor_id, redacted_at, redactor_type, redactor_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		v.ID, v.StoreID, v.MemoryID, string(v.Operation), path, content, sum, size, nanos(v.CreatedAt), string(v.CreatedBy.Type), v.CreatedBy.ID,
		keyset.NullNanos(v.RedactedAt), rtype, rid)
}

func (r *restorer) Session(s *memstore.Session) error {
	meta, err := json.Marshal(s.Metadata)
	if err != nil {
		return err
	}
	fields, err := json.Marshal(s.Fields)
	if err != nil {
		return err
	}
	if err := r.exec(`INSERT INTO sessions (id, workspace_id, title, metadata, fields, created_at, updated_at, archived_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.WorkspaceID, s.Title, string(meta), string(fields), nanos(s.CreatedAt), nanos(s.UpdatedAt), keyset.NullNanos(s.ArchivedAt)); err != nil {
		return err
	}
	for i, a := range s.Attachments {
		if err := r.exec(`INSERT INTO session_stores (session_id, position, store_id, access, instructions, name, description, mount_path, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, s.ID, i, a.StoreID, string(a.Access), a.Instructions, a.Name, a.Description, a.MountPath, nanos(s.CreatedAt)); err != nil {
			return err
		}
	}
	return nil
}

func (r *restorer) SessionToken(t *memstore.SessionTokenRecord) error {
	return r.exec(`INSERT INTO session_tokens (id, session_id, workspace_id, secret_sha256, hint, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.SessionID, t.WorkspaceID, t.SecretSHA256, t.Hint, nanos(t.CreatedAt), keyset.NullNanos(t.ExpiresAt), keyset.NullNanos(t.RevokedAt))
}

// scanDeliveryOnly scans a delivery alone, for dumpTable.
func scanDeliveryOnly(row interface{ Scan(...any) error }) (*memstore.WebhookDelivery, error) {
	return scanDelivery(row)
}

func (r *restorer) Webhook(w *memstore.WebhookEndpoint) error {
	return r.exec(`INSERT INTO webhook_endpoints (`+webhookColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, append([]any{w.ID, w.WorkspaceID}, webhookArgs(w)...)...)
}

func (r *restorer) WebhookDelivery(d *memstore.WebhookDelivery) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	return insertDelivery(r.ctx, r.tx, d)
}

// WebhookCursor replaces the cursor that the endpoint's restore started
// at the end of the store's feed.
func (r *restorer) WebhookCursor(c *memstore.WebhookCursor) error {
	return r.exec(`INSERT INTO webhook_cursors (endpoint_id, store_id, seq, owed_to) VALUES (?, ?, ?, nullif(?, 0))
		ON CONFLICT (endpoint_id, store_id) DO UPDATE SET seq = excluded.seq, owed_to = excluded.owed_to`, c.EndpointID, c.StoreID, c.Seq, c.OwedTo)
}

// scanCursor scans a cursor, for dumpTable.
func scanCursor(row interface{ Scan(...any) error }) (*memstore.WebhookCursor, error) {
	var c memstore.WebhookCursor
	return &c, row.Scan(&c.EndpointID, &c.StoreID, &c.Seq, &c.OwedTo)
}

package postgres

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
)

var (
	_ memstore.Dumper   = (*DB)(nil)
	_ memstore.Restorer = (*DB)(nil)
)

// Dump implements memstore.Dumper, in one REPEATABLE READ transaction: a
// snapshot that writes made meanwhile, by any process, do not reach. It
// runs once: the sink has seen what a second run would repeat.
func (db *DB) Dump(ctx context.Context, sink memstore.RecordSink) error {
	err, _ := db.tryTx(ctx, readTx, func(tx pgx.Tx) error {
		d := dumper{ctx: ctx, tx: tx, sink: sink}
		for _, dump := range []func() error{
			func() error {
				return dumpTable(d, memstore.KindWorkspaces, "workspaces", "id", "id, name, created_at", scanWorkspace, nil, sink.Workspace)
			},
			func() error {
				return dumpTable(d, memstore.KindAPIKeys, "api_keys", "id", keyColumns+", secret_sha256", scanKeyRecord, nil, sink.APIKey)
			},
			func() error {
				return dumpTable(d, memstore.KindUsers, "users", "id", userColumns, scanUser, nil, sink.User)
			},
			func() error {
				return dumpTable(d, memstore.KindSignIns, "user_sign_ins", `secret_sha256 COLLATE "C"`, signInColumns, scanSignIn, nil, sink.SignIn)
			},
			func() error {
				return dumpTable(d, memstore.KindStores, "stores", "id", storeColumns, scanStore, nil, sink.Store)
			},
			func() error {
				return dumpTable(d, memstore.KindMemories, "memories", "id", memoryColumns(true), scanMemory, nil, sink.Memory)
			},
			func() error {
				return dumpTable(d, memstore.KindVersions, "versions", "id", versionColumns(true), scanVersion, nil, sink.Version)
			},
			func() error {
				return dumpTable(d, memstore.KindEvents, "events", "store_id, seq", eventRecordColumns, scanEventRecord, nil, sink.Event)
			},
			func() error {
				return dumpTable(d, memstore.KindSessions, "sessions s", "s.id", sessionColumns, scanSession, attach, sink.Session)
			},
			func() error {
				return dumpTable(d, memstore.KindSessionTokens, "session_tokens", "id", tokenColumns+", secret_sha256", scanTokenRecord, nil, sink.SessionToken)
			},
			func() error {
				return dumpTable(d, memstore.KindWebhooks, "webhook_endpoints", "id", webhookColumns, scanWebhook, nil, sink.Webhook)
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
	tx   pgx.Tx
	sink memstore.RecordSink
}

// dumpTable hands every row of table to put, in the order of its unique
// key, after announcing them. A cursor reads memstore.DumpPage rows at a time, each
// page whole before put sees any of it, since a connection runs one
// statement at a time. complete, when not nil, completes each page before
// put sees it.
func dumpTable[T any](d dumper, kind memstore.RecordKind, table, key, cols string, scan func(row) (*T, error), complete func(context.Context, pgx.Tx, []*T) error, put func(*T) error) error {
	var total int64
	if err := d.tx.QueryRow(d.ctx, `SELECT count(*) FROM `+table).Scan(&total); err != nil {
		return err
	}
	if err := d.sink.Begin(kind, total); err != nil {
		return err
	}
	// A cursor of each kind's own name: the statements that fetch from
	// it are cached by their text, with the columns they return.
	cursor := "dump_" + string(kind)
	if _, err := d.tx.Exec(d.ctx, `DECLARE `+cursor+` NO SCROLL CURSOR FOR SELECT `+cols+` FROM `+table+` ORDER BY `+key); err != nil {
		return err
	}
	for {
		page, err := fetchPage(d, cursor, scan)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			_, err := d.tx.Exec(d.ctx, `CLOSE `+cursor)
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
	}
}

// fetchPage reads the next page of a cursor.
func fetchPage[T any](d dumper, cursor string, scan func(row) (*T, error)) ([]*T, error) {
	rows, err := d.tx.Query(d.ctx, `FETCH `+strconv.Itoa(memstore.DumpPage)+` FROM `+cursor)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var page []*T
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, err
		}
		page = append(page, r)
	}
	return page, rows.Err()
}

// extraColumns scans a row whose last columns go to extra, after those
// the row's own scan function reads: so that a table's one scan function
// serves a query with more columns.
type extraColumns struct {
	row
	extra []any
}

func (r extraColumns) Scan(dest ...any) error { return r.row.Scan(append(dest, r.extra...)...) }

func scanKeyRecord(r row) (*memstore.APIKeyRecord, error) {
	var k memstore.APIKeyRecord
	key, err := scanKey(extraColumns{r, []any{&k.SecretSHA256}})
	if err != nil {
		return nil, err
	}
	k.APIKey = *key
	return &k, nil
}

func scanTokenRecord(r row) (*memstore.SessionTokenRecord, error) {
	var t memstore.SessionTokenRecord
	tok, err := scanToken(extraColumns{r, []any{&t.SecretSHA256}})
	if err != nil {
		return nil, err
	}
	t.SessionToken = *tok
	return &t, nil
}

// restoreBatch and restoreBatchBytes bound what a Restore sends the
// server at once: the statements of up to restoreBatch records in one
// round trip, fewer when their content passes restoreBatchBytes.
const (
	restoreBatch      = 500
	restoreBatchBytes = 16 << 20
)

// Restore implements memstore.Restorer, in one transaction that first
// locks the tables that tell whether the database is empty, so that no
// other process writes one meanwhile (reads go on). Each record must pass
// memstore.CheckRecords. It runs once: fill consumes a stream that a
// second run could not read again.
func (db *DB) Restore(ctx context.Context, fill func(memstore.RecordSink) error) error {
	err, _ := db.tryTx(ctx, writeTx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE workspaces, api_keys, stores, sessions IN EXCLUSIVE MODE`); err != nil {
			return err
		}
		var full bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM workspaces) OR EXISTS (SELECT 1 FROM api_keys)
			OR EXISTS (SELECT 1 FROM stores) OR EXISTS (SELECT 1 FROM sessions)`).Scan(&full); err != nil {
			return err
		}
		if full {
			return memstore.ErrNotEmpty()
		}
		r := &restorer{ctx: ctx, tx: tx}
		if err := fill(memstore.CheckRecords(r)); err != nil {
			return err
		}
		if err := r.flush(); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, recountMemories)
		return err
	})
	return wrap(err, "restore the database")
}

// recountMemories sets each store's count of its live memories and
// their content size from the memories themselves, as migrations 0005
// and 0007 did: a restore inserts memories apart from the writes that
// keep them (memTx.Put and Delete), and then counts them all at once.
const recountMemories = `UPDATE stores s SET memory_count = c.n, content_size = c.size
	FROM (SELECT store_id, count(*) AS n, sum(size) AS size FROM memories GROUP BY store_id) c
	WHERE c.store_id = s.id`

// restorer writes records in the transaction of a Restore, queueing their
// statements in batches.
type restorer struct {
	ctx   context.Context
	tx    pgx.Tx
	batch pgx.Batch
	bytes int // of content queued
}

// queue adds a statement carrying size bytes of content to the batch,
// and sends the batch once it is full.
func (r *restorer) queue(size int, query string, args ...any) error {
	r.batch.Queue(query, args...)
	r.bytes += size
	if r.batch.Len() < restoreBatch && r.bytes < restoreBatchBytes {
		return nil
	}
	return r.flush()
}

// flush sends the statements queued, and returns the first one's error.
func (r *restorer) flush() error {
	if r.batch.Len() == 0 {
		return nil
	}
	err := r.tx.SendBatch(r.ctx, &r.batch).Close()
	r.batch, r.bytes = pgx.Batch{}, 0
	return err
}

// Begin sends what the kind before queued, so that an error is told with
// the kind it belongs to.
func (r *restorer) Begin(memstore.RecordKind, int64) error { return r.flush() }

func (r *restorer) Workspace(w *memstore.Workspace) error {
	return r.queue(0, `INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3)`, w.ID, w.Name, keyset.Nanos(w.CreatedAt))
}

func (r *restorer) APIKey(k *memstore.APIKeyRecord) error {
	return r.queue(0, `INSERT INTO api_keys (id, workspace_id, name, secret_sha256, hint, created_at, last_used_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		k.ID, k.WorkspaceID, k.Name, k.SecretSHA256, k.Hint, keyset.Nanos(k.CreatedAt), keyset.NullNanos(k.LastUsedAt), keyset.NullNanos(k.RevokedAt))
}

func (r *restorer) User(u *memstore.User) error {
	return r.queue(0, `INSERT INTO users (`+userColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		u.ID, u.WorkspaceID, u.Name, string(u.Role), u.PasswordHash, keyset.Nanos(u.CreatedAt), keyset.Nanos(u.UpdatedAt))
}

func (r *restorer) SignIn(s *memstore.SignIn) error {
	return r.queue(0, `INSERT INTO user_sign_ins (`+signInColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		s.SecretHash, s.UserID, s.WorkspaceID, s.Link, keyset.Nanos(s.CreatedAt), keyset.Nanos(s.LastSeenAt), keyset.Nanos(s.ExpiresAt))
}

// signInColumns are the columns of a sign-in, as scanSignIn reads them.
const signInColumns = "secret_sha256, user_id, workspace_id, link, created_at, last_seen_at, expires_at"

func scanSignIn(r row) (*memstore.SignIn, error) {
	var (
		s                      memstore.SignIn
		created, seen, expires int64
	)
	if err := r.Scan(&s.SecretHash, &s.UserID, &s.WorkspaceID, &s.Link, &created, &seen, &expires); err != nil {
		return nil, err
	}
	s.CreatedAt, s.LastSeenAt, s.ExpiresAt = keyset.Time(created), keyset.Time(seen), keyset.Time(expires)
	return &s, nil
}

func (r *restorer) Store(s *memstore.Store) error {
	meta, err := json.Marshal(s.Metadata)
	if err != nil {
		return err
	}
	return r.queue(0, `INSERT INTO stores (id, workspace_id, name, description, metadata, created_at, updated_at, archived_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		s.ID, s.WorkspaceID, s.Name, []byte(s.Description), string(meta), keyset.Nanos(s.CreatedAt), keyset.Nanos(s.UpdatedAt), keyset.NullNanos(s.ArchivedAt))
}

// Memory writes the search columns with the memory, as memTx.Put does.
func (r *restorer) Memory(m *memstore.Memory) error {
	text, pathWords, contentWords := searchValues(m.Path, m.Content)
	return r.queue(2*len(m.Content), `INSERT INTO memories (id, store_id, path, content, sha256, size, version_id, created_at, updated_at, search_text, search_words)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, `+searchWords("$11", "$12")+`)`,
		m.ID, m.StoreID, m.Path, []byte(m.Content), m.ContentSHA256, m.ContentSize, m.VersionID, keyset.Nanos(m.CreatedAt), keyset.Nanos(m.UpdatedAt),
		text, pathWords, contentWords)
}

func (r *restorer) Version(v *memstore.Version) error {
	var (
		path, sum, rtype, rid *string
		content               []byte
		size                  *int64
	)
	if v.Path != "" { // none once redacted
		path = &v.Path
	}
	if v.HasContent {
		content, sum, size = []byte(v.Content), &v.ContentSHA256, &v.ContentSize
		if content == nil {
			content = []byte{} // empty content, not none
		}
	}
	if v.RedactedBy != nil {
		t := string(v.RedactedBy.Type)
		rtype, rid = &t, &v.RedactedBy.ID
	}
	return r.queue(len(content), `INSERT INTO versions (id, store_id, memory_id, operation, path, content, sha256, size, created_at, actor_type, actor_id, redacted_at, redactor_type, redactor_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		v.ID, v.StoreID, v.MemoryID, string(v.Operation), path, content, sum, size, keyset.Nanos(v.CreatedAt), string(v.CreatedBy.Type), v.CreatedBy.ID,
		keyset.NullNanos(v.RedactedAt), rtype, rid)
}

func (r *restorer) Event(e *memstore.Event) error {
	var vid *string
	if e.VersionID != "" {
		vid = &e.VersionID
	}
	return r.queue(0, `INSERT INTO events (store_id, seq, type, version_id, actor_type, actor_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		e.StoreID, e.Seq, string(e.Type), vid, string(e.Actor.Type), e.Actor.ID, keyset.Nanos(e.CreatedAt))
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
	if err := r.queue(len(fields), `INSERT INTO sessions (id, workspace_id, title, metadata, fields, created_at, updated_at, archived_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		s.ID, s.WorkspaceID, []byte(s.Title), string(meta), string(fields), keyset.Nanos(s.CreatedAt), keyset.Nanos(s.UpdatedAt), keyset.NullNanos(s.ArchivedAt)); err != nil {
		return err
	}
	for i, a := range s.Attachments {
		if err := r.queue(0, `INSERT INTO session_stores (session_id, position, store_id, access, instructions, name, description, mount_path, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, s.ID, i, a.StoreID, string(a.Access), []byte(a.Instructions), a.Name, []byte(a.Description), a.MountPath,
			keyset.Nanos(s.CreatedAt)); err != nil {
			return err
		}
	}
	return nil
}

func (r *restorer) SessionToken(t *memstore.SessionTokenRecord) error {
	return r.queue(0, `INSERT INTO session_tokens (id, session_id, workspace_id, secret_sha256, hint, created_at, expires_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		t.ID, t.SessionID, t.WorkspaceID, t.SecretSHA256, t.Hint, keyset.Nanos(t.CreatedAt), keyset.NullNanos(t.ExpiresAt), keyset.NullNanos(t.RevokedAt))
}

// scanDeliveryOnly scans a delivery alone, for dumpTable.
func scanDeliveryOnly(r row) (*memstore.WebhookDelivery, error) { return scanDelivery(r) }

func (r *restorer) Webhook(w *memstore.WebhookEndpoint) error {
	return r.queue(0, `INSERT INTO webhook_endpoints (`+webhookColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, append([]any{w.ID, w.WorkspaceID}, webhookArgs(w)...)...)
}

// WebhookCursor replaces the cursor that the endpoint's restore started
// at the end of the store's feed.
func (r *restorer) WebhookCursor(c *memstore.WebhookCursor) error {
	return r.queue(0, `INSERT INTO webhook_cursors (endpoint_id, store_id, seq, owed_to) VALUES ($1, $2, $3, nullif($4, 0))
		ON CONFLICT (endpoint_id, store_id) DO UPDATE SET seq = excluded.seq, owed_to = excluded.owed_to`, c.EndpointID, c.StoreID, c.Seq, c.OwedTo)
}

// scanCursor scans a cursor, for dumpTable.
func scanCursor(r row) (*memstore.WebhookCursor, error) {
	var c memstore.WebhookCursor
	return &c, r.Scan(&c.EndpointID, &c.StoreID, &c.Seq, &c.OwedTo)
}

func (r *restorer) WebhookDelivery(d *memstore.WebhookDelivery) error {
	return r.queue(0, deliveryInsert, deliveryArgs(d)...)
}

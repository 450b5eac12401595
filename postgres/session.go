package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
)

// Sessions are deleted only when asked to (DeleteSession); deleting a
// store leaves the sessions that attach it as they were (see
// migrations/0001_schema.sql).

// sessionColumns are read with the sessions table named s.
const sessionColumns = `s.id, s.workspace_id, s.title, s.metadata, s.fields, s.created_at, s.updated_at, s.archived_at`

func scanSession(r row) (*memstore.Session, error) {
	var (
		s            memstore.Session
		title        []byte
		meta, fields string
		cat, uat     int64
		aat          *int64
	)
	if err := r.Scan(&s.ID, &s.WorkspaceID, &title, &meta, &fields, &cat, &uat, &aat); err != nil {
		return nil, err
	}
	if err := s.SetKeptJSON([]byte(meta), []byte(fields)); err != nil {
		return nil, err
	}
	s.Title = string(title)
	s.CreatedAt, s.UpdatedAt, s.ArchivedAt = keyset.Time(cat), keyset.Time(uat), keyset.NullTime(aat)
	return &s, nil
}

// attach loads the attachments of sessions, in one query whatever their
// number.
func attach(ctx context.Context, tx pgx.Tx, sessions []*memstore.Session) error {
	if len(sessions) == 0 {
		return nil
	}
	byID := make(map[string]*memstore.Session, len(sessions))
	idList := make([]string, len(sessions))
	for i, s := range sessions {
		byID[s.ID], idList[i] = s, s.ID
	}
	rows, err := tx.Query(ctx, `SELECT session_id, store_id, access, instructions, name, description, mount_path
		FROM session_stores WHERE session_id = ANY($1) ORDER BY session_id, position`, idList)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			sid, access        string
			instructions, desc []byte
			a                  memstore.Attachment
		)
		if err := rows.Scan(&sid, &a.StoreID, &access, &instructions, &a.Name, &desc, &a.MountPath); err != nil {
			return err
		}
		a.Access, a.Instructions, a.Description = memstore.Access(access), string(instructions), string(desc)
		if s := byID[sid]; s != nil {
			s.Attachments = append(s.Attachments, a)
		}
	}
	return rows.Err()
}

// getSession reads a session of the workspace with its attachments
// (ENotFound), locking its row until tx ends when lock is set.
func getSession(ctx context.Context, tx pgx.Tx, workspaceID, id, lock string) (*memstore.Session, error) {
	s, err := scanSession(tx.QueryRow(ctx, `SELECT `+sessionColumns+` FROM sessions s WHERE s.id = $1 AND s.workspace_id = $2 `+lock, id, workspaceID))
	if err != nil {
		return nil, notFound(err, memstore.ErrSessionNotFound(id))
	}
	return s, attach(ctx, tx, []*memstore.Session{s})
}

// Session implements memstore.SessionStorage.
func (db *DB) Session(ctx context.Context, workspaceID, id string) (*memstore.Session, error) {
	var s *memstore.Session
	err := db.inTx(ctx, readTx, func(tx pgx.Tx) (err error) {
		s, err = getSession(ctx, tx, workspaceID, id, "")
		return err
	})
	return s, wrap(err, "get session %s", id)
}

// Sessions implements memstore.SessionStorage (archived sessions only
// with f.IncludeArchived), with keyset pagination on (created_at, id),
// newest first unless f.Ascending: served by sessions_by_workspace, or by
// session_stores_by_store for the sessions of one store.
func (db *DB) Sessions(ctx context.Context, workspaceID string, f memstore.SessionFilter) (memstore.Page[memstore.Session], error) {
	var page memstore.Page[memstore.Session]
	n, err := memstore.PageSize(f.Limit, false)
	if err != nil {
		return page, err
	}
	kind, dir, after := keyset.Sessions, "DESC", "<"
	if f.Ascending {
		kind, dir, after = keyset.SessionsAsc, "ASC", ">"
	}
	cur, err := keyset.Parse(f.Page, kind)
	if err != nil {
		return page, err
	}
	// The store's attachments hold the sessions' created_at, so both
	// lists keep their keyset in one index.
	from, at, id := `sessions s`, `s.created_at`, `s.id`
	q := newQuery(workspaceID)
	where := []string{"s.workspace_id = $1"}
	if f.StoreID != "" {
		from, at, id = `session_stores a JOIN sessions s ON s.id = a.session_id`, `a.created_at`, `a.session_id`
		where = append(where, "a.store_id = "+q.arg(f.StoreID))
	}
	switch {
	case f.ArchivedOnly:
		where = append(where, "s.archived_at IS NOT NULL")
	case !f.IncludeArchived:
		where = append(where, "s.archived_at IS NULL")
	}
	if f.AgentID != "" {
		// memstore.SessionAgentID's rule (the schema's
		// session_agent_id function), with the fields memstore.AgentField names.
		where = append(where, `session_agent_id(s.fields) = `+q.arg(f.AgentID))
	}
	for _, b := range []struct {
		op string
		t  *time.Time
	}{{">", f.CreatedAtGT}, {">=", f.CreatedAtGTE}, {"<", f.CreatedAtLT}, {"<=", f.CreatedAtLTE}} {
		if b.t != nil {
			where = append(where, at+" "+b.op+" "+q.arg(keyset.Nanos(*b.t)))
		}
	}
	if cur != nil {
		where = append(where, "("+at+", "+id+") "+after+" ("+q.arg(cur.Time)+", "+q.arg(cur.Key)+")")
	}
	var (
		items []*memstore.Session
		more  bool
	)
	err = db.inTx(ctx, readTx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+sessionColumns+` FROM `+from+` WHERE `+strings.Join(where, " AND ")+
			` ORDER BY `+at+` `+dir+`, `+id+` `+dir+` LIMIT `+q.arg(n+1), q.args...)
		if err != nil {
			return err
		}
		got, err := collect(rows, scanSession)
		if err != nil {
			return err
		}
		items = items[:0]
		for i := range got {
			items = append(items, &got[i])
		}
		if more = len(items) > n; more {
			items = items[:n]
		}
		return attach(ctx, tx, items)
	})
	if err != nil {
		return memstore.Page[memstore.Session]{}, wrap(err, "list sessions")
	}
	for _, s := range items {
		page.Items = append(page.Items, *s)
	}
	if more {
		last := items[n-1]
		page.Next = keyset.Cursor{Kind: kind, Time: keyset.Nanos(last.CreatedAt), Key: last.ID}.String()
	}
	return page, nil
}

const tokenColumns = `id, session_id, workspace_id, hint, created_at, expires_at, revoked_at`

func scanToken(r row) (*memstore.SessionToken, error) {
	var (
		t        memstore.SessionToken
		cat      int64
		exp, rev *int64
	)
	if err := r.Scan(&t.ID, &t.SessionID, &t.WorkspaceID, &t.Hint, &cat, &exp, &rev); err != nil {
		return nil, err
	}
	t.CreatedAt, t.ExpiresAt, t.RevokedAt = keyset.Time(cat), keyset.NullTime(exp), keyset.NullTime(rev)
	return &t, nil
}

// SessionTokens implements memstore.SessionStorage, with keyset
// pagination on (created_at, id): one range of session_tokens_by_session
// per page.
func (db *DB) SessionTokens(ctx context.Context, workspaceID, sessionID string, f memstore.SessionTokenFilter) (memstore.Page[memstore.SessionToken], error) {
	var page memstore.Page[memstore.SessionToken]
	n, err := memstore.PageSize(f.Limit, false)
	if err != nil {
		return page, err
	}
	cur, err := keyset.Parse(f.Page, keyset.Tokens)
	if err != nil {
		return page, err
	}
	q := newQuery(sessionID)
	where := `session_id = $1`
	if cur != nil {
		where += ` AND (created_at, id) > (` + q.arg(cur.Time) + `, ` + q.arg(cur.Key) + `)`
	}
	err = db.inTx(ctx, readTx, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM sessions WHERE id = $1 AND workspace_id = $2`, sessionID, workspaceID).Scan(&one)
		if err != nil {
			return notFound(err, memstore.ErrSessionNotFound(sessionID))
		}
		rows, err := tx.Query(ctx, `SELECT `+tokenColumns+` FROM session_tokens WHERE `+where+` ORDER BY created_at, id LIMIT `+q.arg(n+1), q.args...)
		if err != nil {
			return err
		}
		page.Items, err = collect(rows, scanToken)
		return err
	})
	if err != nil {
		return memstore.Page[memstore.SessionToken]{}, wrap(err, "list tokens of session %s", sessionID)
	}
	return keyset.ByTime(page.Items, n, keyset.Tokens, func(t *memstore.SessionToken) (time.Time, string) { return t.CreatedAt, t.ID }), nil
}

// SessionToken implements memstore.SessionStorage.
func (db *DB) SessionToken(ctx context.Context, workspaceID, id string) (*memstore.SessionToken, error) {
	t, err := scanToken(db.pool.QueryRow(ctx, `SELECT `+tokenColumns+` FROM session_tokens WHERE id = $1 AND workspace_id = $2`, id, workspaceID))
	if err != nil {
		return nil, wrap(notFound(err, memstore.ErrTokenNotFound(id)), "get session token %s", id)
	}
	return t, nil
}

// SessionTokenBySecret implements memstore.SessionStorage: one indexed
// lookup by the secret's hash, then the session, in one snapshot. Nothing
// is written: unlike an API key's, a token's last use is not recorded.
func (db *DB) SessionTokenBySecret(ctx context.Context, secretHash string) (*memstore.SessionToken, *memstore.Session, error) {
	var (
		s *memstore.Session
		t *memstore.SessionToken
	)
	err := db.inTx(ctx, readTx, func(tx pgx.Tx) (err error) {
		t, err = scanToken(tx.QueryRow(ctx, `SELECT `+tokenColumns+` FROM session_tokens WHERE secret_sha256 = $1`, secretHash))
		if err != nil {
			return notFound(err, memstore.ErrUnknownSecret("session token"))
		}
		s, err = getSession(ctx, tx, t.WorkspaceID, t.SessionID, "")
		return err
	})
	if err != nil {
		return nil, nil, wrap(err, "authenticate session")
	}
	return t, s, nil
}

// WriteSessions implements memstore.SessionStorage: fn runs in one
// transaction over a sessionTx, and the revocations it announces are told
// to every process once committed (revoked).
func (db *DB) WriteSessions(ctx context.Context, workspaceID string, fn func(memstore.SessionTx) error) error {
	var t *sessionTx
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		t = &sessionTx{ctx: ctx, db: db, tx: tx, workspaceID: workspaceID}
		return fn(t)
	})
	if err != nil {
		return wrap(err, "change sessions")
	}
	for _, r := range t.announced {
		db.revoked(ctx, r)
	}
	return nil
}

// A sessionTx is a memstore.SessionTx over one transaction: a session it
// reads is locked against change (FOR NO KEY UPDATE) until the
// transaction ends, and so is a store (FOR SHARE), on every process.
type sessionTx struct {
	ctx         context.Context
	db          *DB
	tx          pgx.Tx
	workspaceID string
	announced   []memstore.Revocation
}

func (t *sessionTx) Session(id string) (*memstore.Session, error) {
	return getSession(t.ctx, t.tx, t.workspaceID, id, "FOR NO KEY UPDATE")
}

func (t *sessionTx) Store(id string) (*memstore.Store, error) {
	st, err := getStore(t.ctx, t.tx, t.workspaceID, id, "FOR SHARE")
	if memstore.ErrorCode(err) == memstore.ENotFound {
		return nil, nil
	}
	return st, err
}

func (t *sessionTx) LiveSessions(max int) (int, error) {
	return countRows(t.ctx, t.tx, max, "sessions "+t.workspaceID, `SELECT 1 FROM sessions WHERE workspace_id = $1 AND archived_at IS NULL`, t.workspaceID)
}

// LiveTokens counts in two ranges of session_tokens_live.
func (t *sessionTx) LiveTokens(sessionID string, now time.Time, max int) (int, error) {
	return countRows(t.ctx, t.tx, max, "tokens "+sessionID, `SELECT 1 FROM session_tokens WHERE session_id = $1 AND revoked_at IS NULL AND expires_at IS NULL
		UNION ALL SELECT 1 FROM session_tokens WHERE session_id = $1 AND revoked_at IS NULL AND expires_at > $2`, sessionID, keyset.Nanos(now))
}

func (t *sessionTx) CreateSession(s *memstore.Session) error {
	meta, fields, err := s.KeptJSON()
	if err != nil {
		return err
	}
	s.ID = t.db.ids.New(memstore.SessionIDPrefix, s.CreatedAt)
	if _, err := t.tx.Exec(t.ctx, `INSERT INTO sessions (id, workspace_id, title, metadata, fields, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		s.ID, t.workspaceID, []byte(s.Title), meta, fields, keyset.Nanos(s.CreatedAt), keyset.Nanos(s.UpdatedAt)); err != nil {
		return err
	}
	return t.insertAttachments(s)
}

// insertAttachments stores the attachments of s in their order, each
// with the session's creation time, by which a store's sessions are
// listed (session_stores_by_store).
func (t *sessionTx) insertAttachments(s *memstore.Session) error {
	for i, a := range s.Attachments {
		if _, err := t.tx.Exec(t.ctx, `INSERT INTO session_stores (session_id, position, store_id, access, instructions, name, description, mount_path, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, s.ID, i, a.StoreID, string(a.Access), []byte(a.Instructions), a.Name, []byte(a.Description), a.MountPath, keyset.Nanos(s.CreatedAt)); err != nil {
			return err
		}
	}
	return nil
}

func (t *sessionTx) UpdateSession(s *memstore.Session, attachments bool) error {
	meta, fields, err := s.KeptJSON()
	if err != nil {
		return err
	}
	if _, err := t.tx.Exec(t.ctx, `UPDATE sessions SET title = $1, metadata = $2, fields = $3, updated_at = $4, archived_at = $5 WHERE id = $6 AND workspace_id = $7`,
		[]byte(s.Title), meta, fields, keyset.Nanos(s.UpdatedAt), keyset.NullNanos(s.ArchivedAt), s.ID, t.workspaceID); err != nil || !attachments {
		return err
	}
	if _, err := t.tx.Exec(t.ctx, `DELETE FROM session_stores WHERE session_id = $1`, s.ID); err != nil {
		return err
	}
	return t.insertAttachments(s)
}

// DeleteSession lets the foreign keys cascade to the session's
// attachments and tokens. Versions keep the session's ID as their actor.
func (t *sessionTx) DeleteSession(id string) error {
	tag, err := t.tx.Exec(t.ctx, `DELETE FROM sessions WHERE id = $1 AND workspace_id = $2`, id, t.workspaceID)
	if err == nil && tag.RowsAffected() == 0 {
		err = memstore.ErrSessionNotFound(id)
	}
	return err
}

func (t *sessionTx) CreateToken(tok *memstore.SessionToken, secretHash string) error {
	tok.ID = t.db.ids.New(memstore.SessionTokenIDPrefix, tok.CreatedAt)
	_, err := t.tx.Exec(t.ctx, `INSERT INTO session_tokens (id, session_id, workspace_id, secret_sha256, hint, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, tok.ID, tok.SessionID, tok.WorkspaceID, secretHash, tok.Hint, keyset.Nanos(tok.CreatedAt), keyset.NullNanos(tok.ExpiresAt))
	return err
}

// RevokeToken is one statement, which keeps the first revocation's time.
func (t *sessionTx) RevokeToken(id string, at time.Time) (*memstore.SessionToken, error) {
	tok, err := scanToken(t.tx.QueryRow(t.ctx, `UPDATE session_tokens SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2 AND workspace_id = $3 RETURNING `+tokenColumns,
		keyset.Nanos(at), id, t.workspaceID))
	if err != nil {
		return nil, notFound(err, memstore.ErrTokenNotFound(id))
	}
	return tok, nil
}

// Announce keeps r for WriteSessions to tell once committed: a NOTIFY
// sent after the commit, so that a failed one does not undo the change.
func (t *sessionTx) Announce(r memstore.Revocation) error {
	t.announced = append(t.announced, r)
	return nil
}

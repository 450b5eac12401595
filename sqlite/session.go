package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/sqlrow"
)

var _ memstore.SessionStorage = (*DB)(nil)

// Sessions are deleted only when asked to (DeleteSession); deleting a
// store leaves the sessions that attach it as they were (see
// migrations/0001_schema.sql).

// kindSessions and kindTokens tag the cursors of the sessions list and of
// a session's tokens.
const (
	kindSessions    = keyset.Sessions
	kindSessionsAsc = keyset.SessionsAsc
	kindTokens      = keyset.Tokens
)

// sessionColumns are read with the sessions table named s.
const sessionColumns = `s.id, s.workspace_id, s.title, s.metadata, s.fields, s.created_at, s.updated_at, s.archived_at`

func scanSession(row sqlrow.Row) (*memstore.Session, error) {
	var (
		s            memstore.Session
		meta, fields string
		cat, uat     int64
		aat          sql.NullInt64
	)
	if err := row.Scan(&s.ID, &s.WorkspaceID, &s.Title, &meta, &fields, &cat, &uat, &aat); err != nil {
		return nil, err
	}
	if err := s.SetKeptJSON([]byte(meta), []byte(fields)); err != nil {
		return nil, err
	}
	s.CreatedAt, s.UpdatedAt, s.ArchivedAt = fromNanos(cat), fromNanos(uat), fromNullNanos(aat)
	return &s, nil
}

// attach loads the attachments of sessions, in one query whatever their
// number: the IDs travel as one JSON array, so the statement stays the
// same and is prepared once.
func attach(ctx context.Context, tx *txn, sessions []*memstore.Session) error {
	if len(sessions) == 0 {
		return nil
	}
	byID := make(map[string]*memstore.Session, len(sessions))
	idList := make([]string, len(sessions))
	for i, s := range sessions {
		byID[s.ID], idList[i] = s, s.ID
	}
	b, err := json.Marshal(idList)
	if err != nil {
		return err
	}
	rows, err := tx.query(ctx, `SELECT session_id, store_id, access, instructions, name, description, mount_path
		FROM session_stores WHERE session_id IN (SELECT value FROM json_each(?)) ORDER BY session_id, position`, string(b))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			sid, access string
			a           memstore.Attachment
		)
		if err := rows.Scan(&sid, &a.StoreID, &access, &a.Instructions, &a.Name, &a.Description, &a.MountPath); err != nil {
			return err
		}
		a.Access = memstore.Access(access)
		if s := byID[sid]; s != nil {
			s.Attachments = append(s.Attachments, a)
		}
	}
	return rows.Err()
}

func getSession(ctx context.Context, tx *txn, workspaceID, id string) (*memstore.Session, error) {
	s, err := scanSession(tx.queryRow(ctx, `SELECT `+sessionColumns+` FROM sessions s WHERE s.id = ? AND s.workspace_id = ?`, id, workspaceID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memstore.ErrSessionNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	return s, attach(ctx, tx, []*memstore.Session{s})
}

// Session implements memstore.SessionStorage.
func (db *DB) Session(ctx context.Context, workspaceID, id string) (*memstore.Session, error) {
	var s *memstore.Session
	err := db.read(ctx, func(tx *txn) (err error) {
		s, err = getSession(ctx, tx, workspaceID, id)
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
	kind, dir, after := kindSessions, "DESC", "<"
	if f.Ascending {
		kind, dir, after = kindSessionsAsc, "ASC", ">"
	}
	cur, err := parseCursor(f.Page, kind)
	if err != nil {
		return page, err
	}
	// The store's attachments hold the sessions' created_at, so both
	// lists keep their keyset in one index.
	from, at, id := `sessions s`, `s.created_at`, `s.id`
	where := []string{"s.workspace_id = ?"}
	args := []any{workspaceID}
	if f.StoreID != "" {
		from, at, id = `session_stores a JOIN sessions s ON s.id = a.session_id`, `a.created_at`, `a.session_id`
		where = append([]string{"a.store_id = ?"}, where...)
		args = append([]any{f.StoreID}, args...)
	}
	switch {
	case f.ArchivedOnly:
		where = append(where, "s.archived_at IS NOT NULL")
	case !f.IncludeArchived:
		where = append(where, "s.archived_at IS NULL")
	}
	if f.AgentID != "" {
		// memstore.SessionAgentID's rule: the agent field when a
		// string, else its id.
		where = append(where, `CASE json_type(s.fields, '$.`+memstore.AgentField+`') WHEN 'text' THEN json_extract(s.fields, '$.`+memstore.AgentField+`')
			WHEN 'object' THEN json_extract(s.fields, '$.`+memstore.AgentField+`.id') END = ?`)
		args = append(args, f.AgentID)
	}
	for _, b := range []struct {
		op string
		t  *time.Time
	}{{">", f.CreatedAtGT}, {">=", f.CreatedAtGTE}, {"<", f.CreatedAtLT}, {"<=", f.CreatedAtLTE}} {
		if b.t != nil {
			where = append(where, at+" "+b.op+" ?")
			args = append(args, nanos(*b.t))
		}
	}
	if cur != nil {
		where = append(where, "("+at+", "+id+") "+after+" (?, ?)")
		args = append(args, cur.Time, cur.Key)
	}
	args = append(args, n+1)
	var (
		items []*memstore.Session
		more  bool
	)
	err = db.read(ctx, func(tx *txn) error {
		rows, err := tx.query(ctx, `SELECT `+sessionColumns+` FROM `+from+` WHERE `+strings.Join(where, " AND ")+
			` ORDER BY `+at+` `+dir+`, `+id+` `+dir+` LIMIT ?`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			s, err := scanSession(rows)
			if err != nil {
				return err
			}
			items = append(items, s)
		}
		if err := rows.Err(); err != nil {
			return err
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
		page.Next = cursor{Kind: kind, Time: nanos(last.CreatedAt), Key: last.ID}.String()
	}
	return page, nil
}

const tokenColumns = `id, session_id, workspace_id, hint, created_at, expires_at, revoked_at`

func scanToken(row sqlrow.Row) (*memstore.SessionToken, error) {
	var (
		t        memstore.SessionToken
		cat      int64
		exp, rev sql.NullInt64
	)
	if err := row.Scan(&t.ID, &t.SessionID, &t.WorkspaceID, &t.Hint, &cat, &exp, &rev); err != nil {
		return nil, err
	}
	t.CreatedAt, t.ExpiresAt, t.RevokedAt = fromNanos(cat), fromNullNanos(exp), fromNullNanos(rev)
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
	cur, err := parseCursor(f.Page, kindTokens)
	if err != nil {
		return page, err
	}
	where, args := `session_id = ?`, []any{sessionID}
	if cur != nil {
		where += ` AND (created_at, id) > (?, ?)`
		args = append(args, cur.Time, cur.Key)
	}
	args = append(args, n+1)
	err = db.read(ctx, func(tx *txn) error {
		var found int
		if err := tx.queryRow(ctx, `SELECT count(*) FROM sessions WHERE id = ? AND workspace_id = ?`, sessionID, workspaceID).Scan(&found); err != nil {
			return err
		}
		if found == 0 {
			return memstore.ErrSessionNotFound(sessionID)
		}
		rows, err := tx.query(ctx, `SELECT `+tokenColumns+` FROM session_tokens WHERE `+where+` ORDER BY created_at, id LIMIT ?`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		page.Items, err = sqlrow.Collect(rows, scanToken)
		return err
	})
	if err != nil {
		return memstore.Page[memstore.SessionToken]{}, wrap(err, "list tokens of session %s", sessionID)
	}
	return keyset.ByTime(page.Items, n, kindTokens, func(t *memstore.SessionToken) (time.Time, string) { return t.CreatedAt, t.ID }), nil
}

// SessionToken implements memstore.SessionStorage.
func (db *DB) SessionToken(ctx context.Context, workspaceID, id string) (*memstore.SessionToken, error) {
	var t *memstore.SessionToken
	err := db.read(ctx, func(tx *txn) (err error) {
		t, err = getToken(ctx, tx, workspaceID, id)
		return err
	})
	return t, wrap(err, "get session token %s", id)
}

func getToken(ctx context.Context, tx *txn, workspaceID, id string) (*memstore.SessionToken, error) {
	t, err := scanToken(tx.queryRow(ctx, `SELECT `+tokenColumns+` FROM session_tokens WHERE id = ? AND workspace_id = ?`, id, workspaceID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memstore.ErrTokenNotFound(id)
	}
	return t, err
}

// SessionTokenBySecret implements memstore.SessionStorage: one indexed
// lookup by the secret's hash, then the session, in one snapshot. Nothing
// is written: unlike an API key's, a token's last use is not recorded.
func (db *DB) SessionTokenBySecret(ctx context.Context, secretHash string) (*memstore.SessionToken, *memstore.Session, error) {
	var (
		s *memstore.Session
		t *memstore.SessionToken
	)
	err := db.read(ctx, func(tx *txn) (err error) {
		t, err = scanToken(tx.queryRow(ctx, `SELECT `+tokenColumns+` FROM session_tokens WHERE secret_sha256 = ?`, secretHash))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return memstore.ErrUnknownSecret("session token")
		case err != nil:
			return err
		}
		s, err = getSession(ctx, tx, t.WorkspaceID, t.SessionID)
		return err
	})
	if err != nil {
		return nil, nil, wrap(err, "authenticate session")
	}
	return t, s, nil
}

// WriteSessions implements memstore.SessionStorage: fn runs as a write
// closure of the writer (see DB.write), over a sessionTx. The revocations
// it announces are noted in the revocations table in its transaction, for
// the other processes on the file (revoke.go), and told to this process's
// listeners once committed; the content of a session it deleted is then
// erased as a deleted store's is (eraseDeleted).
func (db *DB) WriteSessions(ctx context.Context, workspaceID string, fn func(memstore.SessionTx) error) error {
	var t *sessionTx
	err := db.write(ctx, func(tx *txn) error {
		t = &sessionTx{ctx: ctx, db: db, tx: tx, workspaceID: workspaceID}
		return fn(t)
	})
	if err != nil {
		return wrap(err, "change sessions")
	}
	for _, r := range t.announced {
		db.Revoked(r)
	}
	for _, id := range t.deleted {
		db.eraseDeleted(ctx, slog.String("session", id))
	}
	return nil
}

// A sessionTx is a memstore.SessionTx over one transaction of the
// writer, which runs one transaction at a time: what it reads cannot
// change before it commits.
type sessionTx struct {
	ctx         context.Context
	db          *DB
	tx          *txn
	workspaceID string
	announced   []memstore.Revocation
	deleted     []string // sessions
}

func (t *sessionTx) Session(id string) (*memstore.Session, error) {
	return getSession(t.ctx, t.tx, t.workspaceID, id)
}

func (t *sessionTx) Store(id string) (*memstore.Store, error) {
	st, err := getStore(t.ctx, t.tx, t.workspaceID, id)
	if memstore.ErrorCode(err) == memstore.ENotFound {
		return nil, nil
	}
	return st, err
}

func (t *sessionTx) LiveSessions(max int) (int, error) {
	return countRows(t.ctx, t.tx, max, `SELECT 1 FROM sessions WHERE workspace_id = ? AND archived_at IS NULL`, t.workspaceID)
}

// LiveTokens counts in two ranges of session_tokens_live.
func (t *sessionTx) LiveTokens(sessionID string, now time.Time, max int) (int, error) {
	return countRows(t.ctx, t.tx, max, `SELECT 1 FROM session_tokens WHERE session_id = ?1 AND revoked_at IS NULL AND expires_at IS NULL
		UNION ALL SELECT 1 FROM session_tokens WHERE session_id = ?1 AND revoked_at IS NULL AND expires_at > ?2`, sessionID, nanos(now))
}

func (t *sessionTx) CreateSession(s *memstore.Session) error {
	meta, fields, err := s.KeptJSON()
	if err != nil {
		return err
	}
	s.ID = t.db.ids.New(memstore.SessionIDPrefix, s.CreatedAt)
	if _, err := t.tx.exec(t.ctx, `INSERT INTO sessions (id, workspace_id, title, metadata, fields, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		s.ID, t.workspaceID, s.Title, meta, fields, nanos(s.CreatedAt), nanos(s.UpdatedAt)); err != nil {
		return err
	}
	return t.insertAttachments(s)
}

// insertAttachments stores the attachments of s in their order, each
// with the session's creation time, by which a store's sessions are
// listed (session_stores_by_store).
func (t *sessionTx) insertAttachments(s *memstore.Session) error {
	for i, a := range s.Attachments {
		if _, err := t.tx.exec(t.ctx, `INSERT INTO session_stores (session_id, position, store_id, access, instructions, name, description, mount_path, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, s.ID, i, a.StoreID, string(a.Access), a.Instructions, a.Name, a.Description, a.MountPath, nanos(s.CreatedAt)); err != nil {
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
	var archived sql.NullInt64
	if s.ArchivedAt != nil {
		archived = sql.NullInt64{Int64: nanos(*s.ArchivedAt), Valid: true}
	}
	if _, err := t.tx.exec(t.ctx, `UPDATE sessions SET title = ?, metadata = ?, fields = ?, updated_at = ?, archived_at = ? WHERE id = ? AND workspace_id = ?`,
		s.Title, meta, fields, nanos(s.UpdatedAt), archived, s.ID, t.workspaceID); err != nil || !attachments {
		return err
	}
	if _, err := t.tx.exec(t.ctx, `DELETE FROM session_stores WHERE session_id = ?`, s.ID); err != nil {
		return err
	}
	return t.insertAttachments(s)
}

// DeleteSession lets the foreign keys cascade to the session's
// attachments and tokens. Versions keep the session's ID as their actor.
// What the session kept (its title, metadata, fields and instructions)
// is erased as a deleted store's content is: secure_delete zeroes it,
// and the log is emptied once committed (WriteSessions).
func (t *sessionTx) DeleteSession(id string) error {
	res, err := t.tx.exec(t.ctx, `DELETE FROM sessions WHERE id = ? AND workspace_id = ?`, id, t.workspaceID)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err == nil && n == 0 {
		err = memstore.ErrSessionNotFound(id)
	}
	if err != nil {
		return err
	}
	t.deleted = append(t.deleted, id)
	return nil
}

func (t *sessionTx) CreateToken(tok *memstore.SessionToken, secretHash string) error {
	tok.ID = t.db.ids.New(memstore.SessionTokenIDPrefix, tok.CreatedAt)
	var exp sql.NullInt64
	if tok.ExpiresAt != nil {
		exp = sql.NullInt64{Int64: nanos(*tok.ExpiresAt), Valid: true}
	}
	_, err := t.tx.exec(t.ctx, `INSERT INTO session_tokens (id, session_id, workspace_id, secret_sha256, hint, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, tok.ID, tok.SessionID, tok.WorkspaceID, secretHash, tok.Hint, nanos(tok.CreatedAt), exp)
	return err
}

func (t *sessionTx) RevokeToken(id string, at time.Time) (*memstore.SessionToken, error) {
	if _, err := t.tx.exec(t.ctx, `UPDATE session_tokens SET revoked_at = ? WHERE id = ? AND workspace_id = ? AND revoked_at IS NULL`,
		nanos(at), id, t.workspaceID); err != nil {
		return nil, err
	}
	return getToken(t.ctx, t.tx, t.workspaceID, id)
}

// Announce notes r in the revocations table, for the other processes on
// the file; WriteSessions tells this process once committed.
func (t *sessionTx) Announce(r memstore.Revocation) error {
	t.announced = append(t.announced, r)
	return t.db.noteRevocation(t.ctx, t.tx, r)
}

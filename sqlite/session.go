package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
)

var _ memstore.SessionStorage = (*DB)(nil)

// Sessions are deleted only when asked to (DeleteSession); deleting a
// store leaves the sessions that attach it as they were (see
// migrations/0003).

// kindSessions and kindTokens tag the cursors of the sessions list and of
// a session's tokens.
const (
	kindSessions    = keyset.Sessions
	kindSessionsAsc = keyset.SessionsAsc
	kindTokens      = keyset.Tokens
)

// sessionColumns are read with the sessions table named s.
const sessionColumns = `s.id, s.workspace_id, s.title, s.metadata, s.fields, s.created_at, s.updated_at, s.archived_at`

func scanSession(row interface{ Scan(...any) error }) (*memstore.Session, error) {
	var (
		s            memstore.Session
		meta, fields string
		cat, uat     int64
		aat          sql.NullInt64
	)
	if err := row.Scan(&s.ID, &s.WorkspaceID, &s.Title, &meta, &fields, &cat, &uat, &aat); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(meta), &s.Metadata); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(fields), &s.Fields); err != nil {
		return nil, err
	}
	if s.Metadata == nil {
		s.Metadata = map[string]string{}
	}
	if s.Fields == nil {
		s.Fields = map[string]json.RawMessage{}
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
		return nil, memstore.Errorf(memstore.ENotFound, "session %s not found", id)
	}
	if err != nil {
		return nil, err
	}
	return s, attach(ctx, tx, []*memstore.Session{s})
}

// newToken makes a token for a session and inserts it; only the hash of
// its secret is kept.
func (db *DB) newToken(ctx context.Context, tx *txn, workspaceID, sessionID string, now time.Time, ttl time.Duration) (*memstore.SessionToken, string, error) {
	secret := memstore.NewSecret(memstore.SessionTokenPrefix)
	tok := &memstore.SessionToken{
		ID: db.ids.New(memstore.SessionTokenIDPrefix, now), SessionID: sessionID, WorkspaceID: workspaceID,
		Hint: memstore.SecretHint(secret), CreatedAt: fromNanos(nanos(now)),
	}
	var exp sql.NullInt64
	if ttl > 0 {
		t := fromNanos(nanos(now.Add(ttl)))
		tok.ExpiresAt, exp = &t, sql.NullInt64{Int64: nanos(t), Valid: true}
	}
	_, err := tx.exec(ctx, `INSERT INTO session_tokens (id, session_id, workspace_id, secret_sha256, hint, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, tok.ID, tok.SessionID, tok.WorkspaceID, memstore.HashSecret(secret), tok.Hint, nanos(now), exp)
	if err != nil {
		return nil, "", err
	}
	return tok, secret, nil
}

// CreateSession implements memstore.SessionStorage. The stores are
// checked and their names snapshotted in the transaction that inserts the
// session, so that a store archived or renamed concurrently is seen either
// wholly before or wholly after.
func (db *DB) CreateSession(ctx context.Context, workspaceID string, c memstore.SessionCreate, q memstore.Quota) (*memstore.Session, *memstore.SessionToken, string, error) {
	now := fromNanos(nanos(db.now()))
	s := memstore.NewSession(db.ids.New(memstore.SessionIDPrefix, now), workspaceID, c, now)
	meta, err := json.Marshal(s.Metadata)
	if err != nil {
		return nil, nil, "", err
	}
	fields, err := json.Marshal(s.Fields)
	if err != nil {
		return nil, nil, "", err
	}
	var (
		tok    *memstore.SessionToken
		secret string
	)
	err = db.write(ctx, func(tx *txn) error {
		if err := withinQuota(ctx, tx, q, `SELECT 1 FROM sessions WHERE workspace_id = ? AND archived_at IS NULL`, workspaceID); err != nil {
			return err
		}
		var err error
		s.Attachments, err = memstore.SnapshotAttachments(c.Stores, func(id string) (*memstore.Store, error) {
			st, err := getStore(ctx, tx, workspaceID, id)
			if memstore.ErrorCode(err) == memstore.ENotFound {
				return nil, nil
			}
			return st, err
		})
		if err != nil {
			return err
		}
		if _, err := tx.exec(ctx, `INSERT INTO sessions (id, workspace_id, title, metadata, fields, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			s.ID, workspaceID, s.Title, string(meta), string(fields), nanos(now), nanos(now)); err != nil {
			return err
		}
		for i, a := range s.Attachments {
			if _, err := tx.exec(ctx, `INSERT INTO session_stores (session_id, position, store_id, access, instructions, name, description, mount_path, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, s.ID, i, a.StoreID, string(a.Access), a.Instructions, a.Name, a.Description, a.MountPath, nanos(now)); err != nil {
				return err
			}
		}
		tok, secret, err = db.newToken(ctx, tx, workspaceID, s.ID, now, c.TokenTTL)
		return err
	})
	if err != nil {
		return nil, nil, "", wrap(err, "create session")
	}
	return s, tok, secret, nil
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

// ArchiveSession implements memstore.SessionStorage; the first archive
// sets both archived_at and updated_at, later ones change nothing. The
// tokens are left as they are: AuthenticateSession refuses every token of
// an archived session, and RevokedAt keeps meaning an explicit revocation.
func (db *DB) ArchiveSession(ctx context.Context, workspaceID, id string) (*memstore.Session, error) {
	var s *memstore.Session
	err := db.write(ctx, func(tx *txn) (err error) {
		if s, err = getSession(ctx, tx, workspaceID, id); err != nil || s.ArchivedAt != nil {
			return err
		}
		t, err := db.archive(ctx, tx, "sessions", id)
		s.ArchivedAt, s.UpdatedAt = &t, t
		if err != nil {
			return err
		}
		return db.noteRevocation(ctx, tx, memstore.Revocation{SessionID: id})
	})
	if err != nil {
		return nil, wrap(err, "archive session %s", id)
	}
	db.Revoked(memstore.Revocation{SessionID: id})
	return s, nil
}

// ChangeSession implements memstore.SessionStorage: the session row and
// its attachments are rewritten in the transaction that read them, and a
// change of attachments is told once committed.
func (db *DB) ChangeSession(ctx context.Context, workspaceID, id string, change memstore.SessionChange) (*memstore.Session, error) {
	var (
		s        *memstore.Session
		attached bool // the attachments changed
	)
	err := db.write(ctx, func(tx *txn) (err error) {
		if s, err = getSession(ctx, tx, workspaceID, id); err != nil {
			return err
		}
		before := slices.Clone(s.Attachments)
		changed, err := change(s, func(id string) (*memstore.Store, error) {
			st, err := getStore(ctx, tx, workspaceID, id)
			if memstore.ErrorCode(err) == memstore.ENotFound {
				return nil, nil
			}
			return st, err
		})
		if err != nil || !changed {
			return err
		}
		meta, err := json.Marshal(s.Metadata)
		if err != nil {
			return err
		}
		fields, err := json.Marshal(s.Fields)
		if err != nil {
			return err
		}
		s.UpdatedAt = fromNanos(nanos(db.now()))
		if _, err := tx.exec(ctx, `UPDATE sessions SET title = ?, metadata = ?, fields = ?, updated_at = ? WHERE id = ?`,
			s.Title, string(meta), string(fields), nanos(s.UpdatedAt), id); err != nil {
			return err
		}
		if attached = !slices.Equal(before, s.Attachments); !attached {
			return nil
		}
		if _, err := tx.exec(ctx, `DELETE FROM session_stores WHERE session_id = ?`, id); err != nil {
			return err
		}
		for i, a := range s.Attachments {
			if _, err := tx.exec(ctx, `INSERT INTO session_stores (session_id, position, store_id, access, instructions, name, description, mount_path, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, i, a.StoreID, string(a.Access), a.Instructions, a.Name, a.Description, a.MountPath, nanos(s.CreatedAt)); err != nil {
				return err
			}
		}
		return db.noteRevocation(ctx, tx, memstore.Revocation{SessionID: id, Refresh: true})
	})
	if err != nil {
		return nil, wrap(err, "change session %s", id)
	}
	if attached {
		db.Revoked(memstore.Revocation{SessionID: id, Refresh: true})
	}
	return s, nil
}

// DeleteSession implements memstore.SessionStorage; the foreign keys
// cascade to the session's attachments and tokens. Versions keep the
// session's ID as their actor. What the session kept (its title,
// metadata, fields and instructions) is erased as a deleted store's
// content is: secure_delete zeroes it, and the log is emptied
// (eraseDeleted).
func (db *DB) DeleteSession(ctx context.Context, workspaceID, id string) error {
	err := db.write(ctx, func(tx *txn) error {
		res, err := tx.exec(ctx, `DELETE FROM sessions WHERE id = ? AND workspace_id = ?`, id, workspaceID)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err == nil && n == 0 {
			err = memstore.Errorf(memstore.ENotFound, "session %s not found", id)
		}
		if err != nil {
			return err
		}
		return db.noteRevocation(ctx, tx, memstore.Revocation{SessionID: id})
	})
	if err != nil {
		return wrap(err, "delete session %s", id)
	}
	db.Revoked(memstore.Revocation{SessionID: id})
	db.eraseDeleted(ctx, slog.String("session", id))
	return nil
}

// CreateSessionToken implements memstore.SessionStorage, checking q by
// withinQuota.
func (db *DB) CreateSessionToken(ctx context.Context, workspaceID, sessionID string, ttl time.Duration, q memstore.Quota) (*memstore.SessionToken, string, error) {
	var (
		tok    *memstore.SessionToken
		secret string
	)
	err := db.write(ctx, func(tx *txn) error {
		s, err := getSession(ctx, tx, workspaceID, sessionID)
		if err != nil {
			return err
		}
		if err := s.TakesTokens(); err != nil {
			return err
		}
		// The live tokens: neither revoked nor expired at now, in two
		// ranges of session_tokens_live.
		now := db.now()
		if err := withinQuota(ctx, tx, q, `SELECT 1 FROM session_tokens WHERE session_id = ?1 AND revoked_at IS NULL AND expires_at IS NULL
			UNION ALL SELECT 1 FROM session_tokens WHERE session_id = ?1 AND revoked_at IS NULL AND expires_at > ?2`, sessionID, nanos(now)); err != nil {
			return err
		}
		tok, secret, err = db.newToken(ctx, tx, workspaceID, sessionID, now, ttl)
		return err
	})
	if err != nil {
		return nil, "", wrap(err, "create token for session %s", sessionID)
	}
	return tok, secret, nil
}

const tokenColumns = `id, session_id, workspace_id, hint, created_at, expires_at, revoked_at`

func scanToken(row interface{ Scan(...any) error }) (*memstore.SessionToken, error) {
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
			return memstore.Errorf(memstore.ENotFound, "session %s not found", sessionID)
		}
		rows, err := tx.query(ctx, `SELECT `+tokenColumns+` FROM session_tokens WHERE `+where+` ORDER BY created_at, id LIMIT ?`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			t, err := scanToken(rows)
			if err != nil {
				return err
			}
			page.Items = append(page.Items, *t)
		}
		return rows.Err()
	})
	if err != nil {
		return memstore.Page[memstore.SessionToken]{}, wrap(err, "list tokens of session %s", sessionID)
	}
	if len(page.Items) > n {
		page.Items = page.Items[:n]
		last := page.Items[n-1]
		page.Next = cursor{Kind: kindTokens, Time: nanos(last.CreatedAt), Key: last.ID}.String()
	}
	return page, nil
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
		return nil, memstore.Errorf(memstore.ENotFound, "session token %s not found", id)
	}
	return t, err
}

// RevokeSessionToken implements memstore.SessionStorage.
func (db *DB) RevokeSessionToken(ctx context.Context, workspaceID, id string) (*memstore.SessionToken, error) {
	var t *memstore.SessionToken
	err := db.write(ctx, func(tx *txn) error {
		if _, err := tx.exec(ctx, `UPDATE session_tokens SET revoked_at = ? WHERE id = ? AND workspace_id = ? AND revoked_at IS NULL`,
			nanos(db.now()), id, workspaceID); err != nil {
			return err
		}
		var err error
		if t, err = getToken(ctx, tx, workspaceID, id); err != nil {
			return err
		}
		return db.noteRevocation(ctx, tx, memstore.Revocation{SessionID: t.SessionID, TokenID: id})
	})
	if err != nil {
		return nil, wrap(err, "revoke session token %s", id)
	}
	db.Revoked(memstore.Revocation{SessionID: t.SessionID, TokenID: id})
	return t, nil
}

// AuthenticateSession implements memstore.SessionStorage: one indexed
// lookup by the secret's hash, then the session, in one snapshot. Nothing
// is written: unlike an API key's, a token's last use is not recorded.
func (db *DB) AuthenticateSession(ctx context.Context, secret string) (*memstore.Caller, error) {
	invalid := memstore.Errorf(memstore.EUnauthenticated, "invalid session token")
	if !strings.HasPrefix(secret, memstore.SessionTokenPrefix) {
		return nil, invalid
	}
	var (
		s *memstore.Session
		t *memstore.SessionToken
	)
	err := db.read(ctx, func(tx *txn) (err error) {
		t, err = scanToken(tx.queryRow(ctx, `SELECT `+tokenColumns+` FROM session_tokens WHERE secret_sha256 = ?`, memstore.HashSecret(secret)))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return invalid
		case err != nil:
			return err
		}
		if s, err = getSession(ctx, tx, t.WorkspaceID, t.SessionID); err != nil {
			return err
		}
		return memstore.CheckToken(t, s, db.now())
	})
	if err != nil {
		return nil, wrap(err, "authenticate session")
	}
	return &memstore.Caller{WorkspaceID: s.WorkspaceID, Actor: memstore.Actor{Type: memstore.ActorSession, ID: s.ID}, Session: s,
		TokenID: t.ID, ExpiresAt: t.ExpiresAt}, nil
}

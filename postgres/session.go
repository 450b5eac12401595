package postgres

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
)

// Sessions are deleted only when asked to (DeleteSession); deleting a
// store leaves the sessions that attach it as they were (see
// migrations/0001).

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
		return nil, notFound(err, memstore.Errorf(memstore.ENotFound, "session %s not found", id))
	}
	return s, attach(ctx, tx, []*memstore.Session{s})
}

// newToken makes a token for a session and inserts it; only the hash of
// its secret is kept.
func (db *DB) newToken(ctx context.Context, tx pgx.Tx, workspaceID, sessionID string, now time.Time, ttl time.Duration) (*memstore.SessionToken, string, error) {
	secret := memstore.NewSecret(memstore.SessionTokenPrefix)
	tok := &memstore.SessionToken{
		ID: db.ids.New(memstore.SessionTokenIDPrefix, now), SessionID: sessionID, WorkspaceID: workspaceID,
		Hint: memstore.SecretHint(secret), CreatedAt: keyset.Round(now),
	}
	var exp *int64
	if ttl > 0 {
		t := keyset.Round(now.Add(ttl))
		n := keyset.Nanos(t)
		tok.ExpiresAt, exp = &t, &n
	}
	_, err := tx.Exec(ctx, `INSERT INTO session_tokens (id, session_id, workspace_id, secret_sha256, hint, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, tok.ID, tok.SessionID, tok.WorkspaceID, memstore.HashSecret(secret), tok.Hint, keyset.Nanos(now), exp)
	if err != nil {
		return nil, "", err
	}
	return tok, secret, nil
}

// CreateSession implements memstore.SessionStorage, checking q by
// withinQuota. The stores are
// checked and their names snapshotted in the transaction that inserts the
// session, their rows locked against change (FOR SHARE) until it commits,
// so that a store archived or renamed concurrently is seen either wholly
// before or wholly after.
func (db *DB) CreateSession(ctx context.Context, workspaceID string, c memstore.SessionCreate, q memstore.Quota) (*memstore.Session, *memstore.SessionToken, string, error) {
	now := db.stamp()
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
	err = db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		if err := withinQuota(ctx, tx, q, "sessions "+workspaceID, `SELECT 1 FROM sessions WHERE workspace_id = $1 AND archived_at IS NULL`, workspaceID); err != nil {
			return err
		}
		var err error
		s.Attachments, err = memstore.SnapshotAttachments(c.Stores, func(id string) (*memstore.Store, error) {
			st, err := getStore(ctx, tx, workspaceID, id, "FOR SHARE")
			if memstore.ErrorCode(err) == memstore.ENotFound {
				return nil, nil
			}
			return st, err
		})
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO sessions (id, workspace_id, title, metadata, fields, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)`,
			s.ID, workspaceID, []byte(s.Title), string(meta), string(fields), keyset.Nanos(now)); err != nil {
			return err
		}
		for i, a := range s.Attachments {
			if _, err := tx.Exec(ctx, `INSERT INTO session_stores (session_id, position, store_id, access, instructions, name, description, mount_path, created_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, s.ID, i, a.StoreID, string(a.Access), []byte(a.Instructions), a.Name, []byte(a.Description), a.MountPath, keyset.Nanos(now)); err != nil {
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
		// memstore.SessionAgentID's rule (migration
		// 0013_session_agent_id), with the fields memstore.AgentField names.
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

// ArchiveSession implements memstore.SessionStorage; the first archive
// sets both archived_at and updated_at, later ones change nothing. The
// tokens are left as they are: AuthenticateSession refuses every token of
// an archived session, and RevokedAt keeps meaning an explicit revocation.
func (db *DB) ArchiveSession(ctx context.Context, workspaceID, id string) (*memstore.Session, error) {
	var s *memstore.Session
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) (err error) {
		if s, err = getSession(ctx, tx, workspaceID, id, "FOR NO KEY UPDATE"); err != nil || s.ArchivedAt != nil {
			return err
		}
		now := db.stamp()
		_, err = tx.Exec(ctx, `UPDATE sessions SET archived_at = $1, updated_at = $1 WHERE id = $2`, keyset.Nanos(now), id)
		s.ArchivedAt, s.UpdatedAt = &now, now
		return err
	})
	if err != nil {
		return nil, wrap(err, "archive session %s", id)
	}
	db.revoked(ctx, memstore.Revocation{SessionID: id})
	return s, nil
}

// ChangeSession implements memstore.SessionStorage: the session's row is
// locked while change runs on it, the stores it looks up against change
// (FOR SHARE), and the row and its attachments are rewritten in that
// transaction; a change of attachments is told to every process once
// committed.
func (db *DB) ChangeSession(ctx context.Context, workspaceID, id string, change memstore.SessionChange) (*memstore.Session, error) {
	var (
		s        *memstore.Session
		attached bool // the attachments changed
	)
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) (err error) {
		if s, err = getSession(ctx, tx, workspaceID, id, "FOR NO KEY UPDATE"); err != nil {
			return err
		}
		before := slices.Clone(s.Attachments)
		changed, err := change(s, func(id string) (*memstore.Store, error) {
			st, err := getStore(ctx, tx, workspaceID, id, "FOR SHARE")
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
		s.UpdatedAt = db.stamp()
		if _, err := tx.Exec(ctx, `UPDATE sessions SET title = $1, metadata = $2, fields = $3, updated_at = $4 WHERE id = $5`,
			[]byte(s.Title), string(meta), string(fields), keyset.Nanos(s.UpdatedAt), id); err != nil {
			return err
		}
		if attached = !slices.Equal(before, s.Attachments); !attached {
			return nil
		}
		if _, err := tx.Exec(ctx, `DELETE FROM session_stores WHERE session_id = $1`, id); err != nil {
			return err
		}
		for i, a := range s.Attachments {
			if _, err := tx.Exec(ctx, `INSERT INTO session_stores (session_id, position, store_id, access, instructions, name, description, mount_path, created_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, id, i, a.StoreID, string(a.Access), []byte(a.Instructions), a.Name, []byte(a.Description), a.MountPath, keyset.Nanos(s.CreatedAt)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrap(err, "change session %s", id)
	}
	if attached {
		db.revoked(ctx, memstore.Revocation{SessionID: id, Refresh: true})
	}
	return s, nil
}

// DeleteSession implements memstore.SessionStorage; the foreign keys
// cascade to the session's attachments and tokens, and every process
// hears that its tokens stopped. Versions keep the session's ID as their
// actor.
func (db *DB) DeleteSession(ctx context.Context, workspaceID, id string) error {
	tag, err := db.pool.Exec(ctx, `DELETE FROM sessions WHERE id = $1 AND workspace_id = $2`, id, workspaceID)
	if err == nil && tag.RowsAffected() == 0 {
		err = memstore.Errorf(memstore.ENotFound, "session %s not found", id)
	}
	if err != nil {
		return wrap(err, "delete session %s", id)
	}
	db.revoked(ctx, memstore.Revocation{SessionID: id})
	return nil
}

// CreateSessionToken implements memstore.SessionStorage, checking q by
// withinQuota. The session's row stays locked (FOR SHARE) until the token
// is in, so that an archive is wholly before it (refused) or after it.
func (db *DB) CreateSessionToken(ctx context.Context, workspaceID, sessionID string, ttl time.Duration, q memstore.Quota) (*memstore.SessionToken, string, error) {
	var (
		tok    *memstore.SessionToken
		secret string
	)
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		s, err := getSession(ctx, tx, workspaceID, sessionID, "FOR SHARE")
		if err != nil {
			return err
		}
		if err := s.TakesTokens(); err != nil {
			return err
		}
		// The live tokens: neither revoked nor expired at now, in two
		// ranges of session_tokens_live.
		now := db.now()
		if err := withinQuota(ctx, tx, q, "tokens "+sessionID, `SELECT 1 FROM session_tokens WHERE session_id = $1 AND revoked_at IS NULL AND expires_at IS NULL
			UNION ALL SELECT 1 FROM session_tokens WHERE session_id = $1 AND revoked_at IS NULL AND expires_at > $2`, sessionID, keyset.Nanos(now)); err != nil {
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

func errTokenNotFound(id string) *memstore.Error {
	return memstore.Errorf(memstore.ENotFound, "session token %s not found", id)
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
			return notFound(err, memstore.Errorf(memstore.ENotFound, "session %s not found", sessionID))
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
	if len(page.Items) > n {
		page.Items = page.Items[:n]
		last := page.Items[n-1]
		page.Next = keyset.Cursor{Kind: keyset.Tokens, Time: keyset.Nanos(last.CreatedAt), Key: last.ID}.String()
	}
	return page, nil
}

// SessionToken implements memstore.SessionStorage.
func (db *DB) SessionToken(ctx context.Context, workspaceID, id string) (*memstore.SessionToken, error) {
	t, err := scanToken(db.pool.QueryRow(ctx, `SELECT `+tokenColumns+` FROM session_tokens WHERE id = $1 AND workspace_id = $2`, id, workspaceID))
	if err != nil {
		return nil, wrap(notFound(err, errTokenNotFound(id)), "get session token %s", id)
	}
	return t, nil
}

// RevokeSessionToken implements memstore.SessionStorage: one statement,
// which keeps the first revocation's time.
func (db *DB) RevokeSessionToken(ctx context.Context, workspaceID, id string) (*memstore.SessionToken, error) {
	t, err := scanToken(db.pool.QueryRow(ctx, `UPDATE session_tokens SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2 AND workspace_id = $3 RETURNING `+tokenColumns,
		keyset.Nanos(db.now()), id, workspaceID))
	if err != nil {
		return nil, wrap(notFound(err, errTokenNotFound(id)), "revoke session token %s", id)
	}
	db.revoked(ctx, memstore.Revocation{SessionID: t.SessionID, TokenID: id})
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
	err := db.inTx(ctx, readTx, func(tx pgx.Tx) (err error) {
		t, err = scanToken(tx.QueryRow(ctx, `SELECT `+tokenColumns+` FROM session_tokens WHERE secret_sha256 = $1`, memstore.HashSecret(secret)))
		if err != nil {
			return notFound(err, invalid)
		}
		if s, err = getSession(ctx, tx, t.WorkspaceID, t.SessionID, ""); err != nil {
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

package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/sqlread"
	"github.com/memstore/memstore/internal/sqlrow"
)

// Sessions are deleted only when asked to (DeleteSession); deleting a
// store leaves the sessions that attach it as they were (see
// migrations/0001_schema.sql).

// getSession reads a session of the workspace with its attachments
// (ENotFound), locking its row until tx ends when lock is set.
func getSession(ctx context.Context, tx pgx.Tx, workspaceID, id, lock string) (*memstore.Session, error) {
	return sqlread.Session(reader{ctx, tx}, dialect, workspaceID, id, lock)
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
	db.sessionsCommitted(ctx, t)
	return nil
}

// sessionsCommitted does what a committed transaction t of sessions (or
// dreams) leaves to do: tell this process's listeners of the credentials
// it revoked and of the session whose transcript it appended to.
func (db *DB) sessionsCommitted(ctx context.Context, t *sessionTx) {
	for _, r := range t.announced {
		db.revoked(ctx, r)
	}
	if t.evented != "" {
		db.evented(t.evented)
	}
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
	evented     string // the session whose transcript grew, told of once committed
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
	s.ID = t.db.ids.New(memstore.SessionIDPrefix, s.CreatedAt)
	return sqlrow.WriteSession(t.exec, dialect.Param, s, false, true)
}

func (t *sessionTx) UpdateSession(s *memstore.Session, attachments bool) error {
	return sqlrow.WriteSession(t.exec, dialect.Param, s, true, attachments)
}

// exec runs a statement of sqlrow's in t.
func (t *sessionTx) exec(query string, values ...any) error {
	_, err := t.tx.Exec(t.ctx, query, values...)
	return err
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
	_, err := t.tx.Exec(t.ctx, sqlrow.InsertToken(dialect.Param), sqlrow.TokenValues(tok, secretHash)...)
	return err
}

// RevokeToken is one statement, which keeps the first revocation's time.
func (t *sessionTx) RevokeToken(id string, at time.Time) (*memstore.SessionToken, error) {
	tok, err := sqlrow.ScanToken(t.tx.QueryRow(t.ctx, `UPDATE session_tokens SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2 AND workspace_id = $3 RETURNING `+sqlrow.TokenColumns,
		keyset.Nanos(at), id, t.workspaceID))
	if err != nil {
		return nil, notFound(err, memstore.ErrTokenNotFound(id))
	}
	return tok, nil
}

func (t *sessionTx) TranscriptEnd(sessionID string) (seq, size int64, err error) {
	return sqlread.TranscriptEnd(reader{t.ctx, t.tx}, dialect, sessionID)
}

func (t *sessionTx) ToolUseEvent(sessionID, toolUseID string) (string, error) {
	return sqlread.ToolUseEvent(reader{t.ctx, t.tx}, dialect, sessionID, toolUseID)
}

// AppendEvent relies on the session's row, locked by the transaction's
// read of it (Session), to make the appends of a session wait for one
// another; the primary key refuses a number taken twice all the same.
func (t *sessionTx) AppendEvent(e *memstore.SessionEvent) error {
	e.ID = t.db.ids.New(memstore.SessionEventIDPrefix, e.ProcessedAt)
	if err := t.exec(sqlrow.InsertSessionEvent(dialect.Param), sqlrow.SessionEventValues(e)...); err != nil {
		return err
	}
	t.evented = e.SessionID
	return nil
}

// Announce keeps r for WriteSessions to tell once committed: a NOTIFY
// sent after the commit, so that a failed one does not undo the change.
func (t *sessionTx) Announce(r memstore.Revocation) error {
	t.announced = append(t.announced, r)
	return nil
}

package sqlite

import (
	"context"
	"log/slog"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sqlread"
	"github.com/memstore/memstore/internal/sqlrow"
)

// Sessions are deleted only when asked to (DeleteSession); deleting a
// store leaves the sessions that attach it as they were (see
// migrations/0001_schema.sql).

// getSession reads a session of the workspace with its attachments
// (ENotFound).
func getSession(ctx context.Context, tx *txn, workspaceID, id string) (*memstore.Session, error) {
	return sqlread.Session(reader{ctx, tx}, dialect, workspaceID, id, "")
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
	db.sessionsCommitted(ctx, t)
	return nil
}

// sessionsCommitted does what a committed transaction t of sessions (or
// dreams) leaves to do: tell this process's listeners of the credentials
// it revoked, and erase the content of the sessions it deleted.
func (db *DB) sessionsCommitted(ctx context.Context, t *sessionTx) {
	for _, r := range t.announced {
		db.Revoked(r)
	}
	for _, id := range t.deleted {
		db.eraseDeleted(ctx, slog.String("session", id))
	}
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
	s.ID = t.db.ids.New(memstore.SessionIDPrefix, s.CreatedAt)
	return sqlrow.WriteSession(t.exec, dialect.Param, s, false, true)
}

func (t *sessionTx) UpdateSession(s *memstore.Session, attachments bool) error {
	return sqlrow.WriteSession(t.exec, dialect.Param, s, true, attachments)
}

// exec runs a statement of sqlrow's in t, its values as SQLite keeps them.
func (t *sessionTx) exec(query string, values ...any) error {
	_, err := t.tx.exec(t.ctx, query, args(values)...)
	return err
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
	_, err := t.tx.exec(t.ctx, sqlrow.InsertToken(dialect.Param), args(sqlrow.TokenValues(tok, secretHash))...)
	return err
}

func (t *sessionTx) RevokeToken(id string, at time.Time) (*memstore.SessionToken, error) {
	if _, err := t.tx.exec(t.ctx, `UPDATE session_tokens SET revoked_at = ? WHERE id = ? AND workspace_id = ? AND revoked_at IS NULL`,
		nanos(at), id, t.workspaceID); err != nil {
		return nil, err
	}
	return sqlread.SessionToken(reader{t.ctx, t.tx}, dialect, t.workspaceID, id)
}

func (t *sessionTx) TranscriptEnd(sessionID string) (seq, size int64, err error) {
	return sqlread.TranscriptEnd(reader{t.ctx, t.tx}, dialect, sessionID)
}

func (t *sessionTx) ToolUseEvent(sessionID, toolUseID string) (string, error) {
	return sqlread.ToolUseEvent(reader{t.ctx, t.tx}, dialect, sessionID, toolUseID)
}

// AppendEvent notes the session for the notice once the batch commits
// (the writer's notifyEvents), as a store's events are.
func (t *sessionTx) AppendEvent(e *memstore.SessionEvent) error {
	e.ID = t.db.ids.New(memstore.SessionEventIDPrefix, e.ProcessedAt)
	if err := t.exec(sqlrow.InsertSessionEvent(dialect.Param), sqlrow.SessionEventValues(e)...); err != nil {
		return err
	}
	t.tx.evented = append(t.tx.evented, e.SessionID)
	return nil
}

// Announce notes r in the revocations table, for the other processes on
// the file; WriteSessions tells this process once committed.
func (t *sessionTx) Announce(r memstore.Revocation) error {
	t.announced = append(t.announced, r)
	return t.db.noteRevocation(t.ctx, t.tx, r)
}

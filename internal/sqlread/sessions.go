package sqlread

import (
	"context"

	"github.com/memstore/memstore"
)

// SessionReads is the reads of memstore.SessionStorage over a backend's
// read transactions, which both SQL backends embed: they differ only in
// how a transaction begins and how a failure is told.
type SessionReads struct {
	Dialect *Dialect
	// Read begins a read transaction of one snapshot.
	Read func(ctx context.Context) Read
	// Wrap gives a failure the backend's error and says what failed.
	Wrap func(err error, format string, args ...any) error
}

// Session implements memstore.SessionStorage.
func (r SessionReads) Session(ctx context.Context, workspaceID, id string) (s *memstore.Session, err error) {
	err = r.Read(ctx)(func(tx Tx) error {
		s, err = Session(tx, r.Dialect, workspaceID, id, "")
		return err
	})
	return s, r.Wrap(err, "get session %s", id)
}

// Sessions implements memstore.SessionStorage.
func (r SessionReads) Sessions(ctx context.Context, workspaceID string, f memstore.SessionFilter) (memstore.Page[memstore.Session], error) {
	page, err := Sessions(r.Read(ctx), r.Dialect, workspaceID, f)
	return page, r.Wrap(err, "list sessions")
}

// SessionTokens implements memstore.SessionStorage.
func (r SessionReads) SessionTokens(ctx context.Context, workspaceID, sessionID string, f memstore.SessionTokenFilter) (memstore.Page[memstore.SessionToken], error) {
	page, err := SessionTokens(r.Read(ctx), r.Dialect, workspaceID, sessionID, f)
	return page, r.Wrap(err, "list tokens of session %s", sessionID)
}

// SessionToken implements memstore.SessionStorage.
func (r SessionReads) SessionToken(ctx context.Context, workspaceID, id string) (t *memstore.SessionToken, err error) {
	err = r.Read(ctx)(func(tx Tx) error {
		t, err = SessionToken(tx, r.Dialect, workspaceID, id)
		return err
	})
	return t, r.Wrap(err, "get session token %s", id)
}

// SessionTokenBySecret implements memstore.SessionStorage: one indexed
// lookup by the secret's hash, then the session, in one snapshot. Nothing
// is written: unlike an API key's, a token's last use is not recorded.
func (r SessionReads) SessionTokenBySecret(ctx context.Context, secretHash string) (t *memstore.SessionToken, s *memstore.Session, err error) {
	err = r.Read(ctx)(func(tx Tx) error {
		t, s, err = TokenBySecret(tx, r.Dialect, secretHash)
		return err
	})
	return t, s, r.Wrap(err, "authenticate session")
}

// SessionEvents implements memstore.SessionEventStorage.
func (r SessionReads) SessionEvents(ctx context.Context, workspaceID, sessionID string, f memstore.SessionEventFilter) (memstore.Page[memstore.SessionEvent], error) {
	page, err := SessionEvents(r.Read(ctx), r.Dialect, workspaceID, sessionID, f)
	return page, r.Wrap(err, "list events of session %s", sessionID)
}

// LastEventSeq is the number of a session's last event, 0 for none, read
// in tx (the session's write transaction).
func LastEventSeq(tx Tx, d *Dialect, sessionID string) (int64, error) {
	var seq int64
	err := tx.QueryRow(d.SQL(`SELECT coalesce((SELECT seq FROM session_events WHERE session_id = $1 ORDER BY seq DESC LIMIT 1), 0)`), sessionID).Scan(&seq)
	return seq, err
}

// ToolUseEvent is the ID of the latest agent.tool_use event of a session
// whose block ID was toolUseID, "" when none, read in tx.
func ToolUseEvent(tx Tx, d *Dialect, sessionID, toolUseID string) (string, error) {
	var id string
	err := tx.QueryRow(d.SQL(`SELECT coalesce((SELECT id FROM session_events WHERE session_id = $1 AND tool_use_id = $2 ORDER BY seq DESC LIMIT 1), '')`), sessionID, toolUseID).Scan(&id)
	return id, err
}

package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/ids"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/sqlread"
	"github.com/memstore/memstore/internal/sqlrow"
)

// Dream implements memstore.DreamStorage: one statement.
func (db *DB) Dream(ctx context.Context, workspaceID, id string) (*memstore.Dream, error) {
	d, err := sqlread.Dream(reader{ctx, db.pool}, dialect, workspaceID, id, "")
	return d, wrap(err, "get dream %s", id)
}

// DreamByID implements memstore.DreamStorage: one statement.
func (db *DB) DreamByID(ctx context.Context, id string) (*memstore.Dream, error) {
	d, err := sqlread.DreamByID(reader{ctx, db.pool}, dialect, id)
	return d, wrap(err, "get dream %s", id)
}

// Dreams implements memstore.DreamStorage (sqlread.Dreams), in one
// statement.
func (db *DB) Dreams(ctx context.Context, workspaceID string, f memstore.DreamFilter) (memstore.Page[memstore.Dream], error) {
	page, err := sqlread.Dreams(func(fn func(sqlread.Tx) error) error { return fn(reader{ctx, db.pool}) }, dialect, workspaceID, f)
	return page, wrap(err, "list dreams")
}

// WriteDreams implements memstore.DreamStorage: fn runs in one
// transaction over a dreamTx, which is a sessionTx too (WriteSessions):
// a dream it reads is locked (FOR NO KEY UPDATE) until it ends.
func (db *DB) WriteDreams(ctx context.Context, workspaceID string, fn func(memstore.DreamTx) error) error {
	var t *dreamTx
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		t = &dreamTx{sessionTx: &sessionTx{ctx: ctx, db: db, tx: tx, workspaceID: workspaceID}}
		return fn(t)
	})
	if err != nil {
		return wrap(err, "change dreams")
	}
	db.sessionsCommitted(ctx, t.sessionTx)
	return nil
}

// ClaimDream implements memstore.DreamStorage in one statement: the
// dream chosen is locked with SKIP LOCKED, so that the workers of
// several replicas claiming at once take different dreams, and one
// whose claim committed meanwhile is read again and passed over (its
// lease no longer expired).
func (db *DB) ClaimDream(ctx context.Context, owner string, now, until time.Time) (*memstore.Dream, error) {
	var d *memstore.Dream
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		var err error
		d, err = sqlrow.ScanDream(tx.QueryRow(ctx, `WITH c AS (
				SELECT d.id FROM dreams d
				WHERE (d.status IN ('pending', 'running') OR (d.status = 'canceled' AND d.owner <> '')) AND (d.lease_until IS NULL OR d.lease_until <= $3)
				ORDER BY (SELECT count(*) FROM dreams h WHERE h.workspace_id = d.workspace_id AND h.status IN ('pending', 'running') AND h.lease_until > $3),
					d.created_at, d.id
				LIMIT 1 FOR UPDATE OF d SKIP LOCKED)
			UPDATE dreams SET owner = $1, lease_until = $2, attempts = attempts + 1, updated_at = $3 FROM c WHERE dreams.id = c.id
			RETURNING `+sqlrow.Prefixed("dreams.", sqlrow.DreamColumns), owner, keyset.Nanos(until), keyset.Nanos(now)))
		if errors.Is(err, pgx.ErrNoRows) {
			d, err = nil, nil
		}
		return err
	})
	return d, wrap(err, "claim a dream")
}

// A dreamTx is a memstore.DreamTx over one transaction.
type dreamTx struct{ *sessionTx }

func (t *dreamTx) Dream(id string) (*memstore.Dream, error) {
	return sqlread.Dream(reader{t.ctx, t.tx}, dialect, t.workspaceID, id, "FOR NO KEY UPDATE")
}

func (t *dreamTx) LiveDreams(max int) (int, error) {
	return countRows(t.ctx, t.tx, max, "dreams "+t.workspaceID, `SELECT 1 FROM dreams WHERE workspace_id = $1 AND status IN ('pending', 'running')`, t.workspaceID)
}

// UpdatingDream is read under the workspace's lock of LiveDreams, which
// a create takes first, so that two creates cannot both find none.
func (t *dreamTx) UpdatingDream(storeID string, now time.Time) (string, error) {
	return sqlread.UpdatingDream(reader{t.ctx, t.tx}, dialect, t.workspaceID, storeID, now)
}

func (t *dreamTx) CreateDream(d *memstore.Dream) error {
	d.ID = t.db.ids.New(memstore.DreamIDPrefix, d.CreatedAt)
	v, err := sqlrow.DreamValues(d)
	if err == nil {
		_, err = t.tx.Exec(t.ctx, sqlrow.InsertDream(dialect.Param), v...)
	}
	return err
}

func (t *dreamTx) UpdateDream(d *memstore.Dream) error {
	v, err := sqlrow.UpdateDreamValues(d)
	if err == nil {
		_, err = t.tx.Exec(t.ctx, sqlrow.UpdateDream(dialect.Param), v...)
	}
	return err
}

func (t *dreamTx) CreateStore(s *memstore.Store, q memstore.Quota) error {
	s.ID = t.db.ids.New(memstore.StoreIDPrefix, s.CreatedAt)
	return insertStore(t.ctx, t.tx, t.workspaceID, s, q)
}

// QueueWebhookEvent inserts the deliveries directly, with the event's
// ID derived from the dream (ids.DreamEvent).
func (t *dreamTx) QueueWebhookEvent(e memstore.WebhookEvent) error {
	at := keyset.Nanos(e.CreatedAt)
	_, err := t.tx.Exec(t.ctx, `INSERT INTO webhook_deliveries (endpoint_id, event_id, workspace_id, type, store_id, memory_id, version_id, event_at,
			state, attempts, next_attempt_at, last_attempt_at, last_status, last_error, dream_id)
		SELECT w.id, $1, $2, $3, $4, '', '', $5, 'pending', 0, $5, 0, 0, '', $6
		FROM webhook_endpoints w
		WHERE w.workspace_id = $2 AND w.state = 'enabled' AND $3 = ANY (w.enabled_events)`,
		ids.DreamEvent(e.DreamID, e.Type, e.CreatedAt), e.WorkspaceID, e.Type, e.StoreID, at, e.DreamID)
	return err
}

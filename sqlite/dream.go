package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/ids"
	"github.com/memstore/memstore/internal/sqlread"
	"github.com/memstore/memstore/internal/sqlrow"
)

// Dream implements memstore.DreamStorage.
func (db *DB) Dream(ctx context.Context, workspaceID, id string) (*memstore.Dream, error) {
	var d *memstore.Dream
	err := db.read(ctx, func(tx *txn) (err error) {
		d, err = sqlread.Dream(reader{ctx, tx}, dialect, workspaceID, id, "")
		return err
	})
	return d, wrap(err, "get dream %s", id)
}

// DreamByID implements memstore.DreamStorage.
func (db *DB) DreamByID(ctx context.Context, id string) (*memstore.Dream, error) {
	var d *memstore.Dream
	err := db.read(ctx, func(tx *txn) (err error) {
		d, err = sqlread.DreamByID(reader{ctx, tx}, dialect, id)
		return err
	})
	return d, wrap(err, "get dream %s", id)
}

// Dreams implements memstore.DreamStorage (sqlread.Dreams).
func (db *DB) Dreams(ctx context.Context, workspaceID string, f memstore.DreamFilter) (memstore.Page[memstore.Dream], error) {
	page, err := sqlread.Dreams(db.reads(ctx), dialect, workspaceID, f)
	return page, wrap(err, "list dreams")
}

// WriteDreams implements memstore.DreamStorage: fn runs as a write
// closure of the writer, which runs one transaction at a time, over a
// dreamTx, which is a sessionTx too (WriteSessions).
func (db *DB) WriteDreams(ctx context.Context, workspaceID string, fn func(memstore.DreamTx) error) error {
	var t *dreamTx
	err := db.write(ctx, func(tx *txn) error {
		t = &dreamTx{sessionTx: &sessionTx{ctx: ctx, db: db, tx: tx, workspaceID: workspaceID}}
		return fn(t)
	})
	if err != nil {
		return wrap(err, "change dreams")
	}
	db.sessionsCommitted(ctx, t.sessionTx)
	return nil
}

// ClaimDream implements memstore.DreamStorage in one statement of the
// writer, which runs one claim at a time: no two take the same dream.
func (db *DB) ClaimDream(ctx context.Context, owner string, now, until time.Time) (*memstore.Dream, error) {
	var d *memstore.Dream
	err := db.write(ctx, func(tx *txn) error {
		var err error
		d, err = sqlrow.ScanDream(tx.queryRow(ctx, `UPDATE dreams SET owner = ?1, lease_until = ?2, attempts = attempts + 1, updated_at = ?3
			WHERE id = (SELECT d.id FROM dreams d
				WHERE (d.status IN ('pending', 'running') OR (d.status = 'canceled' AND d.owner <> '')) AND (d.lease_until IS NULL OR d.lease_until <= ?3)
				ORDER BY (SELECT count(*) FROM dreams h WHERE h.workspace_id = d.workspace_id AND h.status IN ('pending', 'running') AND h.lease_until > ?3),
					d.created_at, d.id
				LIMIT 1)
			RETURNING `+sqlrow.DreamColumns, owner, nanos(until), nanos(now)))
		if errors.Is(err, sql.ErrNoRows) {
			d, err = nil, nil
		}
		return err
	})
	return d, wrap(err, "claim a dream")
}

// A dreamTx is a memstore.DreamTx over one transaction of the writer.
type dreamTx struct{ *sessionTx }

func (t *dreamTx) Dream(id string) (*memstore.Dream, error) {
	return sqlread.Dream(reader{t.ctx, t.tx}, dialect, t.workspaceID, id, "")
}

func (t *dreamTx) LiveDreams(max int) (int, error) {
	return countRows(t.ctx, t.tx, max, `SELECT 1 FROM dreams WHERE workspace_id = ? AND status IN ('pending', 'running')`, t.workspaceID)
}

func (t *dreamTx) UpdatingDream(storeID string, now time.Time) (string, error) {
	return sqlread.UpdatingDream(reader{t.ctx, t.tx}, dialect, t.workspaceID, storeID, now)
}

func (t *dreamTx) CreateDream(d *memstore.Dream) error {
	d.ID = t.db.ids.New(memstore.DreamIDPrefix, d.CreatedAt)
	v, err := sqlrow.DreamValues(d)
	if err == nil {
		_, err = t.tx.exec(t.ctx, sqlrow.InsertDream(dialect.Param), args(v)...)
	}
	return err
}

func (t *dreamTx) UpdateDream(d *memstore.Dream) error {
	v, err := sqlrow.UpdateDreamValues(d)
	if err == nil {
		_, err = t.tx.exec(t.ctx, sqlrow.UpdateDream(dialect.Param), args(v)...)
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
	at := nanos(e.CreatedAt)
	_, err := t.tx.exec(t.ctx, `INSERT INTO webhook_deliveries (`+deliveryColumns+`)
		SELECT w.id, ?, ?, ?, ?, '', '', ?, 'pending', 0, ?, 0, 0, '', ?
		FROM webhook_endpoints w
		WHERE w.workspace_id = ? AND w.state = 'enabled' AND instr(',' || w.enabled_events || ',', ?) > 0`,
		ids.DreamEvent(e.DreamID, e.Type, e.CreatedAt), e.WorkspaceID, e.Type, e.StoreID, at, at, e.DreamID,
		e.WorkspaceID, ","+strings.TrimSpace(e.Type)+",")
	return err
}

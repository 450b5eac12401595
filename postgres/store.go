package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/sqlread"
	"github.com/memstore/memstore/internal/sqlrow"
)

// getStore reads a store of the workspace (ENotFound), locking its row
// until tx ends when lock is set (FOR UPDATE, FOR SHARE, ...).
func getStore(ctx context.Context, tx pgx.Tx, workspaceID, id, lock string) (*memstore.Store, error) {
	return sqlread.Store(reader{ctx, tx}, dialect, workspaceID, id, lock)
}

// CreateStore implements memstore.StoreStorage, checking q by withinQuota.
func (db *DB) CreateStore(ctx context.Context, workspaceID string, c memstore.StoreCreate, q memstore.Quota) (*memstore.Store, error) {
	now := db.stamp()
	s := memstore.NewStore(db.ids.New(memstore.StoreIDPrefix, now), workspaceID, c, now)
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) error { return insertStore(ctx, tx, workspaceID, s, q) })
	if err != nil {
		return nil, wrap(err, "create store")
	}
	return s, nil
}

// insertStore adds store s to the workspace within q, which counts the
// archived stores too: they keep their memories.
func insertStore(ctx context.Context, tx pgx.Tx, workspaceID string, s *memstore.Store, q memstore.Quota) error {
	if err := withinQuota(ctx, tx, q, "stores "+workspaceID, `SELECT 1 FROM stores WHERE workspace_id = $1`, workspaceID); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, sqlrow.InsertStore(dialect.Param), sqlrow.StoreValues(s)...)
	return err
}

// Store implements memstore.StoreStorage: one statement.
func (db *DB) Store(ctx context.Context, workspaceID, id string) (*memstore.Store, error) {
	s, err := sqlread.Store(reader{ctx, db.pool}, dialect, workspaceID, id, "")
	return s, wrap(err, "get store %s", id)
}

// Stores implements memstore.StoreStorage (sqlread.Stores), in single
// statements.
func (db *DB) Stores(ctx context.Context, workspaceID string, f memstore.StoreFilter) (memstore.Page[memstore.Store], error) {
	page, err := sqlread.Stores(func(fn func(sqlread.Tx) error) error { return fn(reader{ctx, db.pool}) }, dialect, workspaceID, f)
	return page, wrap(err, "list stores")
}

// WriteStore implements memstore.StoreStorage: fn runs in one
// transaction that holds the store's row locked (FOR NO KEY UPDATE), on
// every process.
func (db *DB) WriteStore(ctx context.Context, workspaceID, id string, fn func(memstore.StoreTx) error) error {
	var t *storeTx
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		s, err := getStore(ctx, tx, workspaceID, id, "FOR NO KEY UPDATE")
		if err != nil {
			return err
		}
		t = &storeTx{ctx: ctx, db: db, tx: tx, s: s}
		return fn(t)
	})
	if err == nil && t.archived {
		db.evented(id)
	}
	return wrap(err, "change store %s", id)
}

// A storeTx is a memstore.StoreTx over one transaction.
type storeTx struct {
	ctx      context.Context
	db       *DB
	tx       pgx.Tx
	s        *memstore.Store
	archived bool // the store.archived event is to be told once committed
}

func (t *storeTx) Store() *memstore.Store { return t.s }

func (t *storeTx) Update(s *memstore.Store) error {
	s.UpdatedAt = t.db.stamp()
	values, err := sqlrow.UpdateStoreValues(s)
	if err == nil {
		_, err = t.tx.Exec(t.ctx, sqlrow.UpdateStore(dialect.Param), values...)
	}
	return err
}

// Archive sets archived_at and updated_at, and adds the event, in one
// round trip.
func (t *storeTx) Archive(s *memstore.Store, by memstore.Actor) error {
	now := t.db.stamp()
	var b pgx.Batch
	b.Queue(`UPDATE stores SET archived_at = $1, updated_at = $1 WHERE id = $2`, keyset.Nanos(now), s.ID)
	b.Queue(insertEvent("$1", "$2", "NULL", "$3", "$4", "$5"), s.ID, string(memstore.EventStoreArchived), string(by.Type), by.ID, keyset.Nanos(now))
	if err := t.tx.SendBatch(t.ctx, &b).Close(); err != nil {
		return err
	}
	s.ArchivedAt, s.UpdatedAt = &now, now
	t.archived = true
	return nil
}

// DeleteStore implements memstore.StoreStorage; the foreign keys cascade
// to the store's memories and versions. The webhook deliveries its feed
// still owes are made first: those of the feed as it stands a page per
// transaction, then those of the events added since in the deleting
// transaction, with the store's row locked so that no change adds to the
// feed meanwhile.
func (db *DB) DeleteStore(ctx context.Context, workspaceID, id string) error {
	if err := db.drainFeed(ctx, workspaceID, id); err != nil {
		return wrap(err, "delete store %s", id)
	}
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		if _, err := getStore(ctx, tx, workspaceID, id, "FOR UPDATE"); err != nil {
			return err
		}
		if err := flushFeed(ctx, tx, workspaceID, id, db.now()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM stores WHERE id = $1`, id)
		return err
	})
	if err == nil {
		// Its feed is gone: the notice tells its streams on every
		// process, which read it and end.
		db.evented(id)
		db.vectors.DropStore(workspaceID, id)
	}
	return wrap(err, "delete store %s", id)
}

// collect scans every row of rows with scan, and closes rows.
func collect[T any](rows pgx.Rows, scan func(row) (*T, error)) ([]T, error) {
	defer rows.Close()
	return sqlrow.Collect(rows, scan)
}

package sqlite

import (
	"context"
	"log/slog"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sqlread"
	"github.com/memstore/memstore/internal/sqlrow"
)

// getStore reads a store of the workspace (ENotFound).
func getStore(ctx context.Context, tx *txn, workspaceID, id string) (*memstore.Store, error) {
	return sqlread.Store(reader{ctx, tx}, dialect, workspaceID, id, "")
}

// CreateStore implements memstore.StoreStorage, checking q by withinQuota.
func (db *DB) CreateStore(ctx context.Context, workspaceID string, c memstore.StoreCreate, q memstore.Quota) (*memstore.Store, error) {
	now := fromNanos(nanos(db.now()))
	s := memstore.NewStore(db.ids.New(memstore.StoreIDPrefix, now), workspaceID, c, now)
	err := db.write(ctx, func(tx *txn) error { return insertStore(ctx, tx, workspaceID, s, q) })
	if err != nil {
		return nil, wrap(err, "create store")
	}
	return s, nil
}

// insertStore adds store s to the workspace within q, which counts the
// archived stores too: they keep their memories.
func insertStore(ctx context.Context, tx *txn, workspaceID string, s *memstore.Store, q memstore.Quota) error {
	if err := withinQuota(ctx, tx, q, `SELECT 1 FROM stores WHERE workspace_id = ?`, workspaceID); err != nil {
		return err
	}
	_, err := tx.exec(ctx, sqlrow.InsertStore(dialect.Param), args(sqlrow.StoreValues(s))...)
	return err
}

// Store implements memstore.StoreStorage.
func (db *DB) Store(ctx context.Context, workspaceID, id string) (*memstore.Store, error) {
	var s *memstore.Store
	err := db.read(ctx, func(tx *txn) (err error) {
		s, err = getStore(ctx, tx, workspaceID, id)
		return err
	})
	return s, wrap(err, "get store %s", id)
}

// Stores implements memstore.StoreStorage (sqlread.Stores).
func (db *DB) Stores(ctx context.Context, workspaceID string, f memstore.StoreFilter) (memstore.Page[memstore.Store], error) {
	page, err := sqlread.Stores(db.reads(ctx), dialect, workspaceID, f)
	return page, wrap(err, "list stores")
}

// WriteStore implements memstore.StoreStorage: fn runs as a write
// closure of the writer (see DB.write), which runs one transaction at a
// time: the store cannot change before it commits.
func (db *DB) WriteStore(ctx context.Context, workspaceID, id string, fn func(memstore.StoreTx) error) error {
	err := db.write(ctx, func(tx *txn) error {
		s, err := getStore(ctx, tx, workspaceID, id)
		if err != nil {
			return err
		}
		return fn(&storeTx{ctx: ctx, db: db, tx: tx, s: s})
	})
	return wrap(err, "change store %s", id)
}

// A storeTx is a memstore.StoreTx over one transaction of the writer.
type storeTx struct {
	ctx context.Context
	db  *DB
	tx  *txn
	s   *memstore.Store
}

func (t *storeTx) Store() *memstore.Store { return t.s }

func (t *storeTx) Update(s *memstore.Store) error {
	s.UpdatedAt = fromNanos(nanos(t.db.now()))
	values, err := sqlrow.UpdateStoreValues(s)
	if err == nil {
		_, err = t.tx.exec(t.ctx, sqlrow.UpdateStore(dialect.Param), args(values)...)
	}
	return err
}

// Archive tells the writes after it in the same batch that the store is
// no longer live (storeChanged).
func (t *storeTx) Archive(s *memstore.Store, by memstore.Actor) error {
	now := fromNanos(nanos(t.db.now()))
	_, err := t.tx.exec(t.ctx, `UPDATE stores SET archived_at = ?1, updated_at = ?1 WHERE id = ?2`, nanos(now), s.ID)
	t.tx.storeChanged(s.ID)
	if err != nil {
		return err
	}
	s.ArchivedAt, s.UpdatedAt = &now, now
	return insertEvent(t.ctx, t.tx, s.ID, memstore.EventStoreArchived, "", by, now)
}

// DeleteStore implements memstore.StoreStorage; the foreign keys cascade
// to the store's memories and versions. The webhook deliveries its feed
// still owes are made first (drainPage).
//
// The deletion erases the store's content as a redaction does (package
// comment, Erasure): secure_delete zeroes the rows in the file, a
// checkpoint then empties the write-ahead log, which still holds the
// pages as they were, and the transaction that deletes asks for a purge
// of the search indexes, which also empties both logs once more. When the
// log stays busy, the deletion stands and the log is emptied in the
// background (eraseDeleted).
func (db *DB) DeleteStore(ctx context.Context, workspaceID, id string) error {
	for deleted := false; !deleted; {
		err := db.write(ctx, func(tx *txn) error {
			more, err := drainPage(ctx, tx, db.now(), drainStore, id, workspaceID)
			if err != nil || more {
				return err // the page alone, then again
			}
			deleted = true
			// The indexes only mark the entries of its memories deleted:
			// the purge drops them.
			if _, err := tx.exec(ctx, `INSERT INTO search_purge (id) SELECT 1 WHERE EXISTS (SELECT 1 FROM stores s JOIN versions v ON v.store_id = s.id
				WHERE s.id = ? AND s.workspace_id = ? AND v.content IS NOT NULL)
				ON CONFLICT DO UPDATE SET requests = requests + 1`, id, workspaceID); err != nil {
				return err
			}
			res, err := tx.exec(ctx, `DELETE FROM stores WHERE id = ? AND workspace_id = ?`, id, workspaceID)
			tx.storeChanged(id)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				return memstore.ErrStoreNotFound(id)
			}
			// Its feed is gone: the notice after the commit tells its
			// streams, which read it and end.
			tx.evented = append(tx.evented, id)
			return nil
		})
		if err != nil {
			return wrap(err, "delete store %s", id)
		}
	}
	db.vectors.DropStore(workspaceID, id)
	db.places.DropStore(workspaceID, id)
	db.eraseDeleted(ctx, slog.String("store", id))
	return nil
}

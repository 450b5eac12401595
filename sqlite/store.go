package sqlite

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sqlread"
)

// getStore reads a store of the workspace (ENotFound).
func getStore(ctx context.Context, tx *txn, workspaceID, id string) (*memstore.Store, error) {
	return sqlread.Store(reader{ctx, tx}, dialect, workspaceID, id, "")
}

// CreateStore implements memstore.StoreStorage, checking q by withinQuota.
func (db *DB) CreateStore(ctx context.Context, workspaceID string, c memstore.StoreCreate, q memstore.Quota) (*memstore.Store, error) {
	now := db.now()
	s := &memstore.Store{
		ID:          db.ids.New(memstore.StoreIDPrefix, now),
		WorkspaceID: workspaceID,
		Name:        c.Name,
		Description: c.Description,
		Metadata:    maps.Clone(c.Metadata),
		CreatedAt:   fromNanos(nanos(now)),
	}
	if s.Metadata == nil {
		s.Metadata = map[string]string{}
	}
	s.UpdatedAt = s.CreatedAt
	meta, err := json.Marshal(s.Metadata)
	if err != nil {
		return nil, err
	}
	err = db.write(ctx, func(tx *txn) error {
		// Archived stores count: they keep their memories.
		if err := withinQuota(ctx, tx, q, `SELECT 1 FROM stores WHERE workspace_id = ?`, workspaceID); err != nil {
			return err
		}
		_, err := tx.exec(ctx, `INSERT INTO stores (id, workspace_id, name, description, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			s.ID, workspaceID, s.Name, s.Description, string(meta), nanos(now), nanos(now))
		return err
	})
	if err != nil {
		return nil, wrap(err, "create store")
	}
	return s, nil
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

// UpdateStore implements memstore.StoreStorage. Metadata is a merge
// patch whose result must still hold at most 16 pairs.
func (db *DB) UpdateStore(ctx context.Context, workspaceID, id string, u memstore.StoreUpdate) (*memstore.Store, error) {
	var s *memstore.Store
	err := db.write(ctx, func(tx *txn) (err error) {
		if s, err = getStore(ctx, tx, workspaceID, id); err != nil {
			return err
		}
		if changed, err := u.Apply(s); err != nil || !changed {
			return err
		}
		b, err := json.Marshal(s.Metadata)
		if err != nil {
			return err
		}
		now := fromNanos(nanos(db.now()))
		if _, err := tx.exec(ctx, `UPDATE stores SET name = ?, description = ?, metadata = ?, updated_at = ? WHERE id = ?`,
			s.Name, s.Description, string(b), nanos(now), id); err != nil {
			return err
		}
		s.UpdatedAt = now
		return nil
	})
	if err != nil {
		return nil, wrap(err, "update store %s", id)
	}
	return s, nil
}

// ArchiveStore implements memstore.StoreStorage; the first archive sets
// both archived_at and updated_at and adds the store.archived event,
// later ones change nothing.
func (db *DB) ArchiveStore(ctx context.Context, workspaceID, id string, by memstore.Actor) (*memstore.Store, error) {
	var s *memstore.Store
	err := db.write(ctx, func(tx *txn) (err error) {
		if s, err = getStore(ctx, tx, workspaceID, id); err != nil || s.ArchivedAt != nil {
			return err
		}
		t, err := db.archive(ctx, tx, "stores", id)
		tx.storeChanged(id)
		if err != nil {
			return err
		}
		s.ArchivedAt, s.UpdatedAt = &t, t
		return insertEvent(ctx, tx, id, memstore.EventStoreArchived, "", by, t)
	})
	if err != nil {
		return nil, wrap(err, "archive store %s", id)
	}
	return s, nil
}

// archive sets archived_at and updated_at of row id of table (stores or
// sessions) to now, and returns now as stored.
func (db *DB) archive(ctx context.Context, tx *txn, table, id string) (time.Time, error) {
	now := nanos(db.now())
	_, err := tx.exec(ctx, `UPDATE `+table+` SET archived_at = ?, updated_at = ? WHERE id = ?`, now, now, id)
	return fromNanos(now), err
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
	db.eraseDeleted(ctx, slog.String("store", id))
	return nil
}

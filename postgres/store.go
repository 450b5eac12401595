package postgres

import (
	"context"
	"encoding/json"
	"maps"

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
	s := &memstore.Store{
		ID:          db.ids.New(memstore.StoreIDPrefix, now),
		WorkspaceID: workspaceID,
		Name:        c.Name,
		Description: c.Description,
		Metadata:    maps.Clone(c.Metadata),
		CreatedAt:   now,
		UpdatedAt:   now,
	}
	if s.Metadata == nil {
		s.Metadata = map[string]string{}
	}
	meta, err := json.Marshal(s.Metadata)
	if err != nil {
		return nil, err
	}
	err = db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		// Archived stores count: they keep their memories.
		if err := withinQuota(ctx, tx, q, "stores "+workspaceID, `SELECT 1 FROM stores WHERE workspace_id = $1`, workspaceID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO stores (id, workspace_id, name, description, metadata, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)`,
			s.ID, workspaceID, s.Name, []byte(s.Description), string(meta), keyset.Nanos(now))
		return err
	})
	if err != nil {
		return nil, wrap(err, "create store")
	}
	return s, nil
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

// UpdateStore implements memstore.StoreStorage: StoreUpdate.Apply's rule
// on the store's row, locked.
func (db *DB) UpdateStore(ctx context.Context, workspaceID, id string, u memstore.StoreUpdate) (*memstore.Store, error) {
	var s *memstore.Store
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) (err error) {
		if s, err = getStore(ctx, tx, workspaceID, id, "FOR NO KEY UPDATE"); err != nil {
			return err
		}
		if changed, err := u.Apply(s); err != nil || !changed {
			return err
		}
		b, err := json.Marshal(s.Metadata)
		if err != nil {
			return err
		}
		now := db.stamp()
		if _, err := tx.Exec(ctx, `UPDATE stores SET name = $1, description = $2, metadata = $3, updated_at = $4 WHERE id = $5`,
			s.Name, []byte(s.Description), string(b), keyset.Nanos(now), id); err != nil {
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
// both archived_at and updated_at, later ones change nothing.
func (db *DB) ArchiveStore(ctx context.Context, workspaceID, id string, by memstore.Actor) (*memstore.Store, error) {
	var s *memstore.Store
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) (err error) {
		if s, err = getStore(ctx, tx, workspaceID, id, "FOR NO KEY UPDATE"); err != nil || s.ArchivedAt != nil {
			return err
		}
		now := db.stamp()
		if _, err = tx.Exec(ctx, `UPDATE stores SET archived_at = $1, updated_at = $1 WHERE id = $2`, keyset.Nanos(now), id); err != nil {
			return err
		}
		s.ArchivedAt, s.UpdatedAt = &now, now
		_, err = tx.Exec(ctx, insertEvent("$1", "$2", "NULL", "$3", "$4", "$5"),
			id, string(memstore.EventStoreArchived), string(by.Type), by.ID, keyset.Nanos(now))
		return err
	})
	if err != nil {
		return nil, wrap(err, "archive store %s", id)
	}
	db.evented(id)
	return s, nil
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
	}
	return wrap(err, "delete store %s", id)
}

// collect scans every row of rows with scan, and closes rows.
func collect[T any](rows pgx.Rows, scan func(row) (*T, error)) ([]T, error) {
	defer rows.Close()
	return sqlrow.Collect(rows, scan)
}

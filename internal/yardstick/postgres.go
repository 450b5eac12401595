package yardstick

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memstore/memstore"
)

// The PostgreSQL engine writes each memory and its version in one
// statement, so one round trip and one commit, durable (synchronous
// commit, PostgreSQL's default), over pgx's pool with its cache of
// prepared statements, as memstore's backend uses it. No lock but the
// rows' own: two writes of one store run at once, which memstore's
// backend, keeping its change feed numbered in commit order, does not
// allow.
const pgSchema = `
CREATE TABLE IF NOT EXISTS stores (id text PRIMARY KEY, name text NOT NULL, created_at bigint NOT NULL);
CREATE TABLE IF NOT EXISTS memories (
	id text PRIMARY KEY,
	store_id text NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
	path text COLLATE "C" NOT NULL, content text NOT NULL, sha256 text NOT NULL, size bigint NOT NULL,
	version_id text NOT NULL, created_at bigint NOT NULL, updated_at bigint NOT NULL,
	UNIQUE (store_id, path));
CREATE TABLE IF NOT EXISTS versions (
	id text PRIMARY KEY,
	store_id text NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
	memory_id text NOT NULL, operation text NOT NULL, content text, sha256 text, created_at bigint NOT NULL);
CREATE INDEX IF NOT EXISTS versions_store ON versions (store_id);`

type pgEngine struct{ pool *pgxpool.Pool }

func openPostgres(ctx context.Context, url string) (*pgEngine, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, err
	}
	if _, err := pool.Exec(ctx, pgSchema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("set up the schema: %w", err)
	}
	return &pgEngine{pool: pool}, nil
}

func (e *pgEngine) close() error { e.pool.Close(); return nil }

func (e *pgEngine) createStore(ctx context.Context, s *memstore.Store) error {
	_, err := e.pool.Exec(ctx, `INSERT INTO stores (id, name, created_at) VALUES ($1, $2, $3)`, s.ID, s.Name, s.CreatedAt.UnixNano())
	return err
}

func (e *pgEngine) deleteStore(ctx context.Context, id string) error {
	tag, err := e.pool.Exec(ctx, `DELETE FROM stores WHERE id = $1`, id)
	if err == nil && tag.RowsAffected() == 0 {
		return memstore.ErrStoreNotFound(id)
	}
	return err
}

func (e *pgEngine) create(ctx context.Context, m *memstore.Memory) error {
	_, err := e.pool.Exec(ctx, `WITH m AS (
		INSERT INTO memories (id, store_id, path, content, sha256, size, version_id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING id)
		INSERT INTO versions (id, store_id, memory_id, operation, content, sha256, created_at)
		SELECT $7, $2, id, 'created', $4, $5, $8 FROM m`,
		m.ID, m.StoreID, m.Path, m.Content, m.ContentSHA256, m.ContentSize, m.VersionID, m.CreatedAt.UnixNano())
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "memories_store_id_path_key":
		var id string
		if err := e.pool.QueryRow(ctx, `SELECT id FROM memories WHERE store_id = $1 AND path = $2`, m.StoreID, m.Path).Scan(&id); err != nil {
			return err
		}
		return pathTaken(id, m.Path)
	case errors.As(err, &pe) && pe.Code == "23503":
		return memstore.ErrStoreNotFound(m.StoreID)
	}
	return err
}

func (e *pgEngine) update(ctx context.Context, m *memstore.Memory) error {
	var created int64
	err := e.pool.QueryRow(ctx, `WITH m AS (
		UPDATE memories SET content = $1, sha256 = $2, size = $3, version_id = $4, updated_at = $5
		WHERE id = $6 AND store_id = $7 RETURNING path, created_at),
		v AS (INSERT INTO versions (id, store_id, memory_id, operation, content, sha256, created_at)
		SELECT $4, $7, $6, 'modified', $1, $2, $5 FROM m)
		SELECT path, created_at FROM m`,
		m.Content, m.ContentSHA256, m.ContentSize, m.VersionID, m.UpdatedAt.UnixNano(), m.ID, m.StoreID).Scan(&m.Path, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return memstore.ErrMemoryNotFound(m.ID)
	} else if err != nil {
		return err
	}
	m.CreatedAt = time.Unix(0, created).UTC()
	return nil
}

func (e *pgEngine) delete(ctx context.Context, storeID, id, versionID string, at time.Time) error {
	tag, err := e.pool.Exec(ctx, `WITH m AS (DELETE FROM memories WHERE id = $1 AND store_id = $2 RETURNING id)
		INSERT INTO versions (id, store_id, memory_id, operation, created_at) SELECT $3, $2, id, 'deleted', $4 FROM m`,
		id, storeID, versionID, at.UnixNano())
	if err == nil && tag.RowsAffected() == 0 {
		return memstore.ErrMemoryNotFound(id)
	}
	return err
}

func (e *pgEngine) get(ctx context.Context, storeID, id string) (*memstore.Memory, error) {
	m := &memstore.Memory{ID: id, StoreID: storeID}
	var created, updated int64
	err := e.pool.QueryRow(ctx, `SELECT path, content, sha256, size, version_id, created_at, updated_at FROM memories WHERE id = $1 AND store_id = $2`, id, storeID).
		Scan(&m.Path, &m.Content, &m.ContentSHA256, &m.ContentSize, &m.VersionID, &created, &updated)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, memstore.ErrMemoryNotFound(id)
	} else if err != nil {
		return nil, err
	}
	m.CreatedAt, m.UpdatedAt = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
	return m, nil
}

func (e *pgEngine) list(ctx context.Context, storeID, after string, limit int) ([]memstore.Memory, error) {
	rows, err := e.pool.Query(ctx, `SELECT id, path, sha256, size, version_id, created_at, updated_at FROM memories
		WHERE store_id = $1 AND path > $2 ORDER BY path LIMIT $3`, storeID, after, limit)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (memstore.Memory, error) {
		m := memstore.Memory{StoreID: storeID}
		var created, updated int64
		err := r.Scan(&m.ID, &m.Path, &m.ContentSHA256, &m.ContentSize, &m.VersionID, &created, &updated)
		m.CreatedAt, m.UpdatedAt = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
		return m, err
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		var one int
		if err := e.pool.QueryRow(ctx, `SELECT 1 FROM stores WHERE id = $1`, storeID).Scan(&one); errors.Is(err, pgx.ErrNoRows) {
			return nil, memstore.ErrStoreNotFound(storeID)
		}
	}
	return out, nil
}

package yardstick

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/memstore/memstore"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Pragmas are memstore's SQLite settings of every connection (sqlite's
// connParams) and WriterPragmas those of its one writer besides; a test
// of package sqlite keeps them equal.
var (
	Pragmas       = []string{"busy_timeout(10000)", "journal_mode(WAL)", "foreign_keys(1)", "secure_delete(1)", "synchronous(NORMAL)", "temp_store(MEMORY)"}
	WriterPragmas = []string{"wal_autocheckpoint(10000)"}
)

// readConns is the read pool's size, memstore's.
const readConns = 4

const schema = `
CREATE TABLE IF NOT EXISTS stores (id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS memories (
	id TEXT PRIMARY KEY,
	store_id TEXT NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
	path TEXT NOT NULL, content TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL,
	version_id TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
	UNIQUE (store_id, path));
CREATE TABLE IF NOT EXISTS versions (
	id TEXT PRIMARY KEY,
	store_id TEXT NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
	memory_id TEXT NOT NULL, operation TEXT NOT NULL, content TEXT, sha256 TEXT, created_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS versions_store ON versions (store_id);`

// sqliteEngine writes through one connection, as memstore does, and
// reads through a pool.
type sqliteEngine struct{ w, r *sql.DB }

// DSN is the data source name of a connection to the file at path.
func DSN(path string, writer bool) string {
	q := url.Values{}
	for _, p := range Pragmas {
		q.Add("_pragma", p)
	}
	if writer {
		for _, p := range WriterPragmas {
			q.Add("_pragma", p)
		}
		q.Set("_txlock", "immediate")
	}
	return "file:" + path + "?" + q.Encode()
}

func openSQLite(ctx context.Context, path string) (*sqliteEngine, error) {
	w, err := sql.Open("sqlite", DSN(path, true))
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	if _, err := w.ExecContext(ctx, schema); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", DSN(path, false)+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(readConns)
	r.SetMaxIdleConns(readConns)
	r.SetConnMaxIdleTime(0)
	return &sqliteEngine{w: w, r: r}, nil
}

func (e *sqliteEngine) close() error { return errors.Join(e.r.Close(), e.w.Close()) }

// tx runs f in one write transaction.
func (e *sqliteEngine) tx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := e.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (e *sqliteEngine) createStore(ctx context.Context, s *memstore.Store) error {
	_, err := e.w.ExecContext(ctx, `INSERT INTO stores (id, name, created_at) VALUES (?, ?, ?)`, s.ID, s.Name, s.CreatedAt.UnixNano())
	return err
}

func (e *sqliteEngine) deleteStore(ctx context.Context, id string) error {
	res, err := e.w.ExecContext(ctx, `DELETE FROM stores WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return memstore.ErrStoreNotFound(id)
	}
	return nil
}

func (e *sqliteEngine) create(ctx context.Context, m *memstore.Memory) error {
	err := e.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO memories (id, store_id, path, content, sha256, size, version_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ID, m.StoreID, m.Path, m.Content, m.ContentSHA256, m.ContentSize, m.VersionID, m.CreatedAt.UnixNano(), m.UpdatedAt.UnixNano()); err != nil {
			return err
		}
		return addVersion(ctx, tx, m.VersionID, m.StoreID, m.ID, "created", &m.Content, &m.ContentSHA256, m.CreatedAt)
	})
	var se *sqlite.Error
	switch {
	case errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		var id string
		if err := e.r.QueryRowContext(ctx, `SELECT id FROM memories WHERE store_id = ? AND path = ?`, m.StoreID, m.Path).Scan(&id); err != nil {
			return err
		}
		return pathTaken(id, m.Path)
	case errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return memstore.ErrStoreNotFound(m.StoreID)
	}
	return err
}

func (e *sqliteEngine) update(ctx context.Context, m *memstore.Memory) error {
	return e.tx(ctx, func(tx *sql.Tx) error {
		var created int64
		err := tx.QueryRowContext(ctx, `UPDATE memories SET content = ?, sha256 = ?, size = ?, version_id = ?, updated_at = ? WHERE id = ? AND store_id = ? RETURNING path, created_at`,
			m.Content, m.ContentSHA256, m.ContentSize, m.VersionID, m.UpdatedAt.UnixNano(), m.ID, m.StoreID).Scan(&m.Path, &created)
		if errors.Is(err, sql.ErrNoRows) {
			return memstore.ErrMemoryNotFound(m.ID)
		} else if err != nil {
			return err
		}
		m.CreatedAt = time.Unix(0, created).UTC()
		return addVersion(ctx, tx, m.VersionID, m.StoreID, m.ID, "modified", &m.Content, &m.ContentSHA256, m.UpdatedAt)
	})
}

func (e *sqliteEngine) delete(ctx context.Context, storeID, id, versionID string, at time.Time) error {
	return e.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE id = ? AND store_id = ?`, id, storeID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return memstore.ErrMemoryNotFound(id)
		}
		return addVersion(ctx, tx, versionID, storeID, id, "deleted", nil, nil, at)
	})
}

func addVersion(ctx context.Context, tx *sql.Tx, id, storeID, memoryID, op string, content, sha *string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO versions (id, store_id, memory_id, operation, content, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		id, storeID, memoryID, op, content, sha, at.UnixNano())
	return err
}

func (e *sqliteEngine) get(ctx context.Context, storeID, id string) (*memstore.Memory, error) {
	m := &memstore.Memory{ID: id, StoreID: storeID}
	var created, updated int64
	err := e.r.QueryRowContext(ctx, `SELECT path, content, sha256, size, version_id, created_at, updated_at FROM memories WHERE id = ? AND store_id = ?`, id, storeID).
		Scan(&m.Path, &m.Content, &m.ContentSHA256, &m.ContentSize, &m.VersionID, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memstore.ErrMemoryNotFound(id)
	} else if err != nil {
		return nil, err
	}
	m.CreatedAt, m.UpdatedAt = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
	return m, nil
}

func (e *sqliteEngine) list(ctx context.Context, storeID, after string, limit int) ([]memstore.Memory, error) {
	rows, err := e.r.QueryContext(ctx, `SELECT id, path, sha256, size, version_id, created_at, updated_at FROM memories WHERE store_id = ? AND path > ? ORDER BY path LIMIT ?`, storeID, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []memstore.Memory
	for rows.Next() {
		m := memstore.Memory{StoreID: storeID}
		var created, updated int64
		if err := rows.Scan(&m.ID, &m.Path, &m.ContentSHA256, &m.ContentSize, &m.VersionID, &created, &updated); err != nil {
			return nil, err
		}
		m.CreatedAt, m.UpdatedAt = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		var one int
		if err := e.r.QueryRowContext(ctx, `SELECT 1 FROM stores WHERE id = ?`, storeID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return nil, memstore.ErrStoreNotFound(storeID)
		}
	}
	return out, nil
}

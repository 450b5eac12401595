package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sqlrow"
)

// Now implements memstore.KeyStorage and memstore.SessionStorage: the
// DB's clock, to the nanosecond it keeps.
func (db *DB) Now() time.Time { return fromNanos(nanos(db.now())) }

// CreateWorkspace implements memstore.KeyStorage.
func (db *DB) CreateWorkspace(ctx context.Context, name string) (*memstore.Workspace, error) {
	now := db.now()
	w := &memstore.Workspace{ID: db.ids.New(memstore.WorkspaceIDPrefix, now), Name: name, CreatedAt: fromNanos(nanos(now))}
	err := db.write(ctx, func(tx *txn) error {
		var taken int
		if err := tx.queryRow(ctx, "SELECT count(*) FROM workspaces WHERE name = ?", name).Scan(&taken); err != nil {
			return err
		}
		if taken > 0 {
			return memstore.ErrWorkspaceExists(name)
		}
		_, err := tx.exec(ctx, "INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)", w.ID, w.Name, nanos(w.CreatedAt))
		return err
	})
	if err != nil {
		return nil, wrap(err, "create workspace %s", name)
	}
	return w, nil
}

// Workspace implements memstore.KeyStorage.
func (db *DB) Workspace(ctx context.Context, idOrName string) (*memstore.Workspace, error) {
	var w memstore.Workspace
	var created int64
	err := db.r.QueryRowContext(ctx, "SELECT id, name, created_at FROM workspaces WHERE id = ?1 OR name = ?1 ORDER BY id = ?1 DESC LIMIT 1", idOrName).
		Scan(&w.ID, &w.Name, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memstore.ErrNoWorkspace(idOrName)
	}
	if err != nil {
		return nil, wrap(translate(err), "get workspace %s", idOrName)
	}
	w.CreatedAt = fromNanos(created)
	return &w, nil
}

// Workspaces implements memstore.KeyStorage.
func (db *DB) Workspaces(ctx context.Context) ([]memstore.Workspace, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT id, name, created_at FROM workspaces ORDER BY id")
	if err != nil {
		return nil, wrap(translate(err), "list workspaces")
	}
	defer rows.Close()
	var ws []memstore.Workspace
	for rows.Next() {
		var w memstore.Workspace
		var created int64
		if err := rows.Scan(&w.ID, &w.Name, &created); err != nil {
			return nil, wrap(err, "list workspaces")
		}
		w.CreatedAt = fromNanos(created)
		ws = append(ws, w)
	}
	return ws, wrap(rows.Err(), "list workspaces")
}

// CreateAPIKey implements memstore.KeyStorage, checking q by withinQuota.
func (db *DB) CreateAPIKey(ctx context.Context, k memstore.APIKey, secretHash string, q memstore.Quota) (*memstore.APIKey, error) {
	k.ID = db.ids.New(memstore.APIKeyIDPrefix, k.CreatedAt)
	err := db.write(ctx, func(tx *txn) error {
		if err := workspaceExists(ctx, tx, k.WorkspaceID); err != nil {
			return err
		}
		if err := withinQuota(ctx, tx, q, `SELECT 1 FROM api_keys WHERE workspace_id = ?`, k.WorkspaceID); err != nil {
			return err
		}
		_, err := tx.exec(ctx, `INSERT INTO api_keys (id, workspace_id, name, secret_sha256, hint, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, k.ID, k.WorkspaceID, k.Name, secretHash, k.Hint, nanos(k.CreatedAt))
		return err
	})
	if err != nil {
		return nil, wrap(err, "create API key in %s", k.WorkspaceID)
	}
	return &k, nil
}

const keyColumns = "id, workspace_id, name, hint, created_at, last_used_at, revoked_at"

func scanKey(row sqlrow.Row) (*memstore.APIKey, error) {
	var k memstore.APIKey
	var created int64
	var used, revoked sql.NullInt64
	if err := row.Scan(&k.ID, &k.WorkspaceID, &k.Name, &k.Hint, &created, &used, &revoked); err != nil {
		return nil, err
	}
	k.CreatedAt, k.LastUsedAt, k.RevokedAt = fromNanos(created), fromNullNanos(used), fromNullNanos(revoked)
	return &k, nil
}

// APIKeys implements memstore.KeyStorage.
func (db *DB) APIKeys(ctx context.Context, workspaceID, after string, n int) ([]memstore.APIKey, error) {
	if n <= 0 {
		n = -1 // no limit
	}
	// One query each way, so that a workspace's page reads its index.
	where := "workspace_id = ?1 AND id > ?2"
	if workspaceID == "" {
		where = "?1 = '' AND id > ?2"
	}
	rows, err := db.r.QueryContext(ctx, "SELECT "+keyColumns+" FROM api_keys WHERE "+where+" ORDER BY id LIMIT ?3", workspaceID, after, n)
	if err != nil {
		return nil, wrap(translate(err), "list API keys")
	}
	defer rows.Close()
	keys, err := sqlrow.Collect(rows, scanKey)
	return keys, wrap(err, "list API keys")
}

// APIKey implements memstore.KeyStorage.
func (db *DB) APIKey(ctx context.Context, id string) (*memstore.APIKey, error) {
	k, err := scanKey(db.r.QueryRowContext(ctx, "SELECT "+keyColumns+" FROM api_keys WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memstore.ErrNoAPIKey(id)
	}
	if err != nil {
		return nil, wrap(translate(err), "get API key %s", id)
	}
	return k, nil
}

// APIKeyBySecret implements memstore.KeyStorage: one indexed lookup by
// the secret's hash, on the read pool.
func (db *DB) APIKeyBySecret(ctx context.Context, secretHash string) (*memstore.APIKey, error) {
	k, err := scanKey(db.rs.queryRow(ctx, "SELECT "+keyColumns+" FROM api_keys WHERE secret_sha256 = ?", secretHash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memstore.ErrUnknownSecret("API key")
	}
	return k, wrap(translate(err), "authenticate")
}

// RevokeAPIKey implements memstore.KeyStorage: r is noted in the
// revocations table in the transaction that revokes, for the other
// processes on the file, and told to this process once committed.
func (db *DB) RevokeAPIKey(ctx context.Context, id string, at time.Time, r memstore.Revocation) (*memstore.APIKey, error) {
	var k *memstore.APIKey
	err := db.write(ctx, func(tx *txn) error {
		if _, err := tx.exec(ctx, "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", nanos(at), id); err != nil {
			return err
		}
		var err error
		k, err = scanKey(tx.queryRow(ctx, "SELECT "+keyColumns+" FROM api_keys WHERE id = ?", id))
		if errors.Is(err, sql.ErrNoRows) {
			return memstore.ErrNoAPIKey(id)
		}
		if err != nil {
			return err
		}
		return db.noteRevocation(ctx, tx, r)
	})
	if err != nil {
		return nil, wrap(err, "revoke API key %s", id)
	}
	db.Revoked(r)
	return k, nil
}

// TouchAPIKey implements memstore.KeyStorage.
func (db *DB) TouchAPIKey(ctx context.Context, id string, at time.Time) error {
	err := db.write(ctx, func(tx *txn) error {
		_, err := tx.exec(ctx, "UPDATE api_keys SET last_used_at = ? WHERE id = ?", nanos(at), id)
		return err
	})
	return wrap(err, "authenticate")
}

// Counts reports how much the database holds, for monitoring.
func (db *DB) Counts(ctx context.Context) (memstore.Counts, error) {
	var c memstore.Counts
	err := db.r.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM workspaces), (SELECT count(*) FROM stores),
		(SELECT count(*) FROM memories), (SELECT count(*) FROM versions)`).
		Scan(&c.Workspaces, &c.Stores, &c.Memories, &c.Versions)
	if err == nil {
		c.SearchBacklog, err = db.ix.backlog(ctx)
	}
	return c, wrap(translate(err), "count")
}

// workspaceExists checks, in tx, that workspace workspaceID exists
// (ENotFound), before what is made in it is counted.
func workspaceExists(ctx context.Context, tx *txn, workspaceID string) error {
	var n int
	if err := tx.queryRow(ctx, "SELECT count(*) FROM workspaces WHERE id = ?", workspaceID).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return memstore.ErrNoWorkspace(workspaceID)
	}
	return nil
}

// withinQuota checks q, when it is limited, in the write transaction tx
// against the rows that rows (a SELECT of what q counts) finds, counting
// at most q.Max of them (countRows).
func withinQuota(ctx context.Context, tx *txn, q memstore.Quota, rows string, args ...any) error {
	if !q.Limited() {
		return nil
	}
	n, err := countRows(ctx, tx, q.Max(), rows, args...)
	if err != nil {
		return err
	}
	return q.Check(n)
}

// countRows counts the rows that rows (a SELECT) finds in the write
// transaction tx, up to max. SQLite's single writer serialises the
// transactions, so that concurrent creates counted this way cannot pass
// a quota together.
func countRows(ctx context.Context, tx *txn, max int, rows string, args ...any) (int, error) {
	var n int
	err := tx.queryRow(ctx, "SELECT count(*) FROM ("+rows+" LIMIT "+strconv.Itoa(max)+")", args...).Scan(&n)
	return n, err
}

package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
)

// Now implements memstore.KeyStorage and memstore.SessionStorage: the
// DB's clock, to the nanosecond it keeps.
func (db *DB) Now() time.Time { return db.stamp() }

// CreateWorkspace implements memstore.KeyStorage.
func (db *DB) CreateWorkspace(ctx context.Context, name string) (*memstore.Workspace, error) {
	now := db.stamp()
	w := &memstore.Workspace{ID: db.ids.New(memstore.WorkspaceIDPrefix, now), Name: name, CreatedAt: now}
	tag, err := db.pool.Exec(ctx, `INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`,
		w.ID, w.Name, keyset.Nanos(now))
	if err == nil && tag.RowsAffected() == 0 {
		err = memstore.ErrWorkspaceExists(name)
	}
	if err != nil {
		return nil, wrap(err, "create workspace %s", name)
	}
	return w, nil
}

func scanWorkspace(r row) (*memstore.Workspace, error) {
	var (
		w       memstore.Workspace
		created int64
	)
	if err := r.Scan(&w.ID, &w.Name, &created); err != nil {
		return nil, err
	}
	w.CreatedAt = keyset.Time(created)
	return &w, nil
}

// Workspace implements memstore.KeyStorage: by ID first, then by name.
func (db *DB) Workspace(ctx context.Context, idOrName string) (*memstore.Workspace, error) {
	w, err := scanWorkspace(db.pool.QueryRow(ctx, `SELECT id, name, created_at FROM workspaces WHERE id = $1 OR name = $1 ORDER BY id = $1 DESC LIMIT 1`, idOrName))
	if err != nil {
		return nil, wrap(notFound(err, memstore.ErrNoWorkspace(idOrName)), "get workspace %s", idOrName)
	}
	return w, nil
}

// Workspaces implements memstore.KeyStorage.
func (db *DB) Workspaces(ctx context.Context) ([]memstore.Workspace, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, name, created_at FROM workspaces ORDER BY id`)
	if err != nil {
		return nil, wrap(err, "list workspaces")
	}
	ws, err := collect(rows, scanWorkspace)
	return ws, wrap(err, "list workspaces")
}

// CreateAPIKey implements memstore.KeyStorage. Its keys are counted by
// withinQuota, so that concurrent creates cannot pass the limit together.
func (db *DB) CreateAPIKey(ctx context.Context, k memstore.APIKey, secretHash string, q memstore.Quota) (*memstore.APIKey, error) {
	k.ID = db.ids.New(memstore.APIKeyIDPrefix, k.CreatedAt)
	err := db.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if err := workspaceExists(ctx, tx, k.WorkspaceID); err != nil {
			return err
		}
		if err := withinQuota(ctx, tx, q, "api_keys "+k.WorkspaceID, `SELECT 1 FROM api_keys WHERE workspace_id = $1`, k.WorkspaceID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO api_keys (id, workspace_id, name, secret_sha256, hint, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			k.ID, k.WorkspaceID, k.Name, secretHash, k.Hint, keyset.Nanos(k.CreatedAt))
		return err
	})
	if err != nil {
		return nil, wrap(err, "create API key in %s", k.WorkspaceID)
	}
	return &k, nil
}

const keyColumns = "id, workspace_id, name, hint, created_at, last_used_at, revoked_at"

func scanKey(r row) (*memstore.APIKey, error) {
	var (
		k             memstore.APIKey
		created       int64
		used, revoked *int64
	)
	if err := r.Scan(&k.ID, &k.WorkspaceID, &k.Name, &k.Hint, &created, &used, &revoked); err != nil {
		return nil, err
	}
	k.CreatedAt, k.LastUsedAt, k.RevokedAt = keyset.Time(created), keyset.NullTime(used), keyset.NullTime(revoked)
	return &k, nil
}

// APIKeys implements memstore.KeyStorage.
func (db *DB) APIKeys(ctx context.Context, workspaceID, after string, n int) ([]memstore.APIKey, error) {
	var limit *int // NULL: no limit
	if n > 0 {
		limit = &n
	}
	// One query each way, so that a workspace's page reads its index.
	where := `workspace_id = $1 AND id > $2`
	if workspaceID == "" {
		where = `$1 = '' AND id > $2`
	}
	rows, err := db.pool.Query(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE `+where+` ORDER BY id LIMIT $3`, workspaceID, after, limit)
	if err != nil {
		return nil, wrap(err, "list API keys")
	}
	keys, err := collect(rows, scanKey)
	return keys, wrap(err, "list API keys")
}

// APIKey implements memstore.KeyStorage.
func (db *DB) APIKey(ctx context.Context, id string) (*memstore.APIKey, error) {
	k, err := scanKey(db.pool.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1`, id))
	if err != nil {
		return nil, wrap(notFound(err, memstore.ErrNoAPIKey(id)), "get API key %s", id)
	}
	return k, nil
}

// APIKeyBySecret implements memstore.KeyStorage: one indexed lookup by
// the secret's hash.
func (db *DB) APIKeyBySecret(ctx context.Context, secretHash string) (*memstore.APIKey, error) {
	k, err := scanKey(db.pool.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE secret_sha256 = $1`, secretHash))
	if err != nil {
		return nil, wrap(notFound(err, memstore.ErrUnknownSecret("API key")), "authenticate")
	}
	return k, nil
}

// RevokeAPIKey implements memstore.KeyStorage: one statement, which keeps
// the first revocation's time, then r told to every process.
func (db *DB) RevokeAPIKey(ctx context.Context, id string, at time.Time, r memstore.Revocation) (*memstore.APIKey, error) {
	k, err := scanKey(db.pool.QueryRow(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2 RETURNING `+keyColumns,
		keyset.Nanos(at), id))
	if err != nil {
		return nil, wrap(notFound(err, memstore.ErrNoAPIKey(id)), "revoke API key %s", id)
	}
	db.revoked(ctx, r)
	return k, nil
}

// TouchAPIKey implements memstore.KeyStorage.
func (db *DB) TouchAPIKey(ctx context.Context, id string, at time.Time) error {
	_, err := db.pool.Exec(ctx, `UPDATE api_keys SET last_used_at = $1 WHERE id = $2`, keyset.Nanos(at), id)
	return wrap(err, "authenticate")
}

// workspaceExists checks, in tx, that workspace workspaceID exists
// (ENotFound), before what is made in it is counted.
func workspaceExists(ctx context.Context, tx pgx.Tx, workspaceID string) error {
	var found string
	err := tx.QueryRow(ctx, `SELECT id FROM workspaces WHERE id = $1`, workspaceID).Scan(&found)
	return notFound(err, memstore.ErrNoWorkspace(workspaceID))
}

// quotaLocks is the first key of the advisory locks of withinQuota, in
// the space of two-key locks (migrationLock is a one-key lock, which
// never meets them).
const quotaLocks = 0x6d656d71 // "memq"

// withinQuota checks q, when it is limited, in tx against the rows that
// rows (a SELECT of what q counts) finds, counting at most q.Max of them.
// First it takes the transaction's advisory lock of what (the kind of
// row and the workspace or session whose rows are counted), held until
// tx ends, so that concurrent creates of the same rows, on any replica,
// count one after another and cannot pass the quota together. A lock
// rather than a row: the workspaces of stores and sessions need no row.
func withinQuota(ctx context.Context, tx pgx.Tx, q memstore.Quota, what, rows string, args ...any) error {
	if !q.Limited() {
		return nil
	}
	n, err := countRows(ctx, tx, q.Max(), what, rows, args...)
	if err != nil {
		return err
	}
	return q.Check(n)
}

// countRows counts the rows that rows (a SELECT) finds in tx, up to max,
// once it holds the transaction's advisory lock of what, as withinQuota
// does.
func countRows(ctx context.Context, tx pgx.Tx, max int, what, rows string, args ...any) (int, error) {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, int32(quotaLocks), what); err != nil {
		return 0, err
	}
	var n int
	err := tx.QueryRow(ctx, "SELECT count(*) FROM ("+rows+" LIMIT "+strconv.Itoa(max)+") AS counted", args...).Scan(&n)
	return n, err
}

package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
)

// lastUsedEvery is how stale a key's LastUsedAt may get: authentication is
// a read, and turning every one into a write would make every request
// write.
const lastUsedEvery = time.Minute

// CreateWorkspace implements memstore.KeyService.
func (db *DB) CreateWorkspace(ctx context.Context, name string) (*memstore.Workspace, error) {
	if err := memstore.ValidateWorkspaceName(name); err != nil {
		return nil, err
	}
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

// Workspace implements memstore.KeyService: by ID first, then by name.
func (db *DB) Workspace(ctx context.Context, idOrName string) (*memstore.Workspace, error) {
	w, err := scanWorkspace(db.pool.QueryRow(ctx, `SELECT id, name, created_at FROM workspaces WHERE id = $1 OR name = $1 ORDER BY id = $1 DESC LIMIT 1`, idOrName))
	if err != nil {
		return nil, wrap(notFound(err, memstore.ErrNoWorkspace(idOrName)), "get workspace %s", idOrName)
	}
	return w, nil
}

// Workspaces implements memstore.KeyService.
func (db *DB) Workspaces(ctx context.Context) ([]memstore.Workspace, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, name, created_at FROM workspaces ORDER BY id`)
	if err != nil {
		return nil, wrap(err, "list workspaces")
	}
	ws, err := collect(rows, scanWorkspace)
	return ws, wrap(err, "list workspaces")
}

// CreateAPIKey implements memstore.KeyService; only the hash of the
// secret is kept. Its keys are counted by withinQuota, so that
// concurrent creates cannot pass the limit together.
func (db *DB) CreateAPIKey(ctx context.Context, workspaceID, name string) (*memstore.APIKey, string, error) {
	if err := memstore.ValidateKeyName(name); err != nil {
		return nil, "", err
	}
	now := db.stamp()
	secret := memstore.NewSecret(memstore.APIKeyPrefix)
	k := &memstore.APIKey{
		ID: db.ids.New(memstore.APIKeyIDPrefix, now), WorkspaceID: workspaceID, Name: name,
		Hint: memstore.SecretHint(secret), CreatedAt: now,
	}
	err := db.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if err := workspaceExists(ctx, tx, workspaceID); err != nil {
			return err
		}
		if err := withinQuota(ctx, tx, memstore.APIKeyQuota(workspaceID), "api_keys "+workspaceID, `SELECT 1 FROM api_keys WHERE workspace_id = $1`, workspaceID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO api_keys (id, workspace_id, name, secret_sha256, hint, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			k.ID, k.WorkspaceID, k.Name, memstore.HashSecret(secret), k.Hint, keyset.Nanos(now))
		return err
	})
	if err != nil {
		return nil, "", wrap(err, "create API key in %s", workspaceID)
	}
	return k, secret, nil
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

// APIKeys implements memstore.KeyService.
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

// APIKey implements memstore.KeyService.
func (db *DB) APIKey(ctx context.Context, id string) (*memstore.APIKey, error) {
	k, err := scanKey(db.pool.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1`, id))
	if err != nil {
		return nil, wrap(notFound(err, memstore.ErrNoAPIKey(id)), "get API key %s", id)
	}
	return k, nil
}

// RevokeAPIKey implements memstore.KeyService: one statement, which keeps
// the first revocation's time.
func (db *DB) RevokeAPIKey(ctx context.Context, id string) (*memstore.APIKey, error) {
	k, err := scanKey(db.pool.QueryRow(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2 RETURNING `+keyColumns,
		keyset.Nanos(db.now()), id))
	if err != nil {
		return nil, wrap(notFound(err, memstore.ErrNoAPIKey(id)), "revoke API key %s", id)
	}
	db.revoked(ctx, memstore.Revocation{APIKeyID: id})
	return k, nil
}

// Authenticate implements memstore.KeyService: one indexed lookup by the
// secret's hash, and a write only when LastUsedAt is older than
// lastUsedEvery.
func (db *DB) Authenticate(ctx context.Context, secret string) (*memstore.Caller, error) {
	if !strings.HasPrefix(secret, memstore.APIKeyPrefix) {
		return nil, memstore.Errorf(memstore.EUnauthenticated, "invalid API key")
	}
	k, err := scanKey(db.pool.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE secret_sha256 = $1`, memstore.HashSecret(secret)))
	switch {
	case err != nil:
		return nil, wrap(notFound(err, memstore.Errorf(memstore.EUnauthenticated, "invalid API key")), "authenticate")
	case k.RevokedAt != nil:
		return nil, memstore.Errorf(memstore.EUnauthenticated, "API key %s has been revoked", k.ID)
	}
	if now := db.now(); k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) >= lastUsedEvery {
		if _, err := db.pool.Exec(ctx, `UPDATE api_keys SET last_used_at = $1 WHERE id = $2`, keyset.Nanos(now), k.ID); err != nil {
			return nil, wrap(err, "authenticate")
		}
	}
	return &memstore.Caller{WorkspaceID: k.WorkspaceID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: k.ID}}, nil
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
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, int32(quotaLocks), what); err != nil {
		return err
	}
	var n int
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM ("+rows+" LIMIT "+strconv.Itoa(q.Max())+") AS counted", args...).Scan(&n); err != nil {
		return err
	}
	return q.Check(n)
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/sqlrow"
)

// CreateUser implements memstore.UserStorage: the single writer lets it
// look for the workspace and the name first, where PostgreSQL, whose
// processes write at once, leaves the name to its unique constraint.
func (db *DB) CreateUser(ctx context.Context, workspaceID string, u memstore.User) (*memstore.User, error) {
	u.ID, u.WorkspaceID = db.ids.New(memstore.UserIDPrefix, u.CreatedAt), workspaceID
	u.CreatedAt, u.UpdatedAt = fromNanos(nanos(u.CreatedAt)), fromNanos(nanos(u.UpdatedAt))
	err := db.write(ctx, func(tx *txn) error {
		var ws, taken int
		if err := tx.queryRow(ctx, "SELECT (SELECT count(*) FROM workspaces WHERE id = ?1), (SELECT count(*) FROM users WHERE workspace_id = ?1 AND name = ?2)",
			workspaceID, u.Name).Scan(&ws, &taken); err != nil {
			return err
		}
		switch {
		case ws == 0:
			return memstore.ErrNoWorkspace(workspaceID)
		case taken > 0:
			return memstore.ErrUserExists(u.Name)
		}
		_, err := tx.exec(ctx, "INSERT INTO users ("+sqlrow.UserColumns+") VALUES (?, ?, ?, ?, ?, ?, ?)", sqlrow.UserValues(&u)...)
		return err
	})
	if err != nil {
		return nil, wrap(err, "create user %s", u.Name)
	}
	return &u, nil
}

// User implements memstore.UserStorage: by ID first, then by name.
func (db *DB) User(ctx context.Context, workspaceID, idOrName string) (*memstore.User, error) {
	u, err := sqlrow.ScanUser(db.rs.queryRow(ctx, "SELECT "+sqlrow.UserColumns+" FROM users WHERE workspace_id = ?1 AND (id = ?2 OR name = ?2) ORDER BY id = ?2 DESC LIMIT 1",
		workspaceID, idOrName))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memstore.ErrNoUser(idOrName)
	}
	return u, wrap(translate(err), "get user %s", idOrName)
}

// Users implements memstore.UserStorage with keyset pagination on name,
// served by the UNIQUE (workspace_id, name) index.
func (db *DB) Users(ctx context.Context, workspaceID string, f memstore.UserFilter) (memstore.Page[memstore.User], error) {
	var page memstore.Page[memstore.User]
	cur, err := parseCursor(f.Page, keyset.Users)
	if err != nil {
		return page, err
	}
	after := ""
	if cur != nil {
		after = cur.Key
	}
	rows, err := db.r.QueryContext(ctx, "SELECT "+sqlrow.UserColumns+" FROM users WHERE workspace_id = ? AND name > ? ORDER BY name LIMIT ?",
		workspaceID, after, f.Limit+1)
	if err != nil {
		return page, wrap(translate(err), "list users")
	}
	defer rows.Close()
	if page.Items, err = sqlrow.Collect(rows, sqlrow.ScanUser); err != nil {
		return memstore.Page[memstore.User]{}, wrap(translate(err), "list users")
	}
	if len(page.Items) > f.Limit {
		page.Items = page.Items[:f.Limit]
		page.Next = cursor{Kind: keyset.Users, Key: page.Items[f.Limit-1].Name}.String()
	}
	return page, nil
}

// HasUsers implements memstore.UserStorage.
func (db *DB) HasUsers(ctx context.Context) (bool, error) {
	var any bool
	if err := db.r.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM users)").Scan(&any); err != nil {
		return false, wrap(translate(err), "look for users")
	}
	return any, nil
}

// SetUserPassword implements memstore.UserStorage.
func (db *DB) SetUserPassword(ctx context.Context, workspaceID, id, hash string, at time.Time) (*memstore.User, error) {
	var u *memstore.User
	err := db.write(ctx, func(tx *txn) error {
		res, err := tx.exec(ctx, "UPDATE users SET password_hash = ?, updated_at = ? WHERE workspace_id = ? AND id = ?", hash, nanos(at), workspaceID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return memstore.ErrNoUser(id)
		}
		if _, err := tx.exec(ctx, "DELETE FROM user_sign_ins WHERE user_id = ?", id); err != nil {
			return err
		}
		u, err = sqlrow.ScanUser(tx.queryRow(ctx, "SELECT "+sqlrow.UserColumns+" FROM users WHERE id = ?", id))
		return err
	})
	return u, wrap(err, "set the password of user %s", id)
}

// SetUserRole implements memstore.UserStorage.
func (db *DB) SetUserRole(ctx context.Context, workspaceID, id string, role memstore.Role, at time.Time) (*memstore.User, error) {
	var u *memstore.User
	err := db.write(ctx, func(tx *txn) error {
		res, err := tx.exec(ctx, "UPDATE users SET role = ?, updated_at = ? WHERE workspace_id = ? AND id = ?", string(role), nanos(at), workspaceID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return memstore.ErrNoUser(id)
		}
		u, err = sqlrow.ScanUser(tx.queryRow(ctx, "SELECT "+sqlrow.UserColumns+" FROM users WHERE id = ?", id))
		return err
	})
	return u, wrap(err, "set the role of user %s", id)
}

// DeleteUser implements memstore.UserStorage; its sign-ins go with it
// (ON DELETE CASCADE).
func (db *DB) DeleteUser(ctx context.Context, workspaceID, id string) error {
	err := db.write(ctx, func(tx *txn) error {
		res, err := tx.exec(ctx, "DELETE FROM users WHERE workspace_id = ? AND id = ?", workspaceID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return memstore.ErrNoUser(id)
		}
		return nil
	})
	return wrap(err, "delete user %s", id)
}

// CreateSignIn implements memstore.UserStorage.
func (db *DB) CreateSignIn(ctx context.Context, s memstore.SignIn) error {
	err := db.write(ctx, func(tx *txn) error {
		_, err := tx.exec(ctx, sqlrow.InsertSignIn(func(int) string { return "?" }), sqlrow.SignInValues(&s)...)
		return err
	})
	return wrap(err, "sign in")
}

// SignIn implements memstore.UserStorage: one lookup by the primary key.
func (db *DB) SignIn(ctx context.Context, secretHash string) (*memstore.SignIn, *memstore.User, error) {
	s, u, err := sqlrow.ScanSignIn(db.rs.queryRow(ctx, `SELECT `+sqlrow.SignInColumns+`
		FROM user_sign_ins s JOIN users u ON u.id = s.user_id WHERE s.secret_sha256 = ?`, secretHash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, memstore.ErrNoSignIn()
	}
	if err != nil {
		return nil, nil, wrap(translate(err), "authenticate")
	}
	return s, u, nil
}

// TouchSignIn implements memstore.UserStorage.
func (db *DB) TouchSignIn(ctx context.Context, secretHash string, at time.Time) error {
	err := db.write(ctx, func(tx *txn) error {
		_, err := tx.exec(ctx, "UPDATE user_sign_ins SET last_seen_at = ? WHERE secret_sha256 = ?", nanos(at), secretHash)
		return err
	})
	return wrap(err, "authenticate")
}

// DeleteSignIn implements memstore.UserStorage.
func (db *DB) DeleteSignIn(ctx context.Context, secretHash string) (bool, error) {
	var n int64
	err := db.write(ctx, func(tx *txn) error {
		res, err := tx.exec(ctx, "DELETE FROM user_sign_ins WHERE secret_sha256 = ?", secretHash)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	return n > 0, wrap(err, "sign out")
}

// DeleteExpiredSignIns implements memstore.UserStorage.
func (db *DB) DeleteExpiredSignIns(ctx context.Context, now time.Time) error {
	err := db.write(ctx, func(tx *txn) error {
		_, err := tx.exec(ctx, "DELETE FROM user_sign_ins WHERE expires_at <= ?", nanos(now))
		return err
	})
	return wrap(err, "remove expired sign-ins")
}

// TakeSignInAttempt implements memstore.UserStorage, in one write
// transaction of the writer.
func (db *DB) TakeSignInAttempt(ctx context.Context, key string, now time.Time, max int, take func(*memstore.AttemptCount) memstore.AttemptCount) error {
	err := db.write(ctx, func(tx *txn) error {
		if _, err := tx.exec(ctx, "DELETE FROM sign_in_attempts WHERE full_at <= ?", nanos(now)); err != nil {
			return err
		}
		var c *memstore.AttemptCount
		var tokens float64
		var at, full int64
		err := tx.queryRow(ctx, "SELECT tokens, at, full_at FROM sign_in_attempts WHERE key_sha256 = ?", key).Scan(&tokens, &at, &full)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			// A new key: room for it, by forgetting the fullest counts.
			if _, err := tx.exec(ctx, `DELETE FROM sign_in_attempts WHERE key_sha256 IN
				(SELECT key_sha256 FROM sign_in_attempts ORDER BY full_at LIMIT max(0, (SELECT count(*) FROM sign_in_attempts) - ? + 1))`, max); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			c = &memstore.AttemptCount{Tokens: tokens, At: fromNanos(at), FullAt: fromNanos(full)}
		}
		n := take(c)
		_, err = tx.exec(ctx, `INSERT INTO sign_in_attempts (key_sha256, tokens, at, full_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (key_sha256) DO UPDATE SET tokens = excluded.tokens, at = excluded.at, full_at = excluded.full_at`,
			key, n.Tokens, nanos(n.At), nanos(n.FullAt))
		return err
	})
	return wrap(err, "count a sign-in attempt")
}

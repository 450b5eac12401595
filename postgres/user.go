package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/sqlrow"
)

// CreateUser implements memstore.UserStorage: one statement, which the
// name's unique constraint decides.
func (db *DB) CreateUser(ctx context.Context, workspaceID string, u memstore.User) (*memstore.User, error) {
	u.ID, u.WorkspaceID = db.ids.New(memstore.UserIDPrefix, u.CreatedAt), workspaceID
	u.CreatedAt, u.UpdatedAt = keyset.Time(keyset.Nanos(u.CreatedAt)), keyset.Time(keyset.Nanos(u.UpdatedAt))
	tag, err := db.pool.Exec(ctx, `INSERT INTO users (`+sqlrow.UserColumns+`)
		SELECT $1, $2, $3, $4, $5, $6, $7 WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = $2)`, sqlrow.UserValues(&u)...)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == sqlUniqueViolation && pe.ConstraintName == "users_name_key":
		err = memstore.ErrUserExists(u.Name)
	case err == nil && tag.RowsAffected() == 0:
		err = memstore.ErrNoWorkspace(workspaceID)
	}
	if err != nil {
		return nil, wrap(err, "create user %s", u.Name)
	}
	return &u, nil
}

// User implements memstore.UserStorage: by ID first, then by name.
func (db *DB) User(ctx context.Context, workspaceID, idOrName string) (*memstore.User, error) {
	u, err := sqlrow.ScanUser(db.pool.QueryRow(ctx, `SELECT `+sqlrow.UserColumns+` FROM users WHERE workspace_id = $1 AND (id = $2 OR name = $2) ORDER BY id = $2 DESC LIMIT 1`,
		workspaceID, idOrName))
	if err != nil {
		return nil, wrap(notFound(err, memstore.ErrNoUser(idOrName)), "get user %s", idOrName)
	}
	return u, nil
}

// Users implements memstore.UserStorage with keyset pagination on name,
// served by users_name_key.
func (db *DB) Users(ctx context.Context, workspaceID string, f memstore.UserFilter) (memstore.Page[memstore.User], error) {
	var page memstore.Page[memstore.User]
	cur, err := keyset.Parse(f.Page, keyset.Users)
	if err != nil {
		return page, err
	}
	after := ""
	if cur != nil {
		after = cur.Key
	}
	rows, err := db.pool.Query(ctx, `SELECT `+sqlrow.UserColumns+` FROM users WHERE workspace_id = $1 AND name > $2 ORDER BY name LIMIT $3`,
		workspaceID, after, f.Limit+1)
	if err != nil {
		return page, wrap(err, "list users")
	}
	if page.Items, err = collect(rows, sqlrow.ScanUser); err != nil {
		return memstore.Page[memstore.User]{}, wrap(err, "list users")
	}
	if len(page.Items) > f.Limit {
		page.Items = page.Items[:f.Limit]
		page.Next = keyset.Cursor{Kind: keyset.Users, Key: page.Items[f.Limit-1].Name}.String()
	}
	return page, nil
}

// HasUsers implements memstore.UserStorage.
func (db *DB) HasUsers(ctx context.Context) (bool, error) {
	var any bool
	if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users)`).Scan(&any); err != nil {
		return false, wrap(err, "look for users")
	}
	return any, nil
}

// SetUserPassword implements memstore.UserStorage.
func (db *DB) SetUserPassword(ctx context.Context, workspaceID, id, hash string, at time.Time) (*memstore.User, error) {
	var u *memstore.User
	err := db.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var err error
		u, err = sqlrow.ScanUser(tx.QueryRow(ctx, `UPDATE users SET password_hash = $1, updated_at = $2 WHERE workspace_id = $3 AND id = $4 RETURNING `+sqlrow.UserColumns,
			hash, keyset.Nanos(at), workspaceID, id))
		if err != nil {
			return notFound(err, memstore.ErrNoUser(id))
		}
		_, err = tx.Exec(ctx, `DELETE FROM user_sign_ins WHERE user_id = $1`, id)
		return err
	})
	return u, wrap(err, "set the password of user %s", id)
}

// SetUserRole implements memstore.UserStorage.
func (db *DB) SetUserRole(ctx context.Context, workspaceID, id string, role memstore.Role, at time.Time) (*memstore.User, error) {
	u, err := sqlrow.ScanUser(db.pool.QueryRow(ctx, `UPDATE users SET role = $1, updated_at = $2 WHERE workspace_id = $3 AND id = $4 RETURNING `+sqlrow.UserColumns,
		string(role), keyset.Nanos(at), workspaceID, id))
	if err != nil {
		err = notFound(err, memstore.ErrNoUser(id))
	}
	return u, wrap(err, "set the role of user %s", id)
}

// DeleteUser implements memstore.UserStorage; its sign-ins go with it
// (ON DELETE CASCADE).
func (db *DB) DeleteUser(ctx context.Context, workspaceID, id string) error {
	tag, err := db.pool.Exec(ctx, `DELETE FROM users WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = memstore.ErrNoUser(id)
	}
	return wrap(err, "delete user %s", id)
}

// CreateSignIn implements memstore.UserStorage.
func (db *DB) CreateSignIn(ctx context.Context, s memstore.SignIn) error {
	_, err := db.pool.Exec(ctx, sqlrow.InsertSignIn(param), sqlrow.SignInValues(&s)...)
	return wrap(err, "sign in")
}

// SignIn implements memstore.UserStorage: one lookup by the primary key.
func (db *DB) SignIn(ctx context.Context, secretHash string) (*memstore.SignIn, *memstore.User, error) {
	s, u, err := sqlrow.ScanSignIn(db.pool.QueryRow(ctx, `SELECT `+sqlrow.SignInColumns+`
		FROM user_sign_ins s JOIN users u ON u.id = s.user_id WHERE s.secret_sha256 = $1`, secretHash))
	if err != nil {
		return nil, nil, wrap(notFound(err, memstore.ErrNoSignIn()), "authenticate")
	}
	return s, u, nil
}

// TouchSignIn implements memstore.UserStorage.
func (db *DB) TouchSignIn(ctx context.Context, secretHash string, at time.Time) error {
	_, err := db.pool.Exec(ctx, `UPDATE user_sign_ins SET last_seen_at = $1 WHERE secret_sha256 = $2`, keyset.Nanos(at), secretHash)
	return wrap(err, "authenticate")
}

// DeleteSignIn implements memstore.UserStorage.
func (db *DB) DeleteSignIn(ctx context.Context, secretHash string) (bool, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM user_sign_ins WHERE secret_sha256 = $1`, secretHash)
	if err != nil {
		return false, wrap(err, "sign out")
	}
	return tag.RowsAffected() > 0, nil
}

// DeleteExpiredSignIns implements memstore.UserStorage.
func (db *DB) DeleteExpiredSignIns(ctx context.Context, now time.Time) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM user_sign_ins WHERE expires_at <= $1`, keyset.Nanos(now))
	return wrap(err, "remove expired sign-ins")
}

// TakeSignInAttempt implements memstore.UserStorage. The row of key is
// locked for the transaction (inserted, or selected FOR UPDATE), so that
// the attempts of every server are counted one after another; the
// counts deleted to clear out or make room skip the rows another
// transaction holds, which are in use, so that no two attempts wait on
// each other's rows.
func (db *DB) TakeSignInAttempt(ctx context.Context, key string, now time.Time, max int, take func(*memstore.AttemptCount) memstore.AttemptCount) error {
	n := keyset.Nanos(now)
	_, err := db.pool.Exec(ctx, `DELETE FROM sign_in_attempts WHERE key_sha256 IN
		(SELECT key_sha256 FROM sign_in_attempts WHERE full_at <= $1 FOR UPDATE SKIP LOCKED)`, n)
	if err != nil {
		return wrap(err, "count a sign-in attempt")
	}
	err = db.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO sign_in_attempts (key_sha256, tokens, at, full_at) VALUES ($1, 0, $2, $2)
			ON CONFLICT (key_sha256) DO NOTHING`, key, n)
		if err != nil {
			return err
		}
		var c *memstore.AttemptCount
		if tag.RowsAffected() == 1 {
			// A new key: room for it, by forgetting the fullest counts.
			if _, err := tx.Exec(ctx, `DELETE FROM sign_in_attempts WHERE key_sha256 IN
				(SELECT key_sha256 FROM sign_in_attempts WHERE key_sha256 <> $1 ORDER BY full_at
				 LIMIT greatest(0, (SELECT count(*) FROM sign_in_attempts) - $2) FOR UPDATE SKIP LOCKED)`, key, max); err != nil {
				return err
			}
		} else {
			var tokens float64
			var at, full int64
			err := tx.QueryRow(ctx, `SELECT tokens, at, full_at FROM sign_in_attempts WHERE key_sha256 = $1 FOR UPDATE`, key).Scan(&tokens, &at, &full)
			switch {
			case errors.Is(err, pgx.ErrNoRows): // deleted meanwhile, as refilled
			case err != nil:
				return err
			default:
				c = &memstore.AttemptCount{Tokens: tokens, At: keyset.Time(at), FullAt: keyset.Time(full)}
			}
		}
		next := take(c)
		_, err = tx.Exec(ctx, `INSERT INTO sign_in_attempts (key_sha256, tokens, at, full_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (key_sha256) DO UPDATE SET tokens = EXCLUDED.tokens, at = EXCLUDED.at, full_at = EXCLUDED.full_at`,
			key, next.Tokens, keyset.Nanos(next.At), keyset.Nanos(next.FullAt))
		return err
	})
	return wrap(err, "count a sign-in attempt")
}

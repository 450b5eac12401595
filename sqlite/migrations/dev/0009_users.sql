-- Console users and their sign-ins (sessions and one-time links). A
-- password is kept as its argon2id hash with the hash's parameters, a
-- sign-in only as the SHA-256 of its secret: a leaked database leaks
-- neither.

CREATE TABLE users (
	id            TEXT PRIMARY KEY,
	workspace_id  TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	name          TEXT NOT NULL,
	role          TEXT NOT NULL CHECK (role IN ('admin', 'member', 'auditor')),
	password_hash TEXT NOT NULL DEFAULT '',
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL,
	UNIQUE (workspace_id, name)
) STRICT;

CREATE TABLE user_sign_ins (
	secret_sha256 TEXT PRIMARY KEY,
	user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	workspace_id  TEXT NOT NULL,
	link          INTEGER NOT NULL, -- 1: a one-time sign-in link
	created_at    INTEGER NOT NULL,
	last_seen_at  INTEGER NOT NULL,
	expires_at    INTEGER NOT NULL
) STRICT;

CREATE INDEX user_sign_ins_by_user ON user_sign_ins (user_id);
CREATE INDEX user_sign_ins_by_expiry ON user_sign_ins (expires_at);

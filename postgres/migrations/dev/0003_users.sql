-- Console users and their sign-ins (sessions and one-time links). A
-- password is kept as its argon2id hash with the hash's parameters, a
-- sign-in only as the SHA-256 of its secret: a leaked database leaks
-- neither.

CREATE TABLE users (
	id            text COLLATE "C" PRIMARY KEY,
	workspace_id  text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	name          text COLLATE "C" NOT NULL,
	role          text NOT NULL CHECK (role IN ('admin', 'member', 'auditor')),
	password_hash text NOT NULL DEFAULT '',
	created_at    bigint NOT NULL,
	updated_at    bigint NOT NULL,
	CONSTRAINT users_name_key UNIQUE (workspace_id, name)
);

CREATE TABLE user_sign_ins (
	secret_sha256 text PRIMARY KEY,
	user_id       text COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	workspace_id  text COLLATE "C" NOT NULL,
	link          boolean NOT NULL, -- a one-time sign-in link
	created_at    bigint NOT NULL,
	last_seen_at  bigint NOT NULL,
	expires_at    bigint NOT NULL
);

CREATE INDEX user_sign_ins_by_user ON user_sign_ins (user_id);
CREATE INDEX user_sign_ins_by_expiry ON user_sign_ins (expires_at);

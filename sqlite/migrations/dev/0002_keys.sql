-- Workspaces and their API keys. A key is kept only as the SHA-256 of its
-- secret: a leaked database does not leak credentials.

CREATE TABLE workspaces (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE api_keys (
	id            TEXT PRIMARY KEY,
	workspace_id  TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	name          TEXT NOT NULL DEFAULT '',
	secret_sha256 TEXT NOT NULL UNIQUE, -- also the index of every authentication
	hint          TEXT NOT NULL,
	created_at    INTEGER NOT NULL,
	last_used_at  INTEGER,
	revoked_at    INTEGER
) STRICT;

CREATE INDEX api_keys_by_workspace ON api_keys (workspace_id, id);

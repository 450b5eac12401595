-- Sessions, the stores attached to them and their tokens. A token, like an
-- API key, is kept only as the SHA-256 of its secret.

CREATE TABLE sessions (
	id           TEXT PRIMARY KEY,
	workspace_id TEXT NOT NULL,
	title        TEXT NOT NULL DEFAULT '',
	metadata     TEXT NOT NULL DEFAULT '{}', -- JSON object of strings
	fields       TEXT NOT NULL DEFAULT '{}', -- JSON object: the create request's other fields, as sent
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL,
	archived_at  INTEGER
) STRICT;

-- The sessions list: newest first within a workspace, keyset on (created_at, id).
CREATE INDEX sessions_by_workspace ON sessions (workspace_id, created_at DESC, id DESC);

-- The stores of a session, in the order given at creation. store_id has no
-- foreign key on purpose: a session is history, so deleting a store leaves
-- its attachments as they were (name, description and mount path are
-- snapshots anyway); a token of such a session finds nothing in the store
-- (not found), as for any other missing store.
CREATE TABLE session_stores (
	session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	position     INTEGER NOT NULL,
	store_id     TEXT NOT NULL,
	access       TEXT NOT NULL CHECK (access IN ('read_write', 'read_only')),
	instructions TEXT NOT NULL DEFAULT '',
	name         TEXT NOT NULL,
	description  TEXT NOT NULL DEFAULT '',
	mount_path   TEXT NOT NULL,
	-- The session's created_at, which never changes: with it the list of
	-- a store's sessions pages through this index alone, at the cost of
	-- the page rather than of every session of the store.
	created_at   INTEGER NOT NULL,
	PRIMARY KEY (session_id, position)
) STRICT, WITHOUT ROWID;

CREATE INDEX session_stores_by_store ON session_stores (store_id, created_at DESC, session_id DESC);

CREATE TABLE session_tokens (
	id            TEXT PRIMARY KEY,
	session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	workspace_id  TEXT NOT NULL,
	secret_sha256 TEXT NOT NULL UNIQUE, -- also the index of every authentication
	hint          TEXT NOT NULL,
	created_at    INTEGER NOT NULL,
	expires_at    INTEGER, -- NULL: no expiry
	revoked_at    INTEGER
) STRICT;

CREATE INDEX session_tokens_by_session ON session_tokens (session_id, created_at, id);

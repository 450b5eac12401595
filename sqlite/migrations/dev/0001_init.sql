-- Stores, live memories and their versions. Times are unix nanoseconds
-- (UTC); IDs are time-ordered ULIDs, so "id DESC" is newest first.

CREATE TABLE stores (
	id           TEXT PRIMARY KEY,
	workspace_id TEXT NOT NULL,
	name         TEXT NOT NULL,
	description  TEXT NOT NULL DEFAULT '',
	metadata     TEXT NOT NULL DEFAULT '{}', -- JSON object of strings
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL,
	archived_at  INTEGER
) STRICT;

-- The stores list: newest first within a workspace, keyset on (created_at, id).
CREATE INDEX stores_by_workspace ON stores (workspace_id, created_at DESC, id DESC);

-- Live memories only: a deleted memory survives as its versions.
CREATE TABLE memories (
	id         TEXT PRIMARY KEY,
	store_id   TEXT NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
	path       TEXT NOT NULL, -- BINARY collation: byte order
	content    TEXT NOT NULL, -- exact bytes
	sha256     TEXT NOT NULL,
	size       INTEGER NOT NULL,
	version_id TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	-- Also the index of path lists, overlap checks and ancestor lookups.
	UNIQUE (store_id, path)
) STRICT;

CREATE TABLE versions (
	id            TEXT PRIMARY KEY,
	store_id      TEXT NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
	memory_id     TEXT NOT NULL, -- no foreign key: outlives the memory
	operation     TEXT NOT NULL CHECK (operation IN ('created', 'modified', 'deleted')),
	path          TEXT,    -- NULL once redacted
	content       TEXT,    -- NULL for a deletion and once redacted
	sha256        TEXT,
	size          INTEGER,
	created_at    INTEGER NOT NULL,
	actor_type    TEXT NOT NULL,
	actor_id      TEXT NOT NULL,
	redacted_at   INTEGER,
	redactor_type TEXT,
	redactor_id   TEXT
) STRICT;

CREATE INDEX versions_by_store ON versions (store_id, id DESC);
CREATE INDEX versions_by_memory ON versions (store_id, memory_id, id DESC);
CREATE INDEX versions_by_actor ON versions (store_id, actor_type, actor_id, id DESC);

-- The whole schema of memstore on PostgreSQL. Times are unix nanoseconds
-- (UTC), so that they round-trip exactly; IDs are time-ordered ULIDs, so
-- "id DESC" is newest first. Every ID and path is COLLATE "C": lists
-- order them by their bytes whatever the database's locale. Text that a
-- user may give with NUL characters in it (content, descriptions, titles,
-- instructions), which PostgreSQL's text cannot hold, is kept as bytea,
-- byte for byte.

CREATE TABLE workspaces (
	id         text COLLATE "C" PRIMARY KEY,
	name       text NOT NULL CONSTRAINT workspaces_name_key UNIQUE,
	created_at bigint NOT NULL
);

-- A key is kept only as the SHA-256 of its secret: a leaked database does
-- not leak credentials.
CREATE TABLE api_keys (
	id            text COLLATE "C" PRIMARY KEY,
	workspace_id  text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	name          text NOT NULL DEFAULT '',
	secret_sha256 text NOT NULL UNIQUE, -- also the index of every authentication
	hint          text NOT NULL,
	created_at    bigint NOT NULL,
	last_used_at  bigint,
	revoked_at    bigint
);

CREATE INDEX api_keys_by_workspace ON api_keys (workspace_id, id);

-- Every write of a store's memories first locks the store's row, which
-- serializes them (see the package doc).
CREATE TABLE stores (
	id           text COLLATE "C" PRIMARY KEY,
	workspace_id text COLLATE "C" NOT NULL,
	name         text NOT NULL,
	description  bytea NOT NULL,
	metadata     text NOT NULL, -- JSON object of strings
	created_at   bigint NOT NULL,
	updated_at   bigint NOT NULL,
	archived_at  bigint
);

-- The stores list: newest first within a workspace, keyset on (created_at, id).
CREATE INDEX stores_by_workspace ON stores (workspace_id, created_at DESC, id DESC);

-- Live memories only: a deleted memory survives as its versions.
CREATE TABLE memories (
	id         text COLLATE "C" PRIMARY KEY,
	store_id   text COLLATE "C" NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
	path       text COLLATE "C" NOT NULL,
	content    bytea NOT NULL,
	sha256     text NOT NULL,
	size       bigint NOT NULL,
	version_id text COLLATE "C" NOT NULL,
	created_at bigint NOT NULL,
	updated_at bigint NOT NULL,
	-- What search reads, made with the path and content (search.go):
	-- search_text is the two folded (lower-cased, without diacritics),
	-- for substrings; search_words their words, stemmed, the path's
	-- weighted A and the content's B.
	search_text  text NOT NULL,
	search_words tsvector NOT NULL,
	-- Also the index of path lists, overlap checks and ancestor lookups;
	-- a backstop should two writes of one store ever run at once.
	CONSTRAINT memories_path_key UNIQUE (store_id, path)
);

-- Search: words stemmed by Snowball's English stemmer, with no stop
-- words (a query leaves out its own: searchtext.ParseQuery), and
-- trigrams for substrings. Only live memories are indexed, so versions,
-- deleted memories and redacted content never match.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE TEXT SEARCH DICTIONARY memstore_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION memstore (COPY = english);
ALTER TEXT SEARCH CONFIGURATION memstore ALTER MAPPING REPLACE english_stem WITH memstore_stem;
CREATE INDEX memories_words ON memories USING gin (search_words);
CREATE INDEX memories_trigrams ON memories USING gin (search_text gin_trgm_ops);

CREATE TABLE versions (
	id            text COLLATE "C" PRIMARY KEY,
	store_id      text COLLATE "C" NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
	memory_id     text COLLATE "C" NOT NULL, -- no foreign key: outlives the memory
	operation     text NOT NULL CHECK (operation IN ('created', 'modified', 'deleted')),
	path          text COLLATE "C", -- NULL once redacted
	content       bytea,            -- NULL for a deletion and once redacted
	sha256        text,
	size          bigint,
	created_at    bigint NOT NULL,
	actor_type    text NOT NULL,
	actor_id      text COLLATE "C" NOT NULL,
	redacted_at   bigint,
	redactor_type text,
	redactor_id   text
);

CREATE INDEX versions_by_store ON versions (store_id, id DESC);
CREATE INDEX versions_by_memory ON versions (store_id, memory_id, id DESC);
CREATE INDEX versions_by_actor ON versions (store_id, actor_type, actor_id, id DESC);

CREATE TABLE sessions (
	id           text COLLATE "C" PRIMARY KEY,
	workspace_id text COLLATE "C" NOT NULL,
	title        bytea NOT NULL,
	metadata     text NOT NULL, -- JSON object of strings
	fields       text NOT NULL, -- JSON object: the create request's other fields, as sent
	created_at   bigint NOT NULL,
	updated_at   bigint NOT NULL,
	archived_at  bigint
);

-- The sessions list: newest first within a workspace, keyset on (created_at, id).
CREATE INDEX sessions_by_workspace ON sessions (workspace_id, created_at DESC, id DESC);

-- The stores of a session, in the order given at creation. store_id has no
-- foreign key on purpose: a session is history, so deleting a store leaves
-- its attachments as they were (name, description and mount path are
-- snapshots anyway).
CREATE TABLE session_stores (
	session_id   text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	position     integer NOT NULL,
	store_id     text COLLATE "C" NOT NULL,
	access       text NOT NULL CHECK (access IN ('read_write', 'read_only')),
	instructions bytea NOT NULL,
	name         text NOT NULL,
	description  bytea NOT NULL,
	mount_path   text NOT NULL,
	-- The session's created_at, which never changes: with it the list of
	-- a store's sessions pages through this index alone.
	created_at   bigint NOT NULL,
	PRIMARY KEY (session_id, position)
);

CREATE INDEX session_stores_by_store ON session_stores (store_id, created_at DESC, session_id DESC);

-- A token, like an API key, is kept only as the SHA-256 of its secret.
CREATE TABLE session_tokens (
	id            text COLLATE "C" PRIMARY KEY,
	session_id    text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	workspace_id  text COLLATE "C" NOT NULL,
	secret_sha256 text NOT NULL UNIQUE, -- also the index of every authentication
	hint          text NOT NULL,
	created_at    bigint NOT NULL,
	expires_at    bigint, -- NULL: no expiry
	revoked_at    bigint
);

CREATE INDEX session_tokens_by_session ON session_tokens (session_id, created_at, id);

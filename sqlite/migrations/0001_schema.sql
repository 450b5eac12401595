-- The schema of a memstore database file, as the first release makes it.
-- Later releases change it by the migrations numbered after this one;
-- migrate (sqlite.go) records the last one applied in user_version, and
-- marks the file as memstore's in application_id.
--
-- Times are unix nanoseconds (UTC); IDs are time-ordered ULIDs, so
-- "id DESC" is newest first. Every table is STRICT: a value of the wrong
-- type is an error, never a silent conversion. Text is kept as given,
-- byte for byte, under the BINARY collation (byte order).
--
-- The search indexes themselves are not here but in a file of their own
-- beside the database (searchindex.sql), kept by the indexer; here are
-- what tells it which memories to index (Search, below).

------------------------------------------------------------------------
-- Workspaces and API keys

CREATE TABLE workspaces (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	created_at INTEGER NOT NULL
) STRICT;

-- A key is kept only as the SHA-256 of its secret: a leaked database
-- does not leak credentials.
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

------------------------------------------------------------------------
-- Stores, their live memories and the versions of those memories

CREATE TABLE stores (
	id           TEXT PRIMARY KEY,
	workspace_id TEXT NOT NULL,
	name         TEXT NOT NULL,
	description  TEXT NOT NULL DEFAULT '',
	metadata     TEXT NOT NULL DEFAULT '{}', -- JSON object of strings
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL,
	archived_at  INTEGER,
	-- The count of the store's live memories and the sum of their
	-- content sizes in bytes, kept by the triggers below: the limit of
	-- memories per store reads the count on every create, and the
	-- console shows both for every store of a list, which counting the
	-- rows would make cost in proportion to the store.
	memory_count INTEGER NOT NULL DEFAULT 0,
	content_size INTEGER NOT NULL DEFAULT 0
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

-- The count and size of each store's memories change in the statement
-- that inserts, deletes or resizes a memory, and so in its transaction,
-- whatever writes it (a write of the API, a restore); a deleted store's
-- memories update no row.
CREATE TRIGGER memories_count_insert AFTER INSERT ON memories BEGIN
	UPDATE stores SET memory_count = memory_count + 1, content_size = content_size + new.size WHERE id = new.store_id;
END;

CREATE TRIGGER memories_count_delete AFTER DELETE ON memories BEGIN
	UPDATE stores SET memory_count = memory_count - 1, content_size = content_size - old.size WHERE id = old.store_id;
END;

CREATE TRIGGER memories_size_update AFTER UPDATE OF size ON memories WHEN new.size != old.size BEGIN
	UPDATE stores SET content_size = content_size + new.size - old.size WHERE id = new.store_id;
END;

-- Every write adds a version, so a version costs as few b-tree inserts
-- as can be: the table and three indexes, with no primary key of its
-- own. Every lookup of a version by ID also names its store (version.go
-- and the triggers below), so the unique index on (store_id, id) is its
-- key: an ID is unique by construction, and within a store by that
-- index. The indexes are ascending: a new version's ID is the highest,
-- so it goes at the right edge of each index, which SQLite splits more
-- cheaply than the left edge of a descending one; lists newest first
-- read them backwards. (A WITHOUT ROWID table keyed by ID is slower: its
-- rows of about a kilobyte of content would live in an index b-tree,
-- whose cells hold at most about a quarter of a page, and most versions
-- would spill into overflow pages.)
CREATE TABLE versions (
	id            TEXT NOT NULL,
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

CREATE UNIQUE INDEX versions_by_store ON versions (store_id, id);
CREATE INDEX versions_by_memory ON versions (store_id, memory_id, id);
CREATE INDEX versions_by_actor ON versions (store_id, actor_type, actor_id, id);

------------------------------------------------------------------------
-- The change feed (memstore's feed.go)

-- One row per change of a store, numbered without gaps within the store
-- in the order of the commits (the single writer numbers them). No path,
-- hash or content: those are read from the version an event names, so
-- that a redaction erases them from the feed too. A store's events go
-- with it. The rows are narrow and keyed by (store_id, seq) alone
-- (WITHOUT ROWID), so that each change adds one b-tree insert at the
-- right edge of its store's range.
CREATE TABLE events (
	store_id   TEXT NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	type       TEXT NOT NULL,
	version_id TEXT,          -- NULL for store.archived
	actor_type TEXT NOT NULL, -- '' when unknown
	actor_id   TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (store_id, seq)
) STRICT, WITHOUT ROWID;

------------------------------------------------------------------------
-- Search: what tells the indexer (indexer.go) which memories to index

-- The search indexes are FTS5 indexes over the live memories, keyed by
-- memories.rowid, in a file of their own (searchindex.sql), kept by an
-- indexer that runs beside the writer rather than inside every write's
-- transaction. The triggers below note which memories changed, whichever
-- statement changes them, in the same transaction as the change, so
-- that no change is lost to the indexes. Only live memories are indexed,
-- so versions, deleted memories and redacted content never match.
-- memstore never runs VACUUM, which may renumber the rowids of a table
-- without an INTEGER PRIMARY KEY (search_test.go checks that this SQLite
-- keeps them).

-- One row per memory (memories.rowid) changed since the indexer last
-- indexed it. changes is search_seq's count at the memory's last change:
-- the indexer removes a row only if it did not change while it was being
-- indexed (a count since the row was made could look unchanged once
-- another process's indexer removed the row and a write made it again).
-- A row may name a memory that is gone, or a new memory that took the
-- rowid of one that is gone; the indexer handles both.
CREATE TABLE search_queue (
	memory_rowid INTEGER PRIMARY KEY,
	changes      INTEGER NOT NULL DEFAULT 0
) STRICT;

-- search_seq counts the changes noted in search_queue, by whichever
-- process makes them; the index file records the count its indexes hold
-- (search_state.seq). A search compares the two, in one read
-- transaction, to tell whether the indexes hold every change committed
-- before it began, including another process's, which does not wake
-- this process's indexer.
CREATE TABLE search_seq (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	n  INTEGER NOT NULL
) STRICT;
INSERT INTO search_seq VALUES (1, 0);

-- (ON CONFLICT DO UPDATE, not INSERT OR REPLACE, whose conflict clause
-- the statement that fired the trigger would override.)
CREATE TRIGGER memories_search_insert AFTER INSERT ON memories BEGIN
	UPDATE search_seq SET n = n + 1;
	INSERT INTO search_queue (memory_rowid, changes) VALUES (new.rowid, (SELECT n FROM search_seq))
	ON CONFLICT DO UPDATE SET changes = excluded.changes;
END;

CREATE TRIGGER memories_search_delete AFTER DELETE ON memories BEGIN
	UPDATE search_seq SET n = n + 1;
	INSERT INTO search_queue (memory_rowid, changes) VALUES (old.rowid, (SELECT n FROM search_seq))
	ON CONFLICT DO UPDATE SET changes = excluded.changes;
END;

CREATE TRIGGER memories_search_update AFTER UPDATE OF path, content ON memories
WHEN old.path IS NOT new.path OR old.content IS NOT new.content BEGIN
	UPDATE search_seq SET n = n + 1;
	INSERT INTO search_queue (memory_rowid, changes) VALUES (old.rowid, (SELECT n FROM search_seq))
	ON CONFLICT DO UPDATE SET changes = excluded.changes;
END;

-- A deletion leaves the forgotten words in the index pages, marked
-- deleted, until FTS5 merges those pages. Redaction is the promise that
-- text leaves the files: a redaction of a version that is not the
-- current one of a live memory asks the indexer to purge the indexes of
-- the entries they only marked deleted, since the redacted text may
-- still be in their pages. requests counts the redactions, as changes
-- does above.
CREATE TABLE search_purge (
	id       INTEGER PRIMARY KEY CHECK (id = 1),
	requests INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE TRIGGER versions_search_redact AFTER UPDATE OF redacted_at ON versions
WHEN old.redacted_at IS NULL AND new.redacted_at IS NOT NULL AND old.content IS NOT NULL
	AND NOT EXISTS (SELECT 1 FROM memories WHERE id = old.memory_id AND version_id = old.id) BEGIN
	INSERT INTO search_purge (id) VALUES (1)
	ON CONFLICT DO UPDATE SET requests = requests + 1;
END;

-- Redacting the current version of a live memory leaves the memory as it
-- is, and so its text in the files. Once the memory's text changes or
-- the memory is deleted, the text leaves the files as a redaction's
-- would: the indexes are purged of the entries they only marked
-- deleted, and the write-ahead logs emptied (indexer.go).
CREATE TRIGGER memories_redacted_text_changed AFTER UPDATE OF path, content ON memories
WHEN (old.path IS NOT new.path OR old.content IS NOT new.content)
	AND EXISTS (SELECT 1 FROM versions WHERE store_id = old.store_id AND id = old.version_id AND redacted_at IS NOT NULL) BEGIN
	INSERT INTO search_purge (id) VALUES (1)
	ON CONFLICT DO UPDATE SET requests = requests + 1;
END;

CREATE TRIGGER memories_redacted_text_deleted AFTER DELETE ON memories
WHEN EXISTS (SELECT 1 FROM versions WHERE store_id = old.store_id AND id = old.version_id AND redacted_at IS NOT NULL) BEGIN
	INSERT INTO search_purge (id) VALUES (1)
	ON CONFLICT DO UPDATE SET requests = requests + 1;
END;

------------------------------------------------------------------------
-- Sessions, the stores attached to them and their tokens

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

-- A token, like an API key, is kept only as the SHA-256 of its secret.
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

-- The quotas of live sessions per workspace and of live tokens per
-- session (memstore's quota.go) count, in the transaction of each
-- create, only what is live: these partial indexes hold nothing else, so
-- that the count costs what the limit allows, however many archived
-- sessions and revoked tokens are kept.
CREATE INDEX sessions_live ON sessions (workspace_id) WHERE archived_at IS NULL;

CREATE INDEX session_tokens_live ON session_tokens (session_id, expires_at) WHERE revoked_at IS NULL;

------------------------------------------------------------------------
-- Revocations between processes (revoke.go)

-- The transaction of each revocation (a key or token revoked, a session
-- archived or deleted, a session's stores changed) adds a row, and every
-- server on the file reads the rows added since it last looked, so that
-- it ends what another process's revocation stopped within moments, as
-- it does for its own. Only the newest rows are kept.
CREATE TABLE revocations (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT, -- numbered without gaps: a gap is a row pruned unread
	origin     TEXT NOT NULL,                     -- the handle that revoked, whose listeners heard at once
	api_key_id TEXT NOT NULL DEFAULT '',
	session_id TEXT NOT NULL DEFAULT '',
	token_id   TEXT NOT NULL DEFAULT '',
	refresh    INTEGER NOT NULL DEFAULT 0 CHECK (refresh IN (0, 1))
) STRICT;

------------------------------------------------------------------------
-- Console users, their sign-ins and the sign-in attempts

-- A password is kept as its argon2id hash with the hash's parameters, a
-- sign-in (a console session or a one-time link) only as the SHA-256 of
-- its secret: a leaked database leaks neither.
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

-- The console's sign-in attempts, counted where every server on the
-- database sees them: a token bucket per key, the SHA-256 of a user
-- name with its workspace or of a client address, never the name or the
-- address itself. A count whose full_at has passed has refilled, is as
-- good as none, and is deleted.
CREATE TABLE sign_in_attempts (
	key_sha256 TEXT PRIMARY KEY,
	tokens     REAL NOT NULL,
	at         INTEGER NOT NULL,
	full_at    INTEGER NOT NULL
) STRICT;

CREATE INDEX sign_in_attempts_by_full ON sign_in_attempts (full_at);

------------------------------------------------------------------------
-- Webhooks (memstore's webhook.go and webhook_delivery.go)

-- The signing secret is kept as it is, since signing needs it; no API
-- answer but create and regenerate shows it. enabled_events is the event
-- types, comma-joined.
CREATE TABLE webhook_endpoints (
	id              TEXT PRIMARY KEY,
	workspace_id    TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	name            TEXT NOT NULL,
	description     TEXT NOT NULL,
	url             TEXT NOT NULL,
	enabled_events  TEXT NOT NULL,
	state           TEXT NOT NULL,
	disabled_reason TEXT NOT NULL,
	secret          TEXT NOT NULL,
	created_at      INTEGER NOT NULL,
	updated_at      INTEGER NOT NULL
) STRICT;

CREATE INDEX webhook_endpoints_by_workspace ON webhook_endpoints (workspace_id, id);

-- One event to one endpoint: retried, with its next attempt persisted,
-- until it is delivered or has failed every attempt; the log of an
-- endpoint. Kept in its primary key's order (WITHOUT ROWID), with one
-- index besides, so that each delivery goes into two b-trees; pruning
-- needs no index by age, since an event's ID begins with its time.
CREATE TABLE webhook_deliveries (
	endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
	event_id        TEXT NOT NULL,
	workspace_id    TEXT NOT NULL,
	type            TEXT NOT NULL,
	store_id        TEXT NOT NULL,
	memory_id       TEXT NOT NULL,
	version_id      TEXT NOT NULL,
	event_at        INTEGER NOT NULL,
	state           TEXT NOT NULL, -- pending, delivered, failed
	attempts        INTEGER NOT NULL,
	next_attempt_at INTEGER NOT NULL,
	last_attempt_at INTEGER NOT NULL, -- 0 before the first
	last_status     INTEGER NOT NULL, -- 0 when no HTTP answer came
	last_error      TEXT NOT NULL,
	PRIMARY KEY (endpoint_id, event_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';

-- The change feed is the outbox of memstore's own webhook events: a
-- change of a memory writes its event and nothing more, and each endpoint
-- keeps a cursor in the feed of every store of its workspace, which the
-- deliverer's claims move past the events they turn into deliveries. The
-- events of stores themselves (created, archived, deleted) write their
-- deliveries in their transaction instead (below): they are rare, and
-- created and deleted are in no feed.
CREATE TABLE webhook_cursors (
	endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
	store_id    TEXT NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
	seq         INTEGER NOT NULL, -- the last event passed
	owed_to     INTEGER,          -- of a disabled endpoint: the end of the feed when it was disabled
	PRIMARY KEY (endpoint_id, store_id)
) STRICT, WITHOUT ROWID;

-- A claim reads the cursors of the stores that changed; a store's
-- deletion removes its cursors.
CREATE INDEX webhook_cursors_by_store ON webhook_cursors (store_id);

-- An endpoint is owed the changes made while it is enabled: its cursors
-- start at the end of the feeds when it is made, when it is enabled
-- again, and when it starts asking for memstore's own events. Disabled,
-- it keeps in owed_to where each feed ended, and the changes up to there
-- are delivered before it is enabled again (ChangeWebhook in webhook.go).
CREATE TRIGGER webhook_cursors_of_endpoint AFTER INSERT ON webhook_endpoints
BEGIN
	INSERT INTO webhook_cursors (endpoint_id, store_id, seq)
	SELECT NEW.id, s.id, coalesce((SELECT max(seq) FROM events e WHERE e.store_id = s.id), 0)
	FROM stores s WHERE s.workspace_id = NEW.workspace_id;
END;

CREATE TRIGGER webhook_cursors_owed AFTER UPDATE OF state ON webhook_endpoints
WHEN OLD.state = 'enabled' AND NEW.state <> 'enabled' AND instr(OLD.enabled_events, 'memstore.') > 0
BEGIN
	UPDATE webhook_cursors SET owed_to = (SELECT max(seq) FROM events e WHERE e.store_id = webhook_cursors.store_id)
	WHERE endpoint_id = NEW.id AND seq < (SELECT max(seq) FROM events e WHERE e.store_id = webhook_cursors.store_id);
END;

CREATE TRIGGER webhook_cursors_at_end AFTER UPDATE OF state, enabled_events ON webhook_endpoints
WHEN NEW.state = 'enabled' AND (OLD.state <> 'enabled'
	OR (instr(OLD.enabled_events, 'memstore.') = 0 AND instr(NEW.enabled_events, 'memstore.') > 0))
BEGIN
	UPDATE webhook_cursors SET seq = max(seq, coalesce((SELECT max(seq) FROM events e WHERE e.store_id = webhook_cursors.store_id), 0))
	WHERE endpoint_id = NEW.id AND owed_to IS NULL;
END;

-- A new store's feed is empty.
CREATE TRIGGER webhook_cursors_of_store AFTER INSERT ON stores
BEGIN
	INSERT INTO webhook_cursors (endpoint_id, store_id, seq) SELECT w.id, NEW.id, 0 FROM webhook_endpoints w WHERE w.workspace_id = NEW.workspace_id;
END;

-- webhook_events is where the triggers below put an event of a store
-- itself: inserting into it adds one pending delivery per enabled
-- endpoint of the workspace that asks for the event's type, in the
-- transaction of the change (a committed change is never lost to its
-- webhooks, an uncommitted one never sent), due from the event's time.
-- It keeps nothing.
CREATE VIEW webhook_events (workspace_id, type, store_id, memory_id, version_id, created_at) AS
SELECT '', '', '', '', '', 0 WHERE 0;

-- An event's ID is memstore's: "wevt_" and a lowercase ULID, whose
-- 48-bit time is the event's millisecond, followed by its sub-millisecond
-- nanoseconds (20 bits) and 48 random bits as 12 hex digits (which are
-- ULID digits too), so that IDs sort as events were made. The ID is an
-- uncorrelated subquery, computed once per event: every endpoint's
-- delivery of one event has the same ID.
CREATE TRIGGER webhook_events_deliveries INSTEAD OF INSERT ON webhook_events
BEGIN
	INSERT INTO webhook_deliveries (endpoint_id, event_id, workspace_id, type, store_id, memory_id, version_id, event_at,
		state, attempts, next_attempt_at, last_attempt_at, last_status, last_error)
	SELECT w.id, (SELECT 'wevt_'
			|| substr(a, (ms >> 45 & 31) + 1, 1) || substr(a, (ms >> 40 & 31) + 1, 1) || substr(a, (ms >> 35 & 31) + 1, 1)
			|| substr(a, (ms >> 30 & 31) + 1, 1) || substr(a, (ms >> 25 & 31) + 1, 1) || substr(a, (ms >> 20 & 31) + 1, 1)
			|| substr(a, (ms >> 15 & 31) + 1, 1) || substr(a, (ms >> 10 & 31) + 1, 1) || substr(a, (ms >> 5 & 31) + 1, 1)
			|| substr(a, (ms & 31) + 1, 1)
			|| substr(a, (ns >> 15 & 31) + 1, 1) || substr(a, (ns >> 10 & 31) + 1, 1) || substr(a, (ns >> 5 & 31) + 1, 1)
			|| substr(a, (ns & 31) + 1, 1)
			|| lower(hex(randomblob(6)))
			FROM (SELECT '0123456789abcdefghjkmnpqrstvwxyz' AS a, NEW.created_at / 1000000 AS ms, NEW.created_at % 1000000 AS ns)),
		NEW.workspace_id, NEW.type, NEW.store_id, NEW.memory_id, NEW.version_id, NEW.created_at,
		'pending', 0, NEW.created_at, 0, 0, ''
	FROM webhook_endpoints w
	WHERE w.workspace_id = NEW.workspace_id AND w.state = 'enabled' AND instr(',' || w.enabled_events || ',', ',' || NEW.type || ',') > 0;
END;

CREATE TRIGGER webhook_events_store_created AFTER INSERT ON stores
BEGIN
	INSERT INTO webhook_events VALUES (NEW.workspace_id, 'memory_store.created', NEW.id, '', '', NEW.created_at);
END;

-- Of the feed, only an archive writes deliveries in its transaction: the
-- hosted API's memory_store.archived.
CREATE TRIGGER webhook_events_of_archive AFTER INSERT ON events
WHEN NEW.type = 'store.archived'
BEGIN
	INSERT INTO webhook_events
	SELECT s.workspace_id, 'memory_store.archived', NEW.store_id, '', '', NEW.created_at FROM stores s WHERE s.id = NEW.store_id;
END;

-- A deletion is timed now, but never before the store's last change (its
-- archive, within the same millisecond), so that its ID sorts after it.
CREATE TRIGGER webhook_events_store_deleted AFTER DELETE ON stores
BEGIN
	INSERT INTO webhook_events VALUES (OLD.workspace_id, 'memory_store.deleted', OLD.id, '', '',
		max(CAST(unixepoch('subsec') * 1000000000 AS INTEGER), OLD.updated_at + 1));
END;

-- The schema of a memstore database on PostgreSQL, as the first release
-- makes it. Later releases change it by the migrations numbered after
-- this one; migrate (postgres.go) records each one applied in the table
-- memstore_schema.
--
-- Times are unix nanoseconds (UTC), so that they round-trip exactly; IDs
-- are time-ordered ULIDs, so "id DESC" is newest first. Every ID and path
-- is COLLATE "C": lists order them by their bytes whatever the
-- database's locale. Text that a user may give with NUL characters in it
-- (content, descriptions, titles, instructions), which PostgreSQL's text
-- cannot hold, is kept as bytea, byte for byte.

------------------------------------------------------------------------
-- Workspaces and API keys

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

------------------------------------------------------------------------
-- Stores, their live memories and the versions of those memories

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
	archived_at  bigint,
	-- The count of the store's live memories and the sum of their
	-- content sizes in bytes: the limit of memories per store reads the
	-- count on every create, a search of a whole store reads it for its
	-- inverse document frequencies, and the console shows both for every
	-- store of a list, which counting the rows would make cost in
	-- proportion to the store. The statements that insert, update and
	-- delete a memory keep them (memory.go), under the store's lock; a
	-- restore sets them once its memories are in (dump.go).
	memory_count bigint NOT NULL DEFAULT 0,
	content_size bigint NOT NULL DEFAULT 0
);

-- The stores list: newest first within a workspace, keyset on (created_at, id).
CREATE INDEX stores_by_workspace ON stores (workspace_id, created_at DESC, id DESC);

-- Live memories only: a deleted memory survives as its versions.
--
-- A memory's row stays whole up to a page (toast_tuple_target), and in a
-- larger one the content and folded text go out of line before the
-- search vector does (STORAGE MAIN, below): PostgreSQL would otherwise
-- move a row's largest values out of line once it passes about 2 KB,
-- which a memory of 500 bytes does with its folded text and search
-- vector (the vector is about twice the text), and a search's scan of
-- the newest memories with a common word would read the TOAST table for
-- each one, three or four pages a memory instead of one.
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
) WITH (toast_tuple_target = 8160);

ALTER TABLE memories ALTER COLUMN search_words SET STORAGE MAIN;

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

------------------------------------------------------------------------
-- Search (search.go)

-- Words stemmed by Snowball's English stemmer, with no stop words (a
-- query leaves out its own: searchtext.ParseQuery), and trigrams for
-- substrings. Only live memories are indexed, so versions, deleted
-- memories and redacted content never match.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE TEXT SEARCH DICTIONARY memstore_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION memstore (COPY = english);
ALTER TEXT SEARCH CONFIGURATION memstore ALTER MAPPING REPLACE english_stem WITH memstore_stem;
CREATE INDEX memories_words ON memories USING gin (search_words);
CREATE INDEX memories_trigrams ON memories USING gin (search_text gin_trgm_ops);

-- The words of each memory's path, the search vector's words of weight
-- A, under an index of their own: when a common term fills its window of
-- the newest memories, a search looks up the memories with the term in
-- their path whatever their age, which the index of every word would
-- serve only by reading each memory with the term.
CREATE INDEX memories_path_words ON memories USING gin (ts_filter(search_words, '{a}'));

------------------------------------------------------------------------
-- The change feed (memstore's feed.go)

-- One row per change of a store, numbered without gaps within the store
-- in the order of the commits. Every write that adds one holds the lock
-- on its store's row, which serializes them, and reads the last number
-- after taking it (at READ COMMITTED each statement sees what committed
-- before it began). No path, hash or content: those are read from the
-- version an event names, so that a redaction erases them from the feed
-- too. A store's events go with it.
CREATE TABLE events (
	store_id   text COLLATE "C" NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
	seq        bigint NOT NULL,
	type       text NOT NULL,
	version_id text COLLATE "C",  -- NULL for store.archived
	actor_type text NOT NULL,     -- '' when unknown
	actor_id   text COLLATE "C" NOT NULL,
	created_at bigint NOT NULL,
	PRIMARY KEY (store_id, seq)
);

------------------------------------------------------------------------
-- Sessions, the stores attached to them and their tokens

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

-- The quotas of live sessions per workspace and of live tokens per
-- session (memstore's quota.go) count, in the transaction of each
-- create, only what is live: these partial indexes hold nothing else, so
-- that the count costs what the limit allows, however many archived
-- sessions and revoked tokens are kept.
CREATE INDEX sessions_live ON sessions (workspace_id) WHERE archived_at IS NULL;

CREATE INDEX session_tokens_live ON session_tokens (session_id, expires_at) WHERE revoked_at IS NULL;

-- The agent a session's kept fields name, by memstore.SessionAgentID's
-- rule (the agent field when a string, else its id), which the list of
-- sessions by agent compares: NULL, matching no agent, when PostgreSQL's
-- JSON functions cannot read the fields, as for the escape \u0000 or an
-- unpaired surrogate, which memstore refuses but an earlier memstore
-- kept. Such a session fails no list of the others.
CREATE FUNCTION session_agent_id(fields text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
	agent jsonb;
BEGIN
	agent := fields::jsonb -> 'agent';
	RETURN CASE jsonb_typeof(agent) WHEN 'string' THEN agent #>> '{}' WHEN 'object' THEN agent ->> 'id' END;
EXCEPTION WHEN untranslatable_character OR invalid_text_representation THEN
	RETURN NULL;
END $$;

------------------------------------------------------------------------
-- Console users, their sign-ins and the sign-in attempts

-- A password is kept as its argon2id hash with the hash's parameters, a
-- sign-in (a console session or a one-time link) only as the SHA-256 of
-- its secret: a leaked database leaks neither.
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

-- The console's sign-in attempts, counted where every server on the
-- database sees them: a token bucket per key, the SHA-256 of a user
-- name with its workspace or of a client address, never the name or the
-- address itself. A count whose full_at has passed has refilled, is as
-- good as none, and is deleted.
CREATE TABLE sign_in_attempts (
	key_sha256 text COLLATE "C" PRIMARY KEY,
	tokens     double precision NOT NULL,
	at         bigint NOT NULL,
	full_at    bigint NOT NULL
);

CREATE INDEX sign_in_attempts_by_full ON sign_in_attempts (full_at);

------------------------------------------------------------------------
-- Webhooks (memstore's webhook.go and webhook_delivery.go)

-- The signing secret is kept as it is, since signing needs it; no API
-- answer but create and regenerate shows it.
CREATE TABLE webhook_endpoints (
	id              text COLLATE "C" PRIMARY KEY,
	workspace_id    text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	name            text NOT NULL,
	description     text NOT NULL,
	url             text NOT NULL,
	enabled_events  text[] NOT NULL,
	state           text NOT NULL CHECK (state IN ('enabled', 'disabled')),
	disabled_reason text NOT NULL,
	secret          text NOT NULL,
	created_at      bigint NOT NULL,
	updated_at      bigint NOT NULL
);

CREATE INDEX webhook_endpoints_by_workspace ON webhook_endpoints (workspace_id, id);

-- One event to one endpoint: retried, with its next attempt persisted,
-- until it is delivered or has failed every attempt; the log of an
-- endpoint.
CREATE TABLE webhook_deliveries (
	endpoint_id     text COLLATE "C" NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
	event_id        text COLLATE "C" NOT NULL,
	workspace_id    text COLLATE "C" NOT NULL,
	type            text NOT NULL,
	store_id        text COLLATE "C" NOT NULL,
	memory_id       text COLLATE "C" NOT NULL,
	version_id      text COLLATE "C" NOT NULL,
	event_at        bigint NOT NULL,
	state           text NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
	attempts        integer NOT NULL,
	next_attempt_at bigint NOT NULL,
	last_attempt_at bigint NOT NULL, -- 0 before the first
	last_status     integer NOT NULL, -- 0 when no HTTP answer came
	last_error      text NOT NULL,
	PRIMARY KEY (endpoint_id, event_id)
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_by_age ON webhook_deliveries (event_at);

-- The change feed is the outbox of memstore's own webhook events: a
-- change of a memory writes its event and nothing more, and each endpoint
-- keeps a cursor in the feed of every store of its workspace, which the
-- deliverers' claims move past the events they turn into deliveries. A
-- claim locks the cursors it moves (SKIP LOCKED), so that the deliverers
-- of several replicas never turn the same events into deliveries; a
-- store's events are numbered under its row's lock, in the order of
-- their commits, so a cursor passes none unseen. The events of stores
-- themselves (created, archived, deleted) write their deliveries in
-- their transaction instead (below): they are rare, and created and
-- deleted are in no feed.
CREATE TABLE webhook_cursors (
	endpoint_id text COLLATE "C" NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
	store_id    text COLLATE "C" NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
	seq         bigint NOT NULL, -- the last event passed
	-- While the endpoint is disabled, the end of the feed when it was:
	-- the events up to there are owed to it. NULL when none are.
	owed_to     bigint,
	PRIMARY KEY (endpoint_id, store_id)
);

-- A claim reads the cursors of the stores that changed; a store's
-- deletion removes its cursors.
CREATE INDEX webhook_cursors_by_store ON webhook_cursors (store_id);

-- The end of a store's feed: its last event's number, 0 for none.
CREATE FUNCTION webhook_feed_end(store text) RETURNS bigint
LANGUAGE sql STABLE AS $$
	SELECT coalesce((SELECT seq FROM events WHERE store_id = store ORDER BY seq DESC LIMIT 1), 0)
$$;

-- Whether an endpoint asking for types asks for some of memstore's own
-- (memstore.WebhookOwnPrefix), which the feeds deliver: the cursors of
-- the others are not read.
CREATE FUNCTION webhook_asks_feed(types text[]) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
	SELECT EXISTS (SELECT 1 FROM unnest(types) t WHERE starts_with(t, 'memstore.'))
$$;

-- An endpoint hears of the changes made while it is enabled: its cursors
-- start at the end of the feeds when it is made, when it is enabled
-- again (but for those that are owed events, below), and when it starts
-- asking for memstore's own events. A cursor never moves back. The
-- stores are locked (KEY SHARE) as they are read, so that one whose
-- deletion commits meanwhile is passed over rather than failing the
-- cursor's foreign key.
CREATE FUNCTION webhook_cursors_of_endpoint() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		INSERT INTO webhook_cursors (endpoint_id, store_id, seq)
		SELECT NEW.id, s.id, webhook_feed_end(s.id) FROM stores s WHERE s.workspace_id = NEW.workspace_id FOR KEY SHARE;
	ELSE
		UPDATE webhook_cursors SET seq = greatest(seq, webhook_feed_end(store_id)) WHERE endpoint_id = NEW.id AND owed_to IS NULL;
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER webhook_cursors_of_endpoint AFTER INSERT ON webhook_endpoints
FOR EACH ROW EXECUTE FUNCTION webhook_cursors_of_endpoint();

CREATE TRIGGER webhook_cursors_at_end AFTER UPDATE OF state, enabled_events ON webhook_endpoints
FOR EACH ROW WHEN (NEW.state = 'enabled' AND (OLD.state <> 'enabled'
	OR (NOT webhook_asks_feed(OLD.enabled_events) AND webhook_asks_feed(NEW.enabled_events))))
EXECUTE FUNCTION webhook_cursors_of_endpoint();

-- An endpoint is owed the changes made while it was enabled: when it is
-- disabled (by a user, or by the deliverer once a delivery failed every
-- attempt), each of its cursors short of the end records where the feed
-- then ended. When it is enabled again, memstore (ChangeWebhook) first
-- makes the deliveries of the events up to there, clearing owed_to, and
-- the trigger above then moves the cursors past the events made while it
-- was disabled. An endpoint that asked for none of memstore's own events
-- is owed none of them.
CREATE FUNCTION webhook_cursors_owed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE webhook_cursors SET owed_to = webhook_feed_end(store_id)
	WHERE endpoint_id = NEW.id AND seq < webhook_feed_end(store_id);
	RETURN NULL;
END $$;

CREATE TRIGGER webhook_cursors_owed AFTER UPDATE OF state ON webhook_endpoints
FOR EACH ROW WHEN (OLD.state = 'enabled' AND NEW.state <> 'enabled' AND webhook_asks_feed(OLD.enabled_events))
EXECUTE FUNCTION webhook_cursors_owed();

-- A new store's feed is empty. The endpoints are locked as they are
-- read, as the stores are above.
CREATE FUNCTION webhook_cursors_of_store() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO webhook_cursors (endpoint_id, store_id, seq)
	SELECT w.id, NEW.id, 0 FROM webhook_endpoints w WHERE w.workspace_id = NEW.workspace_id FOR KEY SHARE;
	RETURN NULL;
END $$;

CREATE TRIGGER webhook_cursors_of_store AFTER INSERT ON stores
FOR EACH ROW EXECUTE FUNCTION webhook_cursors_of_store();

-- The deliveries of the events of stores themselves are written by the
-- change, in its transaction (a committed change is never lost to its
-- webhooks, an uncommitted one never sent): one pending delivery per
-- enabled endpoint of the workspace that asks for the event's type, due
-- from the event's time.
--
-- An event's ID is memstore's: "wevt_" and a lowercase ULID, whose
-- 48-bit time is the event's millisecond (at, in nanoseconds), followed
-- by its sub-millisecond nanoseconds (20 bits) and 48 random bits as 12
-- hex digits (which are ULID digits too) of a version 4 UUID's random
-- end, so that IDs sort as events were made.
CREATE FUNCTION webhook_event_id(at bigint) RETURNS text
LANGUAGE sql VOLATILE AS $$
	SELECT 'wevt_' || string_agg(substr('0123456789abcdefghjkmnpqrstvwxyz', (CASE
			WHEN i < 10 THEN at / 1000000 >> (45 - 5 * i)
			ELSE at % 1000000 >> (15 - 5 * (i - 10)) END & 31)::int + 1, 1), '' ORDER BY i)
		|| right(gen_random_uuid()::text, 12)
	FROM generate_series(0, 13) i
$$;

-- The deliveries of an event, one per endpoint that wants it: the ID is
-- an uncorrelated subquery, computed once, and only when some endpoint
-- wants the event, so every delivery of one event has the same ID.
CREATE FUNCTION webhook_event_add(ws text, typ text, store text, mem text, ver text, at bigint) RETURNS void
LANGUAGE sql AS $$
	INSERT INTO webhook_deliveries (endpoint_id, event_id, workspace_id, type, store_id, memory_id, version_id, event_at,
		state, attempts, next_attempt_at, last_attempt_at, last_status, last_error)
	SELECT w.id, (SELECT webhook_event_id(at)), ws, typ, store, mem, ver, at, 'pending', 0, at, 0, 0, ''
	FROM webhook_endpoints w
	WHERE w.workspace_id = ws AND w.state = 'enabled' AND typ = ANY (w.enabled_events)
$$;

-- A deletion is timed now, but never before the store's last change (its
-- archive), so that its ID sorts after it.
CREATE FUNCTION webhook_events_of_stores() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		PERFORM webhook_event_add(NEW.workspace_id, 'memory_store.created', NEW.id, '', '', NEW.created_at);
	ELSE
		PERFORM webhook_event_add(OLD.workspace_id, 'memory_store.deleted', OLD.id, '', '',
			greatest((extract(epoch FROM clock_timestamp()) * 1000000000)::bigint, OLD.updated_at + 1));
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER webhook_events_of_stores AFTER INSERT OR DELETE ON stores
FOR EACH ROW EXECUTE FUNCTION webhook_events_of_stores();

-- Of the feed, only an archive writes deliveries in its transaction: the
-- hosted API's memory_store.archived. The trigger's condition spares
-- every other change the function's call.
CREATE FUNCTION webhook_events_of_archive() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM webhook_event_add(s.workspace_id, 'memory_store.archived', NEW.store_id, '', '', NEW.created_at)
	FROM stores s WHERE s.id = NEW.store_id;
	RETURN NULL;
END $$;

CREATE TRIGGER webhook_events_of_archive AFTER INSERT ON events
FOR EACH ROW WHEN (NEW.type = 'store.archived') EXECUTE FUNCTION webhook_events_of_archive();

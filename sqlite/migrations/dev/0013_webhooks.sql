-- Webhooks (memstore's webhook.go): endpoints, the outbox of events to
-- deliver, and each endpoint's deliveries.
--
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

-- The outbox: the triggers below add a row in the transaction of each
-- change that an enabled endpoint of its workspace asks for, so that a
-- committed change is never lost to its webhooks and an uncommitted one
-- never sent. The deliverer turns each row into a delivery per endpoint,
-- and removes it.
CREATE TABLE webhook_outbox (
	seq          INTEGER PRIMARY KEY,
	workspace_id TEXT NOT NULL,
	type         TEXT NOT NULL,
	store_id     TEXT NOT NULL,
	memory_id    TEXT NOT NULL,
	version_id   TEXT NOT NULL,
	created_at   INTEGER NOT NULL
) STRICT;

-- One event to one endpoint: retried, with its next attempt persisted,
-- until it is delivered or has failed every attempt; the log of an
-- endpoint.
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
) STRICT;

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_by_age ON webhook_deliveries (event_at);

-- The webhook type of a change of the feed: "memstore." and the feed's
-- type, but for an archive, which is the hosted API's
-- memory_store.archived (memstore's WebhookTypeOf).
CREATE TRIGGER webhook_outbox_events AFTER INSERT ON events
WHEN EXISTS (
	SELECT 1 FROM stores s JOIN webhook_endpoints w ON w.workspace_id = s.workspace_id
	WHERE s.id = NEW.store_id AND w.state = 'enabled'
		AND instr(',' || w.enabled_events || ',', ',' || CASE NEW.type WHEN 'store.archived' THEN 'memory_store.archived' ELSE 'memstore.' || NEW.type END || ',') > 0)
BEGIN
	INSERT INTO webhook_outbox (workspace_id, type, store_id, memory_id, version_id, created_at)
	SELECT s.workspace_id, CASE NEW.type WHEN 'store.archived' THEN 'memory_store.archived' ELSE 'memstore.' || NEW.type END, NEW.store_id,
		coalesce((SELECT memory_id FROM versions WHERE store_id = NEW.store_id AND id = NEW.version_id), ''), coalesce(NEW.version_id, ''), NEW.created_at
	FROM stores s WHERE s.id = NEW.store_id;
END;

CREATE TRIGGER webhook_outbox_store_created AFTER INSERT ON stores
WHEN EXISTS (
	SELECT 1 FROM webhook_endpoints w
	WHERE w.workspace_id = NEW.workspace_id AND w.state = 'enabled' AND instr(',' || w.enabled_events || ',', ',memory_store.created,') > 0)
BEGIN
	INSERT INTO webhook_outbox (workspace_id, type, store_id, memory_id, version_id, created_at)
	VALUES (NEW.workspace_id, 'memory_store.created', NEW.id, '', '', NEW.created_at);
END;

CREATE TRIGGER webhook_outbox_store_deleted AFTER DELETE ON stores
WHEN EXISTS (
	SELECT 1 FROM webhook_endpoints w
	WHERE w.workspace_id = OLD.workspace_id AND w.state = 'enabled' AND instr(',' || w.enabled_events || ',', ',memory_store.deleted,') > 0)
BEGIN
	INSERT INTO webhook_outbox (workspace_id, type, store_id, memory_id, version_id, created_at)
	VALUES (OLD.workspace_id, 'memory_store.deleted', OLD.id, '', '', CAST(unixepoch('subsec') * 1000000000 AS INTEGER));
END;

-- Webhook deliveries written by the change itself: the triggers add one
-- pending delivery per enabled endpoint of the workspace that asks for
-- the change's type, in the transaction of the change (a committed change
-- is never lost to its webhooks, an uncommitted one never sent), due from
-- the event's time. The outbox, and the deliverer's pass that turned its
-- rows into deliveries, are gone: a delivered event costs three row
-- writes (the delivery, its claim, its record) instead of four.

-- The deliveries kept in their primary key's order (WITHOUT ROWID), and
-- without the index by age, which pruning no longer needs (an event's ID
-- begins with its time): each delivery a change writes goes into two
-- b-trees instead of four.
CREATE TABLE webhook_deliveries_by_key (
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

INSERT INTO webhook_deliveries_by_key SELECT endpoint_id, event_id, workspace_id, type, store_id, memory_id, version_id, event_at,
	state, attempts, next_attempt_at, last_attempt_at, last_status, last_error FROM webhook_deliveries;
DROP TABLE webhook_deliveries;
ALTER TABLE webhook_deliveries_by_key RENAME TO webhook_deliveries;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';

-- webhook_events is where the triggers below put an event: inserting
-- into it adds its deliveries, and keeps nothing.
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

-- The events still in the outbox become deliveries, in its order.
INSERT INTO webhook_events SELECT workspace_id, type, store_id, memory_id, version_id, created_at FROM webhook_outbox ORDER BY seq;

DROP TRIGGER webhook_outbox_events;
DROP TRIGGER webhook_outbox_store_created;
DROP TRIGGER webhook_outbox_store_deleted;
DROP TABLE webhook_outbox;

-- The webhook type of a change of the feed: "memstore." and the feed's
-- type, but for an archive, which is the hosted API's
-- memory_store.archived (memstore's WebhookTypeOf).
CREATE TRIGGER webhook_events_of_feed AFTER INSERT ON events
-- Most workspaces have no endpoint: their changes look no further.
WHEN EXISTS (
	SELECT 1 FROM stores s JOIN webhook_endpoints w ON w.workspace_id = s.workspace_id
	WHERE s.id = NEW.store_id AND w.state = 'enabled')
BEGIN
	INSERT INTO webhook_events
	SELECT s.workspace_id, CASE NEW.type WHEN 'store.archived' THEN 'memory_store.archived' ELSE 'memstore.' || NEW.type END, NEW.store_id,
		coalesce((SELECT memory_id FROM versions WHERE store_id = NEW.store_id AND id = NEW.version_id), ''), coalesce(NEW.version_id, ''), NEW.created_at
	FROM stores s WHERE s.id = NEW.store_id;
END;

CREATE TRIGGER webhook_events_store_created AFTER INSERT ON stores
BEGIN
	INSERT INTO webhook_events VALUES (NEW.workspace_id, 'memory_store.created', NEW.id, '', '', NEW.created_at);
END;

-- A deletion is timed now, but never before the store's last change (its
-- archive, within the same millisecond), so that its ID sorts after it.
CREATE TRIGGER webhook_events_store_deleted AFTER DELETE ON stores
BEGIN
	INSERT INTO webhook_events VALUES (OLD.workspace_id, 'memory_store.deleted', OLD.id, '', '',
		max(CAST(unixepoch('subsec') * 1000000000 AS INTEGER), OLD.updated_at + 1));
END;

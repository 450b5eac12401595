-- The change feed is the outbox of memstore's own webhook events: a
-- change of a memory writes its event and nothing more, and each endpoint
-- keeps a cursor in the feed of every store of its workspace, which the
-- deliverer's claims move past the events they turn into deliveries
-- (memstore's webhook_delivery.go). The events of stores themselves
-- (created, archived, deleted) still write their deliveries in their
-- transaction: they are rare, and created and deleted are in no feed.

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
-- are delivered before it is enabled again (memstore's sqlite package,
-- ChangeWebhook).
INSERT INTO webhook_cursors (endpoint_id, store_id, seq)
SELECT w.id, s.id, coalesce((SELECT max(seq) FROM events e WHERE e.store_id = s.id), 0)
FROM webhook_endpoints w JOIN stores s ON s.workspace_id = w.workspace_id;

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

CREATE TRIGGER webhook_cursors_of_store AFTER INSERT ON stores
BEGIN
	INSERT INTO webhook_cursors (endpoint_id, store_id, seq) SELECT w.id, NEW.id, 0 FROM webhook_endpoints w WHERE w.workspace_id = NEW.workspace_id;
END;

-- Of the feed, only an archive still writes deliveries: the hosted API's
-- memory_store.archived.
DROP TRIGGER webhook_events_of_feed;

CREATE TRIGGER webhook_events_of_archive AFTER INSERT ON events
WHEN NEW.type = 'store.archived'
BEGIN
	INSERT INTO webhook_events
	SELECT s.workspace_id, 'memory_store.archived', NEW.store_id, '', '', NEW.created_at FROM stores s WHERE s.id = NEW.store_id;
END;

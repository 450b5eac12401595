-- The change feed is the outbox of memstore's own webhook events: a
-- change of a memory writes its event and nothing more, and each endpoint
-- keeps a cursor in the feed of every store of its workspace, which the
-- deliverers' claims move past the events they turn into deliveries
-- (memstore's webhook_delivery.go). A claim locks the cursors it moves
-- (SKIP LOCKED), so that the deliverers of several replicas never turn
-- the same events into deliveries; a store's events are numbered under
-- its row's lock, in the order of their commits, so a cursor passes none
-- unseen. The events of stores themselves (created, archived, deleted)
-- still write their deliveries in their transaction: they are rare, and
-- created and deleted are in no feed.

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
-- asking for memstore's own events. A cursor never moves back.
INSERT INTO webhook_cursors (endpoint_id, store_id, seq)
SELECT w.id, s.id, webhook_feed_end(s.id) FROM webhook_endpoints w JOIN stores s ON s.workspace_id = w.workspace_id;

-- The stores are locked (KEY SHARE) as they are read, so that one whose
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

-- Of the feed, only an archive still writes deliveries: the hosted API's
-- memory_store.archived. The trigger's condition spares every other
-- change the function's call.
DROP TRIGGER webhook_events_of_feed ON events;
DROP FUNCTION webhook_events_of_feed();

CREATE FUNCTION webhook_events_of_archive() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM webhook_event_add(s.workspace_id, 'memory_store.archived', NEW.store_id, '', '', NEW.created_at)
	FROM stores s WHERE s.id = NEW.store_id;
	RETURN NULL;
END $$;

CREATE TRIGGER webhook_events_of_archive AFTER INSERT ON events
FOR EACH ROW WHEN (NEW.type = 'store.archived') EXECUTE FUNCTION webhook_events_of_archive();

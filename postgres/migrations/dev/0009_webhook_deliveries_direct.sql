-- Webhook deliveries written by the change itself: the triggers add one
-- pending delivery per enabled endpoint of the workspace that asks for
-- the change's type, in the transaction of the change (a committed change
-- is never lost to its webhooks, an uncommitted one never sent), due from
-- the event's time. The outbox, and the deliverers' pass that turned its
-- rows into deliveries, are gone: a delivered event costs three row
-- writes (the delivery, its claim, its record) instead of four.

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

-- The events still in the outbox become deliveries, in its order.
SELECT webhook_event_add(workspace_id, type, store_id, memory_id, version_id, created_at) FROM webhook_outbox ORDER BY seq;

DROP TRIGGER webhook_outbox_events ON events;
DROP TRIGGER webhook_outbox_stores ON stores;
DROP FUNCTION webhook_outbox_events(), webhook_outbox_stores(), webhook_outbox_add(text, text, text, text, text, bigint);
DROP TABLE webhook_outbox;

-- The webhook type of a change of the feed is "memstore." and the feed's
-- type, but for an archive, which is the hosted API's
-- memory_store.archived (memstore's WebhookTypeOf).
CREATE FUNCTION webhook_events_of_feed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM webhook_event_add(s.workspace_id,
		CASE NEW.type WHEN 'store.archived' THEN 'memory_store.archived' ELSE 'memstore.' || NEW.type END,
		NEW.store_id, coalesce((SELECT memory_id FROM versions WHERE id = NEW.version_id), ''), coalesce(NEW.version_id, ''), NEW.created_at)
	FROM stores s WHERE s.id = NEW.store_id;
	RETURN NULL;
END $$;

CREATE TRIGGER webhook_events_of_feed AFTER INSERT ON events
FOR EACH ROW EXECUTE FUNCTION webhook_events_of_feed();

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

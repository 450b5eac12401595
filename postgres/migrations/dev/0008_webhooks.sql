-- Webhooks (memstore's webhook.go): endpoints, the outbox of events to
-- deliver, and each endpoint's deliveries.
--
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

-- The outbox: the triggers below add a row in the transaction of each
-- change that an enabled endpoint of its workspace asks for, so that a
-- committed change is never lost to its webhooks and an uncommitted one
-- never sent. A deliverer (of any replica) claims rows with SKIP LOCKED,
-- turns each into a delivery per endpoint, and removes it.
CREATE TABLE webhook_outbox (
	seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	workspace_id text COLLATE "C" NOT NULL,
	type         text NOT NULL,
	store_id     text COLLATE "C" NOT NULL,
	memory_id    text COLLATE "C" NOT NULL,
	version_id   text COLLATE "C" NOT NULL,
	created_at   bigint NOT NULL
);

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

-- The outbox rows of a change, when an enabled endpoint of the workspace
-- asks for its type. The webhook type of a change of the feed is
-- "memstore." and the feed's type, but for an archive, which is the
-- hosted API's memory_store.archived (memstore's WebhookTypeOf).
CREATE FUNCTION webhook_outbox_add(ws text, typ text, store text, mem text, ver text, at bigint) RETURNS void
LANGUAGE sql AS $$
	INSERT INTO webhook_outbox (workspace_id, type, store_id, memory_id, version_id, created_at)
	SELECT ws, typ, store, mem, ver, at
	WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE workspace_id = ws AND state = 'enabled' AND typ = ANY (enabled_events))
$$;

CREATE FUNCTION webhook_outbox_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM webhook_outbox_add(s.workspace_id,
		CASE NEW.type WHEN 'store.archived' THEN 'memory_store.archived' ELSE 'memstore.' || NEW.type END,
		NEW.store_id, coalesce((SELECT memory_id FROM versions WHERE id = NEW.version_id), ''), coalesce(NEW.version_id, ''), NEW.created_at)
	FROM stores s WHERE s.id = NEW.store_id;
	RETURN NULL;
END $$;

CREATE TRIGGER webhook_outbox_events AFTER INSERT ON events
FOR EACH ROW EXECUTE FUNCTION webhook_outbox_events();

CREATE FUNCTION webhook_outbox_stores() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		PERFORM webhook_outbox_add(NEW.workspace_id, 'memory_store.created', NEW.id, '', '', NEW.created_at);
	ELSE
		PERFORM webhook_outbox_add(OLD.workspace_id, 'memory_store.deleted', OLD.id, '', '', (extract(epoch FROM clock_timestamp()) * 1000000000)::bigint);
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER webhook_outbox_stores AFTER INSERT OR DELETE ON stores
FOR EACH ROW EXECUTE FUNCTION webhook_outbox_stores();

-- Dreams: the jobs of /v1/dreams. The sessions input is a JSON list of
-- session IDs, a failed dream's error a JSON object (NULL for none).
-- owner and lease_until are the worker that holds a dream and until
-- when; a pending or running dream whose lease expired is claimed again
-- (FOR UPDATE SKIP LOCKED, so that one replica takes it). Stores and
-- sessions are named by ID only: deleting one leaves the dreams that
-- read or wrote it as they were.
CREATE TABLE dreams (
	id                          text COLLATE "C" PRIMARY KEY,
	workspace_id                text COLLATE "C" NOT NULL,
	status                      text NOT NULL, -- pending, running, completed, failed, canceled
	input_store_id              text COLLATE "C" NOT NULL,
	session_ids                 text NOT NULL,
	model_id                    text NOT NULL,
	model_speed                 text NOT NULL,
	instructions                text NOT NULL,
	output_behavior             text NOT NULL,
	output_store_id             text COLLATE "C" NOT NULL,
	session_id                  text COLLATE "C" NOT NULL,
	input_tokens                bigint NOT NULL,
	output_tokens               bigint NOT NULL,
	cache_creation_input_tokens bigint NOT NULL,
	cache_read_input_tokens     bigint NOT NULL,
	error                       text,
	cancel_requested            boolean NOT NULL,
	attempts                    integer NOT NULL,
	owner                       text NOT NULL,
	lease_until                 bigint,
	created_at                  bigint NOT NULL,
	updated_at                  bigint NOT NULL,
	started_at                  bigint,
	ended_at                    bigint,
	archived_at                 bigint
);

-- A workspace's list, newest first.
CREATE INDEX dreams_by_workspace ON dreams (workspace_id, created_at, id);

-- The dreams that are not final, by workspace: what the worker's claims
-- read, and what a workspace's count of live dreams counts.
CREATE INDEX dreams_live ON dreams (workspace_id, created_at, id) WHERE status IN ('pending', 'running');

-- The dreams of an input store, for the conflict of two update_existing
-- dreams.
CREATE INDEX dreams_by_input ON dreams (input_store_id);

-- A delivery of a dream's event names the dream ('' for other events).
ALTER TABLE webhook_deliveries ADD COLUMN dream_id text COLLATE "C" NOT NULL DEFAULT '';

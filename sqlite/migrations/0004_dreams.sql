-- Dreams: the jobs of /v1/dreams. The sessions input is a JSON list of
-- session IDs, a failed dream's error a JSON object (NULL for none).
-- owner and lease_until are the worker that holds a dream and until
-- when; a pending or running dream whose lease expired is claimed again.
-- Stores and sessions are named by ID only: deleting one leaves the
-- dreams that read or wrote it as they were.
CREATE TABLE dreams (
	id                          TEXT PRIMARY KEY,
	workspace_id                TEXT NOT NULL,
	status                      TEXT NOT NULL, -- pending, running, completed, failed, canceled
	input_store_id              TEXT NOT NULL,
	session_ids                 TEXT NOT NULL,
	model_id                    TEXT NOT NULL,
	model_speed                 TEXT NOT NULL,
	instructions                TEXT NOT NULL,
	output_behavior             TEXT NOT NULL,
	output_store_id             TEXT NOT NULL,
	session_id                  TEXT NOT NULL,
	input_tokens                INTEGER NOT NULL,
	output_tokens               INTEGER NOT NULL,
	cache_creation_input_tokens INTEGER NOT NULL,
	cache_read_input_tokens     INTEGER NOT NULL,
	error                       TEXT,
	cancel_requested            INTEGER NOT NULL,
	attempts                    INTEGER NOT NULL,
	owner                       TEXT NOT NULL,
	lease_until                 INTEGER,
	created_at                  INTEGER NOT NULL,
	updated_at                  INTEGER NOT NULL,
	started_at                  INTEGER,
	ended_at                    INTEGER,
	archived_at                 INTEGER
) STRICT;

-- A workspace's list, newest first.
CREATE INDEX dreams_by_workspace ON dreams (workspace_id, created_at, id);

-- The dreams that are not final, by workspace: what the worker's claims
-- read, and what a workspace's count of live dreams counts.
CREATE INDEX dreams_live ON dreams (workspace_id, created_at, id) WHERE status IN ('pending', 'running');

-- The dreams of an input store, for the conflict of two update_existing
-- dreams.
CREATE INDEX dreams_by_input ON dreams (input_store_id);

-- A delivery of a dream's event names the dream ('' for other events).
ALTER TABLE webhook_deliveries ADD COLUMN dream_id TEXT NOT NULL DEFAULT '';

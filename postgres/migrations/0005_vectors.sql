-- Vectors for semantic search: one a live memory, of its current version,
-- computed by the indexing worker after the write. vector is the int8
-- blob of internal/vector (bytea: this schema does not need the pgvector
-- extension; a search scans a store's vectors exactly, vector.go); model
-- and dims name what computed it, so that a vector of another model is
-- never compared.
--
-- No vector outlives the content it was computed from: a change of the
-- memory's version deletes it (memories_vector_queue), and so do the
-- memory's deletion (the foreign key) and the redaction of its version
-- (versions_vector_redact, which takes it off the queue too).
CREATE TABLE memory_vectors (
	memory_id  text COLLATE "C" PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
	store_id   text COLLATE "C" NOT NULL,
	version_id text COLLATE "C" NOT NULL,
	model      text NOT NULL,
	dims       integer NOT NULL,
	vector     bytea NOT NULL
);

CREATE INDEX memory_vectors_by_store ON memory_vectors (store_id, model);
CREATE INDEX memory_vectors_by_version ON memory_vectors (version_id);

-- The memories waiting for a vector, oldest first (seq), each with its
-- workspace so that the workers share their work between workspaces, and
-- a lease: a worker holds what it claimed (FOR UPDATE SKIP LOCKED, so
-- that replicas take different memories) until lease_until.
CREATE TABLE vector_queue (
	memory_id    text COLLATE "C" PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
	seq          bigint GENERATED ALWAYS AS IDENTITY,
	workspace_id text COLLATE "C" NOT NULL,
	version_id   text COLLATE "C" NOT NULL,
	attempts     integer NOT NULL DEFAULT 0,
	lease_until  bigint
);

CREATE INDEX vector_queue_by_workspace ON vector_queue (workspace_id, seq);

CREATE FUNCTION memories_vector_queue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'UPDATE' THEN
		IF old.version_id = new.version_id THEN
			RETURN NULL;
		END IF;
		DELETE FROM memory_vectors WHERE memory_id = old.id;
	END IF;
	INSERT INTO vector_queue (memory_id, workspace_id, version_id)
	VALUES (new.id, (SELECT workspace_id FROM stores WHERE id = new.store_id), new.version_id)
	ON CONFLICT (memory_id) DO UPDATE SET version_id = excluded.version_id, attempts = 0, lease_until = NULL;
	RETURN NULL;
END $$;

CREATE TRIGGER memories_vector_queue AFTER INSERT OR UPDATE OF version_id ON memories
FOR EACH ROW EXECUTE FUNCTION memories_vector_queue();

CREATE FUNCTION versions_vector_redact() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM memory_vectors WHERE version_id = old.id;
	DELETE FROM vector_queue WHERE memory_id = old.memory_id AND version_id = old.id;
	RETURN NULL;
END $$;

CREATE TRIGGER versions_vector_redact AFTER UPDATE OF redacted_at ON versions
FOR EACH ROW WHEN (new.redacted_at IS NOT NULL) EXECUTE FUNCTION versions_vector_redact();

-- The memories written before this migration wait for a vector too.
INSERT INTO vector_queue (memory_id, workspace_id, version_id)
SELECT m.id, s.workspace_id, m.version_id FROM memories m JOIN stores s ON s.id = m.store_id ORDER BY m.created_at, m.id;

-- Every change of a vector, so that a process's copy of a store's vectors
-- in memory (vectorcache.go) catches up by reading what changed since it
-- was made, whichever process made the change. An entry carries the ID of
-- its transaction: transactions commit out of the order of their IDs, and
-- a copy's snapshot tells which of them it saw. Old entries are trimmed;
-- vector_log_trimmed keeps the newest transaction of a trimmed entry, and
-- a copy whose snapshot may have missed it is read again whole.
CREATE TABLE vector_log (
	seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	xid       xid8 NOT NULL DEFAULT pg_current_xact_id(),
	store_id  text COLLATE "C" NOT NULL,
	memory_id text COLLATE "C" NOT NULL
);

CREATE INDEX vector_log_by_store ON vector_log (store_id, xid);

CREATE TABLE vector_log_trimmed (
	one boolean PRIMARY KEY DEFAULT true CHECK (one),
	xid xid8 NOT NULL
);

INSERT INTO vector_log_trimmed (xid) VALUES ('0');

CREATE FUNCTION memory_vectors_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'DELETE' THEN
		INSERT INTO vector_log (store_id, memory_id) VALUES (old.store_id, old.memory_id);
	ELSE
		INSERT INTO vector_log (store_id, memory_id) VALUES (new.store_id, new.memory_id);
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER memory_vectors_log AFTER INSERT OR UPDATE OR DELETE ON memory_vectors
FOR EACH ROW EXECUTE FUNCTION memory_vectors_log();

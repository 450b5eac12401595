-- Vectors for semantic search: one a live memory, of its current version,
-- computed by the indexing worker after the write. vector is the int8
-- blob of internal/vector; model and dims name what computed it, so that
-- a vector of another model is never compared.
--
-- No vector outlives the content it was computed from: a change of the
-- memory's version deletes it (memories_vector_changed), and so do the
-- memory's deletion (the foreign key) and the redaction of its version
-- (versions_vector_redact, which takes it off the queue too).
CREATE TABLE memory_vectors (
	memory_id  TEXT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
	store_id   TEXT NOT NULL,
	version_id TEXT NOT NULL,
	model      TEXT NOT NULL,
	dims       INTEGER NOT NULL,
	vector     BLOB NOT NULL
) STRICT;

CREATE INDEX memory_vectors_by_store ON memory_vectors (store_id, model);
CREATE INDEX memory_vectors_by_version ON memory_vectors (version_id);

-- The memories waiting for a vector, oldest first (seq), each with its
-- workspace so that the worker shares its work between workspaces, and a
-- lease: a worker holds what it claimed until lease_until.
CREATE TABLE vector_queue (
	seq          INTEGER PRIMARY KEY,
	memory_id    TEXT NOT NULL UNIQUE REFERENCES memories (id) ON DELETE CASCADE,
	workspace_id TEXT NOT NULL,
	version_id   TEXT NOT NULL,
	attempts     INTEGER NOT NULL DEFAULT 0,
	lease_until  INTEGER
) STRICT;

CREATE INDEX vector_queue_by_workspace ON vector_queue (workspace_id, seq);

CREATE TRIGGER memories_vector_insert AFTER INSERT ON memories BEGIN
	INSERT INTO vector_queue (memory_id, workspace_id, version_id)
	VALUES (new.id, (SELECT workspace_id FROM stores WHERE id = new.store_id), new.version_id)
	ON CONFLICT DO UPDATE SET version_id = excluded.version_id, attempts = 0, lease_until = NULL;
END;

CREATE TRIGGER memories_vector_changed AFTER UPDATE OF version_id ON memories
WHEN old.version_id <> new.version_id BEGIN
	DELETE FROM memory_vectors WHERE memory_id = old.id;
	INSERT INTO vector_queue (memory_id, workspace_id, version_id)
	VALUES (new.id, (SELECT workspace_id FROM stores WHERE id = new.store_id), new.version_id)
	ON CONFLICT DO UPDATE SET version_id = excluded.version_id, attempts = 0, lease_until = NULL;
END;

CREATE TRIGGER versions_vector_redact AFTER UPDATE OF redacted_at ON versions
WHEN new.redacted_at IS NOT NULL BEGIN
	DELETE FROM memory_vectors WHERE version_id = old.id;
	DELETE FROM vector_queue WHERE memory_id = old.memory_id AND version_id = old.id;
END;

-- The memories written before this migration wait for a vector too.
INSERT INTO vector_queue (memory_id, workspace_id, version_id)
SELECT m.id, s.workspace_id, m.version_id FROM memories m JOIN stores s ON s.id = m.store_id ORDER BY m.rowid;

-- Every change of a vector, in order, so that a process's copy of a
-- store's vectors in memory (vectorcache.go) catches up by reading what
-- changed since it was made, whichever process made the change. Old
-- entries are trimmed; a copy older than the oldest entry is read again.
CREATE TABLE vector_log (
	seq       INTEGER PRIMARY KEY AUTOINCREMENT,
	store_id  TEXT NOT NULL,
	memory_id TEXT NOT NULL
) STRICT;

CREATE INDEX vector_log_by_store ON vector_log (store_id, seq);

CREATE TRIGGER memory_vectors_log_insert AFTER INSERT ON memory_vectors BEGIN
	INSERT INTO vector_log (store_id, memory_id) VALUES (new.store_id, new.memory_id);
END;

CREATE TRIGGER memory_vectors_log_update AFTER UPDATE ON memory_vectors BEGIN
	INSERT INTO vector_log (store_id, memory_id) VALUES (new.store_id, new.memory_id);
END;

CREATE TRIGGER memory_vectors_log_delete AFTER DELETE ON memory_vectors BEGIN
	INSERT INTO vector_log (store_id, memory_id) VALUES (old.store_id, old.memory_id);
END;

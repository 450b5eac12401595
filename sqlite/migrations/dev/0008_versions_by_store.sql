-- Every write adds a version, and each version was five b-tree inserts:
-- the table, its TEXT primary key and three indexes. Here the primary key
-- and versions_by_store become one unique index on (store_id, id): every
-- lookup of a version by ID also names its store (version.go and the
-- triggers below), so the key alone served nothing the index does not.
-- An ID is still unique: IDs are unique by construction, and within a
-- store by this index.
--
-- The indexes are also ascending now: a new version's ID is the highest,
-- so it is appended at the right edge of each index, which SQLite splits
-- more cheaply than the left edge of a descending one; lists newest first
-- read the same indexes backwards.
--
-- (A WITHOUT ROWID table keyed by ID was measured too and was slower: its
-- rows of about a kilobyte of content then live in an index b-tree, whose
-- cells hold at most about a quarter of a page, so most versions spilled
-- into overflow pages.)
--
-- The table is copied, since SQLite cannot drop a primary key in place;
-- the triggers that name it are dropped first and made again after, with
-- their lookups by store and ID.

DROP TRIGGER versions_search_redact;
DROP TRIGGER memories_redacted_text_changed;
DROP TRIGGER memories_redacted_text_deleted;

CREATE TABLE versions_new (
	id            TEXT NOT NULL,
	store_id      TEXT NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
	memory_id     TEXT NOT NULL, -- no foreign key: outlives the memory
	operation     TEXT NOT NULL CHECK (operation IN ('created', 'modified', 'deleted')),
	path          TEXT,    -- NULL once redacted
	content       TEXT,    -- NULL for a deletion and once redacted
	sha256        TEXT,
	size          INTEGER,
	created_at    INTEGER NOT NULL,
	actor_type    TEXT NOT NULL,
	actor_id      TEXT NOT NULL,
	redacted_at   INTEGER,
	redactor_type TEXT,
	redactor_id   TEXT
) STRICT;

INSERT INTO versions_new (id, store_id, memory_id, operation, path, content, sha256, size, created_at, actor_type, actor_id, redacted_at, redactor_type, redactor_id)
SELECT id, store_id, memory_id, operation, path, content, sha256, size, created_at, actor_type, actor_id, redacted_at, redactor_type, redactor_id
FROM versions ORDER BY id;
DROP TABLE versions;
ALTER TABLE versions_new RENAME TO versions;

CREATE UNIQUE INDEX versions_by_store ON versions (store_id, id);
CREATE INDEX versions_by_memory ON versions (store_id, memory_id, id);
CREATE INDEX versions_by_actor ON versions (store_id, actor_type, actor_id, id);

CREATE TRIGGER versions_search_redact AFTER UPDATE OF redacted_at ON versions
WHEN old.redacted_at IS NULL AND new.redacted_at IS NOT NULL AND old.content IS NOT NULL
	AND NOT EXISTS (SELECT 1 FROM memories WHERE id = old.memory_id AND version_id = old.id) BEGIN
	INSERT INTO search_purge (id) VALUES (1)
	ON CONFLICT DO UPDATE SET requests = requests + 1;
END;

CREATE TRIGGER memories_redacted_text_changed AFTER UPDATE OF path, content ON memories
WHEN (old.path IS NOT new.path OR old.content IS NOT new.content)
	AND EXISTS (SELECT 1 FROM versions WHERE store_id = old.store_id AND id = old.version_id AND redacted_at IS NOT NULL) BEGIN
	INSERT INTO search_purge (id) VALUES (1)
	ON CONFLICT DO UPDATE SET requests = requests + 1;
END;

CREATE TRIGGER memories_redacted_text_deleted AFTER DELETE ON memories
WHEN EXISTS (SELECT 1 FROM versions WHERE store_id = old.store_id AND id = old.version_id AND redacted_at IS NOT NULL) BEGIN
	INSERT INTO search_purge (id) VALUES (1)
	ON CONFLICT DO UPDATE SET requests = requests + 1;
END;

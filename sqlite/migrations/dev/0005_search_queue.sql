-- The search indexes move out of the database into a file of their own
-- beside it (searchindex.go), kept by an indexer that runs beside the
-- writer instead of inside every write's transaction. Here remain the
-- triggers that note which memories changed, whichever statement changes
-- them, in the same transaction as the change.

DROP TRIGGER memories_search_insert;
DROP TRIGGER memories_search_delete;
DROP TRIGGER memories_search_update;
DROP TRIGGER memories_search_rename;
DROP TRIGGER versions_search_redact;
DROP TABLE memories_words;
DROP TABLE memories_paths;
DROP TABLE memories_trigrams;

-- One row per memory (memories.rowid) changed since the indexer last
-- indexed it. changes counts the changes since the row was made: the
-- indexer removes a row only if it did not change while it was being
-- indexed. A row may name a memory that is gone, or a new memory that took
-- the rowid of one that is gone; the indexer handles both.
CREATE TABLE search_queue (
	memory_rowid INTEGER PRIMARY KEY,
	changes      INTEGER NOT NULL DEFAULT 0
) STRICT;

-- (ON CONFLICT DO UPDATE, not INSERT OR REPLACE, whose conflict clause
-- the statement that fired the trigger would override.)
CREATE TRIGGER memories_search_insert AFTER INSERT ON memories BEGIN
	INSERT INTO search_queue (memory_rowid) VALUES (new.rowid)
	ON CONFLICT DO UPDATE SET changes = changes + 1;
END;

CREATE TRIGGER memories_search_delete AFTER DELETE ON memories BEGIN
	INSERT INTO search_queue (memory_rowid) VALUES (old.rowid)
	ON CONFLICT DO UPDATE SET changes = changes + 1;
END;

CREATE TRIGGER memories_search_update AFTER UPDATE OF path, content ON memories
WHEN old.path IS NOT new.path OR old.content IS NOT new.content BEGIN
	INSERT INTO search_queue (memory_rowid) VALUES (old.rowid)
	ON CONFLICT DO UPDATE SET changes = changes + 1;
END;

-- A redaction of a version that is not the current one of a live memory
-- asks the indexer to purge the indexes of the entries it only marked
-- deleted: the redacted text may still be in their pages. requests counts
-- the redactions, as changes does above.
CREATE TABLE search_purge (
	id       INTEGER PRIMARY KEY CHECK (id = 1),
	requests INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE TRIGGER versions_search_redact AFTER UPDATE OF redacted_at ON versions
WHEN old.redacted_at IS NULL AND new.redacted_at IS NOT NULL AND old.content IS NOT NULL
	AND NOT EXISTS (SELECT 1 FROM memories WHERE id = old.memory_id AND version_id = old.id) BEGIN
	INSERT INTO search_purge (id) VALUES (1)
	ON CONFLICT DO UPDATE SET requests = requests + 1;
END;

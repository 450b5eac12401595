-- The search indexes are brought up to date once per write transaction
-- instead of once per statement, and forget a memory by its rowid alone
-- (searchindex.go).
--
-- FTS5 writes its pending changes out as a new segment at every statement
-- and savepoint, and the group commit (batch.go) puts each write of a
-- batch in a savepoint: with triggers changing the indexes, each write
-- made segments of its own, and merging them was much of the cost of a
-- write. Now the triggers only note which memories changed, in
-- search_queue, and the writer indexes them all, one statement per index,
-- before it commits: the indexes are never behind a committed write.
--
-- External-content indexes must be told the old text of a memory to
-- forget it, which means reading it through the tokenizer again: that was
-- the other half of the cost of an update or a deletion. The indexes are
-- now contentless (content = '') with contentless_delete, which forget a
-- row by its rowid. They hold no text of their own, as before: lookups
-- return rowids, and the text is read from memories.

DROP TRIGGER memories_search_insert;
DROP TRIGGER memories_search_delete;
DROP TRIGGER memories_search_update;
DROP TRIGGER memories_search_rename;
DROP TRIGGER versions_search_redact;
DROP TABLE memories_words;
DROP TABLE memories_paths;
DROP TABLE memories_trigrams;

CREATE VIRTUAL TABLE memories_words USING fts5 (
	path, content,
	content = '', contentless_delete = 1,
	tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE VIRTUAL TABLE memories_paths USING fts5 (
	path,
	content = '', contentless_delete = 1,
	tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE VIRTUAL TABLE memories_trigrams USING fts5 (
	path, content,
	content = '', contentless_delete = 1,
	tokenize = 'trigram remove_diacritics 1'
);

-- One row per memory (memories.rowid) changed since the indexes were last
-- brought up to date. indexed says whether the indexes hold the memory;
-- path and sha256 are what they hold it as, to tell whether its path or
-- its content changed since. A row may name a memory that is gone, or a
-- new memory that took the rowid of one that is gone; both are handled.
CREATE TABLE search_queue (
	memory_rowid INTEGER PRIMARY KEY,
	indexed      INTEGER NOT NULL,
	path         TEXT,
	sha256       TEXT
) STRICT;

-- Only the first change of a memory is noted: the indexes hold it as it
-- was before. (ON CONFLICT DO NOTHING, not INSERT OR IGNORE, which the
-- conflict clause of the statement that fired the trigger would replace.)
CREATE TRIGGER memories_search_insert AFTER INSERT ON memories BEGIN
	INSERT INTO search_queue (memory_rowid, indexed) VALUES (new.rowid, 0)
	ON CONFLICT DO NOTHING;
END;

CREATE TRIGGER memories_search_delete AFTER DELETE ON memories BEGIN
	INSERT INTO search_queue (memory_rowid, indexed, path, sha256) VALUES (old.rowid, 1, old.path, old.sha256)
	ON CONFLICT DO NOTHING;
END;

CREATE TRIGGER memories_search_update AFTER UPDATE OF path, content ON memories
WHEN old.path IS NOT new.path OR old.content IS NOT new.content BEGIN
	INSERT INTO search_queue (memory_rowid, indexed, path, sha256) VALUES (old.rowid, 1, old.path, old.sha256)
	ON CONFLICT DO NOTHING;
END;

-- A redaction of a version that is not the current one of a live memory
-- asks for the indexes to be purged of forgotten entries (searchindex.go):
-- the redacted text may still be in their pages.
CREATE TABLE search_purge (
	id INTEGER PRIMARY KEY CHECK (id = 1)
) STRICT;

CREATE TRIGGER versions_search_redact AFTER UPDATE OF redacted_at ON versions
WHEN old.redacted_at IS NULL AND new.redacted_at IS NOT NULL AND old.content IS NOT NULL
	AND NOT EXISTS (SELECT 1 FROM memories WHERE id = old.memory_id AND version_id = old.id) BEGIN
	INSERT INTO search_purge (id) VALUES (1) ON CONFLICT DO NOTHING;
END;

-- Index the memories of an existing database.
INSERT INTO memories_words (rowid, path, content) SELECT rowid, path, content FROM memories;
INSERT INTO memories_paths (rowid, path) SELECT rowid, path FROM memories;
INSERT INTO memories_trigrams (rowid, path, content) SELECT rowid, path, content FROM memories;

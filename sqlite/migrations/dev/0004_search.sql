-- Full-text search over the live memories (search.go). Three FTS5
-- indexes over the memories table:
--
--   memories_words     (path, content): stemmed words ("running" finds
--                      "runs"), ranked by bm25
--   memories_paths     (path): the same words of the paths alone, so that
--                      the memories with a word in their path are found
--                      without reading every memory with the word
--   memories_trigrams  (path, content): every three characters, so that
--                      any substring of at least three (a part of an
--                      identifier, a date, an email address) is found
--
-- All are external-content tables: they hold only the index, read the
-- text from memories, and are keyed by memories.rowid. Only live memories
-- are indexed, so versions, deleted memories and redacted content never
-- match. memstore never runs VACUUM, which may renumber the rowids of a
-- table without an INTEGER PRIMARY KEY (sqlite/search_test.go checks that
-- this SQLite keeps them).

CREATE VIRTUAL TABLE memories_words USING fts5 (
	path, content,
	content = 'memories', content_rowid = 'rowid',
	tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE VIRTUAL TABLE memories_paths USING fts5 (
	path,
	content = 'memories', content_rowid = 'rowid',
	tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE VIRTUAL TABLE memories_trigrams USING fts5 (
	path, content,
	content = 'memories', content_rowid = 'rowid',
	tokenize = 'trigram remove_diacritics 1'
);

-- The indexes change in the transaction of every write to memories,
-- whichever statement makes it (create, update, rename, upsert, import,
-- delete, and the cascade of a store's deletion). An external-content
-- index must be told the old values of a row it forgets.
CREATE TRIGGER memories_search_insert AFTER INSERT ON memories BEGIN
	INSERT INTO memories_words (rowid, path, content) VALUES (new.rowid, new.path, new.content);
	INSERT INTO memories_paths (rowid, path) VALUES (new.rowid, new.path);
	INSERT INTO memories_trigrams (rowid, path, content) VALUES (new.rowid, new.path, new.content);
END;

CREATE TRIGGER memories_search_delete AFTER DELETE ON memories BEGIN
	INSERT INTO memories_words (memories_words, rowid, path, content) VALUES ('delete', old.rowid, old.path, old.content);
	INSERT INTO memories_paths (memories_paths, rowid, path) VALUES ('delete', old.rowid, old.path);
	INSERT INTO memories_trigrams (memories_trigrams, rowid, path, content) VALUES ('delete', old.rowid, old.path, old.content);
END;

CREATE TRIGGER memories_search_update AFTER UPDATE OF path, content ON memories
WHEN old.path IS NOT new.path OR old.content IS NOT new.content BEGIN
	INSERT INTO memories_words (memories_words, rowid, path, content) VALUES ('delete', old.rowid, old.path, old.content);
	INSERT INTO memories_trigrams (memories_trigrams, rowid, path, content) VALUES ('delete', old.rowid, old.path, old.content);
	INSERT INTO memories_words (rowid, path, content) VALUES (new.rowid, new.path, new.content);
	INSERT INTO memories_trigrams (rowid, path, content) VALUES (new.rowid, new.path, new.content);
END;

-- A rename changes only the path.
CREATE TRIGGER memories_search_rename AFTER UPDATE OF path ON memories
WHEN old.path IS NOT new.path BEGIN
	INSERT INTO memories_paths (memories_paths, rowid, path) VALUES ('delete', old.rowid, old.path);
	INSERT INTO memories_paths (rowid, path) VALUES (new.rowid, new.path);
END;

-- A deletion leaves the forgotten words in the index pages, marked
-- deleted, until FTS5 merges those pages (FTS5's secure-delete option
-- would remove them at once, but rewrites pages of every segment for each
-- word of the memory: it made a mix of writes twenty times slower). Redaction is
-- the promise that text leaves the file: redacting a version that is not
-- the current one of a live memory rebuilds the indexes into one segment
-- each ('optimize'), which drops every deleted entry, and PRAGMA
-- secure_delete (set at Open) zeroes the freed pages. Its cost grows with
-- the indexes: about 2 seconds per 10,000 memories of 500 bytes, during
-- which other writes wait.
CREATE TRIGGER versions_search_redact AFTER UPDATE OF redacted_at ON versions
WHEN old.redacted_at IS NULL AND new.redacted_at IS NOT NULL AND old.content IS NOT NULL
	AND NOT EXISTS (SELECT 1 FROM memories WHERE id = old.memory_id AND version_id = old.id) BEGIN
	INSERT INTO memories_words (memories_words) VALUES ('optimize');
	INSERT INTO memories_paths (memories_paths) VALUES ('optimize');
	INSERT INTO memories_trigrams (memories_trigrams) VALUES ('optimize');
END;

-- Index the memories of an existing database.
INSERT INTO memories_words (memories_words) VALUES ('rebuild');
INSERT INTO memories_paths (memories_paths) VALUES ('rebuild');
INSERT INTO memories_trigrams (memories_trigrams) VALUES ('rebuild');

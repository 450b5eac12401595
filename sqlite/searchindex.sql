-- The search indexes (searchindex.go), in a file of their own beside the
-- database: three FTS5 indexes over the live memories, keyed by
-- memories.rowid.
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
-- They are contentless (content = ''): they hold no text, only the index,
-- and a lookup returns rowids whose text is read from memories. With
-- contentless_delete a row is forgotten by its rowid alone; an index that
-- reads the text from elsewhere must be told the old text to forget it,
-- which costs tokenizing it again. The indexes are derived data: a file
-- that is missing, or from another version of this schema (user_version),
-- is built again from the memories.

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

-- Segments are merged when the indexer is idle (searchindex.go), or at
-- once for a level that reaches 64 segments.
INSERT INTO memories_words (memories_words, rank) VALUES ('automerge', 0);
INSERT INTO memories_paths (memories_paths, rank) VALUES ('automerge', 0);
INSERT INTO memories_trigrams (memories_trigrams, rank) VALUES ('automerge', 0);
INSERT INTO memories_words (memories_words, rank) VALUES ('crisismerge', 64);
INSERT INTO memories_paths (memories_paths, rank) VALUES ('crisismerge', 64);
INSERT INTO memories_trigrams (memories_trigrams, rank) VALUES ('crisismerge', 64);

-- The indexer's own state. built is 0 until a round has indexed every
-- memory into this file's fresh indexes; rounds counts the rounds, and a
-- round's first statement increments it, which takes the file's write lock
-- before anything is read, so that two processes' indexers wait for each
-- other instead of failing. seq is the database's search_seq.n that the
-- indexes hold every change up to.
CREATE TABLE search_state (
	id     INTEGER PRIMARY KEY CHECK (id = 1),
	built  INTEGER NOT NULL,
	rounds INTEGER NOT NULL,
	seq    INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT INTO search_state (id, built, rounds) VALUES (1, 0, 0);

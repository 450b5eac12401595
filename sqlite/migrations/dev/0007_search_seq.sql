-- search_seq counts the changes noted in search_queue, by whichever
-- process makes them; the index file records the count its indexes hold
-- (search_state.seq). A search compares the two, in one read transaction,
-- to tell whether the indexes hold every change committed before it
-- began, including another process's, which does not wake this process's
-- indexer.
--
-- A queue row's changes becomes the count at the memory's last change,
-- rather than a count of changes since the row was made: an indexer
-- removes a row only if it did not change while it was being indexed, and
-- a row removed and made again (by another process's indexer, then a
-- write) started again from 0, so that it could look unchanged. The count
-- starts above every value the queue holds, and at 0 on an empty queue.

CREATE TABLE search_seq (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	n  INTEGER NOT NULL
) STRICT;
INSERT INTO search_seq VALUES (1, (SELECT ifnull(max(changes) + 1, 0) FROM search_queue));

DROP TRIGGER memories_search_insert;
DROP TRIGGER memories_search_delete;
DROP TRIGGER memories_search_update;

CREATE TRIGGER memories_search_insert AFTER INSERT ON memories BEGIN
	UPDATE search_seq SET n = n + 1;
	INSERT INTO search_queue (memory_rowid, changes) VALUES (new.rowid, (SELECT n FROM search_seq))
	ON CONFLICT DO UPDATE SET changes = excluded.changes;
END;

CREATE TRIGGER memories_search_delete AFTER DELETE ON memories BEGIN
	UPDATE search_seq SET n = n + 1;
	INSERT INTO search_queue (memory_rowid, changes) VALUES (old.rowid, (SELECT n FROM search_seq))
	ON CONFLICT DO UPDATE SET changes = excluded.changes;
END;

CREATE TRIGGER memories_search_update AFTER UPDATE OF path, content ON memories
WHEN old.path IS NOT new.path OR old.content IS NOT new.content BEGIN
	UPDATE search_seq SET n = n + 1;
	INSERT INTO search_queue (memory_rowid, changes) VALUES (old.rowid, (SELECT n FROM search_seq))
	ON CONFLICT DO UPDATE SET changes = excluded.changes;
END;

-- Redacting the current version of a live memory leaves the memory as it
-- is, and so its text in the files. Once the memory's text changes or the
-- memory is deleted, the text leaves the files as a redaction's would:
-- the indexes are purged of the entries they only marked deleted, and the
-- write-ahead logs emptied (searchindex.go).

CREATE TRIGGER memories_redacted_text_changed AFTER UPDATE OF path, content ON memories
WHEN (old.path IS NOT new.path OR old.content IS NOT new.content)
	AND EXISTS (SELECT 1 FROM versions WHERE id = old.version_id AND redacted_at IS NOT NULL) BEGIN
	INSERT INTO search_purge (id) VALUES (1)
	ON CONFLICT DO UPDATE SET requests = requests + 1;
END;

CREATE TRIGGER memories_redacted_text_deleted AFTER DELETE ON memories
WHEN EXISTS (SELECT 1 FROM versions WHERE id = old.version_id AND redacted_at IS NOT NULL) BEGIN
	INSERT INTO search_purge (id) VALUES (1)
	ON CONFLICT DO UPDATE SET requests = requests + 1;
END;

-- The change feed (memstore's feed.go): one row per change of a store,
-- numbered without gaps within the store in the order of the commits
-- (the single writer numbers them). No path, hash or content: those are
-- read from the version an event names, so that a redaction erases them
-- from the feed too. A store's events go with it.
--
-- The rows are narrow and keyed by (store_id, seq) alone (WITHOUT ROWID),
-- so that each change adds one b-tree insert at the right edge of its
-- store's range.

CREATE TABLE events (
	store_id   TEXT NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	type       TEXT NOT NULL,
	version_id TEXT,          -- NULL for store.archived
	actor_type TEXT NOT NULL, -- '' when unknown (archives before the feed)
	actor_id   TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (store_id, seq)
) STRICT, WITHOUT ROWID;

-- The feed of the stores already there, from what they kept: each
-- version, as a rename when its path differs from the memory's previous
-- one; each redaction, at its time; each archive, whose actor was not
-- kept.
INSERT INTO events (store_id, seq, type, version_id, actor_type, actor_id, created_at)
SELECT store_id, row_number() OVER (PARTITION BY store_id ORDER BY at, ord, version_id), type, version_id, actor_type, actor_id, at
FROM (
	SELECT store_id, id AS version_id, created_at AS at, 0 AS ord, actor_type, actor_id,
		CASE operation
			WHEN 'created' THEN 'memory.created'
			WHEN 'deleted' THEN 'memory.deleted'
			WHEN 'modified' THEN CASE WHEN path <> prev THEN 'memory.renamed' ELSE 'memory.modified' END
		END AS type
	FROM (SELECT *, lag(path) OVER (PARTITION BY store_id, memory_id ORDER BY id) AS prev FROM versions)
	UNION ALL
	SELECT store_id, id, redacted_at, 1, redactor_type, redactor_id, 'version.redacted' FROM versions WHERE redacted_at IS NOT NULL
	UNION ALL
	SELECT id, NULL, archived_at, 2, '', '', 'store.archived' FROM stores WHERE archived_at IS NOT NULL
);

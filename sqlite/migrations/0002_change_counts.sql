-- The changes of each store by hour and kind of actor, for the
-- console's overview: counted as each version is inserted (a write of
-- the API, a restore), so that the overview of the last 30 days reads
-- at most a row per store, hour and kind, never the versions. hour is
-- created_at in whole hours since 1970 (UTC). A deleted store's rows go
-- with it; a redaction changes no count.
CREATE TABLE change_counts (
	store_id   TEXT NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
	hour       INTEGER NOT NULL,
	actor_type TEXT NOT NULL,
	changes    INTEGER NOT NULL,
	PRIMARY KEY (store_id, hour, actor_type)
) STRICT, WITHOUT ROWID;

INSERT INTO change_counts (store_id, hour, actor_type, changes)
	SELECT store_id, created_at / 3600000000000, actor_type, count(*) FROM versions GROUP BY 1, 2, 3;

CREATE TRIGGER versions_change_count AFTER INSERT ON versions BEGIN
	INSERT INTO change_counts (store_id, hour, actor_type, changes)
		VALUES (new.store_id, new.created_at / 3600000000000, new.actor_type, 1)
		ON CONFLICT (store_id, hour, actor_type) DO UPDATE SET changes = changes + 1;
END;

-- The changes of each store by hour and kind of actor, for the
-- console's overview: counted as each version is inserted (a write of
-- the API, a restore), so that the overview of the last 30 days reads
-- at most a row per store, hour and kind, never the versions. hour is
-- created_at in whole hours since 1970 (UTC). A deleted store's rows go
-- with it; a redaction changes no count. The writes of a store hold its
-- lock, so its rows are updated one writer at a time.
CREATE TABLE change_counts (
	store_id   text COLLATE "C" NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
	hour       bigint NOT NULL,
	actor_type text NOT NULL,
	changes    bigint NOT NULL,
	PRIMARY KEY (store_id, hour, actor_type)
);

INSERT INTO change_counts (store_id, hour, actor_type, changes)
	SELECT store_id, created_at / 3600000000000, actor_type, count(*) FROM versions GROUP BY 1, 2, 3;

CREATE FUNCTION versions_change_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO change_counts (store_id, hour, actor_type, changes)
		VALUES (NEW.store_id, NEW.created_at / 3600000000000, NEW.actor_type, 1)
		ON CONFLICT (store_id, hour, actor_type) DO UPDATE SET changes = change_counts.changes + 1;
	RETURN NULL;
END $$;

CREATE TRIGGER versions_change_count AFTER INSERT ON versions
FOR EACH ROW EXECUTE FUNCTION versions_change_count();

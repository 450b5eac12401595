-- Each store keeps the count of its live memories, which the limit of
-- memories per store reads on every create: counting the store's rows
-- took time in proportion to the store. Triggers keep the count in the
-- statement that inserts or deletes a memory, and so in its transaction,
-- whatever writes it (a write of the API, a restore); a deleted store's
-- memories update no row.

ALTER TABLE stores ADD COLUMN memory_count INTEGER NOT NULL DEFAULT 0;

UPDATE stores SET memory_count = (SELECT count(*) FROM memories WHERE store_id = stores.id);

CREATE TRIGGER memories_count_insert AFTER INSERT ON memories BEGIN
	UPDATE stores SET memory_count = memory_count + 1 WHERE id = new.store_id;
END;

CREATE TRIGGER memories_count_delete AFTER DELETE ON memories BEGIN
	UPDATE stores SET memory_count = memory_count - 1 WHERE id = old.store_id;
END;

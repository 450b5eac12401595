-- Each store keeps, beside the count of its live memories, the sum of
-- their content sizes in bytes, which the console shows for every store
-- of a list: summing the store's rows took time in proportion to the
-- store. The triggers of 0011 now keep both, and a third follows an
-- update that changes a memory's size, in the statement that writes the
-- memory and so in its transaction, whatever writes it.

ALTER TABLE stores ADD COLUMN content_size INTEGER NOT NULL DEFAULT 0;

UPDATE stores SET content_size = (SELECT coalesce(sum(size), 0) FROM memories WHERE store_id = stores.id);

DROP TRIGGER memories_count_insert;
DROP TRIGGER memories_count_delete;

CREATE TRIGGER memories_count_insert AFTER INSERT ON memories BEGIN
	UPDATE stores SET memory_count = memory_count + 1, content_size = content_size + new.size WHERE id = new.store_id;
END;

CREATE TRIGGER memories_count_delete AFTER DELETE ON memories BEGIN
	UPDATE stores SET memory_count = memory_count - 1, content_size = content_size - old.size WHERE id = old.store_id;
END;

CREATE TRIGGER memories_size_update AFTER UPDATE OF size ON memories WHEN new.size != old.size BEGIN
	UPDATE stores SET content_size = content_size + new.size - old.size WHERE id = new.store_id;
END;

-- Each store keeps the count of its live memories, which the limit of
-- memories per store reads on every create and a search of a whole store
-- reads for its inverse document frequencies: counting the store's rows
-- took time in proportion to the store. The statements that insert and
-- delete a memory update it (memory.go), under the store's lock; a
-- restore sets it once its memories are in (dump.go).
ALTER TABLE stores ADD COLUMN memory_count bigint NOT NULL DEFAULT 0;

UPDATE stores s SET memory_count = c.n
FROM (SELECT store_id, count(*) AS n FROM memories GROUP BY store_id) c
WHERE c.store_id = s.id;

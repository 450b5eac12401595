-- Each store keeps, beside the count of its live memories, the sum of
-- their content sizes in bytes, which the console shows for every store
-- of a list: summing the store's rows took time in proportion to the
-- store. The statements that insert, update and delete a memory keep it
-- with the count (memory.go), under the store's lock; a restore sets it
-- once its memories are in (dump.go).
ALTER TABLE stores ADD COLUMN content_size bigint NOT NULL DEFAULT 0;

UPDATE stores s SET content_size = c.n
FROM (SELECT store_id, sum(size) AS n FROM memories GROUP BY store_id) c
WHERE c.store_id = s.id;

-- The search postings of a memory found by the memory's ID (search.go).
-- The trigger of 0006 deleted a memory's postings by its store, its words
-- and its ID, the primary key's three columns; but PostgreSQL 15 plans
-- that delete as a scan of every posting of the store, filtered by ID and
-- word, once a store is not large (2 to 4 ms for each update or deletion
-- of a memory at 200 to 1,000 memories of a hundred words each, a cost
-- growing with the store). Found by its ID, a memory's postings cost in
-- proportion to its own words whatever the store's size. Memory IDs are
-- unique across stores. Each posting written costs one more index entry;
-- the index is built in the upgrade's transaction, which holds back
-- writes of postings meanwhile.
CREATE INDEX search_postings_by_memory ON search_postings (memory_id);

CREATE OR REPLACE FUNCTION memories_search_postings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'UPDATE' AND old.id = new.id AND old.store_id = new.store_id THEN
		DELETE FROM search_postings
		WHERE memory_id = old.id AND word = ANY (ARRAY(
			SELECT unnest(tsvector_to_array(old.search_words)) EXCEPT SELECT unnest(tsvector_to_array(new.search_words))));
		INSERT INTO search_postings
		SELECT * FROM memory_search_postings(new.store_id, new.id, new.search_words)
		EXCEPT SELECT * FROM memory_search_postings(old.store_id, old.id, old.search_words)
		ON CONFLICT (store_id, word, memory_id) DO UPDATE SET in_path = excluded.in_path, in_content = excluded.in_content;
		RETURN NULL;
	END IF;
	IF TG_OP <> 'INSERT' THEN
		DELETE FROM search_postings WHERE memory_id = old.id;
	END IF;
	IF TG_OP <> 'DELETE' THEN
		INSERT INTO search_postings SELECT * FROM memory_search_postings(new.store_id, new.id, new.search_words);
	END IF;
	RETURN NULL;
END $$;

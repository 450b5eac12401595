-- Search's postings (search.go): a row for each word (lexeme) of each
-- live memory's search vector, with how many times it is in the path
-- (weight A) and in the content (weight B), which rank a memory for a
-- word as ts_rank would. A search's window of a word, the newest
-- memories of a store that have it, is then a range of the primary key's
-- index, read without the memories' rows; before, it scanned the newest
-- memories' rows until it had found the window, about 10,000 rows for a
-- common word at 100,000 memories. A trigger keeps the postings in each
-- write's own statement, so that a search sees every write committed
-- before it, whichever statement writes the memory (a store's deletion
-- deletes its memories, and so their postings).
CREATE TABLE search_postings (
	store_id   text COLLATE "C" NOT NULL,
	word       text COLLATE "C" NOT NULL,
	memory_id  text COLLATE "C" NOT NULL,
	in_path    smallint NOT NULL,
	in_content smallint NOT NULL,
	PRIMARY KEY (store_id, word, memory_id) INCLUDE (in_path, in_content)
);

-- The postings of a memory of store whose ID is id, of its search
-- vector words.
CREATE FUNCTION memory_search_postings(store text, id text, words tsvector)
RETURNS TABLE (store_id text, word text, memory_id text, in_path smallint, in_content smallint)
LANGUAGE sql IMMUTABLE AS $$
	SELECT store, w.lexeme, id, cardinality(array_positions(w.weights, 'A')), cardinality(array_positions(w.weights, 'B'))
	FROM unnest(words) w
$$;

-- An update writes only the postings that change: an edit of a few
-- words of a memory rewrites a few of its rows, not all of them.
CREATE FUNCTION memories_search_postings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'UPDATE' AND old.id = new.id AND old.store_id = new.store_id THEN
		DELETE FROM search_postings
		WHERE store_id = old.store_id AND memory_id = old.id AND word = ANY (ARRAY(
			SELECT unnest(tsvector_to_array(old.search_words)) EXCEPT SELECT unnest(tsvector_to_array(new.search_words))));
		INSERT INTO search_postings
		SELECT * FROM memory_search_postings(new.store_id, new.id, new.search_words)
		EXCEPT SELECT * FROM memory_search_postings(old.store_id, old.id, old.search_words)
		ON CONFLICT (store_id, word, memory_id) DO UPDATE SET in_path = excluded.in_path, in_content = excluded.in_content;
		RETURN NULL;
	END IF;
	IF TG_OP <> 'INSERT' THEN
		DELETE FROM search_postings
		WHERE store_id = old.store_id AND word = ANY (tsvector_to_array(old.search_words)) AND memory_id = old.id;
	END IF;
	IF TG_OP <> 'DELETE' THEN
		INSERT INTO search_postings SELECT * FROM memory_search_postings(new.store_id, new.id, new.search_words);
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER memories_search_postings AFTER INSERT OR DELETE OR UPDATE OF search_words, store_id ON memories
FOR EACH ROW EXECUTE FUNCTION memories_search_postings();

INSERT INTO search_postings SELECT p.* FROM memories m, memory_search_postings(m.store_id, m.id, m.search_words) p;

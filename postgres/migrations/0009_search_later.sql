-- Search's data is made after the write, by an indexer (searchindex.go),
-- not in the write's own statement: the words and the folded text of a
-- memory, their three GIN indexes and the postings were about a third of
-- PostgreSQL's CPU a write, all of it while the store's lock was held.
-- The memories' rows keep what the write makes; memory_search keeps, for
-- each live memory whose indexing is done, what search reads. A write
-- notes the memory in search_queue, in its own transaction, so a change
-- is never lost; the indexer takes the queue in rounds, and a search
-- first indexes what its stores have queued (searchindex.go), so that it
-- sees every write committed before it began.

-- What search reads of a memory: its store and path (the filters of a
-- search), search_text (the path and content folded, for substrings) and
-- search_words (their words, stemmed, the path's weighted A and the
-- content's B), as migration 0001 defined them on memories. A memory's
-- deletion queues it too, and the next round, finding no memory, deletes
-- its row. Neither a foreign key nor the deletion's own statement deletes
-- it: either would make a write wait for the indexer's transaction, with
-- its store's lock held, and could deadlock with it; and a search indexes
-- its stores' queue before it reads.
CREATE TABLE memory_search (
	id           text COLLATE "C" PRIMARY KEY,
	store_id     text COLLATE "C" NOT NULL,
	path         text COLLATE "C" NOT NULL,
	search_text  text NOT NULL,
	search_words tsvector NOT NULL
) WITH (toast_tuple_target = 8160);

ALTER TABLE memory_search ALTER COLUMN search_words SET STORAGE MAIN;

-- No write may land between the copy and the queue's trigger, neither
-- copied nor queued.
LOCK TABLE memories IN SHARE ROW EXCLUSIVE MODE;

INSERT INTO memory_search (id, store_id, path, search_text, search_words)
SELECT id, store_id, path, search_text, search_words FROM memories;

DROP TRIGGER memories_search_postings ON memories;
CREATE TRIGGER memory_search_postings AFTER INSERT OR DELETE OR UPDATE OF search_words, store_id ON memory_search
FOR EACH ROW EXECUTE FUNCTION memories_search_postings();

DROP INDEX memories_words;
DROP INDEX memories_trigrams;
DROP INDEX memories_path_words;
ALTER TABLE memories DROP COLUMN search_text, DROP COLUMN search_words;

CREATE INDEX memory_search_words ON memory_search USING gin (search_words);
CREATE INDEX memory_search_trigrams ON memory_search USING gin (search_text gin_trgm_ops);
CREATE INDEX memory_search_path_words ON memory_search USING gin (ts_filter(search_words, '{a}'));
CREATE INDEX memory_search_by_path ON memory_search (store_id, path);

-- The memories written and not yet indexed, oldest first. A row holds
-- IDs only: a memory deleted before its round leaves its row until the
-- round, which drops it.
CREATE TABLE search_queue (
	seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	store_id  text COLLATE "C" NOT NULL,
	memory_id text COLLATE "C" NOT NULL
);

CREATE INDEX search_queue_by_store ON search_queue (store_id, seq);

-- Every memory written or deleted is queued, in each store it was in,
-- so that a search of either runs its round.
CREATE FUNCTION memories_search_queue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP <> 'INSERT' AND (TG_OP = 'DELETE' OR old.store_id <> new.store_id) THEN
		INSERT INTO search_queue (store_id, memory_id) VALUES (old.store_id, old.id);
	END IF;
	IF TG_OP <> 'DELETE' THEN
		INSERT INTO search_queue (store_id, memory_id) VALUES (new.store_id, new.id);
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER memories_search_queue AFTER INSERT OR DELETE OR UPDATE OF path, content, store_id ON memories
FOR EACH ROW EXECUTE FUNCTION memories_search_queue();

-- memory_create of migration 0007, without the search columns.
DROP FUNCTION memory_create(text, text, bigint, text[], text, text, text, text, bigint, text, bytea, text, bigint, text, text, text, text, text, text);
CREATE FUNCTION memory_create(
	store text, workspace text, max_memories bigint, paths text[], below_lo text, below_hi text,
	mem text, ver text, at bigint, mem_path text, content bytea, sha text, size bigint,
	actor_type text, actor_id text, event text)
RETURNS TABLE (version_id text, created_at bigint, memory_count bigint) LANGUAGE plpgsql AS $$
DECLARE
	archived boolean;
	n bigint;
	last_id text;
	last_at bigint;
BEGIN
	IF paths IS NOT NULL THEN
		SELECT s.archived_at IS NOT NULL, s.memory_count INTO archived, n
		FROM stores s WHERE s.id = store AND s.workspace_id = workspace FOR NO KEY UPDATE;
		IF NOT FOUND OR archived OR n >= max_memories
			OR EXISTS (SELECT FROM memory_overlapping(store, '', paths, below_lo, below_hi)) THEN
			RETURN;
		END IF;
	END IF;
	SELECT v.id, v.created_at INTO last_id, last_at FROM versions v WHERE v.store_id = store ORDER BY v.id DESC LIMIT 1;
	IF last_at > at THEN
		at := last_at;
	END IF;
	IF ver <= last_id THEN
		ver := id_after(last_id);
	END IF;
	INSERT INTO versions (id, store_id, memory_id, operation, path, content, sha256, size, created_at, actor_type, actor_id)
	VALUES (ver, store, mem, 'created', mem_path, content, sha, size, at, actor_type, actor_id);
	INSERT INTO events (store_id, seq, type, version_id, actor_type, actor_id, created_at)
	VALUES (store, coalesce((SELECT e.seq FROM events e WHERE e.store_id = store ORDER BY e.seq DESC LIMIT 1), 0) + 1, event, ver, actor_type, actor_id, at);
	INSERT INTO memories (id, store_id, path, content, sha256, size, version_id, created_at, updated_at)
	VALUES (mem, store, mem_path, content, sha, size, ver, at, at);
	RETURN QUERY UPDATE stores s SET memory_count = s.memory_count + 1, content_size = s.content_size + size
		WHERE s.id = store RETURNING ver, at, s.memory_count;
END $$;

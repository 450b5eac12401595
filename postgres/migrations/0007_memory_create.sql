-- A new memory in one round trip (memory.go, "Writes in one round
-- trip"): memory_create takes the store's lock, checks that the write the
-- core's rule planned still holds, and makes it, all in one statement
-- that commits on its own. Each statement of a PL/pgSQL function sees
-- what committed before it began, so those after the lock see every
-- write of the store that held it before: the checks are as exact as in
-- a transaction of several statements.

-- The least identifier above id, as memstore's ids.Next makes it: its
-- ULID (the lowercase Crockford base-32 after the prefix) plus one.
CREATE FUNCTION id_after(id text) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
	digits constant text := '0123456789abcdefghjkmnpqrstvwxyz';
	b text := id;
	d int;
BEGIN
	FOR i IN REVERSE length(b)..1 LOOP
		d := strpos(digits, substr(b, i, 1));
		EXIT WHEN d = 0; -- the prefix
		IF d < 32 THEN
			RETURN overlay(b PLACING substr(digits, d + 1, 1) FROM i FOR 1);
		END IF;
		b := overlay(b PLACING '0' FROM i FOR 1);
	END LOOP;
	RETURN id || '0';
END $$;

-- A memory's search_words (search.go), of the words of its path and of
-- its content.
CREATE FUNCTION memory_search_words(path_words text, content_words text) RETURNS tsvector
LANGUAGE sql IMMUTABLE AS $$
	SELECT setweight(to_tsvector('memstore', path_words), 'A') || setweight(to_tsvector('memstore', content_words), 'B')
$$;

-- A live memory of the store, other than self, at one of paths (a path
-- and its ancestors) or in [below_lo, below_hi) (everything below the
-- path): the first in path order, or none. Overlap checks read it; the
-- ancestors and the path sort before everything below it.
CREATE FUNCTION memory_overlapping(store text, self text, paths text[], below_lo text, below_hi text)
RETURNS TABLE (id text, path text) LANGUAGE sql STABLE AS $$
	(SELECT id, path FROM memories WHERE store_id = store AND id <> self AND path = ANY (paths) ORDER BY path LIMIT 1)
	UNION ALL (SELECT id, path FROM memories WHERE store_id = store AND id <> self AND path >= below_lo AND path < below_hi ORDER BY path LIMIT 1)
	ORDER BY path LIMIT 1
$$;

-- Makes a memory with its "created" version and its event, and counts
-- it in its store's row, returning the version's ID and time and the
-- store's count; the version's triggers count the change, the memory's
-- queue it for its vector and write its search postings.
--
-- With paths set (one round trip), the function first locks the store's
-- row and makes nothing, returning no row, unless the store is the
-- workspace's, is not archived, holds fewer than max_memories memories
-- (the cap of the quota's rule, Quota.Max; NULL: none) and nothing
-- overlaps the path. Without (inside a transaction that holds the lock
-- and has checked), it only writes.
--
-- The version's ID and time are ver and at unless the store's last
-- version is later: then its time, and the ID after its own, so that a
-- store's versions follow the order of its lock whatever the clocks of
-- the processes that write them.
CREATE FUNCTION memory_create(
	store text, workspace text, max_memories bigint, paths text[], below_lo text, below_hi text,
	mem text, ver text, at bigint, mem_path text, content bytea, sha text, size bigint,
	actor_type text, actor_id text, event text, text_folded text, path_words text, content_words text)
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
	INSERT INTO memories (id, store_id, path, content, sha256, size, version_id, created_at, updated_at, search_text, search_words)
	VALUES (mem, store, mem_path, content, sha, size, ver, at, at, text_folded, memory_search_words(path_words, content_words));
	RETURN QUERY UPDATE stores s SET memory_count = s.memory_count + 1, content_size = s.content_size + size
		WHERE s.id = store RETURNING ver, at, s.memory_count;
END $$;

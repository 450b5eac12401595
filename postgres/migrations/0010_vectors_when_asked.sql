-- The vector queue is filled only once a server with an embedding model
-- has started on the database. Until then nothing ever takes the queue,
-- and filling it cost every write a trigger, a row and its index entries
-- (7 to 8% of PostgreSQL's writes a second, measured). A server with a
-- model calls vector_queue_on before anything else of its worker
-- (ResetEmbeddings), and from then on the queue is kept as migration 0005
-- defined it, for good.
--
-- Off, the queue and memory_vectors are empty: no vector is stored
-- before the queue is on, since a worker stores only what it claimed.
-- So a database that has no vector yet turns it off here, its queue
-- emptied; turned on, the queue takes every memory again.
DO $$
BEGIN
	IF NOT EXISTS (SELECT FROM memory_vectors) THEN
		DROP TRIGGER memories_vector_queue ON memories;
		DELETE FROM vector_queue;
	END IF;
END $$;

-- vector_queue_on turns the queue on, when it is off: it queues every
-- memory and makes every later write of a memory queue it. The lock it
-- takes waits for the writes of memories in flight and holds back new
-- ones until it commits, so that a write is either seen by the queuing
-- of every memory or runs the trigger: none is missed. It is taken only
-- once, by the first server with a model.
CREATE FUNCTION vector_queue_on() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF EXISTS (SELECT FROM pg_trigger WHERE tgrelid = 'memories'::regclass AND tgname = 'memories_vector_queue') THEN
		RETURN;
	END IF;
	LOCK TABLE memories IN SHARE ROW EXCLUSIVE MODE;
	IF EXISTS (SELECT FROM pg_trigger WHERE tgrelid = 'memories'::regclass AND tgname = 'memories_vector_queue') THEN
		RETURN; -- turned on by another while this waited
	END IF;
	CREATE TRIGGER memories_vector_queue AFTER INSERT OR UPDATE OF version_id ON memories
	FOR EACH ROW EXECUTE FUNCTION memories_vector_queue();
	INSERT INTO vector_queue (memory_id, workspace_id, version_id)
	SELECT m.id, s.workspace_id, m.version_id FROM memories m JOIN stores s ON s.id = m.store_id
	ORDER BY m.created_at, m.id
	ON CONFLICT (memory_id) DO NOTHING;
END $$;

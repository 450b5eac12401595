-- The vector queue is filled only once a server with an embedding model
-- has started on the database. Until then nothing ever takes the queue,
-- and filling it cost every write a trigger, a row and its index entries
-- (7 to 8% of PostgreSQL's writes a second, measured). A server with a
-- model calls vector_queue_on before anything else of its worker
-- (StartEmbeddings), and from then on the queue is kept as migration
-- 0005 defined it, for good.
--
-- A database that no worker ever used (no vector, none ever logged, no
-- memory ever claimed) turns it off here, its queue emptied. The locks
-- keep a worker of an older memstore still running from storing a
-- vector or claiming a memory between the check and the change.
LOCK TABLE memories, memory_vectors, vector_queue IN SHARE ROW EXCLUSIVE MODE;
DO $$
BEGIN
	IF NOT EXISTS (SELECT FROM memory_vectors) AND NOT EXISTS (SELECT FROM vector_log)
		AND NOT EXISTS (SELECT FROM vector_queue WHERE attempts > 0 OR lease_until IS NOT NULL) THEN
		DROP TRIGGER memories_vector_queue ON memories;
		TRUNCATE vector_queue;
	END IF;
END $$;

-- vector_queue_on turns the queue on, when it is off: every later write
-- of a memory queues it, and each memory without a vector of its current
-- version is queued now (a vector of an older one is deleted), so that
-- it holds whatever the database went through while the queue was off.
-- The lock it takes waits for the writes of memories in flight and holds
-- new ones back until it commits, so that a write is either seen by the
-- queuing or runs the trigger: none is missed. It waits at most 5 s for
-- the lock (a vacuum or a long transaction holds it), failing with
-- lock_not_available to be called again, rather than hold every write
-- back behind it. It must run at READ COMMITTED, where each statement
-- sees what committed before it: in an older snapshot the queuing would
-- miss the writes it waited for. It runs as its owner, who owns the
-- tables, so that a serving role allowed to write memories need not own
-- them to turn it on. So it first checks that the role that connected
-- may write memories, itself or through a role whose rights it inherits
-- or may take (SET ROLE, as a login without INHERIT does): PUBLIC may
-- execute any function, and a role that may only read, or only connect,
-- must not hold every write back for 5 s, nor put the queue's cost on
-- every write. (Inside the function current_user is its owner;
-- session_user is the role that connected. PostgreSQL 16 split a
-- membership's rights into USAGE and SET; before, MEMBER meant both.)
CREATE FUNCTION vector_queue_on() RETURNS void LANGUAGE plpgsql
SECURITY DEFINER AS $$
BEGIN
	IF EXISTS (SELECT FROM pg_trigger WHERE tgrelid = 'memories'::regclass AND tgname = 'memories_vector_queue') THEN
		RETURN;
	END IF;
	IF NOT EXISTS (SELECT FROM pg_roles r WHERE has_table_privilege(r.oid, 'memories', 'INSERT')
		AND pg_has_role(session_user, r.oid, CASE WHEN current_setting('server_version_num')::int >= 160000 THEN 'USAGE, SET' ELSE 'MEMBER' END)) THEN
		RAISE EXCEPTION 'vector_queue_on: role % may not write memories', session_user
		USING ERRCODE = 'insufficient_privilege';
	END IF;
	IF current_setting('transaction_isolation') <> 'read committed' THEN
		RAISE EXCEPTION 'vector_queue_on must run at READ COMMITTED, not %', current_setting('transaction_isolation');
	END IF;
	PERFORM set_config('lock_timeout', '5s', true);
	LOCK TABLE memories IN SHARE ROW EXCLUSIVE MODE;
	IF EXISTS (SELECT FROM pg_trigger WHERE tgrelid = 'memories'::regclass AND tgname = 'memories_vector_queue') THEN
		RETURN; -- turned on by another while this waited
	END IF;
	CREATE TRIGGER memories_vector_queue AFTER INSERT OR UPDATE OF version_id ON memories
	FOR EACH ROW EXECUTE FUNCTION memories_vector_queue();
	DELETE FROM memory_vectors v USING memories m WHERE m.id = v.memory_id AND m.version_id <> v.version_id;
	INSERT INTO vector_queue (memory_id, workspace_id, version_id)
	SELECT m.id, s.workspace_id, m.version_id FROM memories m JOIN stores s ON s.id = m.store_id
	WHERE NOT EXISTS (SELECT FROM memory_vectors v WHERE v.memory_id = m.id)
	ORDER BY m.created_at, m.id
	ON CONFLICT (memory_id) DO UPDATE SET version_id = excluded.version_id, attempts = 0, lease_until = NULL
	WHERE vector_queue.version_id <> excluded.version_id;
END $$;

-- The function runs with the migration's schema path, where the tables
-- are, and then pg_temp: a path that leaves pg_temp out searches it
-- first, and a caller's temporary table named memories would stand in
-- for the real one, in the check above and in what follows.
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION vector_queue_on() SET search_path = %s, pg_temp', current_setting('search_path'));
END $$;

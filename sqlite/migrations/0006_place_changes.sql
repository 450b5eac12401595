-- places_changed counts the deletions and the moves of a store's
-- memories: the changes that take a rowid from its path. A new memory
-- takes a rowid of its own and is in the store's events, which a process
-- reads to bring its copy of where the store's memories are up to date
-- (placecopy.go); after a deletion or a move, it reads the store again.
ALTER TABLE stores ADD COLUMN places_changed INTEGER NOT NULL DEFAULT 0;

DROP TRIGGER memories_count_delete;
CREATE TRIGGER memories_count_delete AFTER DELETE ON memories BEGIN
	UPDATE stores SET memory_count = memory_count - 1, content_size = content_size - old.size,
		places_changed = places_changed + 1 WHERE id = old.store_id;
END;

CREATE TRIGGER memories_place_moved AFTER UPDATE OF store_id, path ON memories
WHEN old.store_id IS NOT new.store_id OR old.path IS NOT new.path BEGIN
	UPDATE stores SET places_changed = places_changed + 1 WHERE id IN (old.store_id, new.store_id);
END;

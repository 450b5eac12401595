-- The words of each memory's path, the search vector's words of weight
-- A, under an index of their own: when a common term fills its window of
-- the newest memories, a search looks up the memories with the term in
-- their path whatever their age, which the index of every word would
-- serve only by reading each memory with the term.
CREATE INDEX IF NOT EXISTS memories_path_words ON memories USING gin (ts_filter(search_words, '{a}'));

-- Keep a memory's search vector in its row. PostgreSQL moves a row's
-- largest values out of line once the row passes about 2 KB, which a
-- memory of 500 bytes does with its folded text and search vector (the
-- vector is about twice the text): a search's scan of the newest
-- memories with a common word then read the TOAST table for each one,
-- three or four pages a memory instead of one. Rows now stay whole up to
-- a page, and in a larger one the content and folded text go out of line
-- before the vector does. Memories written before keep their storage
-- until rewritten (VACUUM FULL memories).
ALTER TABLE memories SET (toast_tuple_target = 8160);
ALTER TABLE memories ALTER COLUMN search_words SET STORAGE MAIN;

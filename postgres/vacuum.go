package postgres

import (
	"context"
)

// vacuumed are the tables that hold memory content or what is made of it
// (the search columns, the search postings' words, the vectors), and what
// sessions and dreams keep (titles, metadata, fields, transcripts,
// instructions): the ones whose dead row versions may keep a redacted or
// deleted text. A new table of content belongs here
// (TestVacuumFullLeavesNoText reads every table's file).
const vacuumed = `memories, versions, memory_search, search_postings, memory_vectors, sessions, session_stores, session_events, dreams`

// Vacuum has PostgreSQL reclaim the dead row versions of the tables that
// hold content, which every update, deletion and redaction leaves until
// autovacuum gets to them. Without full, the space becomes reusable and
// nothing is locked. With full, the tables are rewritten into new files
// that hold only live rows, their old files deleted, and every other
// process waits for each table while it is rewritten. Neither touches
// the write-ahead log already written, or copies the server keeps
// (archives, replicas, backups).
func (db *DB) Vacuum(ctx context.Context, full bool) error {
	// The search data of deleted memories goes with the rounds first.
	if err := db.catchUp(ctx, nil); err != nil {
		return wrap(err, "index the memories written for search")
	}
	q := `VACUUM (ANALYZE) ` + vacuumed
	if full {
		q = `VACUUM (FULL, ANALYZE) ` + vacuumed
	}
	_, err := db.pool.Exec(ctx, q)
	return wrap(err, "vacuum the database")
}

package sqlite

import (
	"context"
	"fmt"
	"strings"
)

// The search indexes follow the memories table through a queue
// (migration 0005): triggers note each changed memory in search_queue,
// with the values the indexes hold for it, and updateSearch indexes the
// whole queue in one statement per index before the writer commits. FTS5
// writes a segment for every statement that changes an index; indexing a
// batch of writes at once writes one.

// searchUpdates are updateSearch's statements, in order. Each index
// forgets the memories whose indexed text changed or that are gone, then
// learns those that changed or are new. The paths index holds only paths,
// so a change of content alone leaves it be.
var searchUpdates = func() []string {
	const (
		textChanged = "m.path IS NOT q.path OR m.sha256 IS NOT q.sha256"
		pathChanged = "m.path IS NOT q.path"
	)
	var stmts []string
	for _, ix := range []struct{ table, cols, changed string }{
		{"memories_words", "path, content", textChanged},
		{"memories_paths", "path", pathChanged},
		{"memories_trigrams", "path, content", textChanged},
	} {
		stmts = append(stmts,
			fmt.Sprintf(`DELETE FROM %[1]s WHERE rowid IN (
SELECT q.memory_rowid FROM search_queue q LEFT JOIN memories m ON m.rowid = q.memory_rowid
WHERE q.indexed AND (m.rowid IS NULL OR %[2]s))`, ix.table, ix.changed),
			fmt.Sprintf(`INSERT INTO %[1]s (rowid, %[2]s)
SELECT m.rowid, m.%[3]s FROM search_queue q JOIN memories m ON m.rowid = q.memory_rowid
WHERE NOT q.indexed OR %[4]s`, ix.table, ix.cols, strings.ReplaceAll(ix.cols, ", ", ", m."), ix.changed))
	}
	return append(stmts, `DELETE FROM search_queue`)
}()

// searchPurges rebuild each index into one segment ('optimize'), which
// drops the entries that deletions only marked deleted. FTS5's
// secure-delete option would drop them at once, but rewrites pages of
// every segment for each word of a deleted memory: it made a mix of
// writes twenty times slower. A redaction asks for a purge (search_purge),
// because the redacted text may still be in those pages; PRAGMA
// secure_delete (set at Open) then zeroes the freed pages.
var searchPurges = []string{
	`INSERT INTO memories_words (memories_words) VALUES ('optimize')`,
	`INSERT INTO memories_paths (memories_paths) VALUES ('optimize')`,
	`INSERT INTO memories_trigrams (memories_trigrams) VALUES ('optimize')`,
	`DELETE FROM search_purge`,
}

// updateSearch brings the search indexes up to date with tx's writes.
// The writer runs it in every transaction, before the commit.
func updateSearch(ctx context.Context, tx *txn) error {
	var queued, purge bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM search_queue), EXISTS (SELECT 1 FROM search_purge)`).Scan(&queued, &purge); err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	var stmts []string
	if queued {
		stmts = searchUpdates
	}
	if purge {
		stmts = append(stmts[:len(stmts):len(stmts)], searchPurges...)
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("search index: %w", err)
		}
	}
	return nil
}

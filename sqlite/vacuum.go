package sqlite

import (
	"context"
	"fmt"
)

// Vacuum rebuilds the database file without its free pages, which an
// upgrade or many deletions leave, and then empties the write-ahead log
// into it, so that the file shrinks on disk. It holds the writer while it
// runs: writes wait for it, reads go on. full changes nothing here: SQLite
// has one kind of VACUUM, and erased content is gone from the file
// already (secure_delete and the checkpoint of each redaction).
func (db *DB) Vacuum(ctx context.Context, full bool) error {
	if _, err := db.w.ExecContext(ctx, `VACUUM`); err != nil {
		return wrap(translate(err), "vacuum the database")
	}
	if err := db.ck.erase(ctx); err != nil {
		return fmt.Errorf("vacuum the database: empty the write-ahead log: %w", err)
	}
	return nil
}

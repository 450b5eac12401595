package sqlite

import (
	"context"
	"path/filepath"
	"testing"
)

// TestSearchConnsMapFiles: a search reads the database and the index
// file through memory mapping, both of them: a page read by a system
// call each was much of what a search's row lookups cost.
func TestSearchConnsMapFiles(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "m.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.ix.whenIndexed(ctx, searchCovered, func(tx *txn) error {
		for _, schema := range []string{"main", "search"} {
			var n int64
			if err := tx.queryRow(ctx, `PRAGMA `+schema+`.mmap_size`).Scan(&n); err != nil {
				return err
			}
			if n != searchMmapSize {
				t.Errorf("%s: mmap_size %d; want %d", schema, n, searchMmapSize)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

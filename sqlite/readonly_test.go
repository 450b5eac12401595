package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// TestReadOnlyDatabase: memstore writes even to serve reads (the use of
// keys, the search indexes), so a database that this user may not write,
// or whose search index or directory it may not write, is refused at
// Open with an error that names the file, rather than opened to fail at
// every request.
func TestReadOnlyDatabase(t *testing.T) {
	for _, tt := range []struct {
		name     string
		readOnly func(path string) string // what it made read-only
	}{
		{"database", func(path string) string { return path }},
		{"search index", sqlite.IndexPath},
		{"directory", filepath.Dir},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db, path := mustOpenToClose(t)
			mustStore(t, db)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			file := tt.readOnly(path)
			sqlitetest.ReadOnly(t, file)
			db, err := sqlite.Open(context.Background(), path, sqlite.Options{})
			if err == nil {
				db.Close()
				t.Fatal("opened")
			}
			if !errors.Is(err, sqlite.ErrReadOnly) || !strings.Contains(err.Error(), file+" is read-only for this user") {
				t.Errorf("error %q: want ErrReadOnly naming %s", err, file)
			}
		})
	}
}

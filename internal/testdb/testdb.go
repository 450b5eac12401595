// Package testdb opens the database of a test, of either backend: the
// test fails at once when it cannot, and the database is closed when the
// test ends.
package testdb

import (
	"context"
	"testing"
)

// Open returns the database that open opens, closed when the test ends.
// Its cleanup is registered before those of whatever the test builds on
// the database, such as a server, so it runs after them.
func Open[DB interface{ Close() error }](tb testing.TB, open func(context.Context) (DB, error)) DB {
	tb.Helper()
	db, err := open(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Error(err)
		}
	})
	return db
}

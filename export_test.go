package memstore

import (
	"context"
	"time"
)

// SetExportBounds sets how long co's exports may hold their snapshot and
// wait for a place, for tests that cannot wait minutes.
func SetExportBounds(co *Core, hold, wait time.Duration) {
	co.exports.hold, co.exports.wait = hold, wait
}

// TakeSemanticPlaces takes n of workspace ws's places of semantic
// searches, as that many searches in progress would, and returns what
// frees them.
func TakeSemanticPlaces(co *Core, ws string, n int) (free func()) {
	var frees []func()
	for range n {
		f, err := co.semantic.take(context.Background(), ws)
		if err != nil {
			panic(err)
		}
		frees = append(frees, f)
	}
	return func() {
		for _, f := range frees {
			f()
		}
	}
}

package memstore

import "time"

// SetExportBounds sets how long co's exports may hold their snapshot and
// wait for a place, for tests that cannot wait minutes.
func SetExportBounds(co *Core, hold, wait time.Duration) {
	co.exports.hold, co.exports.wait = hold, wait
}

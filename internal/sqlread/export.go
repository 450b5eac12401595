package sqlread

import (
	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sqlrow"
)

// Export gives sink, in tx, the store of the workspace and its live
// memories in order of path, with their content when content is set
// (memstore.ExportStorage). The memories come from one statement read
// row by row, so that one row at a time is held, whatever the store's
// size; the one snapshot is the caller's transaction.
func Export(tx Tx, d *Dialect, workspaceID, storeID string, content bool, sink memstore.ExportSink) error {
	s, err := Store(tx, d, workspaceID, storeID, "")
	if err != nil {
		return err
	}
	if err := sink.Store(s); err != nil {
		return err
	}
	rows, err := tx.Query(`SELECT `+sqlrow.MemoryColumns(content, d.EmptyContent)+` FROM memories WHERE store_id = `+d.Param(1)+` ORDER BY path`, storeID)
	return eachMemory(rows, err, func(m *memstore.Memory) (bool, error) { return true, sink.Memory(m) })
}

// eachMemory calls fn with each memory of rows (of MemoryColumns), the
// result of a query that failed with err or not, until fn returns false
// or an error, and closes rows.
func eachMemory(rows Rows, err error, fn func(*memstore.Memory) (bool, error)) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		m, err := sqlrow.ScanMemory(rows)
		if err != nil {
			return err
		}
		if more, err := fn(m); !more || err != nil {
			return err
		}
	}
	return rows.Err()
}

package sqlite

import (
	"context"

	"github.com/memstore/memstore"
)

// ExportMemories implements memstore.ExportStorage in one read
// transaction: under WAL, a snapshot that writes made meanwhile do not
// reach. The memories come from one statement stepped row by row, so
// that one row at a time is held, whatever the store's size. The
// transaction pins the log: checkpoints cannot copy past it until it
// ends, which the core bounds (memstore.ExportHold) by ctx.
func (db *DB) ExportMemories(ctx context.Context, workspaceID, storeID string, content bool, sink memstore.ExportSink) error {
	err := db.read(ctx, func(tx *txn) error {
		s, err := getStore(ctx, tx, workspaceID, storeID)
		if err != nil {
			return err
		}
		if err := sink.Store(s); err != nil {
			return err
		}
		rows, err := tx.query(ctx, `SELECT `+memoryColumns(content)+` FROM memories WHERE store_id = ? ORDER BY path`, storeID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			m, err := scanMemory(rows)
			if err != nil {
				return err
			}
			if err := sink.Memory(m); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	return wrap(err, "export store %s", storeID)
}

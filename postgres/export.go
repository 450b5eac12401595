package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
)

// ExportMemories implements memstore.ExportStorage in one read
// transaction (REPEATABLE READ: one snapshot for the store and its
// memories). The memories come from one statement whose rows are read
// as they arrive, so that one row at a time is held, whatever the
// store's size. The snapshot holds back vacuum until the transaction
// ends, which the core bounds (memstore.ExportHold) by ctx.
func (db *DB) ExportMemories(ctx context.Context, workspaceID, storeID string, content bool, sink memstore.ExportSink) error {
	started := false
	err := db.inTx(ctx, readTx, func(tx pgx.Tx) error {
		if started {
			// inTx may run a transaction again (a lost connection), but
			// sink has had part of the export: fail instead.
			return errors.New("the export was interrupted; run it again")
		}
		s, err := getStore(ctx, tx, workspaceID, storeID, "")
		if err != nil {
			return err
		}
		started = true
		if err := sink.Store(s); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+memoryColumns(content)+` FROM memories WHERE store_id = $1 ORDER BY path`, storeID)
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

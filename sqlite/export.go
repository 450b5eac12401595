package sqlite

import (
	"context"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sqlread"
)

// ExportMemories implements memstore.ExportStorage in one read
// transaction: under WAL, a snapshot that writes made meanwhile do not
// reach. The transaction pins the log: checkpoints cannot copy past it
// until it ends, which the core bounds (memstore.ExportHold) by ctx.
func (db *DB) ExportMemories(ctx context.Context, workspaceID, storeID string, content bool, sink memstore.ExportSink) error {
	err := db.reads(ctx)(func(tx sqlread.Tx) error {
		return sqlread.Export(tx, dialect, workspaceID, storeID, content, sink)
	})
	return wrap(err, "export store %s", storeID)
}

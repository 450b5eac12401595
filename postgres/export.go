package postgres

import (
	"context"
	"errors"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sqlread"
)

// ExportMemories implements memstore.ExportStorage in one read
// transaction (REPEATABLE READ: one snapshot for the store and its
// memories). The snapshot holds back vacuum until the transaction ends,
// which the core bounds (memstore.ExportHold) by ctx.
func (db *DB) ExportMemories(ctx context.Context, workspaceID, storeID string, content bool, sink memstore.ExportSink) error {
	s := &sentSink{ExportSink: sink}
	err := db.read(ctx)(func(tx sqlread.Tx) error {
		if s.sent {
			// A read may run again (a lost connection), but sink has had
			// part of the export: fail instead.
			return errors.New("the export was interrupted; run it again")
		}
		return sqlread.Export(tx, dialect, workspaceID, storeID, content, s)
	})
	return wrap(err, "export store %s", storeID)
}

// sentSink is a sink that knows whether it has been given anything.
type sentSink struct {
	memstore.ExportSink
	sent bool
}

func (s *sentSink) Store(st *memstore.Store) error {
	s.sent = true
	return s.ExportSink.Store(st)
}

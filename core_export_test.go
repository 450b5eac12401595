package memstore_test

import (
	"context"

	"github.com/memstore/memstore"
)

func (r *recording) ExportMemories(ctx context.Context, ws, storeID string, content bool, sink memstore.ExportSink) error {
	r.record("ExportMemories")
	return r.db.ExportMemories(ctx, ws, storeID, content, sink)
}

// discardExport takes an export and keeps nothing of it.
type discardExport struct{}

func (discardExport) Store(*memstore.Store) error   { return nil }
func (discardExport) Memory(*memstore.Memory) error { return nil }

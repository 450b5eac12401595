package httpapi_test

import (
	"context"

	"github.com/memstore/memstore"
)

func (b clients) ExportMemories(ctx context.Context, c *memstore.Caller, storeID string, content bool, sink memstore.ExportSink) error {
	return b.client(c).ExportMemories(ctx, c, storeID, content, sink)
}

package postgres

import (
	"context"

	"github.com/memstore/memstore"
)

// SearchMemories implements memstore.SearchStorage: not yet, on
// PostgreSQL; every query is refused, saying so.
func (db *DB) SearchMemories(ctx context.Context, workspaceID string, storeIDs []string, q memstore.SearchQuery) (memstore.Page[memstore.SearchResult], error) {
	return memstore.Page[memstore.SearchResult]{}, memstore.Errorf(memstore.EInvalid, "search is not yet available on PostgreSQL")
}

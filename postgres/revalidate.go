package postgres

import (
	"context"

	"github.com/memstore/memstore/internal/batch"
)

// maxRevalidateBatch bounds the memories one revalidation statement looks up.
const maxRevalidateBatch = 256

// A versionQuery asks for the version of memory id of store storeID in
// workspace workspaceID.
type versionQuery struct{ id, storeID, workspaceID string }

// newRevalidator returns the batcher of MemoryUnlessAt's lookups: the
// lookups asked for while others are in flight go together in one
// statement, at most flight statements at once. Each answer is the
// memory's version, or "" when the memory is not in that store of that
// workspace.
func (db *DB) newRevalidator(flight int) *batch.Batcher[versionQuery, string] {
	return batch.New(flight, maxRevalidateBatch, db.versions)
}

// versions looks up the versions of qs in one statement. Its batch is
// taken after every one of its requests came (batch.Batcher.Do), so it
// sees every write acknowledged before any of them was asked.
func (db *DB) versions(ctx context.Context, qs []versionQuery) ([]string, error) {
	idv, stores, wss := make([]string, len(qs)), make([]string, len(qs)), make([]string, len(qs))
	for i, q := range qs {
		idv[i], stores[i], wss[i] = q.id, q.storeID, q.workspaceID
	}
	rows, err := db.pool.Query(ctx, `SELECT r.i, m.version_id
		FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS r(id, store_id, ws, i)
		JOIN memories m ON m.id = r.id AND m.store_id = r.store_id
		JOIN stores s ON s.id = m.store_id AND s.workspace_id = r.ws`, idv, stores, wss)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]string, len(qs))
	for rows.Next() {
		var (
			i int64
			v string
		)
		if err := rows.Scan(&i, &v); err != nil {
			return nil, err
		}
		out[i-1] = v
	}
	return out, rows.Err()
}

package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

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
// sees every write acknowledged before any of them was asked. Memory IDs
// are unique, so the statement looks up the IDs alone, by the primary
// key, and each request takes its memory's row only if the store and
// workspace are its own. A lone lookup keeps the single-row statement,
// which answers it about twice as fast as the statement of many.
func (db *DB) versions(ctx context.Context, qs []versionQuery) ([]string, error) {
	if len(qs) == 1 {
		q := qs[0]
		var v string
		err := db.pool.QueryRow(ctx, `SELECT m.version_id FROM memories m JOIN stores s ON s.id = m.store_id
			WHERE m.id = $1 AND m.store_id = $2 AND s.workspace_id = $3`, q.id, q.storeID, q.workspaceID).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			err = nil
		}
		return []string{v}, err
	}
	idv := make([]string, len(qs))
	for i, q := range qs {
		idv[i] = q.id
	}
	rows, err := db.pool.Query(ctx, `SELECT m.id, m.store_id, s.workspace_id, m.version_id
		FROM memories m JOIN stores s ON s.id = m.store_id WHERE m.id = ANY($1)`, idv)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found := make(map[versionQuery]string, len(qs))
	for rows.Next() {
		var (
			q versionQuery
			v string
		)
		if err := rows.Scan(&q.id, &q.storeID, &q.workspaceID, &v); err != nil {
			return nil, err
		}
		found[q] = v
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = found[q]
	}
	return out, nil
}

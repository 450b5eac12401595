package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/vector"
)

var _ memstore.VectorStorage = (*DB)(nil)

// Vectors are kept in memory_vectors and the memories to embed in
// vector_queue (migrations/0005_vectors.sql), whose triggers queue every
// written memory and delete the vector of content that changed, was
// deleted or was redacted. A search scans the vectors of its stores
// exactly (internal/vector): no approximate index, so no memory is missed.

// StartEmbeddings implements memstore.VectorStorage: every write queues
// its memory already.
func (db *DB) StartEmbeddings(context.Context) error { return nil }

// ResetEmbeddings implements memstore.VectorStorage.
func (db *DB) ResetEmbeddings(ctx context.Context, model string, dims int) error {
	// Only the memories whose vectors this deletes are queued: every
	// other memory has a vector of the model or is queued already.
	err := db.write(ctx, func(tx *txn) error {
		if _, err := tx.exec(ctx, `INSERT INTO vector_queue (memory_id, workspace_id, version_id)
			SELECT m.id, s.workspace_id, m.version_id FROM memory_vectors v JOIN memories m ON m.id = v.memory_id JOIN stores s ON s.id = m.store_id
			WHERE v.model <> ? OR v.dims <> ?
			ORDER BY m.rowid
			ON CONFLICT DO NOTHING`, model, dims); err != nil {
			return err
		}
		_, err := tx.exec(ctx, `DELETE FROM memory_vectors WHERE model <> ? OR dims <> ?`, model, dims)
		return err
	})
	return wrap(err, "reset vectors")
}

// ClaimEmbeddings implements memstore.VectorStorage in one write of the
// writer, which runs one claim at a time: no two take the same memory.
func (db *DB) ClaimEmbeddings(ctx context.Context, now, until time.Time, limit int) ([]memstore.EmbeddingTask, error) {
	var tasks []memstore.EmbeddingTask
	err := db.write(ctx, func(tx *txn) error {
		tasks = nil
		// The workspace whose oldest claimable memory waited longest goes
		// first, so that past limit workspaces each is served in turn.
		rows, err := tx.query(ctx, `SELECT workspace_id FROM vector_queue WHERE lease_until IS NULL OR lease_until <= ?
			GROUP BY workspace_id ORDER BY min(seq)`, nanos(now))
		if err != nil {
			return err
		}
		var workspaces []string
		for rows.Next() {
			var w string
			if err := rows.Scan(&w); err != nil {
				rows.Close()
				return err
			}
			workspaces = append(workspaces, w)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		return memstore.ClaimShared(workspaces, limit, func(w string, n int) (int, error) {
			got, err := claimWorkspace(ctx, tx, w, now, until, n)
			tasks = append(tasks, got...)
			return len(got), err
		})
	})
	return tasks, wrap(err, "claim memories to embed")
}

func claimWorkspace(ctx context.Context, tx *txn, workspaceID string, now, until time.Time, n int) ([]memstore.EmbeddingTask, error) {
	rows, err := tx.query(ctx, `SELECT q.seq, q.memory_id, q.version_id, q.attempts, m.store_id, m.path, m.content
		FROM vector_queue q JOIN memories m ON m.id = q.memory_id
		WHERE q.workspace_id = ? AND (q.lease_until IS NULL OR q.lease_until <= ?)
		ORDER BY q.seq LIMIT ?`, workspaceID, nanos(now), n)
	if err != nil {
		return nil, err
	}
	var tasks []memstore.EmbeddingTask
	var seqs []int64
	for rows.Next() {
		t := memstore.EmbeddingTask{WorkspaceID: workspaceID}
		var seq int64
		if err := rows.Scan(&seq, &t.MemoryID, &t.VersionID, &t.Attempts, &t.StoreID, &t.Path, &t.Content); err != nil {
			rows.Close()
			return nil, err
		}
		tasks = append(tasks, t)
		seqs = append(seqs, seq)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, seq := range seqs {
		if _, err := tx.exec(ctx, `UPDATE vector_queue SET lease_until = ?, attempts = attempts + 1 WHERE seq = ?`, nanos(until), seq); err != nil {
			return nil, err
		}
	}
	return tasks, nil
}

// PutEmbeddings implements memstore.VectorStorage. A vector is kept only
// while its version is the memory's current one and not redacted; the task ends only if
// the memory was not changed since its claim (a change queued it again,
// with its new version).
func (db *DB) PutEmbeddings(ctx context.Context, model string, es []memstore.Embedding) error {
	err := db.write(ctx, func(tx *txn) error {
		for _, e := range es {
			if _, err := tx.exec(ctx, `INSERT INTO memory_vectors (memory_id, store_id, version_id, model, dims, vector)
				SELECT id, store_id, version_id, ?, ?, ? FROM memories m WHERE id = ? AND version_id = ?
					AND NOT EXISTS (SELECT 1 FROM versions v WHERE v.store_id = m.store_id AND v.id = m.version_id AND v.redacted_at IS NOT NULL)
				ON CONFLICT DO UPDATE SET version_id = excluded.version_id, model = excluded.model, dims = excluded.dims, vector = excluded.vector`,
				model, len(e.Vector), vector.Encode(e.Vector), e.MemoryID, e.VersionID); err != nil {
				return err
			}
			if _, err := tx.exec(ctx, `DELETE FROM vector_queue WHERE memory_id = ? AND version_id = ?`, e.MemoryID, e.VersionID); err != nil {
				return err
			}
		}
		_, err := tx.exec(ctx, `DELETE FROM vector_log WHERE seq <= (SELECT max(seq) FROM vector_log) - ?`, vectorLogKeep)
		return err
	})
	return wrap(err, "store vectors")
}

// DeferEmbeddings implements memstore.VectorStorage.
func (db *DB) DeferEmbeddings(ctx context.Context, tasks []memstore.EmbeddingTask, until time.Time) error {
	err := db.write(ctx, func(tx *txn) error {
		for _, t := range tasks {
			if _, err := tx.exec(ctx, `UPDATE vector_queue SET lease_until = ? WHERE memory_id = ? AND version_id = ?`, nanos(until), t.MemoryID, t.VersionID); err != nil {
				return err
			}
		}
		return nil
	})
	return wrap(err, "defer memories to embed")
}

// DropEmbeddings implements memstore.VectorStorage.
func (db *DB) DropEmbeddings(ctx context.Context, tasks []memstore.EmbeddingTask) error {
	err := db.write(ctx, func(tx *txn) error {
		for _, t := range tasks {
			if _, err := tx.exec(ctx, `DELETE FROM vector_queue WHERE memory_id = ? AND version_id = ?`, t.MemoryID, t.VersionID); err != nil {
				return err
			}
		}
		return nil
	})
	return wrap(err, "drop memories to embed")
}

// NearestMemories implements memstore.VectorStorage.
func (db *DB) NearestMemories(ctx context.Context, workspaceID string, storeIDs []string, model string, query []float32, pathPrefix string, limit int) ([]memstore.SearchResult, error) {
	// The copies are locked before the transaction reads (a search that
	// waits for another holds no connection), and let go once scanned.
	var copies []*vector.Copy[int64]
	unlock := func() {}
	if pathPrefix == "" || pathPrefix == "/" {
		copies, unlock = db.vectors.LockStores(workspaceID, storeIDs, model, len(query))
	}
	defer unlock()
	var out []memstore.SearchResult
	err := db.read(ctx, func(tx *txn) error {
		for _, id := range storeIDs {
			if _, err := storeState(ctx, tx, workspaceID, id); err != nil {
				return err
			}
		}
		hits, err := db.nearest(ctx, tx, storeIDs, copies, model, query, pathPrefix, limit)
		unlock()
		if err != nil {
			return err
		}
		for _, h := range hits {
			out = append(out, memstore.SearchResult{Memory: memstore.Memory{ID: h.ID}, Score: h.Score})
		}
		return nil
	})
	return out, wrap(err, "find nearest memories")
}

// nearest scans the vectors of the stores: their copies in memory
// (vectorcache.go), locked, or, for a search below a path prefix, the
// rows of the memories below it, which the copies cannot tell.
func (db *DB) nearest(ctx context.Context, tx *txn, storeIDs []string, copies []*vector.Copy[int64], model string, query []float32, pathPrefix string, limit int) ([]vector.Hit, error) {
	q := vector.Encode(query)
	if pathPrefix != "" && pathPrefix != "/" {
		args := []any{model, len(query), pathPrefix}
		filter := ` AND m.path >= ?`
		if hi, ok := keyset.UpperBound(pathPrefix); ok {
			filter += ` AND m.path < ?`
			args = append(args, hi)
		}
		filter += ` AND m.store_id IN (?` + strings.Repeat(", ?", len(storeIDs)-1) + `)`
		for _, id := range storeIDs {
			args = append(args, id)
		}
		set, err := db.scanVectors(ctx, tx, `SELECT v.memory_id, v.vector FROM memories m JOIN memory_vectors v ON v.memory_id = m.id
			WHERE v.model = ? AND v.dims = ?`+filter, args...)
		if err != nil {
			return nil, err
		}
		return set.Nearest(q, limit)
	}
	var head, tail int64
	// Two subqueries: SQLite finds a lone max or min in the index, but
	// scans the whole log for the two in one query.
	if err := tx.queryRow(ctx, `SELECT ifnull((SELECT max(seq) FROM vector_log), 0), ifnull((SELECT min(seq) FROM vector_log), 0)`).Scan(&head, &tail); err != nil {
		return nil, err
	}
	var all []vector.Hit
	for _, cp := range copies {
		set, err := db.storeSet(ctx, tx, cp, head, tail)
		if err != nil {
			return nil, err
		}
		hits, err := set.Nearest(q, limit)
		if err != nil {
			return nil, err
		}
		all = append(all, hits...)
	}
	vector.SortHits(all)
	return all[:min(limit, len(all))], nil
}

func (db *DB) scanVectors(ctx context.Context, tx *txn, q string, args ...any) (*vector.Set, error) {
	rows, err := tx.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	set := &vector.Set{}
	for rows.Next() {
		var id string
		var blob []byte
		if err := rows.Scan(&id, &blob); err != nil {
			return nil, err
		}
		db.vectors.rowsRead.Add(1)
		if err := set.Add(id, blob); err != nil {
			return nil, fmt.Errorf("vector of memory %s: %w", id, err)
		}
	}
	return set, rows.Err()
}

// EmbeddingCounts implements memstore.VectorStorage.
func (db *DB) EmbeddingCounts(ctx context.Context) (embedded, queued int64, err error) {
	err = db.read(ctx, func(tx *txn) error {
		return tx.queryRow(ctx, `SELECT (SELECT count(*) FROM memory_vectors), (SELECT count(*) FROM vector_queue)`).Scan(&embedded, &queued)
	})
	return embedded, queued, wrap(err, "count vectors")
}

package postgres

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/vector"
)

var _ memstore.VectorStorage = (*DB)(nil)

// Vectors are kept in memory_vectors and the memories to embed in
// vector_queue (migrations/0005_vectors.sql), whose triggers queue every
// written memory, once a worker has started on the database (0010), and
// delete the vector of content that changed, was deleted or was
// redacted. Vectors are bytea blobs, so no extension is
// needed; a search scans its stores' vectors exactly (internal/vector)
// in this process's copies of them, which vectorcache.go keeps current
// from vector_log.

// StartEmbeddings implements memstore.VectorStorage: it turns the queue
// on (vector_queue_on, migration 0010), which a database leaves off, to
// spare every write the queue, until a server with a model starts on
// it. The function must run at READ COMMITTED, whatever the server's
// default.
func (db *DB) StartEmbeddings(ctx context.Context) error {
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SELECT vector_queue_on()`)
		return err
	})
	return wrap(err, "turn the queue of memories to embed on")
}

// ResetEmbeddings implements memstore.VectorStorage.
func (db *DB) ResetEmbeddings(ctx context.Context, model string, dims int) error {
	// Only the memories whose vectors this deletes are queued: every
	// other memory has a vector of the model or is queued already, and
	// queuing one whose vector another worker is storing would embed it
	// twice.
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `WITH d AS (DELETE FROM memory_vectors WHERE model <> $1 OR dims <> $2 RETURNING memory_id)
			INSERT INTO vector_queue (memory_id, workspace_id, version_id)
			SELECT m.id, s.workspace_id, m.version_id FROM d JOIN memories m ON m.id = d.memory_id JOIN stores s ON s.id = m.store_id
			ORDER BY m.created_at, m.id
			ON CONFLICT (memory_id) DO NOTHING`, model, dims)
		return err
	})
	return wrap(err, "reset vectors")
}

// ClaimEmbeddings implements memstore.VectorStorage: FOR UPDATE SKIP
// LOCKED, so that the workers of several servers take different memories.
func (db *DB) ClaimEmbeddings(ctx context.Context, now, until time.Time, limit int) ([]memstore.EmbeddingTask, error) {
	var tasks []memstore.EmbeddingTask
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		tasks = nil
		// The workspace whose oldest claimable memory waited longest goes
		// first, so that past limit workspaces each is served in turn.
		rows, err := tx.Query(ctx, `SELECT workspace_id FROM vector_queue WHERE lease_until IS NULL OR lease_until <= $1
			GROUP BY workspace_id ORDER BY min(seq)`, keyset.Nanos(now))
		if err != nil {
			return err
		}
		workspaces, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		return memstore.ClaimShared(workspaces, limit, func(w string, n int) (int, error) {
			rows, err := tx.Query(ctx, `WITH c AS (
					SELECT memory_id FROM vector_queue
					WHERE workspace_id = $1 AND (lease_until IS NULL OR lease_until <= $2)
					ORDER BY seq LIMIT $3 FOR UPDATE SKIP LOCKED)
				UPDATE vector_queue q SET lease_until = $4, attempts = q.attempts + 1 FROM c, memories m
				WHERE q.memory_id = c.memory_id AND m.id = q.memory_id
				RETURNING q.memory_id, q.version_id, q.attempts - 1, m.store_id, m.path, m.content`,
				w, keyset.Nanos(now), n, keyset.Nanos(until))
			if err != nil {
				return 0, err
			}
			got := 0
			for rows.Next() {
				t := memstore.EmbeddingTask{WorkspaceID: w}
				var content []byte
				if err := rows.Scan(&t.MemoryID, &t.VersionID, &t.Attempts, &t.StoreID, &t.Path, &content); err != nil {
					rows.Close()
					return 0, err
				}
				t.Content = string(content)
				tasks = append(tasks, t)
				got++
			}
			rows.Close()
			return got, rows.Err()
		})
	})
	return tasks, wrap(err, "claim memories to embed")
}

// DeferEmbeddings implements memstore.VectorStorage.
func (db *DB) DeferEmbeddings(ctx context.Context, tasks []memstore.EmbeddingTask, until time.Time) error {
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		for _, t := range tasks {
			if _, err := tx.Exec(ctx, `UPDATE vector_queue SET lease_until = $1 WHERE memory_id = $2 AND version_id = $3`, keyset.Nanos(until), t.MemoryID, t.VersionID); err != nil {
				return err
			}
		}
		return nil
	})
	return wrap(err, "defer memories to embed")
}

// DropEmbeddings implements memstore.VectorStorage.
func (db *DB) DropEmbeddings(ctx context.Context, tasks []memstore.EmbeddingTask) error {
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		for _, t := range tasks {
			if _, err := tx.Exec(ctx, `DELETE FROM vector_queue WHERE memory_id = $1 AND version_id = $2`, t.MemoryID, t.VersionID); err != nil {
				return err
			}
		}
		return nil
	})
	return wrap(err, "drop memories to embed")
}

// PutEmbeddings implements memstore.VectorStorage. A vector is kept only
// while its version is the memory's current one and not redacted; the task ends only if
// the memory was not changed since its claim.
func (db *DB) PutEmbeddings(ctx context.Context, model string, es []memstore.Embedding) error {
	err := db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		for _, e := range es {
			if _, err := tx.Exec(ctx, `INSERT INTO memory_vectors (memory_id, store_id, version_id, model, dims, vector)
				SELECT id, store_id, version_id, $1, $2, $3 FROM memories m WHERE id = $4 AND version_id = $5
					AND NOT EXISTS (SELECT 1 FROM versions v WHERE v.store_id = m.store_id AND v.id = m.version_id AND v.redacted_at IS NOT NULL)
				ON CONFLICT (memory_id) DO UPDATE SET version_id = excluded.version_id, model = excluded.model, dims = excluded.dims, vector = excluded.vector`,
				model, len(e.Vector), vector.Encode(e.Vector), e.MemoryID, e.VersionID); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM vector_queue WHERE memory_id = $1 AND version_id = $2`, e.MemoryID, e.VersionID); err != nil {
				return err
			}
		}
		// The log's oldest entries go; the newest transaction among them
		// tells the copies behind it to read their stores again.
		_, err := tx.Exec(ctx, `WITH d AS (DELETE FROM vector_log WHERE seq <= (SELECT max(seq) FROM vector_log) - $1 RETURNING xid),
				newest AS (SELECT xid FROM d ORDER BY xid DESC LIMIT 1)
			UPDATE vector_log_trimmed t SET xid = newest.xid FROM newest WHERE t.xid < newest.xid`, vectorLogKeep)
		return err
	})
	return wrap(err, "store vectors")
}

// NearestMemories implements memstore.VectorStorage: it scans the
// process's copies of the stores' vectors (vectorcache.go), or, for a
// search below a path prefix, the vectors of the memories below it, read
// from the database, which the copies cannot tell.
func (db *DB) NearestMemories(ctx context.Context, workspaceID string, storeIDs []string, model string, query []float32, pathPrefix string, limit int) ([]memstore.SearchResult, error) {
	below := pathPrefix != "" && pathPrefix != "/"
	// The copies are locked before the transaction takes its snapshot
	// (at its first statement), and let go once scanned. They are locked
	// before the transaction begins, so that a search waiting for another
	// holds no connection of the pool; a transaction run again locks them
	// again, before its first statement.
	var copies []*vector.Copy[string]
	unlock, locked := func() {}, false
	lock := func() {
		if !below && !locked {
			copies, unlock = db.vectors.LockStores(workspaceID, storeIDs, model, len(query))
			locked = true
		}
	}
	release := func() { unlock(); locked = false }
	lock()
	defer func() { release() }()
	q := vector.Encode(query)
	var out []memstore.SearchResult
	err := db.inTx(ctx, readTx, func(tx pgx.Tx) error {
		out = nil
		lock()
		defer release()
		var snap, trimmed string
		if err := tx.QueryRow(ctx, `SELECT pg_current_snapshot()::text, (SELECT xid::text FROM vector_log_trimmed)`).Scan(&snap, &trimmed); err != nil {
			return err
		}
		for _, id := range storeIDs {
			if _, err := storeState(ctx, tx, workspaceID, id, false); err != nil {
				return err
			}
		}
		var hits []vector.Hit
		if below {
			hi, _ := keyset.UpperBound(pathPrefix)
			rows, err := tx.Query(ctx, `SELECT v.memory_id, v.vector FROM memory_vectors v JOIN memories m ON m.id = v.memory_id
				WHERE v.store_id = ANY($1) AND v.model = $2 AND v.dims = $3 AND m.path >= $4 AND ($5 = '' OR m.path < $5)`,
				storeIDs, model, len(query), pathPrefix, hi)
			if err != nil {
				return err
			}
			set := &vector.Set{}
			if err := db.vectors.each(rows, set.Add); err != nil {
				return err
			}
			if hits, err = set.Nearest(q, limit); err != nil {
				return err
			}
		} else {
			trimmedXid, err := strconv.ParseUint(trimmed, 10, 64)
			if err != nil {
				return fmt.Errorf("vector_log_trimmed: %w", err)
			}
			for _, cp := range copies {
				if err := db.vectors.catchUp(ctx, tx, cp, snap, trimmedXid); err != nil {
					return err
				}
				hs, err := cp.Set.Nearest(q, limit)
				if err != nil {
					return err
				}
				hits = append(hits, hs...)
			}
			release()
			vector.SortHits(hits)
			hits = hits[:min(limit, len(hits))]
		}
		for _, h := range hits {
			out = append(out, memstore.SearchResult{Memory: memstore.Memory{ID: h.ID}, Score: h.Score})
		}
		return nil
	})
	return out, wrap(err, "find nearest memories")
}

// EmbeddingCounts implements memstore.VectorStorage.
func (db *DB) EmbeddingCounts(ctx context.Context) (embedded, queued int64, err error) {
	err = db.inTx(ctx, readTx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM memory_vectors), (SELECT count(*) FROM vector_queue)`).Scan(&embedded, &queued)
	})
	return embedded, queued, wrap(err, "count vectors")
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"

	"github.com/memstore/memstore/internal/vector"
)

// Each process keeps a copy of the vectors of the stores it searched
// (vector.Copies), and brings it up to date before each search from
// vector_log (migrations/0005_vectors.sql): the vectors changed since the
// copy, by any process on the file, are read again, one by one. A copy's
// position is the last entry of the log it applied (the file has one
// writer, so entries are committed in their order); a copy older than
// the log's oldest entry is read whole. A copy not searched for
// memstore.VectorCopyIdle is dropped by a sweep, a deleted store's at
// once, and all with the DB.
type vectorCache struct {
	vector.Copies[int64]
	rowsRead atomic.Int64 // vectors read from the file by searches
}

// vectorLogKeep is how many entries of vector_log are kept: a copy that
// fell further behind is read again whole.
const vectorLogKeep = 200_000

// storeSet returns the vectors of cp's store as of tx, whose reads see
// vector_log from its entry tail to its entry head; cp is locked.
func (db *DB) storeSet(ctx context.Context, tx *txn, cp *vector.Copy[int64], head, tail int64) (*vector.Set, error) {
	if cp.Set != nil && cp.At > head {
		// The copy is newer than tx, which should not be, since a
		// search locks its copies before its transaction begins: read
		// as of tx.
		fresh := &vector.Copy[int64]{Key: cp.Key}
		if err := db.load(ctx, tx, fresh, head); err != nil {
			return nil, err
		}
		return fresh.Set, nil
	}
	if err := db.catchUp(ctx, tx, cp, head, tail); err != nil {
		return nil, err
	}
	return cp.Set, nil
}

func (db *DB) catchUp(ctx context.Context, tx *txn, cp *vector.Copy[int64], head, tail int64) error {
	k := cp.Key
	switch {
	case cp.Set != nil && cp.At == head:
		return nil
	case cp.Set == nil || cp.At < tail-1:
		return db.load(ctx, tx, cp, head)
	}
	rows, err := tx.query(ctx, `SELECT DISTINCT memory_id FROM vector_log WHERE store_id = ? AND seq > ? AND seq <= ?`, k.Store, cp.At, head)
	if err != nil {
		return err
	}
	var changed []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		changed = append(changed, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range changed {
		var blob []byte
		err := tx.queryRow(ctx, `SELECT vector FROM memory_vectors WHERE memory_id = ? AND store_id = ? AND model = ? AND dims = ?`, id, k.Store, k.Model, k.Dims).Scan(&blob)
		switch {
		case err == nil:
			db.vectors.rowsRead.Add(1)
			if err := cp.Set.Add(id, blob); err != nil {
				cp.Set = nil
				return err
			}
		case errors.Is(err, sql.ErrNoRows):
			cp.Set.Remove(id)
		default:
			cp.Set = nil // half applied: read whole next time
			return err
		}
	}
	cp.At = head
	return nil
}

func (db *DB) load(ctx context.Context, tx *txn, cp *vector.Copy[int64], head int64) error {
	k := cp.Key
	set, err := db.scanVectors(ctx, tx, `SELECT memory_id, vector FROM memory_vectors WHERE store_id = ? AND model = ? AND dims = ?`, k.Store, k.Model, k.Dims)
	if err != nil {
		cp.Set = nil
		return err
	}
	cp.Set, cp.At = set, head
	return nil
}

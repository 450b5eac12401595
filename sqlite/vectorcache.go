package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"github.com/memstore/memstore/internal/vector"
)

// Reading a store's vectors from the file costs far more than comparing
// them (100,000 rows are hundreds of milliseconds), so each process keeps
// a copy of the vectors of the stores it searched, one vector.Set a store
// and model, and brings it up to date before each search from vector_log
// (migrations/0005_vectors.sql): the vectors changed since the copy, by
// any process on the file, are read again, one by one. A copy older than
// the log's oldest entry is read whole. The copy holds no content, only
// memory IDs and vectors, which the file holds too; it is dropped with
// the DB.
type vectorCache struct {
	mu     sync.Mutex
	stores map[vectorKey]*storeVectors
}

type vectorKey struct {
	store, model string
	dims         int
}

type storeVectors struct {
	mu  sync.Mutex // held while the copy is brought up to date and scanned
	seq int64      // the last entry of vector_log applied, 0 before the first read
	set *vector.Set
}

// vectorLogKeep is how many entries of vector_log are kept: a copy that
// fell further behind is read again whole.
const vectorLogKeep = 200_000

func (c *vectorCache) get(k vectorKey) *storeVectors {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stores == nil {
		c.stores = map[vectorKey]*storeVectors{}
	}
	sv := c.stores[k]
	if sv == nil {
		sv = &storeVectors{}
		c.stores[k] = sv
	}
	return sv
}

// withStoreSet calls fn with the vectors of store of model k as of tx,
// whose reads see vector_log from its entry tail to its entry head.
func (db *DB) withStoreSet(ctx context.Context, tx *txn, k vectorKey, head, tail int64, fn func(*vector.Set) error) error {
	sv := db.vectors.get(k)
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.set != nil && sv.seq > head {
		// This transaction began before the copy was made: read as of it.
		fresh := &storeVectors{}
		if err := fresh.load(ctx, tx, k, head); err != nil {
			return err
		}
		return fn(fresh.set)
	}
	if err := sv.catchUp(ctx, tx, k, head, tail); err != nil {
		return err
	}
	return fn(sv.set)
}

func (sv *storeVectors) catchUp(ctx context.Context, tx *txn, k vectorKey, head, tail int64) error {
	switch {
	case sv.set != nil && sv.seq == head:
		return nil
	case sv.set == nil || sv.seq < tail-1:
		return sv.load(ctx, tx, k, head)
	}
	rows, err := tx.query(ctx, `SELECT DISTINCT memory_id FROM vector_log WHERE store_id = ? AND seq > ? AND seq <= ?`, k.store, sv.seq, head)
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
		err := tx.queryRow(ctx, `SELECT vector FROM memory_vectors WHERE memory_id = ? AND store_id = ? AND model = ? AND dims = ?`, id, k.store, k.model, k.dims).Scan(&blob)
		switch {
		case err == nil:
			if err := sv.set.Add(id, blob); err != nil {
				sv.set = nil
				return err
			}
		case errors.Is(err, sql.ErrNoRows):
			sv.set.Remove(id)
		default:
			sv.set = nil // half applied: read whole next time
			return err
		}
	}
	sv.seq = head
	return nil
}

func (sv *storeVectors) load(ctx context.Context, tx *txn, k vectorKey, head int64) error {
	set, err := scanVectors(ctx, tx, `SELECT memory_id, vector FROM memory_vectors WHERE store_id = ? AND model = ? AND dims = ?`, k.store, k.model, k.dims)
	if err != nil {
		sv.set = nil
		return err
	}
	sv.set, sv.seq = set, head
	return nil
}

package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore/internal/vector"
)

// Reading a store's vectors from the database costs far more than
// comparing them, so each process keeps a copy of the vectors of the
// stores it searched (vector.Copies), and brings it up to date before
// each search from vector_log (migrations/0005_vectors.sql), whichever
// process made the changes: pgvector is not needed.
//
// Transactions commit out of the order of their IDs, so a copy's
// position in the log is the snapshot it was read in: the entries it
// has not seen are those whose transactions that snapshot does not see.
// A search locks its stores' copies before its transaction takes its
// snapshot, so the snapshot is never older than a copy's. A copy whose
// snapshot misses a transaction of a trimmed entry is read again whole.
type vectorCache struct {
	vector.Copies[string] // At: the copy's snapshot, as pg_snapshot's text
	rowsRead              atomic.Int64
}

// vectorLogKeep is how many entries of vector_log are kept.
var vectorLogKeep = 200_000

// catchUp brings cp up to the transaction's snapshot snap, given the
// newest transaction of a trimmed entry of the log.
func (c *vectorCache) catchUp(ctx context.Context, tx pgx.Tx, cp *vector.Copy[string], snap string, trimmed uint64) error {
	k := cp.Key
	if cp.Set != nil && cp.At == snap {
		return nil
	}
	if cp.Set == nil || snapshotXmin(cp.At) <= trimmed {
		return c.load(ctx, tx, cp, snap)
	}
	rows, err := tx.Query(ctx, `SELECT DISTINCT memory_id FROM vector_log
		WHERE store_id = $1 AND xid >= pg_snapshot_xmin($2::pg_snapshot) AND NOT pg_visible_in_snapshot(xid, $2::pg_snapshot)`, k.Store, cp.At)
	if err != nil {
		return err
	}
	changed, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	cp.At = snap
	if len(changed) == 0 {
		return nil
	}
	rows, err = tx.Query(ctx, `SELECT memory_id, vector FROM memory_vectors WHERE memory_id = ANY($1) AND store_id = $2 AND model = $3 AND dims = $4`,
		changed, k.Store, k.Model, k.Dims)
	if err != nil {
		cp.Set = nil // half applied: read whole next time
		return err
	}
	got := map[string][]byte{}
	if err := c.each(rows, func(id string, blob []byte) error { got[id] = blob; return nil }); err != nil {
		cp.Set = nil
		return err
	}
	for _, id := range changed {
		if blob, ok := got[id]; ok {
			if err := cp.Set.Add(id, blob); err != nil {
				cp.Set = nil
				return err
			}
		} else {
			cp.Set.Remove(id)
		}
	}
	return nil
}

// load reads the store's vectors whole, as of snap.
func (c *vectorCache) load(ctx context.Context, tx pgx.Tx, cp *vector.Copy[string], snap string) error {
	cp.Set = nil
	k := cp.Key
	rows, err := tx.Query(ctx, `SELECT memory_id, vector FROM memory_vectors WHERE store_id = $1 AND model = $2 AND dims = $3`, k.Store, k.Model, k.Dims)
	if err != nil {
		return err
	}
	set := &vector.Set{}
	if err := c.each(rows, set.Add); err != nil {
		return err
	}
	cp.Set, cp.At = set, snap
	return nil
}

// each calls fn with each row of (memory_id, vector) of rows.
func (c *vectorCache) each(rows pgx.Rows, fn func(id string, blob []byte) error) error {
	defer rows.Close()
	for rows.Next() {
		var id string
		var blob []byte
		if err := rows.Scan(&id, &blob); err != nil {
			return err
		}
		c.rowsRead.Add(1)
		if err := fn(id, blob); err != nil {
			return fmt.Errorf("vector of memory %s: %w", id, err)
		}
	}
	return rows.Err()
}

// snapshotXmin is the xmin of a pg_snapshot's text, xmin:xmax:xip,...
// (0, which makes the copy read again, if it is not one).
func snapshotXmin(snap string) uint64 {
	s, _, _ := strings.Cut(snap, ":")
	x, _ := strconv.ParseUint(s, 10, 64)
	return x
}

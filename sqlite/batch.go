package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// Group commit. Writes queue for SQLite's single writer anyway; the
// batcher runs the writes that are waiting together in one transaction,
// each inside its own savepoint, and answers them after the one commit.
// A page that several of them touch then goes into the log once instead
// of once per write, and there is one commit instead of many. A write that
// fails rolls back to its savepoint and leaves the others alone.

// maxBatch bounds a batch, so that the first write of a long queue is not
// kept waiting for all the others.
const maxBatch = 64

// A writeReq is one write waiting for the batcher.
type writeReq struct {
	ctx  context.Context
	fn   func(tx *txn) error
	done chan error
}

// batcher runs until Close. Two queues feed it: the writes of the
// services, and the indexer's own (emptying the search queue), which are
// never held back, since the indexer may be what the writes wait for.
func (db *DB) batcher() {
	defer close(db.batcherDone)
	for {
		var batch []writeReq
		select {
		case r := <-db.writes:
			batch = append(batch, r)
		case r := <-db.indexWrites:
			db.runBatch([]writeReq{r})
			continue
		case <-db.closed:
			return
		}
	more:
		for len(batch) < maxBatch {
			select {
			case r := <-db.writes:
				batch = append(batch, r)
			default:
				break more
			}
		}
		db.keepIndexUp()
		db.runBatch(batch)
	}
}

// keepIndexUp holds the writer back while the search indexes are more
// than maxIndexLag writes behind it, so that a search, which waits for
// them, never waits long. A failing indexer does not stop writes: the
// queue keeps their changes until it recovers.
func (db *DB) keepIndexUp() {
	for {
		moved, behind := db.ix.behind(maxIndexLag)
		if !behind {
			return
		}
		select {
		case <-moved:
		case r := <-db.indexWrites:
			db.runBatch([]writeReq{r})
		case <-db.closed:
			return
		}
	}
}

// runBatch runs the writes of batch in one transaction and answers each.
func (db *DB) runBatch(batch []writeReq) {
	errs := make([]error, len(batch))
	// Statements run without their request's cancellation: interrupting
	// one would roll back the whole transaction, the others' writes too.
	// A request cancelled before its turn is skipped.
	ctx := context.WithoutCancel(batch[0].ctx)
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		for _, r := range batch {
			r.done <- translate(err)
		}
		return
	}
	t := &txn{Tx: tx, stmts: &db.ws, ctx: ctx}
	ok := 0
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		// One name serves every write: each savepoint is released before
		// the next is made.
		if _, err := t.ExecContext(ctx, "SAVEPOINT w"); err != nil {
			db.abort(tx, batch, errs, err)
			return
		}
		if err := r.fn(t); err != nil {
			errs[i] = translate(err)
			if _, err := t.ExecContext(ctx, "ROLLBACK TO w"); err != nil {
				db.abort(tx, batch, errs, err)
				return
			}
		} else {
			ok++
		}
		if _, err := t.ExecContext(ctx, "RELEASE w"); err != nil {
			db.abort(tx, batch, errs, err)
			return
		}
	}
	if err := tx.Commit(); err != nil {
		err = translate(err)
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	} else if ok > 0 {
		db.ck.committed()
		db.ix.committed(ok)
	}
	db.ws.prepareWanted(ctx)
	for i, r := range batch {
		r.done <- errs[i]
	}
}

// abort rolls the batch's transaction back when it cannot go on, and fails
// every write in it that had not failed already.
func (db *DB) abort(tx *sql.Tx, batch []writeReq, errs []error, cause error) {
	tx.Rollback()
	for i, r := range batch {
		if errs[i] == nil {
			errs[i] = fmt.Errorf("write batch: %w", translate(cause))
		}
		r.done <- errs[i]
	}
}

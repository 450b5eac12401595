package sqlite

import (
	"context"
	"errors"
	"slices"

	"github.com/memstore/memstore"
)

// Group commit. Writes queue for SQLite's single writer anyway; the
// batcher runs the writes that are waiting together in one transaction
// and answers them after the one commit. A page that several of them
// touch then goes into the log once instead of once per write, and there
// is one commit instead of many.
//
// A write that fails must leave the others alone. Most fail before they
// change anything (a missing memory, a precondition, a path conflict):
// they just fail. One that fails after changing something cannot be undone
// alone, so the transaction is rolled back and the batch runs again
// without it; its error stands, since the writes before it are the same in
// the new run. A savepoint around each write would undo it alone, but
// costs two statements per write and a copy of every page the write
// touches: a tenth of the writer's time.

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
	for db.tryBatch(ctx, batch, errs) {
	}
	db.ws.prepareWanted(ctx)
	for i, r := range batch {
		r.done <- errs[i]
	}
}

// tryBatch runs in one transaction the writes of batch that have not
// failed yet, and reports whether it must run again: when a write failed
// after changing the database, everything was rolled back, and that
// write's error is in errs. Each run leaves out one more write, so the
// runs end.
func (db *DB) tryBatch(ctx context.Context, batch []writeReq, errs []error) (again bool) {
	if !slices.Contains(errs, nil) {
		return false // every write has failed
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		fail(errs, translate(err))
		return false
	}
	t := &txn{Tx: tx, stmts: &db.ws, ctx: ctx}
	ok := 0
	for i, r := range batch {
		if errs[i] != nil {
			continue
		}
		if err := r.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		before := t.changes
		if err := r.fn(t); err != nil {
			errs[i] = translate(err)
			// Only a refusal by the service's own rules, made before any
			// change, leaves the transaction as it was. A driver error
			// may have rolled it back already (SQLite does so on I/O
			// errors and a full disk), and the next statement would
			// then commit on its own.
			var refusal *memstore.Error
			if t.changes != before || !errors.As(err, &refusal) {
				tx.Rollback()
				return true
			}
			continue
		}
		ok++
	}
	if err := tx.Commit(); err != nil {
		fail(errs, translate(err))
	} else if ok > 0 {
		db.ck.committed()
		db.ix.committed(ok)
	}
	return false
}

// fail gives err to every write of a batch that has not failed already.
func fail(errs []error, err error) {
	for i := range errs {
		if errs[i] == nil {
			errs[i] = err
		}
	}
}

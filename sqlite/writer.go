package sqlite

import (
	"context"
	"errors"
	"runtime"
	"slices"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/batch"
)

// The writer: one goroutine (the batcher) runs every write to the
// database, with group commit. Writes queue for SQLite's single writer
// anyway; the batcher runs the writes that are waiting together in one
// transaction and answers them after the one commit. A page that several
// of them touch then goes into the log once instead of once per write,
// and there is one commit instead of many. The rule for the writes
// themselves is stated once, at DB.write. It is SQLite's alone: SQLite
// lets one connection write at a time, where PostgreSQL runs concurrent
// transactions and needs no writer of its own.

// maxBatch bounds a batch, so that the first write of a long queue is not
// kept waiting for all the others.
const maxBatch = 64

// A writeReq is one write waiting for the batcher.
type writeReq struct {
	ctx  context.Context
	fn   func(tx *txn) error
	done chan error
}

// write runs fn, a write closure, in a transaction of the writer and
// returns fn's error, or the commit's.
//
// The rule for write closures. fn reads and writes through tx alone (its
// exec for statements that may change the database, query and queryRow
// for reads), and has no effect outside tx: fn may run more than once, in
// a new transaction each time, and only its last run counts. To refuse, fn
// returns a *memstore.Error before its first exec; the transaction is then
// as it was, fn's error is its answer, and the other writes of the batch
// go on. Any other failure (an error after an exec, or one that is not a
// *memstore.Error, such as a driver error) cannot be undone alone: the
// whole transaction is rolled back and the batch runs again without fn,
// whose error stands. So a failing write never loses or partly applies
// another, and never leaves part of itself. A write answered without error
// was committed (and synced as far as synchronous=NORMAL does under WAL)
// before write returns.
//
// A request cancelled before its turn is not run (ctx's error); once its
// statements run, they run without ctx's cancellation, which would roll
// back the whole batch.
func (db *DB) write(ctx context.Context, fn func(tx *txn) error) error {
	if db.writes == nil { // while migrating, before the batcher starts
		return inTx(ctx, &db.ws, fn)
	}
	return db.submit(ctx, db.writes, fn)
}

// submit hands fn to the batcher on queue and waits for its outcome.
func (db *DB) submit(ctx context.Context, queue chan<- writeReq, fn func(tx *txn) error) error {
	r := writeReq{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case queue <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-db.closed:
		return errors.New("the database is closed")
	}
	return <-r.done
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
		// Let the requests just answered run before the next batch is
		// gathered: the Go scheduler would otherwise run the batcher,
		// woken by the next write, ahead of them on this core, so that
		// they answer their clients only after another batch, and
		// their clients' next writes miss it. On two cores this made
		// batches of three writes on average instead of eight, and
		// the slowest answers later (docs/benchmarks-log.md,
		// 2026-11-29: SQLite's write tail). With nothing else to run,
		// it returns at once.
		runtime.Gosched()
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
// other than by a refusal before its first exec (DB.write), everything
// was rolled back, and that write's error is in errs. Each run leaves out
// one more write, so the runs end. No savepoint is taken around each
// write: it would undo one alone, but costs two statements per write and
// a copy of every page the write touches, a tenth of the writer's time,
// while writes that fail after a change are rare.
func (db *DB) tryBatch(ctx context.Context, batch []writeReq, errs []error) (again bool) {
	if !slices.Contains(errs, nil) {
		return false // every write has failed
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		fail(errs, translate(err))
		return false
	}
	t := &txn{tx: tx, stmts: &db.ws, ctx: ctx}
	ok := 0
	for i, r := range batch {
		if errs[i] != nil {
			continue
		}
		if err := r.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		t.wrote = false
		if err := db.run(r.fn, t); err != nil {
			errs[i] = translate(err)
			// Only a refusal by the service's own rules, made before any
			// exec, leaves the transaction as it was. A driver error
			// may have rolled it back already (SQLite does so on I/O
			// errors and a full disk), and the next statement would
			// then commit on its own.
			var refusal *memstore.Error
			if t.wrote || !errors.As(err, &refusal) {
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
		db.notifyEvents(t.evented)
	}
	return false
}

// run runs a write closure, turning a panic into an error that rolls back
// the batch and fails that write alone: the writer serves every write of
// the process, and a fault in one must not stop it.
func (db *DB) run(fn func(*txn) error, t *txn) error {
	return batch.Safely(t.ctx, db.log, func() error { return fn(t) })
}

// fail gives err to every write of a batch that has not failed already.
func fail(errs []error, err error) {
	for i := range errs {
		if errs[i] == nil {
			errs[i] = err
		}
	}
}

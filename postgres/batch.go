package postgres

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/batch"
)

// # Writes of one store, together
//
// A store's writes run one at a time across every process: each holds
// the store's row lock until its commit returns, and a durable commit
// waits for its WAL flush (2.8 ms on the disk of BENCHMARKS.md), so one
// store took at most a few hundred writes a second, whatever the
// server's CPU. Releasing the lock before the flush would let a feed
// reader see an event that a crash of PostgreSQL then takes back, and
// its number be given to another write: the flush must stay inside the
// lock. So the writes of a store that meet in one process share it:
// while one runs, the others wait, and then run in one transaction,
// under one lock and one flush, each answered after the commit.
//
// The rule for a write in a batch is the SQLite writer's: a write that
// refuses (a *memstore.Error) before sending any statement leaves the
// transaction as it was, its refusal is its answer and the others go on;
// any other failure rolls the transaction back, that write's error is
// its answer, and the batch runs again without it. A write never lands
// partly, and never takes another with it. A failure of the whole
// transaction (the connection lost before the commit, a deadlock) runs
// the batch again, as a lone write would run again; an error of the
// commit itself is the answer of every write not refused, since the
// commit may have happened. A write that panics fails alone, as one that
// errs. A write whose context ends before its turn is not run; the batch
// stops once every write in it is cancelled.
// Writes of another replica wait for the lock a whole batch, as they
// would for as many writes one by one.
//
// A batch takes two round trips, however many writes it holds, unless
// a write reads what an earlier one changed. Each write's plan (see
// planned) names what it reads first: a memory by ID, the memory at a
// path, the overlaps of the path it creates. Those reads go with BEGIN
// and the lock, before any write, and each write's statements wait, to
// go all together with the COMMIT. A read made then still answers a
// write once others have run before it, unless one of them wrote the
// memory it found or a path it covers (memTx.wrote): that read is made
// again, after the statements waiting, so that every write sees the
// writes before it, as if each ran alone in turn. A read made ahead that
// the server fails, which aborts the transaction, runs the batch again
// with each write making its own reads (errForesight), so that the
// write whose read fails fails alone. Before, each write cost a round
// trip, with the lock held, and one store took 0.6 of the writes a
// second it now takes.

// maxStoreBatch bounds a batch, so that the first write of a long queue
// does not wait for all the others.
const maxStoreBatch = 32

// storeWrites are the writes of each store waiting in this process.
type storeWrites struct {
	mu     sync.Mutex
	queues map[string][]*memWrite // by workspace and store; present while one runs
}

// A memWrite is a write of WriteMemory waiting for its batch.
type memWrite struct {
	ctx  context.Context
	fn   func(memstore.MemoryTx) error
	done chan error
}

// write runs fn alone when no other write of the store runs in this
// process, and otherwise waits for it to go with the next batch.
func (q *storeWrites) write(ctx context.Context, db *DB, workspaceID, storeID string, fn func(memstore.MemoryTx) error) error {
	key := workspaceID + "\x00" + storeID // a batch takes its lock in one workspace
	q.mu.Lock()
	if q.queues == nil {
		q.queues = map[string][]*memWrite{}
	}
	if waiting, running := q.queues[key]; running {
		w := &memWrite{ctx: ctx, fn: fn, done: make(chan error, 1)}
		q.queues[key] = append(waiting, w)
		q.mu.Unlock()
		select {
		case err := <-w.done:
			return err
		case <-ctx.Done():
			// Not run if its batch has not started; otherwise its
			// outcome is unknown, as a request's cancelled in flight.
			return ctx.Err()
		}
	}
	q.queues[key] = nil
	q.mu.Unlock()
	// The writes that came meanwhile go on even if this one panics.
	defer func() {
		if batch := q.next(key); batch != nil {
			go func() {
				for ; batch != nil; batch = q.next(key) {
					db.writeBatch(workspaceID, storeID, batch)
				}
			}()
		}
	}()
	return db.writeAlone(ctx, workspaceID, storeID, fn)
}

// next takes the next batch of the store's queue, or, when none waits,
// ends the queue and returns nil.
func (q *storeWrites) next(key string) []*memWrite {
	q.mu.Lock()
	defer q.mu.Unlock()
	waiting := q.queues[key]
	if len(waiting) == 0 {
		delete(q.queues, key)
		return nil
	}
	n := min(len(waiting), maxStoreBatch)
	q.queues[key] = slices.Clone(waiting[n:])
	return waiting[:n]
}

// writeBatch runs the writes of a batch and answers each.
func (db *DB) writeBatch(workspaceID, storeID string, writes []*memWrite) {
	var todo []*memWrite
	for _, w := range writes {
		if err := w.ctx.Err(); err != nil {
			w.done <- err
			continue
		}
		todo = append(todo, w)
	}
	if len(todo) == 1 {
		w := todo[0]
		w.done <- batch.Safely(w.ctx, db.log, func() error { return db.writeAlone(w.ctx, workspaceID, storeID, w.fn) })
		return
	}
	if len(todo) == 0 {
		return
	}
	// Once run, the writes run to the end: the cancellation of one would
	// roll back them all. Once every one of them is cancelled, nobody
	// waits for the batch, which then stops, whatever it waits for.
	ctx, cancel := context.WithCancel(context.WithoutCancel(todo[0].ctx))
	defer cancel()
	var live atomic.Int64
	live.Store(int64(len(todo)))
	for _, w := range todo {
		defer context.AfterFunc(w.ctx, func() {
			if live.Add(-1) == 0 {
				cancel()
			}
		})()
	}
	foresee := true
	for {
		var refused []error
		failed, failure := -1, error(nil)
		err := db.retrying(ctx, func() (err error, committing bool) {
			refused, failed, failure, err, committing = db.tryBatch(ctx, workspaceID, storeID, todo, foresee)
			return err, committing
		})
		if errors.Is(err, errForesight) {
			// A read made ahead failed: each write makes its own, so
			// that the one whose read fails fails alone.
			foresee = false
			continue
		}
		if err == nil && failed >= 0 {
			todo[failed].done <- translate(failure)
			if todo = slices.Delete(todo, failed, failed+1); len(todo) == 0 {
				return
			}
			continue
		}
		if err == nil {
			db.evented(storeID)
		}
		for i, w := range todo {
			if refused != nil && refused[i] != nil || err == nil {
				w.done <- refused[i] // a refusal stands whatever the commit did
			} else {
				w.done <- err
			}
		}
		return
	}
}

// errForesight is tryBatch's error when a read made ahead for the
// writes (foresee) failed on the server, with the lock taken.
var errForesight = errors.New("a read made ahead for a batch failed")

// tryBatch runs the writes in one transaction that holds the store's
// lock, as writeBatch says, and commits it; with foresee, the reads that
// each write's plan names go with BEGIN. It returns each write's
// refusal (nil: written), or the index of the write that failed and its
// error (the transaction then rolled back), or the transaction's own
// error, reporting whether it came from the commit.
func (db *DB) tryBatch(ctx context.Context, workspaceID, storeID string, ws []*memWrite, foresee bool) (refused []error, failed int, failure, err error, committing bool) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, -1, nil, err, false
	}
	// A connection left in a transaction is closed, not pooled.
	defer conn.Release()
	defer func() {
		if s := conn.Conn().PgConn().TxStatus(); s == 'T' || s == 'E' {
			conn.Exec(context.WithoutCancel(ctx), `rollback`)
		}
	}()
	t := &memTx{ctx: ctx, db: db, tx: conn, storeID: storeID}
	var b pgx.Batch
	t.begin(&b, workspaceID)
	if foresee {
		for _, w := range ws {
			t.foresee(&b, planned(w.fn))
		}
	}
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		var pe *pgconn.PgError
		if t.locked && len(t.known) > 0 && errors.As(err, &pe) && !aborted(err) && !unreachable(err) {
			return nil, -1, nil, errForesight, false
		}
		return nil, -1, nil, err, false
	}
	refused = make([]error, len(ws))
	// The writes' statements wait to go with the next read that must
	// see them, or with the commit: a batch whose writes read only what
	// was read with the lock takes two round trips. When one statement
	// fails, the transaction's error is blamed on its write (memTx.send).
	blame := func(err error, running int) (failed int, failure, whole error) {
		switch {
		case aborted(err) || unreachable(err):
			return -1, nil, err // the whole batch, again
		case t.blame > 0:
			return t.blame - 1, err, nil
		case running >= 0:
			return running, err, nil
		}
		return -1, nil, err
	}
	for i, w := range ws {
		t.owner, t.sentOwn = i, false
		count := t.count
		err := batch.Safely(w.ctx, db.log, func() error { return w.fn(t) })
		var refusal *memstore.Error
		if errors.As(err, &refusal) && !t.sentOwn && t.blame == 0 && conn.Conn().PgConn().TxStatus() == 'T' {
			// Refused before sending a write of its own: the
			// transaction is as it was but for that write's, if waiting.
			t.unqueue()
			t.count = count
			refused[i] = err
			continue
		}
		if err != nil {
			failed, failure, whole := blame(err, i)
			return nil, failed, failure, whole, false
		}
	}
	if err, committing = t.commit(); err != nil && !committing {
		failed, failure, whole := blame(err, -1)
		return nil, failed, failure, whole, false
	}
	return refused, -1, nil, err, committing
}

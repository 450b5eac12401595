package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// read runs fn in a transaction on the read pool, so that a list that
// takes several queries sees one snapshot.
func (db *DB) read(ctx context.Context, fn func(tx *txn) error) error {
	return inTx(ctx, &db.rs, fn)
}

// inTx runs fn in a transaction of its own on the pool of stmts: reads,
// searches, and the migrations, which run before the writer starts.
func inTx(ctx context.Context, stmts *stmtCache, fn func(tx *txn) error) error {
	tx, err := stmts.pool.BeginTx(ctx, nil)
	if err != nil {
		return translate(err)
	}
	defer tx.Rollback()
	if err := fn(&txn{tx: tx, stmts: stmts}); err != nil {
		return translate(err)
	}
	if err := tx.Commit(); err != nil {
		return translate(err)
	}
	stmts.prepareWanted(ctx)
	return nil
}

// txn is a transaction whose statements are prepared once per connection
// and then reused: parsing the SQL again on every call was a third of the
// cost of retrieving a memory.
//
// Its statements go through two kinds of method, and the kind, never the
// text of the statement, says whether it may change the database: exec
// (and execScript) for every statement that may, query and queryRow for
// those that only read. A statement that changes and returns rows (an
// UPDATE ... RETURNING) goes through exec and is not to be written in a
// write closure (DB.write), which could not tell it wrote.
type txn struct {
	tx    *sql.Tx
	stmts *stmtCache
	// ctx, when set, replaces the context given to each statement: in a
	// batch, one request's cancellation must not interrupt a statement,
	// which would roll back the whole transaction.
	ctx context.Context
	// wrote says whether exec or execScript ran, failed or not (a failed
	// statement may have changed rows before failing). The writer tells
	// by it whether a failed write left something to undo (DB.write).
	wrote bool
	// live holds, by ID, the workspace of each store that storeState found
	// live (there, and not archived) in this transaction: the writes of a
	// batch mostly go to one store. A write that archives or deletes a
	// store calls storeChanged, so that the writes after it in the same
	// batch see the change.
	live map[string]string
	// evented lists the stores that this transaction gave new events
	// (insertEvent) or deleted, to notify once it commits.
	evented []string
}

func (t *txn) context(ctx context.Context) context.Context {
	if t.ctx != nil {
		return t.ctx
	}
	return ctx
}

// storeChanged forgets what this transaction knew of store id: called by
// every write that changes whether a store is live.
func (t *txn) storeChanged(id string) { delete(t.live, id) }

// stmt returns the transaction's copy of query's cached statement, or nil
// when query is not prepared yet.
func (t *txn) stmt(ctx context.Context, query string) *sql.Stmt {
	if s := t.stmts.get(ctx, query); s != nil {
		return t.tx.StmtContext(ctx, s)
	}
	return nil
}

// exec runs a statement that may change the database.
func (t *txn) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	t.wrote = true
	ctx = t.context(ctx)
	if s := t.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, query, args...)
}

// execScript runs several statements that may change the database, such
// as a migration, unprepared and never cached.
func (t *txn) execScript(ctx context.Context, script string) error {
	t.wrote = true
	_, err := t.tx.ExecContext(t.context(ctx), script)
	return err
}

// query runs a statement that only reads.
func (t *txn) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = t.context(ctx)
	if s := t.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

// queryRow runs a statement that only reads and returns one row.
func (t *txn) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = t.context(ctx)
	if s := t.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

// maxCachedStmts bounds the cache. The queries are the package's own, a
// few dozen shapes (list filters combine into a few more), so the bound
// only guards against a mistake.
const maxCachedStmts = 512

// stmtCache holds the prepared statements of one pool, by query text;
// database/sql prepares each on a connection the first time it runs there.
//
// A query met for the first time runs unprepared and is prepared after
// its transaction ends: preparing on the pool needs a free connection, and
// the write pool's only one belongs to the transaction.
type stmtCache struct {
	pool   *sql.DB
	mu     sync.Mutex
	m      map[string]*sql.Stmt
	wanted map[string]bool
}

// get returns the statement for query, or nil when it is not prepared
// yet (it will be after this transaction) or the cache is full.
func (c *stmtCache) get(ctx context.Context, query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[query]; ok {
		return s
	}
	if len(c.m)+len(c.wanted) < maxCachedStmts {
		if c.wanted == nil {
			c.wanted = map[string]bool{}
		}
		c.wanted[query] = true
	}
	return nil
}

// prepareWanted prepares the queries that ran unprepared. It holds no
// lock while preparing: on the write pool, preparing waits for the one
// connection, which a transaction waiting in get may hold. A query that
// fails to prepare is dropped; it keeps running unprepared, and its error,
// if any, is reported where it runs.
func (c *stmtCache) prepareWanted(ctx context.Context) {
	c.mu.Lock()
	var qs []string
	for q := range c.wanted {
		qs = append(qs, q)
	}
	clear(c.wanted)
	c.mu.Unlock()
	for _, q := range qs {
		s, err := c.pool.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if _, dup := c.m[q]; dup {
			c.mu.Unlock()
			s.Close()
			continue
		}
		if c.m == nil {
			c.m = map[string]*sql.Stmt{}
		}
		c.m[q] = s
		c.mu.Unlock()
	}
}

// queryRow runs a one-statement read outside any transaction, preparing
// the statement on first use. Only for the read pool: preparing on the
// write pool would wait for its one connection.
//
// Its reads are point lookups of microseconds, so they do not watch ctx
// once started: with a cancellable context, database/sql and the driver
// would each start a goroutine per statement to watch it.
func (c *stmtCache) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if err := ctx.Err(); err != nil {
		return c.pool.QueryRowContext(ctx, query, args...) // fails at once with ctx's error
	}
	ctx = context.WithoutCancel(ctx)
	if s := c.get(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	c.prepareWanted(ctx)
	if s := c.get(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return c.pool.QueryRowContext(ctx, query, args...)
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, s := range c.m {
		errs = append(errs, s.Close())
	}
	c.m = nil
	return errors.Join(errs...)
}

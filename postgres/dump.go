package postgres

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sqlread"
	"github.com/memstore/memstore/internal/sqlrow"
)

// Dump implements memstore.Dumper (sqlrow.Dump), in one REPEATABLE READ
// transaction: a snapshot that writes made meanwhile, by any process, do
// not reach. It runs once: the sink has seen what a second run would
// repeat.
func (db *DB) Dump(ctx context.Context, sink memstore.RecordSink) error {
	err, _ := db.tryTx(ctx, readTx, func(tx pgx.Tx) error {
		return sqlrow.Dump(snapshot{ctx, tx}, sink)
	})
	return wrap(err, "dump the database")
}

// snapshot reads the tables of a dump in its transaction.
type snapshot struct {
	ctx context.Context
	tx  pgx.Tx
}

func (s snapshot) Count(t *sqlrow.Table) (int64, error) {
	var n int64
	return n, s.tx.QueryRow(s.ctx, `SELECT count(*) FROM `+t.Name).Scan(&n)
}

// Read reads t through a cursor, memstore.DumpPage rows at a time, each
// page whole before page is called, since a connection runs one
// statement at a time. Sign-ins are ordered by the bytes of their key,
// the one key column not declared COLLATE "C", as SQLite orders it.
func (s snapshot) Read(t *sqlrow.Table, scan func(sqlrow.Row) error, page func() error) error {
	order := t.Key
	if t.Kind == memstore.KindSignIns {
		order += ` COLLATE "C"`
	}
	// A cursor of each table's own name: the statements that fetch from
	// it are cached by their text, with the columns they return.
	cursor := "dump_" + t.Name
	if _, err := s.tx.Exec(s.ctx, `DECLARE `+cursor+` NO SCROLL CURSOR FOR SELECT `+t.Select()+` FROM `+t.Name+` ORDER BY `+order); err != nil {
		return err
	}
	fetch := `FETCH ` + strconv.Itoa(memstore.DumpPage) + ` FROM ` + cursor
	for {
		read, err := s.fetch(fetch, scan)
		if err != nil {
			return err
		}
		if read == 0 {
			_, err := s.tx.Exec(s.ctx, `CLOSE `+cursor)
			return err
		}
		if err := page(); err != nil {
			return err
		}
	}
}

// fetch scans the rows of a FETCH with scan, and returns how many it
// read.
func (s snapshot) fetch(query string, scan func(sqlrow.Row) error) (int, error) {
	rows, err := s.tx.Query(s.ctx, query)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	read := 0
	for ; rows.Next(); read++ {
		if err := scan(rows); err != nil {
			return 0, err
		}
	}
	return read, rows.Err()
}

func (s snapshot) Attach(sessions []*memstore.Session) error {
	return sqlread.Attach(reader{s.ctx, s.tx}, dialect, sessions)
}

// restoreBatch and restoreBatchBytes bound what a Restore sends the
// server at once: the statements of up to restoreBatch rows in one
// round trip, fewer when their text passes restoreBatchBytes.
const (
	restoreBatch      = 500
	restoreBatchBytes = 16 << 20
)

// Restore implements memstore.Restorer (sqlrow.Restore), in one
// transaction that first locks the tables that tell whether the database
// is empty, so that no other process writes one meanwhile (reads go on).
// It runs once: fill consumes a stream that a second run could not read
// again.
func (db *DB) Restore(ctx context.Context, fill func(memstore.RecordSink) error) error {
	err, _ := db.tryTx(ctx, writeTx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE workspaces, api_keys, stores, sessions IN EXCLUSIVE MODE`); err != nil {
			return err
		}
		r := &restoreTx{ctx: ctx, tx: tx}
		if err := sqlrow.Restore(r, fill); err != nil {
			return err
		}
		if err := r.flush(); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, recountMemories)
		return err
	})
	return wrap(err, "restore the database")
}

// recountMemories sets each store's count of its live memories and
// their content size from the memories themselves, as migrations 0005
// and 0007 did: a restore inserts memories apart from the writes that
// keep them (memTx.Put and Delete), and then counts them all at once.
const recountMemories = `UPDATE stores s SET memory_count = c.n, content_size = c.size
	FROM (SELECT store_id, count(*) AS n, sum(size) AS size FROM memories GROUP BY store_id) c
	WHERE c.store_id = s.id`

// restoreTx writes the rows of a restore in its transaction, queueing
// their statements in batches.
type restoreTx struct {
	ctx   context.Context
	tx    pgx.Tx
	kind  memstore.RecordKind // of the rows queued
	batch pgx.Batch
	bytes int // of text queued
}

func (r *restoreTx) Exists(query string) (bool, error) {
	var b bool
	return b, r.tx.QueryRow(r.ctx, query).Scan(&b)
}

// Insert queues the insert of a row, after sending the rows of the kind
// before, so that an error is told with the kind it belongs to. The
// memories are queued for search by the schema's trigger, as any write's
// are (searchindex.go).
func (r *restoreTx) Insert(t *sqlrow.Table, values []any) error {
	if t.Kind != r.kind {
		if err := r.flush(); err != nil {
			return err
		}
		r.kind = t.Kind
	}
	r.batch.Queue(t.Insert(param), values...)
	for _, v := range values {
		switch v := v.(type) {
		case string:
			r.bytes += len(v)
		case []byte:
			r.bytes += len(v)
		}
	}
	if r.batch.Len() < restoreBatch && r.bytes < restoreBatchBytes {
		return nil
	}
	return r.flush()
}

// flush sends the statements queued, and returns the first one's error.
func (r *restoreTx) flush() error {
	if r.batch.Len() == 0 {
		return nil
	}
	err := r.tx.SendBatch(r.ctx, &r.batch).Close()
	r.batch, r.bytes = pgx.Batch{}, 0
	return err
}

// param is the placeholder of the nth argument of a statement.
func param(n int) string { return "$" + strconv.Itoa(n) }

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sqlread"
	"github.com/memstore/memstore/internal/sqlrow"
)

// Dump implements memstore.Dumper (sqlrow.Dump), in one read
// transaction: under WAL, a snapshot that writes made meanwhile do not
// reach.
func (db *DB) Dump(ctx context.Context, sink memstore.RecordSink) error {
	err := db.read(ctx, func(tx *txn) error {
		return sqlrow.Dump(snapshot{ctx, tx}, sink)
	})
	return wrap(err, "dump the database")
}

// snapshot reads the tables of a dump in its read transaction.
type snapshot struct {
	ctx context.Context
	tx  *txn
}

func (s snapshot) Count(t *sqlrow.Table) (int64, error) {
	if err := s.ctx.Err(); err != nil {
		return 0, err
	}
	var n int64
	return n, s.tx.queryRow(s.ctx, `SELECT count(*) FROM `+t.Name).Scan(&n)
}

// Read pages through t by keyset, memstore.DumpPage rows at a time,
// each page read whole and its statement done before page is called. A
// table keyed by ID is read in rowid order, the order its rows were
// inserted in, which pages without an index.
func (s snapshot) Read(t *sqlrow.Table, scan func(sqlrow.Row) error, page func() error) error {
	key := t.Key
	if key == "id" {
		key = "rowid"
	}
	n := strings.Count(key, ",") + 1
	var after []any // the last row's key, nil before the first page
	for {
		where := ""
		if after != nil {
			where = ` WHERE (` + key + `) > (?` + strings.Repeat(", ?", n-1) + `)`
		}
		last := make([]any, n)
		rows, err := s.tx.query(s.ctx, `SELECT `+t.Select()+`, `+key+` FROM `+t.Name+where+` ORDER BY `+key+` LIMIT ?`, append(after, memstore.DumpPage)...)
		if err != nil {
			return err
		}
		read, err := scanPage(rows, scan, last)
		if err != nil || read == 0 {
			return err
		}
		if err := page(); err != nil {
			return err
		}
		if err := s.ctx.Err(); err != nil {
			return err
		}
		after = last
	}
}

// scanPage scans each of rows, whose last columns are its key, with
// scan, keeping the last row's key in last; it returns how many rows it
// read.
func scanPage(rows *sql.Rows, scan func(sqlrow.Row) error, last []any) (int, error) {
	defer rows.Close()
	key := make([]any, len(last))
	for i := range last {
		key[i] = &last[i]
	}
	read := 0
	for ; rows.Next(); read++ {
		if err := scan(row{sqlrow.Extra(rows, key...)}); err != nil {
			return 0, err
		}
	}
	return read, rows.Err()
}

func (s snapshot) Attach(sessions []*memstore.Session) error {
	return sqlread.Attach(reader{s.ctx, s.tx}, dialect, sessions)
}

// Restore implements memstore.Restorer (sqlrow.Restore), in one write
// transaction of the writer: other writes wait for it, and the indexer
// indexes the memories for search once it has committed, as after any
// write.
func (db *DB) Restore(ctx context.Context, fill func(memstore.RecordSink) error) error {
	ran := false
	err := db.write(ctx, func(tx *txn) error {
		if ran {
			// A write closure may run again (DB.write), but fill
			// consumes a stream that cannot: fail instead, undoing all.
			return errors.New("the restore was interrupted; run it again")
		}
		ran = true
		if err := sqlrow.Restore(restoreTx{ctx, tx}, fill); err != nil {
			return err
		}
		// Its memories' rowids are new: a process's copy of where a
		// store of the same ID's memories were reads the store again.
		_, err := tx.exec(ctx, `UPDATE stores SET places_changed = ?`, time.Now().UnixNano())
		return err
	})
	return wrap(err, "restore the database")
}

// restoreTx writes the rows of a restore in its write transaction.
type restoreTx struct {
	ctx context.Context
	tx  *txn
}

func (r restoreTx) Exists(query string) (bool, error) {
	var b bool
	return b, r.tx.queryRow(r.ctx, query).Scan(&b)
}

// Insert inserts a row; the triggers of memories count them in their
// store and queue them for the indexer.
func (r restoreTx) Insert(t *sqlrow.Table, values []any) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	_, err := r.tx.exec(r.ctx, t.Insert(func(int) string { return "?" }), args(values)...)
	return err
}

// row is a row for sqlrow to scan, with SQLite's lists, which it keeps
// as comma-separated text.
type row struct{ sqlrow.Row }

func (r row) Scan(dest ...any) error {
	for i, d := range dest {
		if l, ok := d.(*[]string); ok {
			dest[i] = list{l}
		}
	}
	return r.Row.Scan(dest...)
}

// list scans comma-separated text into a list.
type list struct{ l *[]string }

func (l list) Scan(src any) error {
	s, ok := src.(string)
	if !ok {
		return fmt.Errorf("a list is %T, not text", src)
	}
	*l.l = strings.Split(s, ",")
	return nil
}

// args are values of sqlrow as SQLite keeps them: bytes as text (a
// STRICT table's text column takes no blob), a list as comma-separated
// text.
func args(values []any) []any {
	for i, v := range values {
		switch v := v.(type) {
		case []byte:
			values[i] = string(v)
		case []string:
			values[i] = strings.Join(v, ",")
		}
	}
	return values
}

// Package sqlread is the reads that the two SQL backends make alike,
// written once: the lists of stores, sessions, session tokens, memories
// and events, and a session with its attachments. Each runs over a
// transaction of either driver (Tx) in the backend's dialect (Dialect);
// the backend keeps what it does its own way: its transactions, how it
// checks a store, and the errors it wraps.
package sqlread

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"sync"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sqlrow"
)

// A Tx runs the statements of one read, in a transaction of the
// backend's or as single statements.
type Tx interface {
	QueryRow(query string, args ...any) sqlrow.Row
	Query(query string, args ...any) (Rows, error)
}

// Rows is a result set, which its reader closes.
type Rows interface {
	sqlrow.Rows
	Close()
}

// Read runs fn in a read transaction of the backend, after the checks
// the backend makes first (such as that a store belongs to the
// workspace).
type Read func(fn func(Tx) error) error

// A Dialect is what the two backends' SQL spells differently.
type Dialect struct {
	// Placeholder begins the placeholder of the nth argument of a
	// statement (from 1), followed by n: $ for $1, ? for ?1, which
	// SQLite binds as it binds ?.
	Placeholder string
	// NoRows is the error of the driver's QueryRow when no row matched.
	NoRows error
	// EmptyContent is the empty value of the content column's type, for
	// a list that leaves content out.
	EmptyContent string
	// AgentID is the SQL of the agent ID of a session whose fields are
	// the column fields: memstore.SessionAgentID's rule.
	AgentID func(fields string) string
	// OneOf is the condition that column is one of ids, whose argument
	// it adds to q: each driver passes a list its own way.
	OneOf func(q *Query, column string, ids []string) string

	made sync.Map // statements made by SQL, by their text in PostgreSQL's
}

// placeholder is a placeholder of PostgreSQL's: $1, $2, ...
var placeholder = regexp.MustCompile(`\$[0-9]+`)

// SQL is the statement q, written with PostgreSQL's placeholders, in d's
// dialect: made once, so that the hot reads build no statement.
func (d *Dialect) SQL(q string) string {
	if s, ok := d.made.Load(q); ok {
		return s.(string)
	}
	s := placeholder.ReplaceAllStringFunc(q, func(p string) string {
		n, _ := strconv.Atoi(p[1:]) // digits only
		return d.Param(n)
	})
	d.made.Store(q, s)
	return s
}

// Param is the placeholder of the nth argument of a statement (from
// 1).
func (d *Dialect) Param(n int) string { return d.Placeholder + strconv.Itoa(n) }

// A Query collects the arguments of a statement built piece by piece.
type Query struct {
	d    *Dialect
	Args []any
}

// Query starts a statement of the arguments args.
func (d *Dialect) Query(args ...any) *Query { return &Query{d: d, Args: slices.Clone(args)} }

// Arg adds v and returns its placeholder.
func (q *Query) Arg(v any) string {
	q.Args = append(q.Args, v)
	return q.d.Param(len(q.Args))
}

// notFound turns the driver's "no rows" into err, and leaves any other
// error.
func (d *Dialect) notFound(scanErr error, err *memstore.Error) error {
	if errors.Is(scanErr, d.NoRows) {
		return err
	}
	return scanErr
}

// collect scans every row of rows with scan, and closes rows.
func collect[T any](rows Rows, err error, scan func(sqlrow.Row) (*T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return sqlrow.Collect(rows, scan)
}

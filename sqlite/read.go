package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sqlread"
	"github.com/memstore/memstore/internal/sqlrow"
)

// dialect is SQLite's SQL for the reads both backends make (sqlread):
// numbered placeholders (?1), which SQLite binds as the plain ones.
var dialect = &sqlread.Dialect{
	Placeholder:  "?",
	NoRows:       sql.ErrNoRows,
	EmptyContent: "''",
	// memstore.SessionAgentID's rule: the agent field when a string,
	// else its id.
	AgentID: func(fields string) string {
		return `CASE json_type(` + fields + `, '$.` + memstore.AgentField + `') WHEN 'text' THEN json_extract(` + fields + `, '$.` + memstore.AgentField + `')
			WHEN 'object' THEN json_extract(` + fields + `, '$.` + memstore.AgentField + `.id') END`
	},
	// The IDs travel as one JSON array, so that the statement stays the
	// same whatever their number and is prepared once.
	OneOf: func(q *sqlread.Query, column string, ids []string) string {
		b, _ := json.Marshal(ids) // a list of strings always encodes
		return column + " IN (SELECT value FROM json_each(" + q.Arg(string(b)) + "))"
	},
}

// A querier is a transaction (txn) or the read pool's prepared
// statements (stmtCache), outside a transaction, where each statement
// reads one snapshot.
type querier interface {
	queryRow(ctx context.Context, query string, args ...any) *sql.Row
	query(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (c *stmtCache) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return c.pool.QueryContext(ctx, query, args...)
}

// reader runs the statements of sqlread on q. Each backend has its own,
// as each driver has its own types of rows.
type reader struct {
	ctx context.Context
	q   querier
}

func (r reader) QueryRow(query string, args ...any) sqlrow.Row {
	return r.q.queryRow(r.ctx, query, args...)
}

func (r reader) Query(query string, args ...any) (sqlread.Rows, error) {
	rows, err := r.q.query(r.ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return readRows{rows}, nil
}

// readRows are rows whose Close reports nothing: a read's error is in
// Err.
type readRows struct{ *sql.Rows }

func (r readRows) Close() { r.Rows.Close() }

// reads is a read transaction for sqlread.
func (db *DB) reads(ctx context.Context) sqlread.Read {
	return func(fn func(sqlread.Tx) error) error {
		return db.read(ctx, func(tx *txn) error { return fn(reader{ctx, tx}) })
	}
}

// readStore is a read transaction for sqlread of a store that must
// belong to the workspace (ENotFound).
func (db *DB) readStore(ctx context.Context, workspaceID, storeID string) sqlread.Read {
	return func(fn func(sqlread.Tx) error) error {
		return db.read(ctx, func(tx *txn) error {
			if _, err := storeState(ctx, tx, workspaceID, storeID); err != nil {
				return err
			}
			return fn(reader{ctx, tx})
		})
	}
}

// sessionReads are the reads of sessions both SQL backends make, for DB
// to embed without a field of its own in its API.
type sessionReads = sqlread.SessionReads

// overviewReads are the counts of an overview both SQL backends make.
type overviewReads = sqlread.OverviewReads

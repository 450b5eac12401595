package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore/internal/sqlread"
	"github.com/memstore/memstore/internal/sqlrow"
)

// dialect is PostgreSQL's SQL for the reads both backends make
// (sqlread).
var dialect = &sqlread.Dialect{
	Placeholder:  "$",
	NoRows:       pgx.ErrNoRows,
	EmptyContent: "''::bytea",
	// The schema's session_agent_id function.
	AgentID: func(fields string) string { return "session_agent_id(" + fields + ")" },
	OneOf: func(q *sqlread.Query, column string, ids []string) string {
		return column + " = ANY(" + q.Arg(ids) + ")"
	},
}

// newQuery starts a statement built piece by piece.
func newQuery(args ...any) *sqlread.Query { return dialect.Query(args...) }

// A querier is a transaction or the pool.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// reader runs the statements of sqlread on q. Each backend has its own,
// as each driver has its own types of rows.
type reader struct {
	ctx context.Context
	q   querier
}

func (r reader) QueryRow(query string, args ...any) sqlrow.Row {
	return r.q.QueryRow(r.ctx, query, args...)
}

func (r reader) Query(query string, args ...any) (sqlread.Rows, error) {
	return r.q.Query(r.ctx, query, args...)
}

// read is a read transaction for sqlread.
func (db *DB) read(ctx context.Context) sqlread.Read {
	return func(fn func(sqlread.Tx) error) error {
		return db.inTx(ctx, readTx, func(tx pgx.Tx) error { return fn(reader{ctx, tx}) })
	}
}

// readStore is a read transaction for sqlread of a store that must
// belong to the workspace (ENotFound).
func (db *DB) readStore(ctx context.Context, workspaceID, storeID string) sqlread.Read {
	return func(fn func(sqlread.Tx) error) error {
		return db.inTx(ctx, readTx, func(tx pgx.Tx) error {
			if _, err := storeState(ctx, tx, workspaceID, storeID, false); err != nil {
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

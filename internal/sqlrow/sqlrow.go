// Package sqlrow is the rows the two SQL backends keep, described once:
// the row of each kind of record (its table, its columns, how a row
// scans into the record and what the record writes), which the backends'
// own queries read and write too (records.go), and the flow of the dump
// and the restore of a whole database (memstore.Dumper and
// memstore.Restorer). The two schemas name their tables and
// columns alike, so a backend gives only what its dialect does its own
// way: a read of each table in one snapshot (Snapshot), and an insert of
// a row in one transaction (Tx).
//
// The values a row scans into and writes are those both drivers take: a
// string, an int64 (times as unix nanoseconds, keyset.Nanos), a *int64
// or nil for NULL, a bool, a []byte for the text that PostgreSQL keeps
// as bytea (so that it may hold a NUL), and a []string for a list (kept
// as text[] by PostgreSQL, as comma-separated text by SQLite, whose
// backend converts it).
package sqlrow

import (
	"strings"

	"github.com/memstore/memstore"
)

// A Table is where the records of one kind are kept.
type Table struct {
	Kind memstore.RecordKind
	Name string
	// Columns are what a dump reads and a restore writes, in order.
	Columns string
	// Derived are columns a dump reads after Columns but a restore does
	// not write: the database keeps them from other rows.
	Derived string
	// Key is the columns unique to a row, by which a dump pages through
	// the table (SQLite reads a table keyed by ID in rowid order
	// instead, which pages without an index).
	Key string
	// Conflict, when set, is the ON CONFLICT clause of a restore's
	// insert: what it does to a row that is already there.
	Conflict string
}

// Select is the columns a dump reads.
func (t *Table) Select() string {
	if t.Derived == "" {
		return t.Columns
	}
	return t.Columns + ", " + t.Derived
}

// Insert is the statement that inserts a row of t, given the
// placeholder of the nth value (from 1) in the backend's dialect.
func (t *Table) Insert(param func(n int) string) string {
	values := make([]string, strings.Count(t.Columns, ",")+1)
	for i := range values {
		values[i] = param(i + 1)
	}
	q := `INSERT INTO ` + t.Name + ` (` + t.Columns + `) VALUES (` + strings.Join(values, ", ") + `)`
	if t.Conflict != "" {
		q += ` ` + t.Conflict
	}
	return q
}

// A Row is a row being scanned.
type Row interface{ Scan(dest ...any) error }

// Rows is a result set of either driver (database/sql's *sql.Rows, pgx's
// Rows), which its caller closes.
type Rows interface {
	Row
	Next() bool
	Err() error
}

// Collect scans every row of rows with scan, in order.
func Collect[T any](rows Rows, scan func(Row) (*T, error)) ([]T, error) {
	var items []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		items = append(items, *v)
	}
	return items, rows.Err()
}

// CollectRefs is Collect keeping each record's pointer, for records
// that their reader changes in place.
func CollectRefs[T any](rows Rows, scan func(Row) (*T, error)) ([]*T, error) {
	var items []*T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		items = append(items, v)
	}
	return items, rows.Err()
}

// Extra is r, whose last columns scan into extra, after those that the
// scan of its table reads: so that a table's one scan serves a query
// with more columns.
func Extra(r Row, extra ...any) Row { return extraColumns{r, extra} }

type extraColumns struct {
	Row
	extra []any
}

func (r extraColumns) Scan(dest ...any) error { return r.Row.Scan(append(dest, r.extra...)...) }

// A Snapshot is one consistent read of a whole database, in which Dump
// reads every table.
type Snapshot interface {
	// Count returns how many rows t holds.
	Count(t *Table) (int64, error)
	// Read scans the rows of t (its Select columns), in the order of
	// its Key, with scan, and calls page after each memstore.DumpPage
	// rows or fewer: a page is read whole before page is called, so
	// that page may take its time and run other statements.
	Read(t *Table, scan func(Row) error, page func() error) error
	// Attach fills in the stores attached to each session, in their
	// order, as the backend reads them for its API.
	Attach(sessions []*memstore.Session) error
}

// A Tx is a backend's transaction of a restore.
type Tx interface {
	// Exists runs query, which selects one boolean, and returns it.
	Exists(query string) (bool, error)
	// Insert adds to t the row of values (those of t.Columns, in
	// order).
	Insert(t *Table, values []any) error
}

// holdsData tells whether a database holds what a restore must not mix
// with a copy: a workspace, an API key, a store or a session.
const holdsData = `SELECT EXISTS (SELECT 1 FROM workspaces) OR EXISTS (SELECT 1 FROM api_keys)
	OR EXISTS (SELECT 1 FROM stores) OR EXISTS (SELECT 1 FROM sessions)`

// Dump hands sink every record of s, kind by kind in the order of
// memstore.RecordKinds, each kind announced with its count. It returns
// the first error, from the database or from sink.
func Dump(s Snapshot, sink memstore.RecordSink) error {
	for _, k := range memstore.RecordKinds {
		if err := kinds[k].dump(s, sink); err != nil {
			return err
		}
	}
	return nil
}

// Restore fills the database of tx with the records that fill hands its
// sink, as they are, once memstore.CheckRecords passed each: the
// memstore.Restorer of a backend, in its transaction. A database that
// holds data is refused (memstore.ErrNotEmpty) and fill is not called.
func Restore(tx Tx, fill func(memstore.RecordSink) error) error {
	full, err := tx.Exists(holdsData)
	if err != nil {
		return err
	}
	if full {
		return memstore.ErrNotEmpty()
	}
	return fill(memstore.CheckRecords(restorer{tx}))
}

// A kind is how the records of type T are kept: their table, how a row
// scans into a record, the values a record writes, and the method of a
// memstore.RecordSink that takes them.
type kind[T any] struct {
	table  *Table
	scan   func(Row) (*T, error)
	values func(*T) ([]any, error)
	put    func(memstore.RecordSink, *T) error
	// complete, when set, completes a page of records before the sink
	// sees it.
	complete func(Snapshot, []*T) error
}

func (k *kind[T]) dump(s Snapshot, sink memstore.RecordSink) error {
	total, err := s.Count(k.table)
	if err != nil {
		return err
	}
	if err := sink.Begin(k.table.Kind, total); err != nil {
		return err
	}
	var page []*T
	return s.Read(k.table, func(r Row) error {
		rec, err := k.scan(r)
		if err == nil {
			page = append(page, rec)
		}
		return err
	}, func() error {
		if k.complete != nil {
			if err := k.complete(s, page); err != nil {
				return err
			}
		}
		for _, rec := range page {
			if err := k.put(sink, rec); err != nil {
				return err
			}
		}
		page = nil
		return nil
	})
}

func (k *kind[T]) rows() *Table { return k.table }

func (k *kind[T]) insert(tx Tx, rec *T) error {
	values, err := k.values(rec)
	if err != nil {
		return err
	}
	return tx.Insert(k.table, values)
}

// restorer is the sink of a restore: it inserts each record it is given.
type restorer struct{ tx Tx }

func (restorer) Begin(memstore.RecordKind, int64) error { return nil }

func (r restorer) Workspace(w *memstore.Workspace) error     { return workspaces.insert(r.tx, w) }
func (r restorer) APIKey(k *memstore.APIKeyRecord) error     { return apiKeys.insert(r.tx, k) }
func (r restorer) User(u *memstore.User) error               { return users.insert(r.tx, u) }
func (r restorer) SignIn(s *memstore.SignIn) error           { return signIns.insert(r.tx, s) }
func (r restorer) Store(s *memstore.Store) error             { return stores.insert(r.tx, s) }
func (r restorer) Memory(m *memstore.Memory) error           { return memories.insert(r.tx, m) }
func (r restorer) Version(v *memstore.Version) error         { return versions.insert(r.tx, v) }
func (r restorer) Event(e *memstore.Event) error             { return events.insert(r.tx, e) }
func (r restorer) Webhook(w *memstore.WebhookEndpoint) error { return webhooks.insert(r.tx, w) }
func (r restorer) WebhookCursor(c *memstore.WebhookCursor) error {
	return cursors.insert(r.tx, c)
}
func (r restorer) WebhookDelivery(d *memstore.WebhookDelivery) error {
	return deliveries.insert(r.tx, d)
}
func (r restorer) SessionToken(t *memstore.SessionTokenRecord) error {
	return sessionTokens.insert(r.tx, t)
}
func (r restorer) Dream(d *memstore.Dream) error { return dreams.insert(r.tx, d) }
func (r restorer) SessionEvent(e *memstore.SessionEvent) error {
	return sessionEvents.insert(r.tx, e)
}

// Session inserts the session, then each of its attachments at its
// position.
func (r restorer) Session(s *memstore.Session) error {
	if err := sessions.insert(r.tx, s); err != nil {
		return err
	}
	for i := range s.Attachments {
		if err := r.tx.Insert(SessionStores, attachmentValues(s, i)); err != nil {
			return err
		}
	}
	return nil
}

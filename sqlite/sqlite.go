// Package sqlite keeps memory stores, their memories and the versions of
// those memories in one SQLite database file (modernc.org/sqlite, no cgo).
// A DB is a memstore.Backend, the storage of a memstore.Core: it trusts
// its callers, which the core has checked, and leaves the checks of
// access and of input to the core, but for the invariants of what it
// keeps. Each call runs in one transaction; the domain's rules that need
// stored data run in it too, from memstore's rules.go, so that this
// package states only storage: queries, cursors, and that archiving or
// redacting again changes nothing.
//
// # Services
//
// A DB implements, for the core, memstore.KeyStorage (key.go: workspaces
// and API keys), StoreStorage (store.go), MemoryStorage and
// MemoryRevalidatorStorage (memory.go), VersionStorage (version.go),
// SessionStorage (session.go) and SearchStorage (search.go); and, for the
// server itself, RevocationNotifier (revoke.go: revocations of keys,
// tokens and sessions, heard by this process's listeners at once and by
// other processes' on the file within moments).
//
// # Parts
//
//   - sqlite.go: Open, Close, the schema and its migrations
//     (migrations/), the translation of driver errors, and what the
//     files share.
//   - txn.go: transactions, and the cache of prepared statements of each
//     pool; reads run on a pool of read-only connections (DB.read).
//   - writer.go: the writer, the one goroutine that runs every write,
//     with group commit; the rule every write follows is at DB.write.
//   - checkpoint.go: copies the write-ahead log back into the database
//     beside the writer, and empties it after an erasure.
//   - revoke.go: the notes of revocations that the processes on the file
//     read from each other.
//   - indexer.go, searchindex.sql: the indexer, which keeps the search
//     indexes in a file of their own (IndexPath) beside the writer;
//     indexfile.go rebuilds that file when it is damaged or replaced.
//   - files*.go: the database's files, their modes, and the refusal
//     of a database this user may not write (ErrReadOnly).
//
// # Erasure
//
// What a redaction erases leaves every file of the database at two
// moments. When RedactVersion returns, the text is in neither the
// database file nor its write-ahead log: secure_delete zeroed the space it
// took, and a TRUNCATE checkpoint copied the log back into the file and
// emptied it (the -shm file never holds content). The search index file
// (IndexPath) may hold its words a little longer, in entries only marked
// deleted: the indexer purges them, then empties the index's log and the
// database's again, and when WaitSearchIndex returns, the text is in no
// file beside the database. Both hold after a crash at any later moment;
// the purge request is in the database, and a purge cut short is finished
// by the next process to open it. Redacting the current version of a live
// memory leaves the memory's text where it is; once the memory is changed
// or deleted, that text leaves every file when the purge this asks for
// (the memories_redacted_text triggers, migrations/0001_schema.sql) has
// finished. Deleting a store erases its content in
// the same way (DeleteStore), and deleting a session what it kept, though
// a deletion answers even when the log stays busy, which is then emptied
// in the background (eraseDeleted).
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/ids"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/private"
	"github.com/memstore/memstore/internal/schema"
)

var _ memstore.Database = (*DB)(nil)

// migrations holds the schema: migrations/0001_schema.sql, the first
// release's, and the migrations of later releases numbered after it,
// each applied once and in order (migrate).
//
//go:embed migrations/*.sql
var migrations embed.FS

// applicationID marks a database file as memstore's, in the header's
// application_id ("mems"): the development builds before the first
// release left it 0.
const applicationID = 0x6d656d73

// devLast is the last development build's user_version.
const devLast = 18

// Options tune a DB; the zero value is usable.
type Options struct {
	// Now is the clock, time.Now when nil; tests inject a fixed one.
	Now func() time.Time
	// IDs makes identifiers, a fresh ids.NewGenerator() when nil.
	IDs *ids.Generator
	// Logger hears of the search indexes' long or failing work: a build
	// of the whole index file (about half a second per thousand
	// memories), and rounds of the indexer that fail. Nil discards it.
	Logger *slog.Logger
}

// DB is a memstore database in one SQLite file.
//
// It holds two pools on the same file. The write pool has a single
// connection and opens every transaction with BEGIN IMMEDIATE
// (_txlock=immediate): writers queue in database/sql instead of failing
// with SQLITE_BUSY when a deferred read lock cannot be upgraded, and
// SQLite allows only one writer anyway. The read pool has several
// connections in query_only mode; under WAL they read consistent
// snapshots concurrently with the writer. Searches read through another
// such pool, the indexer's, which attaches the search index file
// (indexfile.go).
type DB struct {
	sessionReads  // the reads of sessions and tokens
	overviewReads // the counts of an overview
	path          string
	w, r          *sql.DB
	ws, rs        stmtCache // their prepared statements
	ck            *checkpointer
	ix            *indexer // keeps the search indexes (indexer.go)
	// writes and indexWrites (the indexer's) feed the batcher
	// (writer.go), which runs every write.
	writes, indexWrites chan writeReq
	closed              chan struct{} // closed by Close: the batcher stops
	batcherDone         chan struct{}
	closeOnce           sync.Once
	now                 func() time.Time
	ids                 *ids.Generator
	log                 *slog.Logger
	// Revocations tells this process's listeners of every key revoked,
	// token revoked and session archived through this DB, and, once
	// they listen, of those of other processes on the file (revoke.go).
	memstore.Revocations
	poll polling
	// Notices tells this process's listeners of the stores with new
	// events, after each commit (events.go).
	memstore.Notices
	vectors   vectorCache // the stores' vectors in memory (vectorcache.go)
	places    placeCopies // where the memories of conversations are (placecopy.go)
	stopSweep func()      // stops the sweeps of the idle copies
}

// Open opens (creating if needed) the database at path and brings its
// schema up to date. A new database file is made with mode 0600; SQLite
// gives its -wal and -shm files the database's mode. The search index
// files beside it (IndexPath) are kept at 0600 whatever their mode was.
// A database that this user may not write is refused (ErrReadOnly).
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	db := &DB{path: path, now: opts.Now, ids: opts.IDs, log: opts.Logger, poll: polling{origin: newOrigin()}}
	db.vectors.Limit = memstore.VectorCopyBytes
	db.vectors.WorkspaceLimit = memstore.VectorCopyBytesPerWorkspace
	db.places.Limit = memstore.PlaceCopyBytes
	db.places.WorkspaceLimit = memstore.PlaceCopyBytesPerWorkspace
	db.sessionReads = sessionReads{Dialect: dialect, Read: db.reads, Wrap: wrap}
	db.overviewReads = overviewReads(db.sessionReads)
	if db.now == nil {
		db.now = time.Now
	}
	if db.log == nil {
		db.log = slog.New(slog.DiscardHandler)
	}
	if db.ids == nil {
		db.ids = ids.NewGenerator()
	}
	// Per-connection settings (connParams): WAL lets readers run beside
	// the writer; foreign keys make store deletion cascade; busy_timeout
	// waits for another process's lock instead of failing at once;
	// secure_delete zeroes freed space so that redacted and deleted
	// content does not linger in the file; synchronous=NORMAL is durable
	// enough under WAL (a power cut may lose the last commits, never
	// corrupt); temp_store=MEMORY keeps statement journals out of
	// temporary files.
	if err := writable(path); err != nil {
		return nil, err
	}
	// Made here rather than by SQLite, which would make it 0644.
	if _, err := private.Create(path); err != nil {
		return nil, fmt.Errorf("create database %s: %w", path, err)
	}
	wq := connParams(true)
	wq.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", writerCheckpointPages))
	var err error
	if db.w, err = sql.Open("sqlite", "file:"+path+"?"+wq.Encode()); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.w.SetMaxOpenConns(1)
	db.w.SetConnMaxIdleTime(0)
	db.ws.pool = db.w
	if err := db.migrate(ctx); err != nil {
		db.w.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	// The checkpointer, the indexer and the read pool are opened after
	// the migration so that the file is already in WAL mode and has its
	// schema. Searches read through connections of the indexer's, which
	// attach the index file; the read pool does not, so that a damaged
	// index file, which the indexer builds again, holds up searches only.
	q := connParams(false)
	ck, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		db.w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	ck.SetMaxOpenConns(1)
	db.ck = startCheckpointer(ck)
	q.Add("_pragma", "query_only(1)")
	if db.r, err = sql.Open("sqlite", "file:"+path+"?"+q.Encode()); err != nil {
		db.ck.close()
		db.w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	openReadPool(db.r)
	db.rs.pool = db.r
	if db.ix, err = openIndexer(ctx, path, db); err != nil {
		db.r.Close()
		db.ck.close()
		db.w.Close()
		return nil, err
	}
	db.writes, db.indexWrites = make(chan writeReq), make(chan writeReq)
	db.closed, db.batcherDone = make(chan struct{}), make(chan struct{})
	go db.batcher()
	db.ix.start()
	stopVectors := db.vectors.Sweeper(memstore.VectorCopyIdle, memstore.VectorCopySweep)
	stopPlaces := db.places.Sweeper(memstore.VectorCopyIdle, memstore.VectorCopySweep)
	db.stopSweep = func() { stopVectors(); stopPlaces() }
	return db, nil
}

// Close closes the pools and stops the checkpointer.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.stopPolling()
		db.stopSweep()
		close(db.closed)
		<-db.batcherDone
	})
	return errors.Join(db.ix.close(), db.ck.close(), db.rs.close(), db.ws.close(), db.r.Close(), db.w.Close())
}

// migrate brings the database's schema up to date in one transaction,
// by the migrations numbered above the one its user_version records,
// and marks it as memstore's (applicationID). A database made by the
// last development build before the first release (application_id 0,
// user_version devLast) has the release's schema: it is taken over at
// schema.FirstRelease, once, and logged; one of an earlier or a later
// development build is refused (schema.Development).
// A database of a newer memstore, or a file of another application, is
// refused.
func (db *DB) migrate(ctx context.Context) error {
	release, err := schema.Read(migrations, "migrations")
	if err != nil {
		return err
	}
	known := release[len(release)-1].N
	var fromDev int // the development version upgraded from, 0 for none
	err = db.write(ctx, func(tx *txn) error {
		var app, have int
		if err := tx.queryRow(ctx, "PRAGMA application_id").Scan(&app); err != nil {
			return err
		}
		if err := tx.queryRow(ctx, "PRAGMA user_version").Scan(&have); err != nil {
			return err
		}
		switch {
		case app != applicationID && app != 0:
			return fmt.Errorf("the file is not a memstore database (its application_id is %#x)", app)
		case app == 0 && have > 0:
			if err := schema.Development(have, devLast); err != nil {
				return err
			}
			fromDev, have = have, schema.FirstRelease
		case have > known:
			return fmt.Errorf("the database's schema is at version %d, newer than this memstore knows (%d): upgrade memstore", have, known)
		}
		if err := runMigrations(ctx, tx, release, have); err != nil {
			return err
		}
		if app == applicationID && have == known {
			return nil
		}
		return tx.execScript(ctx, fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d", applicationID, known))
	})
	if err == nil && fromDev > 0 {
		db.log.Info("upgraded a database made by a development build of memstore", "path", db.path, "development_version", fromDev, "version", known)
	}
	return err
}

// runMigrations runs, in tx, the migrations of ms numbered above have.
func runMigrations(ctx context.Context, tx *txn, ms []schema.Migration, have int) error {
	for _, m := range ms {
		if m.N <= have {
			continue
		}
		if err := tx.execScript(ctx, m.Text); err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	return nil
}

// translate turns driver errors into memstore errors by SQLite result
// code (never by message text) and passes everything else through.
func translate(err error) error {
	var se *sqlite.Error
	if err == nil || !errors.As(err, &se) {
		return err
	}
	switch code := se.Code(); {
	case code == sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		// Only (store_id, path) can collide: IDs are unique by
		// construction. The blocker is unknown here, so the client is
		// told to retry.
		return memstore.ErrPathTaken()
	case code&0xff == sqlite3.SQLITE_BUSY, code&0xff == sqlite3.SQLITE_LOCKED:
		return memstore.ErrBusy()
	}
	return err
}

// Times are stored as unix nanoseconds, returned in UTC, and lists page
// by keyset with opaque cursors tagged by list, as in every backend
// (internal/keyset).
var (
	nanos     = keyset.Nanos
	fromNanos = keyset.Time
)

func fromNullNanos(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromNanos(n.Int64)
	return &t
}

type cursor = keyset.Cursor

const (
	kindStores   = keyset.Stores
	kindVersions = keyset.Versions
)

// parseCursor decodes page, which must be "" or a cursor of kind.
func parseCursor(page, kind string) (*cursor, error) { return keyset.Parse(page, kind) }

// storeState is what a memory or version operation needs of its store.
// It also checks that the store belongs to the workspace (ENotFound).
func storeState(ctx context.Context, tx *txn, workspaceID, storeID string) (archived bool, err error) {
	if ws, ok := tx.live[storeID]; ok && ws == workspaceID {
		return false, nil
	}
	var a sql.NullInt64
	err = tx.queryRow(ctx, `SELECT archived_at FROM stores WHERE id = ? AND workspace_id = ?`, storeID, workspaceID).Scan(&a)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, memstore.ErrStoreNotFound(storeID)
	case err == nil && !a.Valid:
		if tx.live == nil {
			tx.live = map[string]string{}
		}
		tx.live[storeID] = workspaceID
	}
	return a.Valid, err
}

// wrap adds context to an internal error for the log. A *memstore.Error
// goes back as it is: its message is already meant for the client, and
// callers may look at it without errors.As.
func wrap(err error, format string, args ...any) error {
	var e *memstore.Error
	if err == nil || errors.As(err, &e) {
		return err
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

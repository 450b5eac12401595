// Package postgres keeps memory stores, their memories and versions,
// sessions, workspaces and API keys, console users and their sign-ins,
// the change feed, and webhook endpoints with their deliveries in a
// PostgreSQL database (pgx), which several memstore processes may share.
// A DB is a memstore.Backend, the storage of a memstore.Core: it trusts
// its callers, which the core has checked. Each call runs in one
// transaction; the rules that need stored data run inside it (memstore's
// rules.go). Triggers of the schema do the webhook work a
// change's own transaction needs: a store's events become deliveries, and
// each endpoint's places in the change feeds follow its stores and its
// state.
//
// # Services
//
// A DB implements, for the core, memstore.KeyStorage (key.go),
// StoreStorage (store.go), MemoryStorage and MemoryRevalidatorStorage
// (memory.go), VersionStorage (version.go), SessionStorage (session.go),
// SearchStorage (search.go) and EventStorage (events.go); UserStorage
// (user.go) for memstore.Users and WebhookStorage (webhook.go) for
// memstore.Webhooks; and, for the server itself, WebhookDeliveryStorage
// for the deliverer (webhook.go), Dumper and Restorer for migrate
// (dump.go), and RevocationNotifier and EventNotifier (the revocations,
// and the stores with new events, of every process on the database, told
// between processes by LISTEN/NOTIFY: notify.go).
//
// # Concurrency across processes
//
// Writes run at READ COMMITTED, and every write of a store's memories
// (WriteMemory) begins by locking the store's row (SELECT ... FOR NO KEY
// UPDATE). The writes of one store therefore run one at a time, whichever
// process makes them, while those of different stores run in parallel.
// Each later statement of a write sees everything committed before it
// took the lock, so what the core's rules read in it (whether a path or
// its ancestors and descendants are free, how many memories the store
// holds, the memory's current content) stays true until it commits: the
// overlap checks, the per-store limit and renames are exact without
// SERIALIZABLE. The lock also orders a write against archiving and
// deleting the store, which update or delete the same row. The unique
// index on (store_id, path) is a backstop: a violation becomes a
// retryable EPathConflict. Versions keep the order of the lock too, even
// between processes whose clocks differ: a store's next version is never
// dated before its last, and its ID sorts after it (memTx.next). Writes that change one store or session row
// (UpdateStore, archives, a new token) lock that row the same way, and a
// new session locks the rows of the stores it snapshots (FOR SHARE), so
// that a store archived or renamed meanwhile is seen wholly before or
// wholly after. Reads of several statements run in one REPEATABLE READ
// snapshot.
//
// A transaction that the server aborts for a serialization failure or a
// deadlock runs again, up to maxAttempts times, and then fails with a
// retryable EConflict; so does any call when the server cannot be
// reached.
//
// # Search
//
// Search reads the memories' search data, made after each write by the
// indexer (searchindex.go), under a GIN index of their words and a
// trigram index (pg_trgm) of their text: see search.go.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/batch"
	"github.com/memstore/memstore/internal/ids"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/schema"
	"github.com/memstore/memstore/internal/sqlrow"
)

var _ memstore.Database = (*DB)(nil)

// migrations holds the schema: migrations/0001_schema.sql, the first
// release's, and the migrations of later releases numbered after it,
// each applied once and in order (migrate).
//
//go:embed migrations/*.sql
var migrations embed.FS

// devLast is the last development build's version in schema_migrations.
const devLast = 13

// Options tune a DB; the zero value is usable.
type Options struct {
	// Now is the clock, time.Now when nil; tests inject one.
	Now func() time.Time
	// IDs makes identifiers, a fresh ids.NewGenerator() when nil.
	IDs *ids.Generator
	// Logger hears of failures in the background (see notify.go); nil
	// discards them.
	Logger *slog.Logger
}

// DB is a memstore database in PostgreSQL, over a pool of connections.
type DB struct {
	sessionReads  // the reads of sessions and tokens
	overviewReads // the counts of an overview
	pool          *pgxpool.Pool
	now           func() time.Time
	ids           *ids.Generator
	log           *slog.Logger
	// Revocations tells this process's listeners of every key revoked,
	// token revoked and session archived through this DB, and of those
	// other processes tell of (notify.go).
	memstore.Revocations
	listen listening
	// Notices tells this process's listeners of the stores with new
	// events, made through this DB or told of by others (notify.go).
	memstore.Notices
	send sending
	// storeWrites runs the writes of a store that meet together
	// (batch.go).
	storeWrites storeWrites
	// revalidate batches MemoryUnlessAt's lookups (revalidate.go).
	revalidate *batch.Batcher[versionQuery, string]
	vectors    vectorCache
	stopSweep  func() // stops the sweep of the idle copies of vectors
	// indexer makes the search data of written memories (searchindex.go).
	indexer searchIndexer
}

// Open connects to the database at url (a postgres:// URL or key=value
// connection string, as libpq takes them) and brings its schema up to
// date. Errors never repeat the URL's password.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx leaves the password out of its message.
		return nil, memstore.Errorf(memstore.EInvalid, "the PostgreSQL connection string is not valid: %v", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	db := &DB{pool: pool, now: opts.Now, ids: opts.IDs, log: opts.Logger}
	db.vectors.Limit = memstore.VectorCopyBytes
	db.vectors.WorkspaceLimit = memstore.VectorCopyBytesPerWorkspace
	db.sessionReads = sessionReads{Dialect: dialect, Read: db.read, Wrap: wrap}
	db.overviewReads = overviewReads(db.sessionReads)
	db.revalidate = db.newRevalidator(int(cfg.MaxConns))
	if db.now == nil {
		db.now = time.Now
	}
	if db.log == nil {
		db.log = slog.New(slog.DiscardHandler)
	}
	db.listen.origin = strconv.FormatUint(rand.Uint64(), 36) // unique enough among the processes of a database
	if db.ids == nil {
		db.ids = ids.NewGenerator()
	}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("migrate the PostgreSQL database: %w", translate(err))
	}
	db.stopSweep = db.vectors.Sweeper(memstore.VectorCopyIdle, memstore.VectorCopySweep)
	db.startIndexer()
	return db, nil
}

// Close stops the search indexer and listening for revocations, and
// closes the pool, waiting for the connections in use.
func (db *DB) Close() error {
	db.stopIndexer()
	db.stopListening()
	db.stopSending()
	db.stopSweep()
	db.pool.Close()
	return nil
}

// migrationLock is the key of the advisory lock held while migrating, so
// that processes starting at once migrate one after the other.
const migrationLock = 0x6d656d73746f7265 // "memstore"

// migrate brings the database's schema up to date in one transaction,
// under the advisory lock, by the migrations numbered above the last one
// recorded in memstore_schema, and records each there. A database made
// by the last development build before the first release (which
// recorded its migrations in schema_migrations instead, up to devLast)
// has the release's schema: it is taken over at schema.FirstRelease,
// once, and logged. One of an earlier or a later development build, or
// of a newer memstore, is refused.
func (db *DB) migrate(ctx context.Context) error {
	release, err := schema.Read(migrations, "migrations")
	if err != nil {
		return err
	}
	known := release[len(release)-1].N
	var upgraded bool // from a development build's schema
	var fromDev int   // the development version it was at
	err = db.inTx(ctx, writeTx, func(tx pgx.Tx) error {
		upgraded, fromDev = false, 0
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return err
		}
		var isRelease, isDev bool
		// A development build kept its version in schema_migrations, a
		// name other tools use too: only with memstore's own tables beside
		// it is it memstore's to upgrade (and drop).
		if err := tx.QueryRow(ctx, `SELECT to_regclass('memstore_schema') IS NOT NULL,
			to_regclass('schema_migrations') IS NOT NULL AND to_regclass('api_keys') IS NOT NULL AND to_regclass('memories') IS NOT NULL`).Scan(&isRelease, &isDev); err != nil {
			return err
		}
		have := 0
		if !isRelease && isDev {
			if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&fromDev); err != nil {
				return err
			}
			if err := schema.Development(fromDev, devLast); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DROP TABLE schema_migrations`); err != nil {
				return err
			}
			upgraded, have = true, schema.FirstRelease
		}
		// One row per release migration applied. Made only where it is
		// missing, so that a role that may use the tables but not create
		// in their schema can open a database already up to date.
		if !isRelease {
			if _, err := tx.Exec(ctx, `CREATE TABLE memstore_schema (version integer PRIMARY KEY, applied_at bigint NOT NULL)`); err != nil {
				return err
			}
		}
		at := keyset.Nanos(db.now())
		if have > 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO memstore_schema (version, applied_at) VALUES ($1, $2)`, have, at); err != nil {
				return err
			}
		}
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM memstore_schema`).Scan(&have); err != nil {
			return err
		}
		if have > known {
			return fmt.Errorf("the database's schema is at version %d, newer than this memstore knows (%d): upgrade memstore", have, known)
		}
		for _, m := range release {
			if m.N <= have {
				continue
			}
			if err := runMigration(ctx, tx, m); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO memstore_schema (version, applied_at) VALUES ($1, $2)`, m.N, at); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && upgraded {
		db.log.Info("upgraded a database made by a development build of memstore", "development_version", fromDev, "version", known)
	}
	return err
}

// runMigration applies m in tx.
func runMigration(ctx context.Context, tx pgx.Tx, m schema.Migration) error {
	if _, err := tx.Exec(ctx, m.Text); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	return nil
}

// The kinds of transaction: writes at READ COMMITTED, each taking the
// row locks it needs (see the package doc); reads of several statements
// in one snapshot.
var (
	writeTx = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}
	readTx  = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
)

// maxAttempts bounds the runs of a transaction that the server aborts for
// a serialization failure or a deadlock.
const maxAttempts = 5

// retryPause is the mean pause before running such a transaction again,
// times the attempt, jittered so that the transactions that collided do
// not collide again.
const retryPause = 5 * time.Millisecond

// inTx runs fn in a transaction of kind opts, and commits it when fn
// returns nil; any error from fn, or a panic, rolls it back. A run that
// the server aborted for a serialization failure or a deadlock is
// repeated, so fn must have no effect outside tx.
func (db *DB) inTx(ctx context.Context, opts pgx.TxOptions, fn func(tx pgx.Tx) error) error {
	return db.retrying(ctx, func() (error, bool) { return db.tryTx(ctx, opts, fn) })
}

// retrying runs a transaction by try, which reports whether its error,
// if any, came from the commit, again as inTx says.
func (db *DB) retrying(ctx context.Context, try func() (err error, committing bool)) error {
	for attempt := 1; ; attempt++ {
		err, committing := try()
		lost := !committing && unreachable(err)
		if lost {
			// The server ended the connection (a restart, a failover)
			// before the commit was sent, so nothing was committed:
			// the pool's other connections are likely gone too, and
			// the transaction runs again on a new one. A connection
			// lost during the commit is not retried, since the commit
			// may have happened.
			db.pool.Reset()
		}
		if attempt == maxAttempts || !aborted(err) && !lost {
			return translate(err)
		}
		pause := time.Duration(float64(retryPause) * float64(attempt) * (0.5 + rand.Float64()))
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// tryTx runs fn in one transaction and reports whether its error, if
// any, came from the commit.
func (db *DB) tryTx(ctx context.Context, opts pgx.TxOptions, fn func(tx pgx.Tx) error) (err error, committing bool) {
	tx, err := db.pool.BeginTx(ctx, opts)
	if err != nil {
		return err, false
	}
	// After a commit this does nothing; otherwise it ends the
	// transaction even when ctx is done, so that the connection goes
	// back to the pool clean.
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(tx); err != nil {
		return err, false
	}
	return tx.Commit(ctx), true
}

// SQLSTATE codes that this package acts on.
const (
	sqlUniqueViolation     = "23505"
	sqlSerializationFailed = "40001"
	sqlDeadlock            = "40P01"
	sqlTooManyConnections  = "53300"
	sqlLockNotAvailable    = "55P03" // a lock_timeout passed
	sqlAdminShutdown       = "57P01"
	sqlCrashShutdown       = "57P02"
	sqlCannotConnectNow    = "57P03"
)

// aborted reports whether the server aborted a transaction that may
// succeed when run again.
func aborted(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == sqlSerializationFailed || pe.Code == sqlDeadlock)
}

// translate turns driver errors into memstore errors by SQLSTATE (never
// by message text) and passes everything else through.
func translate(err error) error {
	var pe *pgconn.PgError
	switch {
	case !fromDriver(err):
		return err
	case errors.As(err, &pe):
		switch {
		case pe.Code == sqlUniqueViolation && pe.ConstraintName == "memories_path_key":
			// The blocker is unknown here, so the client is told to
			// retry (the store's lock makes this a backstop only).
			return memstore.ErrPathTaken()
		case pe.Code == sqlSerializationFailed, pe.Code == sqlDeadlock, pe.Code == sqlTooManyConnections, pe.Code == sqlLockNotAvailable:
			return memstore.ErrBusy()
		}
	}
	if unreachable(err) {
		return errUnreachable()
	}
	return err
}

// fromDriver reports whether err is the driver's: not nil, not a
// *memstore.Error, not the end of the caller's context.
func fromDriver(err error) bool {
	var me *memstore.Error
	return err != nil && !errors.As(err, &me) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// unreachable reports whether err says that the server could not be
// reached or ended the connection.
func unreachable(err error) bool {
	var (
		pe *pgconn.PgError
		ce *pgconn.ConnectError
		ne net.Error
	)
	switch {
	case !fromDriver(err):
		return false
	case errors.As(err, &ce):
		return true // whatever the server said when refusing the connection
	case errors.As(err, &pe):
		return strings.HasPrefix(pe.Code, "08") || pe.Code == sqlAdminShutdown || pe.Code == sqlCrashShutdown || pe.Code == sqlCannotConnectNow
	}
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || pgconn.SafeToRetry(err)
}

func errUnreachable() *memstore.Error {
	return &memstore.Error{Code: memstore.EConflict, Message: "the database is unreachable; retry", Retry: true}
}

// wrap adds context to an internal error for the log. A *memstore.Error
// goes back as it is: its message is already meant for the client.
func wrap(err error, format string, args ...any) error {
	err = translate(err)
	var e *memstore.Error
	if err == nil || errors.As(err, &e) {
		return err
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// A row is one result row to scan: a pgx.Row or the current row of
// pgx.Rows.
type row = sqlrow.Row

// notFound turns pgx.ErrNoRows into err, and leaves any other error.
func notFound(scanErr error, err *memstore.Error) error {
	if errors.Is(scanErr, pgx.ErrNoRows) {
		return err
	}
	return scanErr
}

// A storeRow is what a memory or version operation needs of its store.
type storeRow struct {
	archived bool
	memories int64 // its live memories (stores.memory_count, see memTx.Put)
}

// storeState reads the store's row, which must belong to the workspace
// (ENotFound). With lock, the row stays locked until tx ends, which
// serializes the writes of the store's memories.
func storeState(ctx context.Context, tx pgx.Tx, workspaceID, storeID string, lock bool) (storeRow, error) {
	return scanStoreState(tx.QueryRow(ctx, storeStateQuery(lock), storeID, workspaceID), storeID)
}

// storeStateQuery is storeState's statement, of the store's ID and
// workspace.
func storeStateQuery(lock bool) string {
	q := `SELECT archived_at IS NOT NULL, memory_count FROM stores WHERE id = $1 AND workspace_id = $2`
	if lock {
		q += ` FOR NO KEY UPDATE`
	}
	return q
}

func scanStoreState(r row, storeID string) (storeRow, error) {
	var st storeRow
	err := r.Scan(&st.archived, &st.memories)
	return st, notFound(err, errStoreNotFound(storeID))
}

func errStoreNotFound(id string) *memstore.Error {
	return memstore.ErrStoreNotFound(id)
}

// now is the clock's time as stored.
func (db *DB) stamp() time.Time { return keyset.Round(db.now()) }

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The index file is derived data, so a damaged one is rebuilt rather than
// a reason to stop. Damage shows when it is opened (it is not a database,
// or its state cannot be read) or later, when a search or a round of the
// indexer reads a damaged page. The file is then removed with its -wal
// and -shm, rather than kept aside, since a copy would keep the words of
// memories that are later redacted, and built again from the memories;
// searches wait for the build, as at the first Open, while every other
// read and write goes on: only searches go through the index file.
//
// The connections on the index file (indexConns) are replaced with it.
// Every round also checks that the file at IndexPath is still the one
// they opened: another process sharing the database may have rebuilt it,
// or someone deleted it.

// indexConns are the connections on one index file.
type indexConns struct {
	ix     *sql.DB // the indexer's: the index file, with the database attached as mem
	search *sql.DB // searches': the database, with the index file attached as search
	stmts  stmtCache
	file   os.FileInfo // the file they opened, to tell when it is replaced
	gen    uint64      // counts the replacements, to tell stale reports of damage
}

// readConns is the size of the pools that read the database.
const readConns = 4

// openReadPool sets up a pool of readers: the database (and the index file,
// for searches) read by snapshots, concurrently with the writer.
func openReadPool(p *sql.DB) *sql.DB {
	p.SetMaxOpenConns(readConns)
	// Keep every reader open: database/sql keeps two idle by default, and
	// opening a SQLite connection (with its pragmas) costs more than a
	// query.
	p.SetMaxIdleConns(readConns)
	p.SetConnMaxIdleTime(0)
	return p
}

// searchMmapSize is how much of the database and of the index file each
// search connection reads through memory mapping rather than a read
// system call per page. A search reads a few hundred pages scattered
// over both files (the rows of its memories, the index's segments and
// row sizes), which no page cache of a reasonable size holds: mapped,
// a page read is a memory access to the operating system's page cache
// (docs/benchmarks-log.md, Search). It takes address space only, not
// memory.
const searchMmapSize = 1 << 30

// openIndexConns prepares the index file of the database at path and opens
// connections on it.
func openIndexConns(ctx context.Context, path string) (*indexConns, error) {
	file := IndexPath(path)
	if err := prepareIndex(ctx, file); err != nil {
		return nil, err
	}
	fi, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	// Deferred transactions: BEGIN IMMEDIATE would take the write lock of
	// every attached database too, and so wait for the writer and hold it
	// back. The indexer only reads mem, and alone writes the index file.
	ix := openPool("file:"+file+"?"+connParams(false).Encode(), "mem", path)
	ix.SetMaxOpenConns(1)
	ix.SetConnMaxIdleTime(0)
	q := connParams(false)
	q.Add("_pragma", "query_only(1)")
	q.Add("_pragma", fmt.Sprintf("mmap_size(%d)", searchMmapSize))
	search := openReadPool(openPool("file:"+path+"?"+q.Encode(), "search", file))
	return &indexConns{ix: ix, search: search, stmts: stmtCache{pool: search}, file: fi}, nil
}

func (c *indexConns) close() error {
	return errors.Join(c.stmts.close(), c.search.Close(), c.ix.Close())
}

// removeIndex removes the index file and SQLite's files beside it.
func removeIndex(file string) error {
	for _, f := range withLog(file) {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// openConns opens connections on the index file, first removing a file
// that it finds damaged.
func (ix *indexer) openConns(ctx context.Context) (*indexConns, error) {
	c, err := openIndexConns(ctx, ix.db.path)
	if corrupt(err) { // prepareIndex reads the index file alone
		ix.rebuilding(ctx, err)
		if err := removeIndex(ix.file); err != nil {
			return nil, err
		}
		c, err = openIndexConns(ctx, ix.db.path)
	}
	return c, err
}

// rebuilding says in the log that the index file was found damaged.
func (ix *indexer) rebuilding(ctx context.Context, cause error) {
	ix.db.log.LogAttrs(ctx, slog.LevelWarn, "the search index file is damaged: removed it to build it again; searches wait for the build",
		slog.String("file", ix.file), slog.String("error", cause.Error()))
}

// corrupt says whether err is SQLite's report of a damaged file.
func corrupt(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff
	return code == sqlite3.SQLITE_CORRUPT || code == sqlite3.SQLITE_NOTADB
}

// damaged says whether SQLite's error err, met through the connections
// c, comes from their index file being damaged, or replaced since they
// opened it (by another process that found it damaged, or removed): the
// connections must then be replaced. They read the database too, whose
// own damage is no reason to rebuild the index: unless FTS5 reports its
// own (SQLITE_CORRUPT_VTAB, from the index), the file must fail a quick
// check.
func (ix *indexer) damaged(ctx context.Context, c *indexConns, err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	if se.Code() == sqlite3.SQLITE_CORRUPT_VTAB {
		return true
	}
	if fi, err := os.Stat(ix.file); err != nil || !os.SameFile(fi, c.file) {
		return true
	}
	if !corrupt(err) {
		return false
	}
	conn, err := sql.Open("sqlite", "file:"+ix.file+"?"+connParams(false).Encode())
	if err != nil {
		return false
	}
	defer conn.Close()
	var check string
	err = conn.QueryRowContext(ctx, `PRAGMA quick_check(1)`).Scan(&check)
	return corrupt(err) || err == nil && check != "ok"
}

// reportDamage tells the indexer that a search found the index file of
// the connections of generation gen damaged (cause).
func (ix *indexer) reportDamage(gen uint64, cause error) {
	ix.mu.Lock()
	if gen == ix.gen && ix.damage == nil {
		ix.damage = cause
	}
	ix.mu.Unlock()
	ix.want()
}

// checkFile replaces the index file when it was reported damaged, and the
// connections on it when the file at its path is not the one they opened.
// Only the indexer's goroutine calls it.
func (ix *indexer) checkFile(ctx context.Context) error {
	ix.mu.Lock()
	damage := ix.damage
	ix.mu.Unlock()
	old := ix.conns
	fi, err := os.Stat(ix.file)
	replaced := err != nil || !os.SameFile(fi, old.file)
	switch {
	case damage != nil && !replaced:
		ix.rebuilding(ctx, damage)
		if err := removeIndex(ix.file); err != nil {
			return err
		}
	case replaced:
		ix.db.log.LogAttrs(ctx, slog.LevelInfo, "the search index file was replaced or removed: opening it again", slog.String("file", ix.file))
	default:
		return nil
	}
	c, err := ix.openConns(ctx)
	if err != nil {
		return err
	}
	ix.mu.Lock()
	ix.gen++
	c.gen = ix.gen
	ix.damage = nil
	ix.mu.Unlock()
	ix.connMu.Lock() // waits for the searches under way
	ix.conns = c
	ix.connMu.Unlock()
	ix.mu.Lock()
	ix.notify() // wakes the searches that wait for the new file
	ix.mu.Unlock()
	return old.close()
}

// searchCovered holds, in a read transaction on the search connections,
// when the indexes hold every change to memories committed before it
// began, by any process: the index file records the database's count of
// changes up to which it holds them (search_seq).
const searchCovered = `(SELECT built AND seq >= (SELECT n FROM main.search_seq) FROM search.search_state)`

// errBehind is whenIndexed's: the indexes do not hold what it waits for.
var errBehind = errors.New("the search indexes are behind")

// whenIndexed runs fn (if not nil) in a read transaction on the search
// connections once cond, an SQL condition such as searchCovered, holds in
// that transaction; until then it asks for rounds of the indexer and
// waits for them. When the index file is found damaged, it waits for the
// file to be replaced and tries once more.
func (ix *indexer) whenIndexed(ctx context.Context, cond string, fn func(tx *txn) error) error {
	retried := false
	for {
		ix.mu.Lock()
		moved, failing := ix.moved, ix.err
		ix.mu.Unlock()
		ix.connMu.RLock()
		c := ix.conns
		err := inTx(ctx, &c.stmts, func(tx *txn) error {
			var ok bool
			if err := tx.queryRow(ctx, `SELECT `+cond).Scan(&ok); err != nil {
				return err
			}
			if !ok {
				return errBehind
			}
			if fn == nil {
				return nil
			}
			return fn(tx)
		})
		ix.connMu.RUnlock()
		switch {
		case errors.Is(err, errBehind):
			if failing != nil {
				return fmt.Errorf("search index: %w", failing)
			}
			ix.want()
		case !retried && ix.damaged(ctx, c, err):
			retried = true
			ix.reportDamage(c.gen, err)
			if err := ix.replaced(ctx, c.gen); err != nil {
				return err
			}
			continue
		default:
			return err
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// replaced waits until the connections of generation gen are replaced.
func (ix *indexer) replaced(ctx context.Context, gen uint64) error {
	for {
		ix.mu.Lock()
		current, moved, failing := ix.gen, ix.moved, ix.err
		ix.mu.Unlock()
		switch {
		case current != gen:
			return nil
		case failing != nil:
			return fmt.Errorf("search index: %w", failing)
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// backlog counts the memories that the indexes do not hold as they are:
// those in the queue, or every memory while the index file is being built
// (or cannot be read, until it is built again).
func (ix *indexer) backlog(ctx context.Context) (int64, error) {
	ix.connMu.RLock()
	defer ix.connMu.RUnlock()
	var n int64
	err := ix.conns.search.QueryRowContext(ctx, `SELECT CASE WHEN (SELECT built FROM search.search_state) THEN (SELECT count(*) FROM search_queue)
		ELSE (SELECT count(*) FROM memories) END`).Scan(&n)
	if corrupt(err) {
		err = ix.db.r.QueryRowContext(ctx, `SELECT count(*) FROM memories`).Scan(&n)
	}
	return n, err
}

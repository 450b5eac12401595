package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	sqlite "modernc.org/sqlite"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/private"
)

// The search indexes live in a file of their own beside the database
// (IndexPath) and are kept by an indexer, a goroutine that runs beside
// the writer. Tokenizing a memory's text into the three indexes costs
// more than the rest of its write; in the writer's transaction it made
// every write wait for it, on the writer's one core. Now the schema's
// triggers note each changed memory in search_queue, in the write's
// transaction, and the indexer takes in the whole queue at once after the
// commit, in a transaction on the index file that does not hold up the
// writer.
//
// A search waits until the indexes hold every write committed before it
// began, so a client always finds what it wrote, whichever process wrote
// it: the database counts the changes noted in the queue (search_seq), the
// index file records the count it holds, and a search compares the two
// in its read transaction (searchCovered). Under a load of writes the
// indexer works in large rounds; the writer waits for it when it falls
// more than maxIndexLag writes behind, so that a search never waits long.
//
// The queue is in the database, so a change is never lost: a crash between
// a commit and its indexing, or a write by another process, is indexed by
// the next round. A round is idempotent (it forgets and reindexes the
// memories it takes), and the queue keeps a row until the memory it names
// is indexed as it stands.
//
// The indexes are keyed by memories.rowid, which SQLite gives again to a
// new row when the newest row is gone. Between a round and the next, a
// search concurrent with such a deletion and creation may therefore find
// the new memory by the old one's text; the next round corrects it. A
// search that begins after both writes were answered waits for that round.

// searchIndexVersion is the index file's schema (searchindex.sql), kept in
// its user_version. A file of version 1 gains search_state.seq in place;
// one with another version is built again.
const searchIndexVersion = 2

//go:embed searchindex.sql
var searchIndexSchema string

// IndexPath is the file of the search indexes of the database at path. It
// holds derived data only: deleted or damaged, it is built again
// (indexfile.go).
func IndexPath(path string) string { return path + "-search" }

// maxIndexLag is how many writes the indexes may be behind the writer
// before the writer waits for them: about a second of the indexer's work
// on two cores, for memories of a kilobyte of prose (docs/benchmarks-log.md,
// Search).
const maxIndexLag = 2000

// indexDelay is how long a round waits after the commit that starts it,
// so that those that follow join it, unless a search or the writer waits
// for it. Rounds of many memories cost less per memory: FTS5 writes one
// segment per round, and a memory deleted before its round is never
// indexed.
const indexDelay = 50 * time.Millisecond

// The indexes merge their segments only when the indexer has nothing
// else to do (automerge is off, searchindex.sql), tidyPages pages of each
// index at a time, every tidyEvery while there is merging left: a burst of
// writes is indexed sooner, and the merging waits for a quiet moment.
// FTS5 still merges at once any level that reaches 64 segments
// (crisismerge), which bounds the segments a lookup reads.
const (
	tidyPages = 200
	tidyEvery = 20 * time.Millisecond
)

// purgePages is how many pages of each index a step of a purge merges (a
// variable for the tests, which take smaller steps).
var purgePages = 200

// indexPoll spaces the rounds that look for changes made by other
// processes, which do not wake this one's indexer.
const indexPoll = time.Second

// searchIndexes are the indexes and the columns of memories each holds.
var searchIndexes = []struct{ table, cols string }{
	{"memories_words", "path, content"},
	{"memories_paths", "path"},
	{"memories_trigrams", "path, content"},
}

// An indexer keeps the search indexes of one DB, in one goroutine (run).
// Its contract with the rest of the package:
//   - the writer calls committed after each commit, and never waits for
//     it; it waits (keepIndexUp) only while behind reports more than
//     maxIndexLag writes not yet indexed, and never for a failing indexer;
//   - the indexer reads the database's search_queue and memories, writes
//     only the index file, and changes the database only through the
//     writer (DB.submit on indexWrites, emptying the queue and the purge
//     requests), so that the database keeps a single writer;
//   - a search runs in whenIndexed, which waits until the indexes hold
//     every write committed before it began, and finds the index file
//     rebuilt if it was damaged (indexfile.go).
type indexer struct {
	file   string        // the index file
	db     *DB           // whose writer empties the queue
	kick   chan struct{} // a commit
	wanted chan struct{} // someone waits for a round
	stop   context.CancelFunc
	done   chan struct{}

	// conns are replaced with the index file (indexfile.go), by the
	// indexer's goroutine, which alone uses conns.ix; searches hold
	// connMu to read.
	connMu sync.RWMutex
	conns  *indexConns

	mu      sync.Mutex
	writes  uint64        // the writer's committed writes
	indexed uint64        // how many of them the indexes hold
	err     error         // the last round's failure; nil after a success
	moved   chan struct{} // closed, and replaced, after a round and when conns change
	gen     uint64        // conns.gen
	damage  error         // a search found the index file damaged
}

// openIndexer opens (creating, emptying or rebuilding if needed) the
// index file of the database at path.
func openIndexer(ctx context.Context, path string, db *DB) (*indexer, error) {
	ix := &indexer{
		db: db, file: IndexPath(path),
		kick: make(chan struct{}, 1), wanted: make(chan struct{}, 1), done: make(chan struct{}), moved: make(chan struct{}),
		// What the queue holds at Open counts as a write, which the
		// first round takes in.
		writes: 1,
	}
	c, err := ix.openConns(ctx)
	if err != nil {
		if !errors.Is(err, ErrReadOnly) { // which names the file
			err = fmt.Errorf("search index %s: %w", IndexPath(path), err)
		}
		return nil, err
	}
	ix.conns = c
	return ix, nil
}

// start starts the indexer, whose first round indexes what the queue
// holds (and every memory, if the indexes are new).
func (ix *indexer) start() {
	run, stop := context.WithCancel(context.Background())
	ix.stop = stop
	go ix.run(run)
	ix.kick <- struct{}{}
}

// prepareIndex gives the index file at path the current schema, with
// empty indexes (search_state.built 0) if it had to change it. It runs on
// a connection of its own, without the database attached, so that its
// transaction can take the index file's write lock from the start (BEGIN
// IMMEDIATE) and wait for another process's indexer instead of failing.
func prepareIndex(ctx context.Context, path string) error {
	if err := writable(path); err != nil {
		return err
	}
	// The index holds every word of every memory: only the owner may
	// read it, even if an older version made it readable by all.
	for _, f := range withLog(path) {
		if err := private.Restrict(f); err != nil {
			return err
		}
	}
	if _, err := private.Create(path); err != nil {
		return err
	}
	conn, err := sql.Open("sqlite", "file:"+path+"?"+connParams(true).Encode())
	if err != nil {
		return err
	}
	defer conn.Close()
	var v int
	if err := conn.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return err
	}
	if v == searchIndexVersion {
		// Read the state too: a file damaged there fails here, at Open.
		var built bool
		return conn.QueryRowContext(ctx, `SELECT built FROM search_state`).Scan(&built)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	switch err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); {
	case err != nil, v == searchIndexVersion:
		return err // another process made it meanwhile
	case v == 1:
		// Its indexes stay; seq 0 makes searches wait for a round.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`ALTER TABLE search_state ADD COLUMN seq INTEGER NOT NULL DEFAULT 0; PRAGMA user_version = %d`, searchIndexVersion)); err != nil {
			return err
		}
		return tx.Commit()
	}
	for _, t := range []string{"memories_words", "memories_paths", "memories_trigrams", "search_state"} {
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS `+t); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, searchIndexSchema+fmt.Sprintf(`; PRAGMA user_version = %d`, searchIndexVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// committed tells the indexer of a commit of n writes; it never blocks.
func (ix *indexer) committed(n int) {
	ix.mu.Lock()
	ix.writes += uint64(n)
	ix.mu.Unlock()
	select {
	case ix.kick <- struct{}{}:
	default:
	}
}

// behind says whether the indexes lag the writer by more than lag writes,
// and returns what closes when that may change. A failing indexer holds
// back no write.
func (ix *indexer) behind(lag uint64) (<-chan struct{}, bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.err != nil || ix.indexed+lag >= ix.writes {
		return nil, false
	}
	ix.want()
	return ix.moved, true
}

// want asks for a round now; it never blocks.
func (ix *indexer) want() {
	select {
	case ix.wanted <- struct{}{}:
	default:
	}
}

// advance records a round's outcome and wakes those waiting for one.
func (ix *indexer) advance(indexed uint64, err error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if err == nil {
		ix.indexed = max(ix.indexed, indexed)
	}
	ix.err = err
	ix.notify()
}

// notify wakes those waiting for the indexer; ix.mu is held.
func (ix *indexer) notify() {
	close(ix.moved)
	ix.moved = make(chan struct{})
}

func (ix *indexer) run(ctx context.Context) {
	defer close(ix.done)
	poll := time.NewTicker(indexPoll)
	defer poll.Stop()
	tidy := time.NewTimer(time.Hour)
	tidy.Stop()
	// The last round left merging to do; at first, what another indexer
	// may have left unmerged.
	tidying := true
	lastFailure := "" // the last round's failure, if it failed
	for {
		select {
		case <-ix.kick:
			// Let the writes that follow join this round, unless
			// someone waits for it.
			t := time.NewTimer(indexDelay)
			select {
			case <-t.C:
			case <-ix.wanted:
			case <-ctx.Done():
			}
			t.Stop()
		case <-ix.wanted:
		case <-poll.C:
		case <-tidy.C:
		case <-ctx.Done():
			return
		}
		more, err := false, ix.checkFile(ctx)
		if err == nil {
			if more, err = ix.round(ctx, tidying); ix.damaged(ctx, ix.conns, err) {
				ix.reportDamage(ix.conns.gen, err) // the next turn builds it again
				err = nil
			}
		}
		tidying = more
		switch {
		case err == nil, ctx.Err() != nil:
		case memstore.ErrorCode(translate(err)) == memstore.EConflict:
			// Another process's indexer held the file for longer than
			// busy_timeout (a rebuild): not a failure; retried at the
			// next tick.
		default:
			// Said once per kind of failure, not at every retry.
			if failing := translate(err).Error(); failing != lastFailure {
				ix.db.log.LogAttrs(ctx, slog.LevelError, "search index round failed; searches fail until one succeeds",
					slog.String("error", failing))
				lastFailure = failing
			}
			ix.advance(0, err) // searches fail until a round succeeds
		}
		if err == nil && lastFailure != "" {
			ix.db.log.LogAttrs(ctx, slog.LevelInfo, "search index rounds succeed again")
			lastFailure = ""
		}
		if more {
			tidy.Reset(tidyEvery)
		}
	}
}

// round brings the indexes up to date with the queue and then empties the
// queue of what it indexed. While a redaction asks for a purge, it also
// takes a step of it; with nothing else to do, it merges some segments.
// It says whether it left merging to do.
func (ix *indexer) round(ctx context.Context, tidying bool) (more bool, err error) {
	ix.mu.Lock()
	target := ix.writes
	ix.mu.Unlock()
	// Most rounds of a quiet server find nothing to do: they look without
	// writing. A snapshot read after target was taken holds every write
	// it counts.
	var work bool
	if err := ix.conns.ix.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM mem.search_queue) OR EXISTS (SELECT 1 FROM mem.search_purge)
		OR (SELECT built = 0 OR seq < (SELECT n FROM mem.search_seq) FROM search_state)`).Scan(&work); err != nil {
		return false, err
	}
	if !work && !tidying {
		ix.advance(target, nil)
		return false, nil
	}
	tx, err := ix.conns.ix.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	// The first statement writes to the index file, which takes its write
	// lock before anything is read (waiting for another process's indexer
	// if need be); the database is only read. The first read of mem fixes
	// the snapshot of the database that the whole round sees.
	var built bool
	if err := tx.QueryRowContext(ctx, `UPDATE search_state SET rounds = rounds + 1 RETURNING built`).Scan(&built); err != nil {
		return false, err
	}
	// The changes this round takes in, by every process.
	var seq int64
	if err := tx.QueryRowContext(ctx, `SELECT n FROM mem.search_seq`).Scan(&seq); err != nil {
		return false, err
	}
	rebuild := !built
	var building struct {
		memories int64
		start    time.Time
	}
	if rebuild {
		// Searches wait for the build, which takes a while: say so.
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM mem.memories`).Scan(&building.memories); err != nil {
			return false, err
		}
		building.start = time.Now()
		ix.db.log.LogAttrs(ctx, slog.LevelInfo, "building the search indexes; searches wait for them",
			slog.Int64("memories", building.memories), slog.String("file", ix.file))
	}
	var queue [][2]int64
	rows, err := tx.QueryContext(ctx, `SELECT memory_rowid, changes FROM mem.search_queue`)
	if err != nil {
		return false, err
	}
	for rows.Next() {
		var q [2]int64
		if err := rows.Scan(&q[0], &q[1]); err != nil {
			rows.Close()
			return false, err
		}
		queue = append(queue, q)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return false, err
	}
	var purge sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT requests FROM mem.search_purge`).Scan(&purge); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	exec := func(q string) (changes int64, err error) {
		var before, after int64
		err = tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before)
		if err == nil {
			_, err = tx.ExecContext(ctx, q)
		}
		if err == nil {
			err = tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&after)
		}
		return after - before, err
	}
	for _, s := range searchIndexes {
		var stmts []string
		if rebuild {
			// Every memory as it stands, those of the queue with them.
			stmts = append(stmts, fmt.Sprintf(`INSERT INTO %s (rowid, %s) SELECT rowid, %[2]s FROM mem.memories`, s.table, s.cols))
		} else if len(queue) > 0 {
			if err := forgetTotals(ctx, tx, s.table); err != nil {
				return false, err
			}
			stmts = append(stmts,
				fmt.Sprintf(`DELETE FROM %s WHERE rowid IN (SELECT memory_rowid FROM mem.search_queue)`, s.table),
				fmt.Sprintf(`INSERT INTO %s (rowid, %s) SELECT m.rowid, m.%s FROM mem.search_queue q JOIN mem.memories m ON m.rowid = q.memory_rowid`,
					s.table, s.cols, strings.ReplaceAll(s.cols, ", ", ", m.")))
		}
		for _, q := range stmts {
			if _, err := exec(q); err != nil {
				return false, err
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE search_state SET built = 1, seq = max(seq, ?)`, seq); err != nil {
		return false, err
	}
	// A merge that finds nothing to do counts one change, its own.
	merge := func(pages int) (merged bool, err error) {
		for _, s := range searchIndexes {
			n, err := exec(fmt.Sprintf(`INSERT INTO %[1]s (%[1]s, rank) VALUES ('merge', %d)`, s.table, pages))
			if err != nil {
				return false, err
			}
			merged = merged || n > 1
		}
		return merged, nil
	}
	purged := false
	switch {
	case purge.Valid:
		// A deletion only marks a memory's entries deleted; merging
		// the segments that hold them drops them, and PRAGMA
		// secure_delete zeroes the freed pages. A negative count
		// merges every segment, so steps until there is nothing left to
		// merge leave one segment, and 'optimize' then rewrites it if it
		// still holds deleted entries. In steps, between which the
		// indexes take in new writes, since merging a large index takes
		// seconds. (FTS5's secure-delete option would drop the entries
		// at once, but rewrites pages of every segment for each word of
		// a memory: it made writes twenty times slower.)
		more, err = merge(-purgePages)
		if err != nil {
			return false, err
		}
		if !more {
			for _, s := range searchIndexes {
				if _, err := exec(fmt.Sprintf(`INSERT INTO %[1]s (%[1]s) VALUES ('optimize')`, s.table)); err != nil {
					return false, err
				}
			}
			purged = true
		}
	case len(queue) == 0 && !rebuild:
		if more, err = merge(tidyPages); err != nil {
			return false, err
		}
	}
	// A round that indexed wrote a segment: the next quiet moment merges.
	more = more || len(queue) > 0 || rebuild
	if err := tx.Commit(); err != nil {
		return false, err
	}
	if rebuild {
		ix.db.log.LogAttrs(ctx, slog.LevelInfo, "search indexes built",
			slog.Int64("memories", building.memories), slog.Duration("took", time.Since(building.start)))
	}
	ix.advance(target, nil)
	// The index's log still holds the pages the purge rewrote, as they
	// were, and the database's may hold the text that a write took out of
	// a memory whose current version was redacted: the
	// purge is finished once both are emptied. If one stays busy, the
	// request stays and a later round purges again.
	if purged {
		err := truncateLog(ctx, ix.conns.ix)
		if err == nil {
			err = ix.db.ck.erase(ctx)
		}
		if err != nil {
			ix.db.log.LogAttrs(ctx, slog.LevelWarn, "a purge of the search indexes could not empty the write-ahead logs; it will be tried again",
				slog.String("file", ix.file), slog.String("error", err.Error()))
			purged = false
		}
	}
	if len(queue) == 0 && !purged {
		return more, nil
	}
	// Empty the queue of the rows that did not change meanwhile. If this
	// fails (the database is closing), the next round indexes them again.
	done, _ := json.Marshal(queue)
	ix.db.submit(ctx, ix.db.indexWrites, func(tx *txn) error {
		if _, err := tx.exec(ctx, `DELETE FROM search_queue WHERE (memory_rowid, changes) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))`, string(done)); err != nil {
			return err
		}
		if !purged {
			return nil
		}
		_, err := tx.exec(ctx, `DELETE FROM search_purge WHERE requests = ?`, purge.Int64)
		return err
	})
	return more, nil
}

// close stops the indexer, abandoning a round under way (its work is
// redone at the next Open), and closes the index file.
func (ix *indexer) close() error {
	ix.stop()
	<-ix.done
	ix.advance(0, errors.New("the database is closed")) // wakes waiting searches
	return ix.conns.close()
}

// openPool opens a pool on dsn whose every connection has the database
// file at attach attached as alias. A missing file is an error, rather
// than made by SQLite, empty and readable by all.
func openPool(dsn, alias, attach string) *sql.DB {
	d := &sqlite.Driver{}
	d.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, _ string) error {
		_, err := c.ExecContext(context.Background(), `ATTACH DATABASE ? AS `+alias, []driver.NamedValue{{Ordinal: 1, Value: "file:" + attach + "?mode=rw"}})
		return err
	})
	return sql.OpenDB(connector{d, dsn})
}

type connector struct {
	d   *sqlite.Driver
	dsn string
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.d }

// busyTimeout is how long a connection waits for a lock that another
// holds, in this process or another, before it fails with SQLITE_BUSY (a
// variable for the tests, which wait less).
var busyTimeout = 10 * time.Second

// connParams are the settings of every connection; see Open.
func connParams(write bool) url.Values {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	for _, p := range []string{"journal_mode(WAL)", "foreign_keys(1)", "secure_delete(1)", "synchronous(NORMAL)", "temp_store(MEMORY)"} {
		q.Add("_pragma", p)
	}
	if write {
		q.Set("_txlock", "immediate")
	}
	return q
}

// WaitSearchIndex waits until the search indexes hold every write
// committed before the call, and have finished purging the text of the
// versions redacted before it. A search waits for the writes by itself,
// but not for purges.
func (db *DB) WaitSearchIndex(ctx context.Context) error {
	return db.ix.whenIndexed(ctx, searchCovered+` AND NOT EXISTS (SELECT 1 FROM main.search_purge)`, nil)
}

// forgetTotals lowers the row count and the token totals of an index
// (FTS5's averages record, from which bm25 takes the number of rows and
// their average length) by the rows of the queue it holds, before the
// round forgets them: FTS5 forgets a row of a contentless_delete index
// without lowering them, so each memory indexed again would count twice
// from then on, and rank every other memory differently. The sizes are
// those FTS5 keeps of each row (its docsize table). Written in the
// round's transaction, before FTS5 reads the totals in it, they are the
// ones it adds the round's rows to.
func forgetTotals(ctx context.Context, tx *sql.Tx, table string) error {
	rows, err := tx.QueryContext(ctx, fmt.Sprintf(`SELECT sz FROM %s_docsize WHERE id IN (SELECT memory_rowid FROM mem.search_queue)`, table))
	if err != nil {
		return err
	}
	var forgot []int64 // the rows, then the tokens of each column
	for rows.Next() {
		var sz []byte
		if err := rows.Scan(&sz); err != nil {
			rows.Close()
			return err
		}
		forgot = addVarints(forgot, append([]byte{1}, sz...)) // a row, and its sizes
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil || len(forgot) == 0 {
		return err
	}
	var block []byte
	switch err := tx.QueryRowContext(ctx, fmt.Sprintf(`SELECT block FROM %s_data WHERE id = 1`, table)).Scan(&block); {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	totals := addVarints(nil, block)
	var out []byte
	for i, t := range totals {
		if i < len(forgot) {
			t = max(t-forgot[i], 0)
		}
		out = append(out, ftsVarint(t)...)
	}
	_, err = tx.ExecContext(ctx, fmt.Sprintf(`UPDATE %s_data SET block = ? WHERE id = 1`, table), out)
	return err
}

// addVarints adds the SQLite varints of b to sums, the i-th to sums[i],
// growing sums as needed.
func addVarints(sums []int64, b []byte) []int64 {
	for i := 0; len(b) > 0; i++ {
		var v uint64
		n := 0
		for n < len(b) {
			c := b[n]
			n++
			if n == 9 {
				v = v<<8 | uint64(c)
				break
			}
			v = v<<7 | uint64(c&0x7f)
			if c < 0x80 {
				break
			}
		}
		b = b[n:]
		if i == len(sums) {
			sums = append(sums, 0)
		}
		sums[i] += int64(v)
	}
	return sums
}

// ftsVarint is v as an SQLite varint, as FTS5 writes its records: seven
// bits a byte, the most significant first, the high bit set on all but
// the last, and a ninth byte of eight bits.
func ftsVarint(v int64) []byte {
	u := uint64(v)
	if u>>56 != 0 {
		out := make([]byte, 9)
		out[8] = byte(u)
		u >>= 8
		for i := 7; i >= 0; i-- {
			out[i] = byte(u&0x7f) | 0x80
			u >>= 7
		}
		return out
	}
	out := []byte{byte(u & 0x7f)}
	for u >>= 7; u != 0; u >>= 7 {
		out = append([]byte{byte(u&0x7f) | 0x80}, out...)
	}
	return out
}

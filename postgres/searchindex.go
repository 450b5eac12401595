package postgres

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// # Search indexed after the write
//
// A memory's search data (memory_search: its words, stemmed, and its
// folded text, under three GIN indexes, and its postings) is made after
// the write, by rounds over search_queue, where the schema's trigger
// notes every memory written or deleted in the write's own transaction
// (migration 0009). Made in the write, it was about a third of
// PostgreSQL's CPU a write, all of it while the store's lock was held.
//
// A search whose stores have nothing queued in its snapshot reads the
// search data there, which is then the memories'. Otherwise it runs the
// rounds of its stores' queue (catchUp), waiting for any round that holds
// some of it, and reads in a new snapshot, leaving out the memories
// deleted since (liveHits in search.go): either way it sees every write
// committed before it began, whichever process made it.
//
// A process's indexer runs rounds in the background: after each write of
// its own, once indexDelay has gathered those that follow (a memory
// deleted meanwhile is never indexed), and every indexPoll for the
// writes of other processes. Rounds take the queue oldest first, skipping
// rows that another round holds, so that the replicas share the work. A
// round is idempotent, and keeps nothing outside the database: a crash
// loses only the round in flight, whose rows the next round takes.
//
// The search data of a deleted memory, or of a deleted store's memories,
// goes with the rounds that take its queue rows, within indexPoll unless
// a backlog is queued before them, and before any search of its store
// reads it. Writes never wait for a round: a round locks only queue
// rows, search rows and its memories' advisory locks, which no write
// takes. But the writes of a store wait while more than maxStoreLag of
// its writes are queued (awaitIndex), as SQLite's writer waits for its
// indexer: a search, which first indexes its stores' queue, then never
// has more than that to do, and a store's share of the queue stays
// bounded when writes of prose come faster than rounds index them (two
// cores index about 1,000 memories of prose a second, and take 1,700
// writes of them).
//
// A round waits at most 5 s for a lock (roundTimeouts): a search that
// meets a round of a process stopped in its middle then answers busy, to
// be retried, and the server ends that round's transaction once it has
// been idle 30 s.

const (
	// indexDelay is how long a round waits after the write that starts
	// it, so that those that follow join it.
	indexDelay = 50 * time.Millisecond
	// indexPoll spaces the rounds that look for other processes' writes.
	indexPoll = time.Second
	// roundRows bounds the queue rows a round takes, and roundBytes the
	// content it reads (but for one memory, which may be larger), so
	// that what a round holds stays small beside a request's.
	roundRows  = 256
	roundBytes = 64 << 10
	// lagLook spaces the indexer's looks for stores too far behind
	// (lookBehind) while it runs rounds without a break.
	lagLook = 20 * time.Millisecond
)

// maxStoreLag is how many writes of one store may be queued for the
// indexer before the store's writes wait for it: about two seconds of
// its work on prose. A variable, for the tests.
var maxStoreLag = 2000

// searchLocks is the first key of the advisory locks of the memories a
// round indexes, in the space of two-key locks (beside quotaLocks).
const searchLocks = 0x6d736978 // "msix"

// roundTimeouts bound what a round waits for: another round's locks
// (lock_timeout; the error is ErrBusy), and a round's transaction left
// idle by a process that stopped in its middle, which the server then
// ends so that its locks go.
const roundTimeouts = `SET LOCAL lock_timeout = '5s'; SET LOCAL idle_in_transaction_session_timeout = '30s'`

// roundClaimed, when set, runs in each round between its reads and its
// writes: the tests change memories there.
var roundClaimed func()

// searchIndexer runs a DB's rounds in the background.
type searchIndexer struct {
	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}

	mu          sync.Mutex
	written     map[string]bool // the stores this process wrote since the last look
	behind      map[string]bool // the stores with more than maxStoreLag writes queued, as last seen
	moved       chan struct{}   // closed when behind changes
	lookFailing bool            // told once, until a look succeeds
}

// setBehind records the stores found behind, and wakes the writes that
// wait when that changes.
func (ix *searchIndexer) setBehind(stores map[string]bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if maps.Equal(ix.behind, stores) {
		return
	}
	ix.behind = stores
	if ix.moved != nil {
		close(ix.moved)
	}
	ix.moved = make(chan struct{})
}

// behindStores are the stores last found behind, sorted.
func (ix *searchIndexer) behindStores() []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return slices.Sorted(maps.Keys(ix.behind))
}

// awaitIndex waits while the store has more than maxStoreLag writes
// queued, as the indexer last saw it, or until ctx ends.
func (ix *searchIndexer) awaitIndex(ctx context.Context, storeID string) error {
	for {
		ix.mu.Lock()
		behind, moved := ix.behind[storeID], ix.moved
		ix.mu.Unlock()
		if !behind {
			return nil
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// lookBehind reads which of the stores this process wrote since its last
// look, and of those found behind then, have more than maxStoreLag writes
// queued, for awaitIndex: each reads at most that many entries of the
// queue's index by store. Every process looks at the stores it writes,
// so that its own writes wait.
func (db *DB) lookBehind(ctx context.Context) error {
	ix := &db.indexer
	ix.mu.Lock()
	stores := slices.Sorted(maps.Keys(ix.behind))
	for id := range ix.written {
		if !ix.behind[id] {
			stores = append(stores, id)
		}
	}
	ix.written = nil
	ix.mu.Unlock()
	behind := map[string]bool{}
	if len(stores) > 0 {
		rows, err := db.pool.Query(ctx, `SELECT s FROM unnest($1::text[]) s
			WHERE (SELECT count(*) FROM (SELECT FROM search_queue q WHERE q.store_id = s LIMIT $2 + 1) x) > $2`, stores, maxStoreLag)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, id := range ids {
			behind[id] = true
		}
	}
	ix.setBehind(behind)
	return nil
}

// look runs lookBehind; when it fails, no write waits (until a look
// succeeds), and the failure is logged once.
func (db *DB) look(ctx context.Context) {
	err := db.lookBehind(ctx)
	if err != nil {
		db.indexer.setBehind(nil)
	}
	ix := &db.indexer
	ix.mu.Lock()
	tell := err != nil && !ix.lookFailing && ctx.Err() == nil
	ix.lookFailing = err != nil
	ix.mu.Unlock()
	if tell {
		db.log.LogAttrs(ctx, slog.LevelWarn, "could not read how far the search indexer is behind; writes do not wait for it meanwhile", slog.String("error", err.Error()))
	}
}

// startIndexer starts the background rounds, until stopIndexer.
func (db *DB) startIndexer() {
	ix := &db.indexer
	ctx, cancel := context.WithCancel(context.Background())
	ix.cancel, ix.done, ix.wake = cancel, make(chan struct{}), make(chan struct{}, 1)
	go func() {
		defer close(ix.done)
		poll := time.NewTicker(indexPoll)
		defer poll.Stop()
		failing := false // told once, until a round succeeds
		for {
			// While a store's writes wait, its queue is looked at
			// again soon, whoever indexes it.
			var again <-chan time.Time
			ix.mu.Lock()
			waiting := len(ix.behind) > 0
			ix.mu.Unlock()
			if waiting {
				again = time.After(lagLook)
			}
			select {
			case <-ctx.Done():
				return
			case <-poll.C:
			case <-again:
			case <-ix.wake:
				select {
				case <-ctx.Done():
					return
				case <-time.After(indexDelay):
				}
			}
			err := db.indexRounds(ctx)
			if err != nil {
				// Writes never wait for a failing indexer.
				db.indexer.setBehind(nil)
			}
			switch {
			case ctx.Err() != nil:
			case err != nil && !failing:
				db.log.LogAttrs(ctx, slog.LevelWarn, "could not index written memories for search; searches index what they read themselves, and the indexer tries again every second", slog.String("error", err.Error()))
			case err == nil && failing:
				db.log.LogAttrs(ctx, slog.LevelInfo, "indexing written memories for search again")
			}
			failing = err != nil
		}
	}()
}

// stopIndexer stops the background rounds and waits for the one running;
// no write waits for them from then on.
func (db *DB) stopIndexer() {
	if db.indexer.cancel != nil {
		db.indexer.cancel()
		<-db.indexer.done
	}
	db.indexer.setBehind(nil)
}

// indexSoon wakes the background rounds after a write of this process
// to the store, which the next look then reads.
func (db *DB) indexSoon(storeID string) {
	ix := &db.indexer
	ix.mu.Lock()
	if ix.written == nil {
		ix.written = map[string]bool{}
	}
	ix.written[storeID] = true
	ix.mu.Unlock()
	select {
	case db.indexer.wake <- struct{}{}:
	default:
	}
}

// WaitSearchIndex runs the rounds until every write queued before the
// call is indexed, as a file's WaitSearchIndex waits for its indexes:
// memstore migrate calls it after a restore, which leaves every memory
// queued, so that a server's first search of each store does not do it.
// A round that waited 5 s for another process's (lock_timeout) is run
// again: that process is working through the same queue.
func (db *DB) WaitSearchIndex(ctx context.Context) error {
	for {
		err := db.catchUp(ctx, nil)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != sqlLockNotAvailable || ctx.Err() != nil {
			return wrap(err, "index the memories for search")
		}
	}
}

// catchUp indexes what the stores (every store when nil) have queued,
// waiting for the rounds of others that hold some of it, so that a
// search that reads after it sees every write committed before it was
// called. It takes the rows queued by then, and not those queued while
// it runs, so that a store's writes never keep it going.
func (db *DB) catchUp(ctx context.Context, storeIDs []string) error {
	q, args := `SELECT max(seq) FROM search_queue`, []any{}
	if storeIDs != nil {
		q, args = q+` WHERE store_id = ANY($1)`, append(args, storeIDs)
	}
	var last *int64
	if err := db.pool.QueryRow(ctx, q, args...).Scan(&last); err != nil || last == nil {
		return err
	}
	// A round that waits skips only the rows that other rounds deleted
	// while it waited, and fetches others in their place: one that takes
	// all it found has left none up to last.
	for {
		_, more, err := db.indexRound(ctx, storeIDs, *last, true)
		if err != nil || !more {
			return err
		}
	}
}

// indexRounds runs rounds over every store's queue, skipping the rows
// that other rounds hold, until it is empty. It looks for the stores too
// far behind (look) first, every lagLook, and last; while some are, a
// round of their queue goes before each round of the whole, so that
// their writes wait for their own queue, not for every store's.
func (db *DB) indexRounds(ctx context.Context) error {
	looked := time.Time{}
	for {
		if time.Since(looked) >= lagLook {
			db.look(ctx)
			looked = time.Now()
		}
		if behind := db.indexer.behindStores(); len(behind) > 0 {
			if _, _, err := db.indexRound(ctx, behind, 0, false); err != nil {
				return err
			}
		}
		_, more, err := db.indexRound(ctx, nil, 0, false)
		if err != nil {
			return err
		}
		if !more {
			db.look(ctx)
			return nil
		}
	}
}

// indexRound runs indexRoundIn in a transaction of its own.
func (db *DB) indexRound(ctx context.Context, storeIDs []string, last int64, wait bool) (n int, more bool, err error) {
	err = db.inTx(ctx, writeTx, func(tx pgx.Tx) (err error) {
		if _, err := tx.Exec(ctx, roundTimeouts); err != nil {
			return err
		}
		n, more, err = indexRoundIn(ctx, tx, storeIDs, last, wait)
		return err
	})
	return n, more, err
}

// indexRoundIn runs a round in tx: it takes up to roundRows rows of the
// queue, those of the stores (every store when nil), and, when wait is
// set, only those up to seq last, waiting for the rows other rounds
// hold, which it otherwise skips; then reads the memories they name, as
// many as roundBytes of content allows (one at least), writes their
// search data as they stand, deletes that of those gone, and deletes
// their rows. The rows it took and left go to the next round. It
// returns how many rows it deleted, and whether the queue may hold more.
func indexRoundIn(ctx context.Context, tx pgx.Tx, storeIDs []string, last int64, wait bool) (n int, more bool, err error) {
	claim := `SELECT q.seq, q.memory_id, coalesce(octet_length(m.content), 0)
		FROM search_queue q LEFT JOIN memories m ON m.id = q.memory_id WHERE true`
	args := []any{roundRows}
	if storeIDs != nil {
		args = append(args, storeIDs)
		claim += ` AND q.store_id = ANY($2)`
	}
	lock := ` FOR UPDATE OF q SKIP LOCKED`
	if wait {
		args = append(args, last)
		claim += ` AND q.seq <= $` + strconv.Itoa(len(args))
		lock = ` FOR UPDATE OF q`
	}
	rows, err := tx.Query(ctx, claim+` ORDER BY q.seq LIMIT $1`+lock, args...)
	if err != nil {
		return 0, false, err
	}
	var seqs []int64
	var ids []string
	taken := map[string]bool{}
	claimed, bytes := 0, 0
	var seq int64
	var id string
	var size int
	_, err = pgx.ForEachRow(rows, []any{&seq, &id, &size}, func() error {
		claimed++
		if !taken[id] {
			if len(ids) > 0 && bytes+size > roundBytes {
				return nil
			}
			taken[id], bytes, ids = true, bytes+size, append(ids, id)
		}
		seqs = append(seqs, seq)
		return nil
	})
	if err != nil || len(seqs) == 0 {
		return 0, false, err
	}
	// One round at a time writes a memory's search data, whatever rows
	// of it each took: a round that read a memory before a change and
	// wrote after another round had indexed the change would undo it,
	// and leave the text of a memory deleted. The locks are taken in one
	// order, so rounds never wait for each other in a cycle.
	_, err = tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, k) FROM (SELECT DISTINCT hashtext(id) AS k FROM unnest($2::text[]) id) x ORDER BY k`,
		int32(searchLocks), ids)
	if err != nil {
		return 0, false, err
	}
	// Read once the locks are held, after the claim, the memories are at
	// least as new as every change that queued a row taken, and as the
	// search data other rounds wrote.
	rows, err = tx.Query(ctx, `SELECT id, store_id, path, content FROM memories WHERE id = ANY($1)`, ids)
	if err != nil {
		return 0, false, err
	}
	type memory struct{ storeID, path, content string }
	alive := map[string]memory{}
	var m memory
	var content []byte
	_, err = pgx.ForEachRow(rows, []any{&id, &m.storeID, &m.path, &content}, func() error {
		m.content = string(content)
		alive[id] = m
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	if roundClaimed != nil {
		roundClaimed()
	}
	var stores, paths, texts, pathWords, contentWords, written, gone []string
	slices.Sort(ids)
	for _, id := range ids {
		m, ok := alive[id]
		if !ok {
			gone = append(gone, id)
			continue
		}
		text, pw, cw := searchValues(m.path, m.content)
		written, stores, paths = append(written, id), append(stores, m.storeID), append(paths, m.path)
		texts, pathWords, contentWords = append(texts, text), append(pathWords, pw), append(contentWords, cw)
	}
	var b pgx.Batch
	if len(written) > 0 {
		b.Queue(`INSERT INTO memory_search (id, store_id, path, search_text, search_words)
			SELECT u.id, u.store_id, u.path, u.text, `+searchWords("u.pw", "u.cw")+`
			FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) u(id, store_id, path, text, pw, cw)
			ORDER BY u.id
			ON CONFLICT (id) DO UPDATE SET store_id = excluded.store_id, path = excluded.path,
				search_text = excluded.search_text, search_words = excluded.search_words`,
			written, stores, paths, texts, pathWords, contentWords)
	}
	if len(gone) > 0 {
		b.Queue(`DELETE FROM memory_search WHERE id IN (SELECT id FROM memory_search WHERE id = ANY($1) ORDER BY id FOR UPDATE)`, gone)
	}
	b.Queue(`DELETE FROM search_queue WHERE seq = ANY($1)`, seqs)
	return len(seqs), claimed == roundRows || len(seqs) < claimed, tx.SendBatch(ctx, &b).Close()
}

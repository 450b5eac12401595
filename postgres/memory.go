package postgres

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/ids"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/sqlread"
	"github.com/memstore/memstore/internal/sqlrow"
)

// memoryColumns selects a memory; with full false the content is left out
// of the row, so lists without content never read it.
func memoryColumns(full bool) string { return sqlrow.MemoryColumns(full, dialect.EmptyContent) }

func errMemoryNotFound(id string) *memstore.Error {
	return memstore.ErrMemoryNotFound(id)
}

// versionArgs are the parameters $1 to $12 of a statement that begins
// with versionInsert: v's columns, and the type of its event e. Put's
// statements use $5 to $9 for the memory too (its path, content, hash,
// size and time are the version's), so that the content crosses the
// network once.
func versionArgs(v *memstore.Version, e memstore.EventType) []any {
	var (
		content []byte
		sum     *string
		size    *int64
	)
	if v.HasContent {
		content, sum, size = []byte(v.Content), &v.ContentSHA256, &v.ContentSize
		if content == nil {
			content = []byte{} // empty content, not none
		}
	}
	return []any{v.ID, v.StoreID, v.MemoryID, string(v.Operation), v.Path, content, sum, size, keyset.Nanos(v.CreatedAt), string(v.CreatedBy.Type), v.CreatedBy.ID, string(e)}
}

// versionInsert is the WITH query that inserts a version and its event,
// of the parameters versionArgs gives: every change of a memory is one
// statement, its version and event included, so one round trip.
var versionInsert = `WITH v AS (INSERT INTO versions (id, store_id, memory_id, operation, path, content, sha256, size, created_at, actor_type, actor_id)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)),
	ev AS (` + insertEvent("$2", "$12", "$1", "$10", "$11", "$9") + `)`

// WriteMemory implements memstore.MemoryStorage: a write that creates a
// memory is first tried in one statement (writeOnce); otherwise, and
// when that statement finds the store other than the plan assumed, fn
// runs in one transaction that first locks the store's row, so that the
// writes of a store run one at a time across every process (see the
// package doc). The lock and the reads of the store's last version (see
// memTx.next) and of the memory fn asks for first go in one round trip
// (tryWrite): each read, a statement of its own, starts once the lock is
// held, so it sees what the write that held it before committed.
//
// Writes of one store that meet in this process go together (batch.go):
// while one runs, the others wait and then run in one transaction. All
// wait while the store has too many writes queued for the search
// indexer (searchindex.go).
func (db *DB) WriteMemory(ctx context.Context, workspaceID, storeID string, fn func(memstore.MemoryTx) error) error {
	if err := db.indexer.awaitIndex(ctx, storeID); err != nil {
		return err
	}
	return wrap(db.storeWrites.write(ctx, db, workspaceID, storeID, fn), "write memories of store %s", storeID)
}

// writeAlone makes one write, as WriteMemory says.
func (db *DB) writeAlone(ctx context.Context, workspaceID, storeID string, fn func(memstore.MemoryTx) error) error {
	p := planned(fn)
	done, err := false, error(nil)
	if p.m != nil {
		done, err = db.writeOnce(ctx, workspaceID, storeID, p)
	}
	if !done {
		err = db.retrying(ctx, func() (error, bool) { return db.tryWrite(ctx, workspaceID, storeID, p, fn) })
	}
	if err == nil {
		// Told even when fn changed nothing: a notice costs a
		// listener a read, and fn does not say whether it wrote.
		db.evented(storeID)
	}
	return err
}

// tryWrite runs fn in one transaction, on a connection of the pool, in
// as few round trips as fn's reads allow: BEGIN goes with the store's
// lock, its last version and the memory that fn's plan p asked for
// first, by ID or at a path; fn's last write goes with COMMIT. It
// reports whether its error, if any, came from the commit (see inTx).
func (db *DB) tryWrite(ctx context.Context, workspaceID, storeID string, p *plan, fn func(memstore.MemoryTx) error) (err error, committing bool) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err, false
	}
	// A connection left in a transaction is closed, not pooled.
	defer conn.Release()
	t := &memTx{ctx: ctx, db: db, tx: conn, storeID: storeID}
	var b pgx.Batch
	t.begin(&b, workspaceID)
	t.foresee(&b, p)
	err = conn.SendBatch(ctx, &b).Close()
	if err == nil {
		if err = fn(t); err == nil {
			return t.commit()
		}
	}
	if s := conn.Conn().PgConn().TxStatus(); s == 'T' || s == 'E' {
		// Ends the transaction even when ctx is done, so that the
		// connection goes back to the pool clean.
		conn.Exec(context.WithoutCancel(ctx), `rollback`)
	}
	return err, false
}

// begin queues on b the start of t's transaction: BEGIN, the store's
// lock, with whether it is archived and its count, and its last version.
func (t *memTx) begin(b *pgx.Batch, workspaceID string) {
	b.Queue(`begin isolation level read committed`)
	b.Queue(storeStateQuery(true), t.storeID, workspaceID).QueryRow(func(r pgx.Row) error {
		st, err := scanStoreState(r, t.storeID)
		t.archived, t.count = st.archived, st.memories
		return err
	})
	b.Queue(`SELECT id, created_at FROM versions WHERE store_id = $1 ORDER BY id DESC LIMIT 1`, t.storeID).QueryRow(func(r pgx.Row) error {
		if err := r.Scan(&t.lastID, &t.lastAt); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		t.locked = true
		return nil
	})
}

// commit sends the transaction's last write, if any, with its COMMIT,
// and reports whether an error came from the commit: not when the write
// failed, which the server undid.
func (t *memTx) commit() (err error, committing bool) {
	b := t.take()
	if b == nil {
		b = &pgx.Batch{}
	}
	b.Queue(`commit`)
	err = t.send(b)
	if err != nil && t.tx.Conn().PgConn().TxStatus() == 'E' {
		t.tx.Exec(context.WithoutCancel(t.ctx), `rollback`)
		return err, false
	}
	return err, true
}

// # Writes in one round trip
//
// A write in a transaction of one statement at a time costs five round
// trips to the server (TestMemoryWriteRoundTrips counts them and logs
// their statements):
//
//  1. BEGIN, at READ COMMITTED.
//  2. The store's row locked (FOR NO KEY UPDATE), with whether it is
//     archived and its count, batched with its last version's ID and
//     time (memTx.next): the lock serializes the store's writes across
//     processes, so that what the rule reads next stays true.
//  3. The rule's read: for a create, the overlaps of the path
//     (memory_overlapping); for an upsert, the memory at the path first
//     (then the overlaps when there is none: six trips); for an update
//     or a delete, the memory, whose content the precondition, the check
//     for no change and the index's rules read (a rename then reads the
//     new path's overlaps: six).
//  4. The write, one statement: the version, its event numbered after
//     the store's last, the memory, and the store's count and size. The
//     triggers keep the rest in that statement: the change counts (a
//     version), the webhooks' deliveries (an event), and the vector and
//     search queues (a memory).
//  5. COMMIT, which waits for the WAL to be flushed.
//
// The lock is held for the last three, and the writes of a store wait
// for it, so that these round trips, not the server's work, bound a
// store's writes.
//
// The core's rules (memstore's rules.go) decide a write from what they
// read, in Go, so that every backend applies them the same way. A create
// is made in one round trip without moving them: WriteMemory runs fn
// once over a plan (planned; no database), whose reads answer what a
// create that succeeds reads (the store is not archived, the path and
// its ancestors and descendants are free), and whose Put records the
// memory fn makes. One statement (writeOnce), memory_create (migration
// 0007), then takes the store's lock and makes the memory only if the
// store is as the plan assumed; it commits on its own. Otherwise it
// changes nothing and fn runs in a transaction as before, over what the
// store holds, so that every refusal (archived, the path taken, the
// quota) is the rule's own error. The store's count is the one answer a
// plan cannot assume: the rule hands its quota to the plan
// (MemoryTx.CheckQuota), whose cap (Quota.Max) the statement takes as a
// parameter and compares with the store's count; when the store holds
// that many, the statement declines and the rule refuses with its own
// error in the transaction (TestMemoryCreateAtItsQuota holds the two to
// the same count).
//
// The rules stay in Go, rather than in a function of the database, so
// that they keep one home and every backend's refusals stay the same;
// the statement holds only the checks that the plan's answers are still
// true, which make nothing when they are not.
//
// Updates and deletes read the memory itself, whose content the rule
// needs (its hash for the precondition, whether the write changes
// anything, the index's rules), so they run in a transaction, of two
// round trips (tryWrite): the plan stops at the memory fn asks for, so
// that its read goes with BEGIN and the lock, and fn's write waits to go
// with COMMIT. A rename reads its new path's overlaps in between; an
// upsert over a memory, after the create's statement declined, reads the
// memory at the path with the lock. In a batch of a store's writes
// (batch.go) the reads of every write go with BEGIN and the writes with
// COMMIT, so a write costs no round trip of its own.

// errUnplanned ends fn's run over a plan when fn reads what a plan
// cannot assume: the write runs in a transaction instead.
var errUnplanned = errors.New("a write that needs the store's data")

// A plan is a MemoryTx with no database: its reads answer what a create
// that succeeds reads, and it records the one created memory fn puts.
type plan struct {
	memoryID string         // the memory fn asked for, which stopped it
	at       string         // the path whose memory fn asked for
	quota    memstore.Quota // the quota fn checked the create against, if any
	path     string
	m        *memstore.Memory
	e        memstore.EventType
	by       memstore.Actor
}

func (p *plan) Archived() bool { return false }
func (p *plan) Memory(id string) (*memstore.Memory, error) {
	p.memoryID = id
	return nil, errUnplanned
}
func (p *plan) Delete(*memstore.Memory, memstore.Actor) error {
	return errUnplanned
}
func (p *plan) MemoryAt(path string) (*memstore.Memory, error) {
	p.at = path
	return nil, p.free(path, "")
}
func (p *plan) Overlapping(path, self string) (*memstore.Memory, error) {
	return nil, p.free(path, self)
}

// free assumes path free, and with it its ancestors and descendants,
// which the statement checks: one path, of a new memory.
func (p *plan) free(path, self string) error {
	if self != "" || p.m != nil || p.path != "" && p.path != path {
		return errUnplanned
	}
	p.path = path
	return nil
}

// CheckQuota assumes room under q, which the statement checks against
// q's cap.
func (p *plan) CheckQuota(q memstore.Quota) error {
	p.quota = q
	return nil
}

// Put records a created memory at the path assumed free; its IDs and
// times are given when the plan is made (writeOnce).
func (p *plan) Put(m *memstore.Memory, e memstore.EventType, by memstore.Actor) error {
	if p.m != nil || e.Operation() != memstore.OpCreated || m.Path != p.path {
		return errUnplanned
	}
	if err := memstore.ValidatePath(m.Path); err != nil {
		return err
	}
	p.m, p.e, p.by = m, e, by
	return nil
}

// planned runs fn once over a plan and returns the plan, whose m is nil
// when fn does not create a memory over it. A fn that panics over the
// plan gets an empty one: it runs again over the database, where its
// panic fails it alone (batch.Safely).
func planned(fn func(memstore.MemoryTx) error) (p *plan) {
	defer func() {
		if recover() != nil {
			p = &plan{}
		}
	}()
	p = &plan{}
	if fn(p) != nil {
		p.m = nil
	}
	return p
}

// writeOnce makes the memory p plans in one statement, and reports
// whether it is done: made, or failed in a way that may have committed.
// It is not done, with nothing changed, when the store is not as the
// plan assumed, and when the statement failed before its commit.
func (db *DB) writeOnce(ctx context.Context, workspaceID, storeID string, p *plan) (done bool, err error) {
	maxMemories := (*int64)(nil) // no cap
	if p.quota.Limited() {
		n := int64(p.quota.Max())
		maxMemories = &n
	}
	paths, lo, hi := overlapArgs(p.path)
	now := db.stamp()
	p.m.ID, p.m.CreatedAt = db.ids.New(memstore.MemoryIDPrefix, now), now
	args := append([]any{storeID, workspaceID, maxMemories, paths, lo, hi}, createArgs(p.m, db.ids.New(memstore.VersionIDPrefix, now), now, p.e, p.by)...)
	err = scanCreated(db.pool.QueryRow(ctx, memoryCreate, args...), p.m, new(int64), new(int64))
	var pe *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil // the store is not as planned: nothing made
	case errors.As(err, &pe), pgconn.SafeToRetry(err):
		// The server refused the statement, which undid it, or it was
		// never sent: the transaction decides, and retries.
		return false, nil
	}
	return true, err
}

// memoryCreate calls memory_create (migration 0007) with createArgs
// after its store, workspace and the checks of a plan (NULL: none).
const memoryCreate = `SELECT version_id, created_at, memory_count FROM memory_create($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`

// createArgs are memory_create's parameters from its seventh: the new
// memory m, with its version's proposed ID and time, event and actor.
func createArgs(m *memstore.Memory, vid string, now time.Time, e memstore.EventType, by memstore.Actor) []any {
	content := []byte(m.Content)
	if content == nil {
		content = []byte{} // empty content, not none
	}
	return []any{m.ID, vid, keyset.Nanos(now), m.Path, content, m.ContentSHA256, m.ContentSize,
		string(by.Type), by.ID, string(e)}
}

// scanCreated reads memory_create's row into m, the version's ID and
// time, and the version's time (as stored) into at and the store's count
// into count.
func scanCreated(r row, m *memstore.Memory, at, count *int64) error {
	if err := r.Scan(&m.VersionID, at, count); err != nil {
		return err
	}
	m.CreatedAt = keyset.Time(*at)
	m.UpdatedAt = m.CreatedAt
	return nil
}

// A memTx is a memstore.MemoryTx over one transaction holding the store's
// lock (tryWrite, or tryBatch for several writes): its reads use the
// (store_id, path) index. Its writes wait in pending, to go with the
// next read that must see them, or with the COMMIT.
type memTx struct {
	ctx      context.Context
	db       *DB
	tx       *pgxpool.Conn
	storeID  string
	archived bool
	locked   bool // BEGIN, the store's lock and its last version were read
	// The store's live memories: its row's count, read with the lock,
	// moved by each create and deletion made since (the lock keeps every
	// other writer out).
	count int64
	// The store's last version ("" and 0 for none), as of the lock, then
	// the last one this transaction made (see next).
	lastID string
	lastAt int64
	// Reads made with the lock before fn asked for them (foresee), each
	// dropped once a write of the transaction may have changed its answer.
	known []*readMemory
	// The writes not sent yet, and which write of a batch (batch.go) made
	// each of their statements; then the same of the statements being
	// sent, and how many of those succeeded.
	pending       *pgx.Batch
	pendingOwners []int
	sendingOwners []int
	succeeded     int
	owner         int  // the write of a batch that runs
	sentOwn       bool // whether it has sent a statement of its own
	blame         int  // 1 + the write whose statement failed (0: none)
}

// A readMemory is a read of the store's memories made with its lock:
// the memory whose ID is id, or at path, or, with overlap, the first
// memory other than self overlapping path (Overlapping).
type readMemory struct {
	id, path, self string
	overlap        bool
	m              *memstore.Memory
	err            error
}

// scan reads r's answer from row, of the memories of store.
func (r *readMemory) scan(row pgx.Row, store string) (err error) {
	if r.overlap {
		r.m, err = scanOverlapping(row, store)
	} else {
		r.m, err = sqlrow.ScanMemory(row)
	}
	return err
}

// foresee queues on b, after the lock, the reads that p, fn's plan,
// found fn asks for first: its memory by ID, or at a path, and the
// overlaps of the path it creates. fn then finds them made (recall).
func (t *memTx) foresee(b *pgx.Batch, p *plan) {
	read := func(r *readMemory, sql string, args ...any) {
		t.known = append(t.known, r)
		b.Queue(sql, args...).QueryRow(func(row pgx.Row) error {
			r.err = r.scan(row, t.storeID)
			return nil
		})
	}
	switch {
	case p.memoryID != "":
		read(&readMemory{id: p.memoryID}, memoryByID, p.memoryID, t.storeID)
	case p.at != "":
		read(&readMemory{path: p.at}, memoryAtPath, t.storeID, p.at)
	}
	if p.path != "" {
		paths, lo, hi := overlapArgs(p.path)
		read(&readMemory{path: p.path, overlap: true}, memoryOverlapping, t.storeID, "", paths, lo, hi)
	}
}

// recall returns the read made earlier that answers r's question, if one
// is still true.
func (t *memTx) recall(r readMemory) *readMemory {
	for _, k := range t.known {
		if k.id == r.id && k.path == r.path && k.self == r.self && k.overlap == r.overlap {
			return k
		}
	}
	return nil
}

// wrote drops the reads that a write of memory id, now at path ("" for
// a deletion), may have changed: the reads that found that memory, and
// those of the path and of its overlaps. No other read changes: the
// memory leaving a path frees it, which changes only reads that found
// the memory, and the first memory overlapping a path stays the first
// when another leaves.
func (t *memTx) wrote(id, path string) {
	t.known = slices.DeleteFunc(t.known, func(k *readMemory) bool {
		return k.id == id || k.m != nil && k.m.ID == id ||
			path != "" && (path == k.path || k.overlap && memstore.PathsOverlap(path, k.path))
	})
}

// memoryByID reads the memory $1 of store $2, and memoryAtPath the
// memory of store $1 at path $2, with their content.
var (
	memoryByID   = `SELECT ` + memoryColumns(true) + ` FROM memories WHERE id = $1 AND store_id = $2`
	memoryAtPath = `SELECT ` + memoryColumns(true) + ` FROM memories WHERE store_id = $1 AND path = $2`
)

// later queues the write of sql and args, whose row (if scan is set)
// goes to scan, to go with the transaction's next read or its commit.
func (t *memTx) later(scan func(pgx.Row) error, sql string, args ...any) {
	if t.pending == nil {
		t.pending = &pgx.Batch{}
	}
	t.pendingOwners = append(t.pendingOwners, t.owner)
	q := t.pending.Queue(sql, args...)
	if scan == nil {
		q.Exec(func(pgconn.CommandTag) error { t.succeeded++; return nil })
	} else {
		q.QueryRow(func(r pgx.Row) error {
			err := scan(r)
			if err == nil {
				t.succeeded++
			}
			return err
		})
	}
}

// take takes the writes waiting, if any, to send them with what follows.
func (t *memTx) take() *pgx.Batch {
	b := t.pending
	if b != nil {
		t.sendingOwners = t.pendingOwners
		t.sentOwn = t.sentOwn || slices.Contains(t.pendingOwners, t.owner)
		t.pending, t.pendingOwners = nil, nil
	}
	return b
}

// unqueue drops the writes of the write of a batch that runs, which
// come last, from those waiting (batch.go: a write refused).
func (t *memTx) unqueue() {
	n := len(t.pendingOwners)
	for n > 0 && t.pendingOwners[n-1] == t.owner {
		n--
	}
	if n == 0 {
		t.pending, t.pendingOwners = nil, nil
		return
	}
	t.pending.QueuedQueries = t.pending.QueuedQueries[:n]
	t.pendingOwners = t.pendingOwners[:n]
}

// send sends b, which starts with the writes taken, if any, and blames
// the write whose statement failed, if one did.
func (t *memTx) send(b *pgx.Batch) error {
	t.succeeded = 0
	err := t.tx.SendBatch(t.ctx, b).Close()
	if err != nil && t.succeeded < len(t.sendingOwners) {
		t.blame = t.sendingOwners[t.succeeded] + 1
	}
	t.sendingOwners = nil
	return err
}

// queryRow reads a row of sql, with scan, in the round trip of the
// writes waiting, if any, so that it sees them.
func (t *memTx) queryRow(scan func(pgx.Row) error, sql string, args ...any) error {
	b := t.take()
	if b == nil {
		return scan(t.tx.QueryRow(t.ctx, sql, args...))
	}
	var err error
	b.Queue(sql, args...).QueryRow(func(r pgx.Row) error {
		err = scan(r)
		return nil
	})
	if err := t.send(b); err != nil {
		return err
	}
	return err
}

// next returns the ID and time of the transaction's next version: never
// dated before the store's last version, and sorting after it. The
// store's lock orders the writes of processes whose clocks may differ;
// this keeps their versions in that order, newest first by ID.
func (t *memTx) next() (string, time.Time) {
	now := t.db.stamp()
	if n := keyset.Nanos(now); n < t.lastAt {
		now = keyset.Time(t.lastAt)
	}
	id := t.db.ids.New(memstore.VersionIDPrefix, now)
	if id <= t.lastID {
		id = ids.Next(t.lastID)
	}
	t.lastID, t.lastAt = id, keyset.Nanos(now)
	return id, now
}

func (t *memTx) Archived() bool { return t.archived }

func (t *memTx) Memory(id string) (*memstore.Memory, error) {
	m, err := t.readMemory(readMemory{id: id}, memoryByID, id, t.storeID)
	return m, notFound(err, errMemoryNotFound(id))
}

func (t *memTx) MemoryAt(path string) (*memstore.Memory, error) {
	m, err := t.readMemory(readMemory{path: path}, memoryAtPath, t.storeID, path)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return m, err
}

// readMemory answers the read of a memory that q asks, from the reads
// made earlier (recall) or by sql and args.
func (t *memTx) readMemory(q readMemory, sql string, args ...any) (*memstore.Memory, error) {
	if r := t.recall(q); r != nil {
		return copied(r.m), r.err
	}
	err := t.queryRow(func(row pgx.Row) error { return q.scan(row, t.storeID) }, sql, args...)
	return q.m, err
}

// Overlapping looks for the path and its ancestors (equality lookups of at
// most MaxPathSegments paths) and for one memory below it (a range scan
// limited to one row), in one statement (memory_overlapping). The
// ancestors and the path are prefixes of every path below it, so they
// sort first: the first of the two in path order is the first of the
// ancestors and the path, when there is one, as the rule wants.
func (t *memTx) Overlapping(path, self string) (*memstore.Memory, error) {
	paths, lo, hi := overlapArgs(path)
	return t.readMemory(readMemory{path: path, self: self, overlap: true}, memoryOverlapping, t.storeID, self, paths, lo, hi)
}

// copied is a copy of m, which fn may change, so that a read recalled
// twice answers the same.
func copied(m *memstore.Memory) *memstore.Memory {
	if m == nil {
		return nil
	}
	c := *m
	return &c
}

// memoryOverlapping reads the first memory of store $1 but $2 at the
// paths $3 or from $4 to $5 (overlapArgs), as scanOverlapping reads it.
const memoryOverlapping = `SELECT id, path FROM memory_overlapping($1, $2, $3, $4, $5)`

// scanOverlapping reads memoryOverlapping's row: the memory of store in
// the way, with its ID and path, or none (nil, nil).
func scanOverlapping(r pgx.Row, store string) (*memstore.Memory, error) {
	m := &memstore.Memory{StoreID: store}
	switch err := r.Scan(&m.ID, &m.Path); {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return m, nil
}

// overlapArgs are the paths that memory_overlapping (migration 0007)
// looks up for path: the path and its ancestors, then the range of the
// paths below it ("/" + 1 is "0": everything below path, and nothing
// else).
func overlapArgs(path string) (paths []string, lo, hi string) {
	paths = make([]string, 0, memstore.MaxPathSegments)
	for i := 1; i < len(path); i++ {
		if path[i] == '/' {
			paths = append(paths, path[:i])
		}
	}
	return append(paths, path), path + "/", path + "0"
}

// CheckQuota checks q against the store's count, read with its lock and
// moved by the creates and deletions made since: no statement, whatever
// the store's size.
func (t *memTx) CheckQuota(q memstore.Quota) error {
	if !q.Limited() {
		return nil
	}
	return q.Check(int(t.count))
}

// Put refuses a malformed path whoever asks, the one check of the core's
// that this backend repeats: a stored path is an invariant of the store,
// whose overlap checks and roll-up of lists by depth read its segments,
// so one malformed path would corrupt every later write.
//
// The version, its event, the memory and, for a new one, the store's
// count are written by one statement.
func (t *memTx) Put(m *memstore.Memory, e memstore.EventType, by memstore.Actor) error {
	if err := memstore.ValidatePath(m.Path); err != nil {
		return err
	}
	op := e.Operation()
	vid, now := t.next()
	if op == memstore.OpCreated {
		// memory_create, the statement of a write in one round trip,
		// without its checks: the rule made them.
		m.ID = t.db.ids.New(memstore.MemoryIDPrefix, now)
		args := append([]any{t.storeID, nil, nil, nil, nil, nil}, createArgs(m, vid, now, e, by)...)
		t.later(func(r pgx.Row) error { return scanCreated(r, m, new(int64), new(int64)) }, memoryCreate, args...)
		t.count++
		t.wrote(m.ID, m.Path)
		return nil
	}
	v := memstore.NewVersion(vid, m, op, by, now)
	m.VersionID, m.UpdatedAt = v.ID, now
	// The join reads the row as it was, so the store's size moves by
	// the change of the memory's.
	t.later(nil, versionInsert+`, m AS (UPDATE memories n SET path = $5, content = $6, sha256 = $7, size = $8, version_id = $1, updated_at = $9
		FROM memories o WHERE n.id = $3 AND o.id = n.id RETURNING n.size - o.size AS d)
		UPDATE stores SET content_size = content_size + coalesce((SELECT sum(d) FROM m), 0) WHERE id = $2`, versionArgs(v, e)...)
	t.wrote(m.ID, m.Path)
	return nil
}

// Delete keeps the path at deletion in the "deleted" version; the
// memory's row, and with it the content, goes, and the store's count
// with it, in one statement.
func (t *memTx) Delete(m *memstore.Memory, by memstore.Actor) error {
	vid, now := t.next()
	t.later(nil, versionInsert+`, m AS (DELETE FROM memories WHERE id = $3 RETURNING size) `+countChange("-", "$2"),
		versionArgs(memstore.NewVersion(vid, m, memstore.OpDeleted, by, now), memstore.EventMemoryDeleted)...)
	t.count--
	t.wrote(m.ID, "")
	return nil
}

// countChange is the statement that ends an insert or delete of
// memories m (a data-modifying WITH query returning their sizes): the
// count and content size of the store whose ID is the parameter store
// move by op (+ or -) the rows of m and their sizes, and the count is
// returned. The store's row is already locked (WriteMemory).
func countChange(op, store string) string {
	return `UPDATE stores SET memory_count = memory_count ` + op + ` (SELECT count(*) FROM m),
		content_size = content_size ` + op + ` (SELECT coalesce(sum(size), 0) FROM m) WHERE id = ` + store + ` RETURNING memory_count`
}

// Memory implements memstore.MemoryStorage (sqlread.Memory).
func (db *DB) Memory(ctx context.Context, workspaceID, storeID, id string) (*memstore.Memory, error) {
	m, err := sqlread.Memory(reader{ctx, db.pool}, dialect, workspaceID, storeID, id)
	return m, wrap(err, "get memory %s", id)
}

// MemoryUnlessAt implements memstore.MemoryRevalidatorStorage
// (sqlread.MemoryUnlessAt). The lookups of the versions of concurrent
// calls go together in one statement (revalidate.go), each taken after
// its call began.
func (db *DB) MemoryUnlessAt(ctx context.Context, workspaceID, storeID, id, version string) (*memstore.Memory, error) {
	m, err := sqlread.MemoryUnlessAt(reader{ctx, db.pool}, dialect, workspaceID, storeID, id, version, func() (string, error) {
		current, err := db.revalidate.Do(ctx, versionQuery{id: id, storeID: storeID, workspaceID: workspaceID})
		if err == nil && current == "" {
			err = pgx.ErrNoRows
		}
		return current, err
	})
	return m, wrap(err, "get memory %s", id)
}

// Memories implements memstore.MemoryStorage (sqlread.Memories).
func (db *DB) Memories(ctx context.Context, workspaceID, storeID string, f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
	page, err := sqlread.Memories(db.readStore(ctx, workspaceID, storeID), dialect, storeID, f)
	return page, wrap(err, "list memories")
}

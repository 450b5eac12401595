package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/postgres"
)

// A batchFixture is a store with one memory, /first.md ("one"), on a
// database of its own, to queue writes of the store in one process.
type batchFixture struct {
	url   string
	db    *postgres.DB
	co    *memstore.Core
	c     *memstore.Caller
	st    *memstore.Store
	first *memstore.Memory
}

func newBatchFixture(t *testing.T, name string) *batchFixture {
	t.Helper()
	f := &batchFixture{url: pgtest.DB(t, migrate)}
	f.db = mustOpenAt(t, f.url, postgres.Options{})
	f.co = memstore.NewCore(f.db)
	f.c = &memstore.Caller{WorkspaceID: "wrkspc_" + name, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_" + name}}
	f.st = mustCreateStore(t, f.co, f.c)
	var err error
	if f.first, err = f.co.CreateMemory(context.Background(), f.c, f.st.ID, memstore.MemoryCreate{Path: "/first.md", Content: "one"}); err != nil {
		t.Fatal(err)
	}
	return f
}

// queued waits until n writes of the store wait in the process.
func (f *batchFixture) queued(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); f.db.QueuedWrites(f.c.WorkspaceID, f.st.ID) < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued, want %d", f.db.QueuedWrites(f.c.WorkspaceID, f.st.ID), n)
		}
	}
}

// lockStore holds the store's lock from another connection.
func (f *batchFixture) lockStore(t *testing.T) *lockHolder {
	return holdLock(t, f.url, `SELECT FROM stores WHERE id = $1 FOR NO KEY UPDATE`, f.st.ID)
}

// writesRun runs writes of the fixture's store, each but the first
// ("lone") queued in the process behind those before it, and records
// their errors by name (a panic as an error).
type writesRun struct {
	f    *batchFixture
	t    *testing.T
	mu   sync.Mutex
	wg   sync.WaitGroup
	errs map[string]error
}

func (f *batchFixture) writes(t *testing.T) *writesRun {
	return &writesRun{f: f, t: t, errs: map[string]error{}}
}

// run starts write, and waits until it is queued unless it is "lone".
func (w *writesRun) run(name string, write func() error) {
	n := w.f.db.QueuedWrites(w.f.c.WorkspaceID, w.f.st.ID)
	w.wg.Go(func() {
		defer func() {
			if p := recover(); p != nil {
				w.mu.Lock()
				w.errs[name] = fmt.Errorf("panicked: %v", p)
				w.mu.Unlock()
			}
		}()
		err := write()
		w.mu.Lock()
		w.errs[name] = err
		w.mu.Unlock()
	})
	if name != "lone" {
		w.f.queued(w.t, n+1)
	}
}

// wait waits for the writes started and returns their errors, which the
// next writes run start afresh.
func (w *writesRun) wait() map[string]error {
	w.wg.Wait()
	errs := w.errs
	w.errs = map[string]error{}
	return errs
}

// waitingOne waits until one statement of the database waits on a lock
// that h holds; what names it.
func waitingOne(t *testing.T, h *lockHolder, what string) {
	t.Helper()
	if n := h.waitFor(t, 1, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`); n != 1 {
		t.Fatalf("%d writes wait for %s, want 1", n, what)
	}
}

// TestStoreWritesTogether holds a store's lock from another connection
// while one write waits for it and others queue behind it in the process,
// then lets it go: the first commits alone, and the queued ones in one
// transaction (their rows share its transaction ID). Each is answered as
// if it had run alone, in the order queued: a refusal is that write's
// alone; a write whose statement fails, found out with the next write's
// read or with the commit, is rolled back alone; a write cancelled while
// queued never runs; and each write sees those before it.
func TestStoreWritesTogether(t *testing.T) {
	f := newBatchFixture(t, "batch")
	dbURL, db, co, c, st, first := f.url, f.db, f.co, f.c, f.st, f.first
	ctx := context.Background()
	// A statement that fails on the server, as no rule foresees.
	h := holdLock(t, dbURL, `CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF new.path LIKE '/boom%' THEN RAISE EXCEPTION 'boom'; END IF; RETURN new; END $$`)
	if _, err := h.tx.Exec(ctx, `CREATE TRIGGER boom BEFORE INSERT ON memories FOR EACH ROW EXECUTE FUNCTION boom()`); err != nil {
		t.Fatal(err)
	}
	if err := h.tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	h = f.lockStore(t)

	type result struct {
		name string
		m    *memstore.Memory
		err  error
	}
	results := make(chan result, 20)
	var wg sync.WaitGroup
	run := func(ctx context.Context, name string, write func(ctx context.Context) (*memstore.Memory, error)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := write(ctx)
			results <- result{name, m, err}
		}()
	}
	create := func(path string) func(ctx context.Context) (*memstore.Memory, error) {
		return func(ctx context.Context) (*memstore.Memory, error) {
			return co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: path, Content: "content of " + path})
		}
	}
	update := func(content string) func(ctx context.Context) (*memstore.Memory, error) {
		return func(ctx context.Context) (*memstore.Memory, error) {
			return co.UpdateMemory(ctx, c, st.ID, first.ID, memstore.MemoryUpdate{Content: &content, IfSHA256: first.ContentSHA256})
		}
	}
	run(ctx, "lone", create("/lone.md"))
	waitingOne(t, h, "the store's lock")
	queue := func(ctx context.Context, name string, write func(ctx context.Context) (*memstore.Memory, error)) {
		n := db.QueuedWrites(c.WorkspaceID, st.ID)
		run(ctx, name, write)
		f.queued(t, n+1)
	}
	cancelled, cancel := context.WithCancel(ctx)
	queue(cancelled, "cancelled", create("/cancelled.md"))
	cancel()
	for i := range 5 {
		queue(ctx, fmt.Sprintf("create %d", i), create(fmt.Sprintf("/batch/%d.md", i)))
	}
	queue(ctx, "taken", create("/first.md"))
	queue(ctx, "boom", create("/boom.md"))
	queue(ctx, "update a", update("two")) // its read goes with the failing statement
	queue(ctx, "update b", update("three"))
	queue(ctx, "boom last", create("/boom-last.md")) // its statement goes with the commit
	h.release(t)
	wg.Wait()
	close(results)

	made := map[string]*memstore.Memory{}
	for r := range results {
		var me *memstore.Error
		switch {
		case r.name == "cancelled":
			if !errors.Is(r.err, context.Canceled) {
				t.Errorf("the write cancelled while queued: %v, want %v", r.err, context.Canceled)
			}
		case r.name == "taken":
			if !errors.As(r.err, &me) || me.Code != memstore.EPathConflict || me.ConflictingMemoryID != first.ID {
				t.Errorf("a create at a taken path: %v, want a conflict with %s", r.err, first.ID)
			}
		case r.name == "boom" || r.name == "boom last":
			if r.err == nil || !strings.Contains(r.err.Error(), "boom") {
				t.Errorf("the write whose statement failed: %v, want the server's error", r.err)
			}
		case r.name == "update b":
			if !errors.As(r.err, &me) || me.Code != memstore.EPreconditionFailed {
				t.Errorf("the second update under the same precondition: %v, want a failed precondition", r.err)
			}
		case r.err != nil:
			t.Errorf("%s: %v", r.name, r.err)
		default:
			made[r.name] = r.m
		}
	}
	if made["update a"] == nil || made["update a"].Content != "two" {
		t.Errorf("the first update: %+v", made["update a"])
	}

	var n, live, stored, txs int
	var loneTx, batchTx int64
	err := h.watch.QueryRow(ctx, `SELECT (SELECT count(*) FROM memories WHERE store_id = $1),
		(SELECT memory_count FROM stores WHERE id = $1),
		(SELECT count(DISTINCT xmin::text) FROM memories WHERE store_id = $1 AND path LIKE '/batch/%'),
		(SELECT xmin::text::bigint FROM memories WHERE store_id = $1 AND path = '/lone.md'),
		(SELECT xmin::text::bigint FROM memories WHERE store_id = $1 AND path = '/batch/0.md'),
		(SELECT count(*) FROM memories WHERE store_id = $1 AND path IN ('/boom.md', '/boom-last.md', '/cancelled.md'))`, st.ID).
		Scan(&live, &stored, &txs, &loneTx, &batchTx, &n)
	if err != nil {
		t.Fatal(err)
	}
	if live != 7 || stored != 7 || n != 0 {
		t.Errorf("%d memories, %d counted, %d of the failed and cancelled writes: want 7, 7 and 0", live, stored, n)
	}
	if txs != 1 || loneTx == batchTx {
		t.Errorf("the queued creates were made in %d transactions (the lone one's %d, theirs %d): want one, not the lone one's", txs, loneTx, batchTx)
	}
	// The feed: one event a change, numbered without gaps in the order of
	// the versions, which follow the commits.
	var events, maxSeq, ordered int
	err = h.watch.QueryRow(ctx, `SELECT count(*), max(seq),
		count(*) FILTER (WHERE version_id = (SELECT id FROM versions v WHERE v.store_id = e.store_id ORDER BY id OFFSET e.seq - 1 LIMIT 1))
		FROM events e WHERE store_id = $1 AND type LIKE 'memory.%'`, st.ID).Scan(&events, &maxSeq, &ordered)
	if err != nil {
		t.Fatal(err)
	}
	if events != 8 || maxSeq != 8 || ordered != 8 {
		t.Errorf("%d events of memories, the last numbered %d, %d in the versions' order: want 8, 8, 8", events, maxSeq, ordered)
	}
	for name, m := range made {
		got, err := co.Memory(ctx, c, st.ID, m.ID)
		if err != nil || got.VersionID != m.VersionID || got.Content != m.Content {
			t.Errorf("%s: answered version %s, stored %v (%v)", name, m.VersionID, got, err)
		}
	}
}

// TestStoreWritesTogetherFail: in a batch, a write that fails after
// sending its own statement and a write that panics each fail alone, and
// the others commit together; a lone write that panics, holding the
// store's queue, hands the writes queued behind it on.
func TestStoreWritesTogetherFail(t *testing.T) {
	f := newBatchFixture(t, "batchfail")
	db, co, c, st, first := f.db, f.co, f.c, f.st, f.first
	ctx := context.Background()
	create := func(path string) func() error {
		return func() error {
			_, err := co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: path, Content: "x"})
			return err
		}
	}
	// sentThenFails reads the memory first, so that it runs in a
	// transaction, puts a new memory, sends it with a read, and fails.
	sentThenFails := func() error {
		return db.WriteMemory(ctx, c.WorkspaceID, st.ID, func(tx memstore.MemoryTx) error {
			if _, err := tx.Memory(first.ID); err != nil {
				return err
			}
			m := &memstore.Memory{StoreID: st.ID, Path: "/sent.md", Content: "sent"}
			if err := tx.Put(m, memstore.EventMemoryCreated, c.Actor); err != nil {
				return err
			}
			if _, err := tx.Memory(first.ID); err != nil {
				return err
			}
			return errors.New("failed after its write")
		})
	}
	// panics panics once it runs over the database, not a plan.
	panics := func() error {
		return db.WriteMemory(ctx, c.WorkspaceID, st.ID, func(tx memstore.MemoryTx) error {
			if _, err := tx.Memory(first.ID); err != nil {
				return err
			}
			panic("a bug")
		})
	}
	// alwaysPanics panics over a plan too: the plan is made for every
	// write of a batch, before any runs.
	alwaysPanics := func() error {
		return db.WriteMemory(ctx, c.WorkspaceID, st.ID, func(memstore.MemoryTx) error { panic("a bug") })
	}
	w := f.writes(t)
	run := w.run

	h := f.lockStore(t)
	run("lone", create("/lone.md"))
	waitingOne(t, h, "the store's lock")
	run("ok 1", create("/ok1.md"))
	run("sent then fails", sentThenFails)
	run("panics", panics)
	run("always panics", alwaysPanics)
	run("ok 2", create("/ok2.md"))
	h.release(t)
	errs := w.wait()
	if err := errs["sent then fails"]; err == nil || !strings.Contains(err.Error(), "failed after its write") {
		t.Errorf("the write that failed after sending its own: %v", err)
	}
	for _, name := range []string{"panics", "always panics"} {
		if err := errs[name]; err == nil || !strings.Contains(err.Error(), "the write failed inside the server: a panic of type string") {
			t.Errorf("the write that panicked in a batch (%s): %v", name, err)
		}
	}
	for _, name := range []string{"lone", "ok 1", "ok 2"} {
		if errs[name] != nil {
			t.Errorf("%s: %v", name, errs[name])
		}
	}
	var made, txs int
	if err := h.watch.QueryRow(ctx, `SELECT count(*), count(DISTINCT xmin::text) FILTER (WHERE path LIKE '/ok%')
		FROM memories WHERE store_id = $1`, st.ID).Scan(&made, &txs); err != nil {
		t.Fatal(err)
	}
	if made != 4 || txs != 1 {
		t.Errorf("%d memories (want /first, /lone, /ok1, /ok2), the two of the batch in %d transactions (want 1)", made, txs)
	}

	// A lone write that panics while another waits behind it.
	h = f.lockStore(t)
	run("lone", panics)
	waitingOne(t, h, "the store's lock")
	run("after", create("/after.md"))
	h.release(t)
	errs = w.wait()
	if err := errs["lone"]; err == nil || !strings.Contains(err.Error(), "panicked: a bug") {
		t.Errorf("the lone write that panics: %v, want its panic", err)
	}
	if err := errs["after"]; err != nil {
		t.Errorf("the write queued behind a panic: %v", err)
	}

	// A write that panics alone behind another, which runs it on its own.
	h = f.lockStore(t)
	run("lone", create("/lone-again.md"))
	waitingOne(t, h, "the store's lock")
	run("panics behind it", alwaysPanics)
	h.release(t)
	errs = w.wait()
	if err := errs["lone"]; err != nil {
		t.Errorf("the lone write: %v", err)
	}
	if err := errs["panics behind it"]; err == nil || !strings.Contains(err.Error(), "the write failed inside the server: a panic of type string") {
		t.Errorf("the write that panicked alone behind another: %v", err)
	}
	if err := create("/later.md")(); err != nil {
		t.Errorf("a write after it all: %v", err)
	}
}

// TestStoreWritesTogetherGiveUp: a batch that waits on a lock held
// elsewhere, holding its store's, ends once every write in it is
// cancelled, so that the writes queued behind it go on.
func TestStoreWritesTogetherGiveUp(t *testing.T) {
	f := newBatchFixture(t, "giveup")
	co, c, st, held := f.co, f.c, f.st, f.first
	ctx := context.Background()
	store := f.lockStore(t)
	row := holdLock(t, f.url, `SELECT FROM memories WHERE id = $1 FOR UPDATE`, held.ID)
	lone := make(chan error, 1)
	go func() {
		_, err := co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: "/lone.md", Content: "x"})
		lone <- err
	}()
	waitingOne(t, store, "the store's lock")
	// The batch: an update of the memory whose row is held, then a
	// create; the update's statement, sent with the commit, waits.
	cctx, cancel := context.WithCancel(ctx)
	batch := make(chan error, 2)
	go func() {
		_, err := co.UpdateMemory(cctx, c, st.ID, held.ID, memstore.MemoryUpdate{Content: new("two")})
		batch <- err
	}()
	f.queued(t, 1)
	go func() {
		_, err := co.CreateMemory(cctx, c, st.ID, memstore.MemoryCreate{Path: "/batched.md", Content: "x"})
		batch <- err
	}()
	f.queued(t, 2)
	store.release(t)
	if err := <-lone; err != nil {
		t.Fatal(err)
	}
	// The batch now holds the store's lock and waits for the row's.
	waitingOne(t, row, "the memory's row")
	after := make(chan error, 1)
	go func() {
		_, err := co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: "/after.md", Content: "x"})
		after <- err
	}()
	f.queued(t, 1)
	cancel()
	for range 2 {
		if err := <-batch; !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled write of the batch: %v, want %v", err, context.Canceled)
		}
	}
	select {
	case err := <-after:
		if err != nil {
			t.Errorf("the write queued behind the batch: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the write queued behind a batch whose writes were all cancelled still waits")
	}
	var batched int
	var content string
	if err := row.watch.QueryRow(ctx, `SELECT (SELECT count(*) FROM memories WHERE store_id = $1 AND path = '/batched.md'),
		(SELECT convert_from(content, 'UTF8') FROM memories WHERE id = $2)`, st.ID, held.ID).Scan(&batched, &content); err != nil {
		t.Fatal(err)
	}
	if batched != 0 || content != "one" {
		t.Errorf("the cancelled batch left %d memories and the held one reads %q: want none and %q", batched, content, "one")
	}
}

// TestStoreWritesTogetherSeeEachOther: the reads of a batch's writes are
// made with the lock, all in its first round trip, before any of its
// writes; each write still sees the writes queued before it, since a
// read that one of them may have changed is made again. Without that, a
// create under a path created earlier in the batch, an update of a
// memory deleted earlier, or a create where a memory was moved earlier
// would be answered from the reads made before them. A refused write's
// statement, still waiting, is dropped with its place in the store's
// count.
func TestStoreWritesTogetherSeeEachOther(t *testing.T) {
	f := newBatchFixture(t, "seeeach")
	ctx := context.Background()
	const limit = 8
	co := memstore.NewCore(f.db, memstore.MaxMemoriesPerStore(limit))
	c, st := f.c, f.st
	made := map[string]*memstore.Memory{}
	for _, p := range []string{"/x.md", "/y.md"} {
		m, err := co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: p, Content: "content of " + p})
		if err != nil {
			t.Fatal(err)
		}
		made[p] = m
	}
	x, y := made["/x.md"], made["/y.md"]

	type result struct {
		m   *memstore.Memory
		err error
	}
	results := map[string]*result{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	run := func(name string, write func() (*memstore.Memory, error)) {
		n := f.db.QueuedWrites(c.WorkspaceID, st.ID)
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := write()
			mu.Lock()
			results[name] = &result{m, err}
			mu.Unlock()
		}()
		if name != "lone" {
			f.queued(t, n+1)
		}
	}
	create := func(path, content string, upsert bool) func() (*memstore.Memory, error) {
		return func() (*memstore.Memory, error) {
			return co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: path, Content: content, Upsert: upsert})
		}
	}
	update := func(m *memstore.Memory, u memstore.MemoryUpdate) func() (*memstore.Memory, error) {
		return func() (*memstore.Memory, error) { return co.UpdateMemory(ctx, c, st.ID, m.ID, u) }
	}
	h := f.lockStore(t)
	run("lone", create("/lone.md", "lone", false)) // 4 memories with it
	waitingOne(t, h, "the store's lock")
	run("child", create("/d/a.md", "child", false))                                                            // 5
	run("under the child", create("/d/a.md/b.md", "grandchild", false))                                        // in the way of the child
	run("delete x", func() (*memstore.Memory, error) { return nil, co.DeleteMemory(ctx, c, st.ID, x.ID, "") }) // 4
	run("update x", update(x, memstore.MemoryUpdate{Content: ptr("too late")}))                                // x is gone
	run("move y", update(y, memstore.MemoryUpdate{Path: ptr("/moved.md")}))
	run("where y went", create("/moved.md", "taken", false)) // y is there
	run("where y was", create("/y.md", "free again", false)) // 5
	run("new", create("/up.md", "first", false))             // 6
	run("upsert", create("/up.md", "second", true))          // the memory just made
	run("put then refuse", func() (*memstore.Memory, error) {
		return nil, f.db.WriteMemory(ctx, c.WorkspaceID, st.ID, func(tx memstore.MemoryTx) error {
			if err := tx.Put(&memstore.Memory{StoreID: st.ID, Path: "/refused.md", Content: "never"}, memstore.EventMemoryCreated, c.Actor); err != nil {
				return err
			}
			return memstore.Errorf(memstore.EInvalid, "refused after its write")
		})
	})
	run("seventh", create("/seventh.md", "7", false)) // 7
	run("eighth", create("/eighth.md", "8", false))   // 8: the cap
	run("ninth", create("/ninth.md", "9", false))     // over it
	h.release(t)
	wg.Wait()

	code := func(name string) string { return memstore.ErrorCode(results[name].err) }
	for _, name := range []string{"lone", "child", "delete x", "move y", "where y was", "new", "upsert", "seventh", "eighth"} {
		if err := results[name].err; err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	var e *memstore.Error
	if errors.As(results["under the child"].err, &e); e == nil || e.Code != memstore.EPathConflict || results["child"].m == nil || e.ConflictingMemoryID != results["child"].m.ID {
		t.Errorf("a create under a memory made earlier in the batch: %v, want a conflict with it", results["under the child"].err)
	}
	if code("update x") != memstore.ENotFound {
		t.Errorf("an update of a memory deleted earlier in the batch: %v, want not found", results["update x"].err)
	}
	e = nil
	if errors.As(results["where y went"].err, &e); e == nil || e.Code != memstore.EPathConflict || e.ConflictingMemoryID != y.ID {
		t.Errorf("a create where a memory moved earlier in the batch: %v, want a conflict with it", results["where y went"].err)
	}
	if n, u := results["new"].m, results["upsert"].m; n == nil || u == nil || u.ID != n.ID || u.Content != "second" {
		t.Errorf("an upsert of a memory made earlier in the batch: %+v, want the memory made (%+v) with the new content", u, n)
	}
	if code("put then refuse") != memstore.EInvalid {
		t.Errorf("the write refused after its write: %v", results["put then refuse"].err)
	}
	if want := memstore.ErrMemoryLimit(st.ID, limit); !errors.As(results["ninth"].err, &e) || *e != *want {
		t.Errorf("the create over the cap: %v, want %v", results["ninth"].err, want)
	}

	// What the store holds, and counts.
	page, err := co.Memories(ctx, c, st.ID, memstore.MemoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, it := range page.Items {
		if it.Memory != nil {
			paths = append(paths, it.Memory.Path)
		}
	}
	slices.Sort(paths)
	want := []string{"/d/a.md", "/eighth.md", "/first.md", "/lone.md", "/moved.md", "/seventh.md", "/up.md", "/y.md"}
	if !slices.Equal(paths, want) {
		t.Errorf("the store holds %q, want %q", paths, want)
	}
	got, err := co.Store(ctx, c, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.MemoryCount != limit {
		t.Errorf("the store counts %d memories, want %d", got.MemoryCount, limit)
	}
	// All but the lone write went in one transaction: the versions they
	// made share its ID.
	lone := results["lone"].m
	if lone == nil {
		return // its error is reported above
	}
	var txs int
	if err := h.watch.QueryRow(ctx, `SELECT count(DISTINCT xmin::text) FROM versions WHERE store_id = $1 AND id > $2`, st.ID, lone.VersionID).Scan(&txs); err != nil {
		t.Fatal(err)
	}
	if txs != 1 {
		t.Errorf("the batch's writes were made in %d transactions, want 1", txs)
	}
}

// TestStoreWritesTogetherReadFails: when a read made ahead for a batch's
// writes fails on the server, the batch runs again with each write
// making its own reads, so that the write whose read fails fails alone
// and the others are made, together.
func TestStoreWritesTogetherReadFails(t *testing.T) {
	f := newBatchFixture(t, "readfails")
	co, c, st, first := f.co, f.c, f.st, f.first
	ctx := context.Background()
	// The overlaps of one path fail to read, as no rule foresees.
	h := holdLock(t, f.url, `ALTER FUNCTION memory_overlapping(text, text, text[], text, text) RENAME TO memory_overlapping_real`)
	if _, err := h.tx.Exec(ctx, `CREATE FUNCTION memory_overlapping(store text, self text, paths text[], below_lo text, below_hi text)
		RETURNS TABLE (id text, path text) LANGUAGE plpgsql STABLE AS $$
		BEGIN
			IF below_lo LIKE '%boom-read%' THEN RAISE EXCEPTION 'boom in a read'; END IF;
			RETURN QUERY SELECT * FROM memory_overlapping_real(store, self, paths, below_lo, below_hi);
		END $$`); err != nil {
		t.Fatal(err)
	}
	if err := h.tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	w := f.writes(t)
	run := w.run
	create := func(path string) func() error {
		return func() error {
			_, err := co.CreateMemory(ctx, c, st.ID, memstore.MemoryCreate{Path: path, Content: "x"})
			return err
		}
	}
	lock := f.lockStore(t)
	run("lone", create("/lone.md"))
	waitingOne(t, lock, "the store's lock")
	run("ok a", create("/ok-a.md"))
	run("read fails", create("/boom-read.md"))
	run("ok b", func() error {
		_, err := co.UpdateMemory(ctx, c, st.ID, first.ID, memstore.MemoryUpdate{Content: new("two")})
		return err
	})
	lock.release(t)
	errs := w.wait()
	if err := errs["read fails"]; err == nil || !strings.Contains(err.Error(), "boom in a read") {
		t.Errorf("the write whose read fails: %v, want the server's error", err)
	}
	for _, name := range []string{"lone", "ok a", "ok b"} {
		if errs[name] != nil {
			t.Errorf("%s: %v", name, errs[name])
		}
	}
	var made, txs int
	if err := lock.watch.QueryRow(ctx, `SELECT count(*), count(DISTINCT xmin::text) FILTER (WHERE path <> '/lone.md')
		FROM memories WHERE store_id = $1 AND path IN ('/lone.md', '/ok-a.md', '/boom-read.md', '/first.md')`, st.ID).Scan(&made, &txs); err != nil {
		t.Fatal(err)
	}
	if made != 3 || txs != 1 {
		t.Errorf("%d memories (want /first, /lone, /ok-a), the batch's in %d transactions (want 1)", made, txs)
	}
}

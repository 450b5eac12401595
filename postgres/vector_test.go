package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	neturl "net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/internal/vector"
	"github.com/memstore/memstore/postgres"
)

// embedQueued gives each queued memory a vector from vec, through db, and
// records it in want (memory ID → vector).
func embedQueued(t *testing.T, db *postgres.DB, model string, vec func(memstore.EmbeddingTask) []float32, want map[string][]float32) {
	t.Helper()
	ctx := context.Background()
	for {
		now := time.Now()
		tasks, err := db.ClaimEmbeddings(ctx, now, now.Add(time.Minute), 500)
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks) == 0 {
			return
		}
		es := make([]memstore.Embedding, len(tasks))
		for i, task := range tasks {
			es[i] = memstore.Embedding{MemoryID: task.MemoryID, VersionID: task.VersionID, Vector: vec(task)}
			want[task.MemoryID] = es[i].Vector
		}
		if err := db.PutEmbeddings(ctx, model, es); err != nil {
			t.Fatal(err)
		}
	}
}

// exactNearest is the k nearest of want to q, best first, ties by ID,
// scored as the backends score (internal/vector's blobs).
func exactNearest(want map[string][]float32, q []float32, k int) []vector.Hit {
	qb := vector.Encode(q)
	var hs []vector.Hit
	for id, v := range want {
		hs = append(hs, vector.Hit{ID: id, Score: vector.Dot(qb, vector.Encode(v))})
	}
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].Score != hs[j].Score {
			return hs[i].Score > hs[j].Score
		}
		return hs[i].ID < hs[j].ID
	})
	return hs[:min(k, len(hs))]
}

func sameHits(got []memstore.SearchResult, want []vector.Hit) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d hits, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Memory.ID != want[i].ID || got[i].Score != want[i].Score {
			return fmt.Errorf("hit %d is %s (%.4f), want %s (%.4f)", i, got[i].Memory.ID, got[i].Score, want[i].ID, want[i].Score)
		}
	}
	return nil
}

// twoReplicas is two handles on one new database, as two processes
// would have, a core over the first, a store in it, and random vectors of
// dims dimensions.
type twoReplicas struct {
	a, b   *postgres.DB
	core   *memstore.Core
	store  string
	random func(memstore.EmbeddingTask) []float32
}

func newTwoReplicas(t *testing.T, dims int, seed uint64) *twoReplicas {
	t.Helper()
	url := pgtest.DB(t, migrate)
	f := &twoReplicas{a: mustOpenAt(t, url, postgres.Options{}), b: mustOpenAt(t, url, postgres.Options{})}
	f.core = memstore.NewCore(f.a)
	// As a server with the model does when it starts: the queue is on.
	if err := f.a.StartEmbeddings(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, err := f.core.CreateStore(context.Background(), alice, memstore.StoreCreate{Name: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	f.store = s.ID
	r := rand.New(rand.NewPCG(seed, seed+1))
	f.random = func(memstore.EmbeddingTask) []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	return f
}

// check compares db's nearest k memories to a random query with an
// exact scan of want.
func (f *twoReplicas) check(t *testing.T, db *postgres.DB, want map[string][]float32, k int, what string) {
	t.Helper()
	q := f.random(memstore.EmbeddingTask{})
	got, err := db.NearestMemories(context.Background(), ws, []string{f.store}, "m", q, "", k)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameHits(got, exactNearest(want, q, k)); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Each replica keeps its own copy of a store's vectors in memory and
// brings it up to date from the database's log of vector changes before a
// search: its searches answer exactly what a scan of the database would,
// whichever replica wrote, while a search reads from the database only the
// vectors that changed since the last, not every vector of the store.
func TestNearestReplicasFollowChanges(t *testing.T) {
	const dims, memories = 16, 300
	f := newTwoReplicas(t, dims, 1)
	a, b, ca, randomVec := f.a, f.b, f.core, f.random
	ctx := context.Background()
	ids := make([]string, memories)
	for i := range ids {
		m, err := ca.CreateMemory(ctx, alice, f.store, memstore.MemoryCreate{Path: fmt.Sprintf("/m/%03d.md", i), Content: fmt.Sprintf("memory %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = m.ID
	}
	want := map[string][]float32{}
	embedQueued(t, a, "m", randomVec, want)
	check := func(db *postgres.DB, what string) {
		t.Helper()
		f.check(t, db, want, 10, what)
	}
	check(b, "first search")
	read := b.VectorRowsRead()
	if read != memories {
		t.Fatalf("the first search read %d vectors, want the store's %d", read, memories)
	}
	for range 5 {
		check(b, "search again")
	}
	if n := b.VectorRowsRead() - read; n != 0 {
		t.Fatalf("searches with nothing changed read %d vectors from the database, want 0", n)
	}

	// The other replica changes 3 memories (their vectors go, and come
	// again), deletes 2 and creates 2.
	for _, id := range ids[:3] {
		if _, err := ca.UpdateMemory(ctx, alice, f.store, id, memstore.MemoryUpdate{Content: new("changed " + id)}); err != nil {
			t.Fatal(err)
		}
		delete(want, id)
	}
	check(b, "changed memories not yet embedded again")
	for _, id := range ids[3:5] {
		if err := ca.DeleteMemory(ctx, alice, f.store, id, ""); err != nil {
			t.Fatal(err)
		}
		delete(want, id)
	}
	for i := range 2 {
		if _, err := ca.CreateMemory(ctx, alice, f.store, memstore.MemoryCreate{Path: fmt.Sprintf("/new/%d.md", i), Content: "new"}); err != nil {
			t.Fatal(err)
		}
	}
	read = b.VectorRowsRead()
	embedQueued(t, a, "m", randomVec, want)
	check(b, "after the other replica's changes")
	if n := b.VectorRowsRead() - read; n > 10 {
		t.Fatalf("catching up with 5 new vectors and 2 deletions read %d vectors from the database", n)
	}
	check(a, "on the replica that wrote")

	// Searches while the other replica writes and embeds always answer
	// without error; once the writes end, exactly.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 3 {
		wg.Go(func() {
			q := make([]float32, dims)
			q[0] = 1
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := b.NearestMemories(ctx, ws, []string{f.store}, "m", q, "", 10); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var mu sync.Mutex
	for i := range 40 {
		id := ids[10+i]
		if _, err := ca.UpdateMemory(ctx, alice, f.store, id, memstore.MemoryUpdate{Content: new(fmt.Sprintf("rewritten %d", i))}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		embedQueued(t, a, "m", randomVec, want)
		mu.Unlock()
	}
	close(stop)
	wg.Wait()
	check(b, "after concurrent writes")

	// A search below a path prefix, and vectors of another model.
	if h, err := b.NearestMemories(ctx, ws, []string{f.store}, "m", randomVec(memstore.EmbeddingTask{}), "/new/", 10); err != nil || len(h) != 2 {
		t.Fatalf("below /new/: %d hits, %v; want the 2 new memories", len(h), err)
	}
	if h, err := b.NearestMemories(ctx, ws, []string{f.store}, "other", randomVec(memstore.EmbeddingTask{}), "", 10); err != nil || len(h) != 0 {
		t.Fatalf("another model found %d hits, %v", len(h), err)
	}
}

// A copy that fell behind the log's trimmed entries reads the store's
// vectors again whole, and still answers exactly.
func TestNearestAfterTrimmedLog(t *testing.T) {
	defer postgres.SetVectorLogKeep(5)()
	f := newTwoReplicas(t, 8, 3)
	a, b, ca, randomVec := f.a, f.b, f.core, f.random
	ctx := context.Background()
	want := map[string][]float32{}
	for i := range 20 {
		if _, err := ca.CreateMemory(ctx, alice, f.store, memstore.MemoryCreate{Path: fmt.Sprintf("/m/%d.md", i), Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	embedQueued(t, a, "m", randomVec, want)
	check := func(what string) {
		t.Helper()
		f.check(t, b, want, 5, what)
	}
	check("first search")
	// 12 changes, one a batch: more than the 5 entries kept.
	for i := range 12 {
		if _, err := ca.CreateMemory(ctx, alice, f.store, memstore.MemoryCreate{Path: fmt.Sprintf("/more/%d.md", i), Content: "y"}); err != nil {
			t.Fatal(err)
		}
		embedQueued(t, a, "m", randomVec, want)
	}
	read := b.VectorRowsRead()
	check("after the log was trimmed")
	if n := b.VectorRowsRead() - read; n != int64(len(want)) {
		t.Fatalf("a copy behind the trimmed log read %d vectors, want the whole store's %d", n, len(want))
	}
}

// The copies of stores' vectors stay within their bound: a store whose
// copy went for another's is read again, and answered exactly.
func TestNearestCopiesWithinTheirBound(t *testing.T) {
	f := newTwoReplicas(t, 8, 5)
	f.b.SetVectorCopyBytes(1) // one copy at a time
	ctx := context.Background()
	other, err := f.core.CreateStore(ctx, alice, memstore.StoreCreate{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	stores := map[string]string{"a": f.store, "b": other.ID}
	wants := map[string]map[string][]float32{"a": {}, "b": {}}
	for name, id := range stores {
		for i := range 4 {
			if _, err := f.core.CreateMemory(ctx, alice, id, memstore.MemoryCreate{Path: fmt.Sprintf("/%s/%d.md", name, i), Content: "x"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	all, storeOf := map[string][]float32{}, map[string]string{}
	embedQueued(t, f.a, "m", func(task memstore.EmbeddingTask) []float32 {
		storeOf[task.MemoryID] = task.StoreID
		return f.random(task)
	}, all)
	for id, v := range all {
		for name, sid := range stores {
			if storeOf[id] == sid {
				wants[name][id] = v
			}
		}
	}
	read := f.b.VectorRowsRead()
	for round, name := range []string{"a", "a", "b", "a", "b"} {
		q := f.random(memstore.EmbeddingTask{})
		got, err := f.b.NearestMemories(ctx, ws, []string{stores[name]}, "m", q, "", 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameHits(got, exactNearest(wants[name], q, 2)); err != nil {
			t.Fatalf("round %d, store %s: %v", round, name, err)
		}
	}
	// a, then b (a goes), a (b goes), b: four reads of 4 vectors.
	if n := f.b.VectorRowsRead() - read; n != 16 {
		t.Fatalf("read %d vectors, want 16: each store again after the other's search", n)
	}
}

// A workspace that searches store after store cannot push another's copy
// out: past its share its own copies go, and the other workspace's next
// search reads nothing from the database.
func TestNearestCopiesShareBetweenWorkspaces(t *testing.T) {
	f := newTwoReplicas(t, 4, 11)
	ctx := context.Background()
	w, err := f.a.CreateWorkspace(ctx, "busy")
	if err != nil {
		t.Fatal(err)
	}
	busyCaller := &memstore.Caller{WorkspaceID: w.ID, Actor: alice.Actor}
	var busy []string
	for i := range 6 {
		s, err := f.core.CreateStore(ctx, busyCaller, memstore.StoreCreate{Name: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		busy = append(busy, s.ID)
	}
	var per int64 // the bytes of one store's copy
	for _, c := range []struct {
		caller *memstore.Caller
		store  string
	}{{alice, f.store}, {busyCaller, busy[0]}, {busyCaller, busy[1]}, {busyCaller, busy[2]}, {busyCaller, busy[3]}, {busyCaller, busy[4]}, {busyCaller, busy[5]}} {
		var set vector.Set
		for j := range 4 {
			m, err := f.core.CreateMemory(ctx, c.caller, c.store, memstore.MemoryCreate{Path: fmt.Sprintf("/%d.md", j), Content: "x"})
			if err != nil {
				t.Fatal(err)
			}
			set.Add(m.ID, make([]byte, 4))
		}
		per = max(per, set.Bytes())
	}
	embedQueued(t, f.a, "m", f.random, map[string][]float32{})
	f.b.SetVectorCopyBytes(4*per + per/2)
	f.b.SetVectorCopyShare(2*per + per/2)
	search := func(workspaceID, store string) {
		if hits, err := f.b.NearestMemories(ctx, workspaceID, []string{store}, "m", f.random(memstore.EmbeddingTask{}), "", 1); err != nil || len(hits) != 1 {
			t.Fatalf("search of %s: %v, %v; want a memory", store, hits, err)
		}
	}
	search(ws, f.store)
	for range 3 {
		for _, s := range busy {
			search(w.ID, s)
		}
	}
	read := f.b.VectorRowsRead()
	search(ws, f.store)
	if n := f.b.VectorRowsRead() - read; n != 0 {
		t.Fatalf("the quiet workspace's search read %d vectors again: the busy one pushed its copy out", n)
	}
}

// A search naming another workspace's store, or no store at all, is
// refused before it locks or makes any copy: the other workspace's copy
// keeps its place, and no entry is left behind.
func TestNearestOtherWorkspaceTouchesNoCopy(t *testing.T) {
	f := newTwoReplicas(t, 4, 7)
	ctx := context.Background()
	if _, err := f.core.CreateMemory(ctx, alice, f.store, memstore.MemoryCreate{Path: "/x.md", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	embedQueued(t, f.a, "m", f.random, map[string][]float32{})
	if _, err := f.b.NearestMemories(ctx, ws, []string{f.store}, "m", f.random(memstore.EmbeddingTask{}), "", 10); err != nil {
		t.Fatal(err)
	}
	n, uses := f.b.VectorCopies()
	if n != 1 {
		t.Fatalf("%d copies after one search, want 1", n)
	}
	for _, stores := range [][]string{{f.store}, {"memstore_01zzzzzzzzzzzzzzzzzzzzzzzz"}} {
		_, err := f.b.NearestMemories(ctx, "wrkspc_evil", stores, "m", f.random(memstore.EmbeddingTask{}), "", 10)
		if memstore.ErrorCode(err) != memstore.ENotFound {
			t.Fatalf("search of %v by another workspace: %v, want not found", stores, err)
		}
		n2, uses2 := f.b.VectorCopies()
		if n2 != n || fmt.Sprint(uses2) != fmt.Sprint(uses) {
			t.Fatalf("a refused search of %v changed the copies: %v, was %v", stores, uses2, uses)
		}
	}
}

// A copy not searched for a while goes at the next sweep, taking the
// vectors of memories deleted since by another replica with it; a store
// deleted through this replica takes its copy at once.
func TestVectorCopiesSweptAndDropped(t *testing.T) {
	f := newTwoReplicas(t, 4, 9)
	ctx := context.Background()
	x, err := f.core.CreateMemory(ctx, alice, f.store, memstore.MemoryCreate{Path: "/x.md", Content: "x"})
	if err != nil {
		t.Fatal(err)
	}
	embedQueued(t, f.a, "m", f.random, map[string][]float32{})
	search := func() {
		t.Helper()
		if _, err := f.b.NearestMemories(ctx, ws, []string{f.store}, "m", f.random(memstore.EmbeddingTask{}), "", 10); err != nil {
			t.Fatal(err)
		}
	}
	search()
	if err := f.core.DeleteMemory(ctx, alice, f.store, x.ID, ""); err != nil {
		t.Fatal(err)
	}
	f.b.SweepVectorCopies(time.Now())
	if !f.b.VectorCopyHolds(x.ID) {
		t.Fatal("a copy used just now was swept")
	}
	f.b.SweepVectorCopies(time.Now().Add(memstore.VectorCopyIdle + time.Second))
	if f.b.VectorCopyHolds(x.ID) {
		t.Fatal("after the sweep, a copy still holds the vector of a deleted memory")
	}
	y, err := f.core.CreateMemory(ctx, alice, f.store, memstore.MemoryCreate{Path: "/y.md", Content: "y"})
	if err != nil {
		t.Fatal(err)
	}
	embedQueued(t, f.a, "m", f.random, map[string][]float32{})
	search()
	if !f.b.VectorCopyHolds(y.ID) {
		t.Fatal("the search made no copy")
	}
	if err := memstore.NewCore(f.b).DeleteStore(ctx, alice, f.store); err != nil {
		t.Fatal(err)
	}
	if n, _ := f.b.VectorCopies(); n != 0 || f.b.VectorCopyHolds(y.ID) {
		t.Fatalf("after the store's deletion, %d copies are left", n)
	}
}

// TestVectorQueueWhenAsked: a database queues no memory to embed until a
// server with an embedding model starts on it (StartEmbeddings, first of
// its worker), which queues every memory; a write in flight then is
// waited for and queued too, so none is missed, whatever the database's
// default isolation, and every later write is queued. Turned on, the
// queue stays on, and turning it on again waits for nothing.
func TestVectorQueueWhenAsked(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t, migrate)
	// In a snapshot taken before its lock, the queuing would miss the
	// write it waited for.
	execAll(t, connect(t, url), `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET default_transaction_isolation = ''repeatable read''', current_database()); END $$`)
	db := mustOpenAt(t, url, postgres.Options{})
	co := memstore.NewCore(db)
	st := mustCreateStore(t, co, alice)
	create := func(path string) {
		t.Helper()
		if _, err := co.CreateMemory(ctx, alice, st.ID, memstore.MemoryCreate{Path: path, Content: "text of " + path}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		create(fmt.Sprintf("/before/%d.md", i))
	}
	watch := connect(t, url)
	if n := queuedNot(t, watch, 0); n != 0 {
		t.Fatalf("%d memories queued with no model ever, want 0", n)
	}

	h := writeInFlight(t, url, st.ID)
	on := make(chan error, 1)
	go func() { on <- db.StartEmbeddings(ctx) }()
	waitingOne(t, h, "the memories' table")
	if err := h.tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-on; err != nil {
		t.Fatal(err)
	}
	create("/after.md")
	queuedNot(t, watch, 5)

	// On for good: a second server with a model does not wait for the
	// writes in flight.
	h = writeInFlight(t, url, st.ID)
	again := make(chan error, 1)
	go func() { again <- db.StartEmbeddings(ctx) }()
	select {
	case err := <-again:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("turning the queue on again waited for a write in flight")
	}
	if err := h.tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	queuedNot(t, watch, 6)
}

// writeInFlight runs memory_create's statement in store on a transaction
// of its own, not committed: a write in flight.
func writeInFlight(t *testing.T, url, store string) *lockHolder {
	t.Helper()
	n := time.Now().UnixNano()
	return holdLock(t, url, `SELECT memory_create($1, NULL, NULL, NULL, NULL, NULL, $2, $3, 1, $4, 'x'::bytea, $5, 1, $6, 'apikey_alice', 'memory.created')`,
		store, fmt.Sprint("mem_inflight", n), fmt.Sprint("memver_inflight", n), fmt.Sprintf("/in-flight/%d.md", n),
		memstore.ContentSHA256("x"), string(memstore.ActorAPIKey))
}

// queuedNot returns how many memories are queued to embed and, when want
// is more than 0, checks that want are, and that every memory is queued
// at its current version or has a vector of it.
func queuedNot(t *testing.T, conn *pgx.Conn, want int) int {
	t.Helper()
	ctx := context.Background()
	rows, err := conn.Query(ctx, `SELECT m.path FROM memories m
		WHERE NOT EXISTS (SELECT FROM vector_queue q WHERE q.memory_id = m.id AND q.version_id = m.version_id)
		AND NOT EXISTS (SELECT FROM memory_vectors v WHERE v.memory_id = m.id AND v.version_id = m.version_id) ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	missed, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM vector_queue`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if want > 0 && (n != want || len(missed) != 0) {
		t.Errorf("%d memories queued, and %q neither queued nor embedded: want %d queued and none missed", n, missed, want)
	}
	return n
}

// TestVectorQueueTurnOnLimits: turning the queue on waits at most 5 s
// for writes in flight, answering busy, rather than hold every write
// back; a serving role that may write memories but does not own them
// still turns it on; and what happened while the queue was off (here a
// vector left of an older version) is put right: the memory is queued
// at its current version and the old vector deleted.
func TestVectorQueueTurnOnLimits(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t, migrate)
	db := mustOpenAt(t, url, postgres.Options{})
	co := memstore.NewCore(db)
	st := mustCreateStore(t, co, alice)
	m, err := co.CreateMemory(ctx, alice, st.ID, memstore.MemoryCreate{Path: "/a.md", Content: "one"})
	if err != nil {
		t.Fatal(err)
	}

	h := writeInFlight(t, url, st.ID)
	began := time.Now()
	err = db.StartEmbeddings(ctx)
	if took := time.Since(began); memstore.ErrorCode(err) != memstore.EConflict || took > 20*time.Second {
		t.Errorf("turning the queue on behind a write held open: %v after %v, want busy after about 5 s", err, took)
	}
	h.release(t)

	// A vector of the memory's first version, left while the queue is off.
	watch := connect(t, url)
	execAll(t, watch, fmt.Sprintf(`INSERT INTO memory_vectors (memory_id, store_id, version_id, model, dims, vector) VALUES ('%s', '%s', '%s', 'm', 2, '\x0102')`, m.ID, st.ID, m.VersionID))
	if _, err := co.UpdateMemory(ctx, alice, st.ID, m.ID, memstore.MemoryUpdate{Content: new("two")}); err != nil {
		t.Fatal(err)
	}

	// A role that may read and write the tables, not own them, add
	// triggers to them or create anything in their schema; and a login
	// that has its rights only by becoming it (NOINHERIT, SET ROLE).
	role := fmt.Sprintf("memstore_writer_%d", time.Now().UnixNano())
	login := role + "_login"
	execAll(t, watch, `REVOKE CREATE ON SCHEMA public FROM PUBLIC`, `CREATE ROLE `+role+` LOGIN`, `GRANT USAGE ON SCHEMA public TO `+role,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO `+role,
		`GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO `+role,
		`CREATE ROLE `+login+` LOGIN NOINHERIT IN ROLE `+role)
	t.Cleanup(func() {
		execAll(t, connect(t, url), `DROP OWNED BY `+role, `DROP ROLE `+login, `DROP ROLE `+role)
	})
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	// The role itself may turn the queue on (here rolled back).
	u.User = neturl.User(role)
	asRole := connect(t, u.String())
	tx, err := asRole.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT vector_queue_on()`); err != nil {
		t.Errorf("the writing role turning the queue on: %v", err)
	}
	tx.Rollback(ctx)
	// A role that may only read the tables may not turn it on.
	reader := role + "_reader"
	execAll(t, watch, `CREATE ROLE `+reader+` LOGIN`, `GRANT USAGE ON SCHEMA public TO `+reader,
		`GRANT SELECT ON ALL TABLES IN SCHEMA public TO `+reader)
	t.Cleanup(func() {
		execAll(t, connect(t, url), `DROP OWNED BY `+reader, `DROP ROLE `+reader)
	})
	// Not even with a temporary table of its own named memories, which
	// the function must not take for the real one.
	u.User = neturl.User(reader)
	asReader := connect(t, u.String())
	execAll(t, asReader, `CREATE TEMP TABLE memories (id text, store_id text, version_id text, created_at bigint)`,
		fmt.Sprintf(`INSERT INTO memories VALUES ('%s', '%s', 'ver_forged', 0)`, m.ID, st.ID))
	_, err = asReader.Exec(ctx, `SELECT vector_queue_on()`)
	if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "42501" {
		t.Errorf("a role that may only read turning the queue on: %v, want insufficient_privilege", err)
	}
	var on bool
	if err := watch.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_trigger WHERE tgname = 'memories_vector_queue')`).Scan(&on); err != nil || on {
		t.Errorf("after a reader's attempt the queue is on: %v, %v", on, err)
	}

	u.User = neturl.User(login)
	q := u.Query()
	q.Set("options", "-c role="+role)
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20") // libpq's URLs take no + for a space
	writer := mustOpenAt(t, u.String(), postgres.Options{})
	if err := writer.StartEmbeddings(ctx); err != nil {
		t.Fatalf("a login that writes as a role that does not own the tables turning the queue on: %v", err)
	}
	writer.Close()
	queuedNot(t, watch, 1)
	var stale int
	if err := watch.QueryRow(ctx, `SELECT count(*) FROM memory_vectors`).Scan(&stale); err != nil || stale != 0 {
		t.Errorf("%d vectors left of an older version (%v), want 0", stale, err)
	}
}

// TestVectorQueueMigration: the upgrade that leaves the queue off until a
// model asks (migration 0010) keeps it on, with its queue, in a database
// that a worker used (a vector stored, or a memory claimed, as a worker
// of the memstore before it may have done and may still be doing), and
// turns it off, emptied, in one no worker used.
func TestVectorQueueMigration(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		use    func(t *testing.T, db *postgres.DB) // what a worker did
		queued int                                 // after the upgrade; 0: off
	}{
		{"a vector stored", func(t *testing.T, db *postgres.DB) {
			tasks := claim(t, db)
			if err := db.PutEmbeddings(ctx, "m", []memstore.Embedding{{MemoryID: tasks[0].MemoryID, VersionID: tasks[0].VersionID, Vector: []float32{1, 0}}}); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"a memory claimed", func(t *testing.T, db *postgres.DB) { claim(t, db) }, 2},
		{"nothing", func(*testing.T, *postgres.DB) {}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := pgtest.DB(t, migrate)
			db := mustOpenAt(t, url, postgres.Options{})
			// The database as the release before 0010 left it: every
			// write queues its memory.
			execAll(t, connect(t, url), `DELETE FROM memstore_schema WHERE version = 10`, `DROP FUNCTION vector_queue_on()`,
				`CREATE TRIGGER memories_vector_queue AFTER INSERT OR UPDATE OF version_id ON memories FOR EACH ROW EXECUTE FUNCTION memories_vector_queue()`)
			co := memstore.NewCore(db)
			st := mustCreateStore(t, co, alice)
			for _, p := range []string{"/a.md", "/b.md"} {
				if _, err := co.CreateMemory(ctx, alice, st.ID, memstore.MemoryCreate{Path: p, Content: "text"}); err != nil {
					t.Fatal(err)
				}
			}
			c.use(t, db)
			db.Close()
			mustOpenAt(t, url, postgres.Options{}) // upgraded
			var queued, triggers int
			if err := connect(t, url).QueryRow(ctx, `SELECT (SELECT count(*) FROM vector_queue),
				(SELECT count(*) FROM pg_trigger WHERE tgrelid = 'memories'::regclass AND tgname = 'memories_vector_queue')`).Scan(&queued, &triggers); err != nil {
				t.Fatal(err)
			}
			if on := c.queued > 0; queued != c.queued || (triggers == 1) != on {
				t.Errorf("after the upgrade, %d memories queued and %d triggers, want %d and the queue on: %v", queued, triggers, c.queued, on)
			}
		})
	}
}

// claim claims one memory to embed, as a worker does.
func claim(t *testing.T, db *postgres.DB) []memstore.EmbeddingTask {
	t.Helper()
	now := time.Now()
	tasks, err := db.ClaimEmbeddings(context.Background(), now, now.Add(time.Minute), 1)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("claim: %v, %v", tasks, err)
	}
	return tasks
}

package sqlite_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/vector"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// embedQueued gives each queued memory of db the vector vec(path).
func embedQueued(t *testing.T, db *sqlite.DB, vec func(path string) []float32) {
	t.Helper()
	now := time.Now()
	tasks, err := db.ClaimEmbeddings(context.Background(), now, now.Add(time.Minute), 100)
	if err != nil {
		t.Fatal(err)
	}
	es := make([]memstore.Embedding, len(tasks))
	for i, task := range tasks {
		es[i] = memstore.Embedding{MemoryID: task.MemoryID, VersionID: task.VersionID, Vector: vec(task.Path)}
	}
	if err := db.PutEmbeddings(context.Background(), "m", es); err != nil {
		t.Fatal(err)
	}
}

func axis(i int) []float32 {
	v := make([]float32, 4)
	v[i] = 1
	return v
}

// A process's copy of a store's vectors follows the changes another
// process makes on the file: new vectors, changed memories, deletions.
func TestNearestSeesOtherProcessesChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memstore.db")
	a := sqlitetest.OpenAt(t, path, sqlite.Options{})
	b := sqlitetest.OpenAt(t, path, sqlite.Options{})
	ctx := context.Background()
	ws := sqlitetest.Workspace(t, a, "acme").ID
	s := sqlitetest.Store(t, a, ws, memstore.StoreCreate{Name: "notes"})
	dims := map[string]int{"/x.md": 0, "/y.md": 1, "/z.md": 2, "/w.md": 3}
	vec := func(p string) []float32 { return axis(dims[p]) }
	x := sqlitetest.Create(t, a, ws, s.ID, "/x.md", "x", alice)
	embedQueued(t, a, vec)
	nearest := func(q []float32, prefix string) []memstore.SearchResult {
		t.Helper()
		hits, err := a.NearestMemories(ctx, ws, []string{s.ID}, "m", q, prefix, 10)
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	if h := nearest(axis(0), ""); len(h) != 1 || h[0].Memory.ID != x.ID {
		t.Fatalf("nearest = %v", h)
	}
	// Another process adds a memory and its vector.
	y := sqlitetest.Create(t, b, ws, s.ID, "/y.md", "y", alice)
	embedQueued(t, b, vec)
	if h := nearest(axis(1), ""); len(h) != 2 || h[0].Memory.ID != y.ID {
		t.Fatalf("after another process's write, nearest = %v", h)
	}
	// ... and deletes one: its vector goes, from the copy too.
	if err := sqlitetest.Writer(b).DeleteMemory(ctx, ws, s.ID, x.ID, "", alice); err != nil {
		t.Fatal(err)
	}
	if h := nearest(axis(0), ""); len(h) != 1 || h[0].Memory.ID != y.ID {
		t.Fatalf("after another process's deletion, nearest = %v", h)
	}
	// A search below a prefix sees only the memories below it.
	z := sqlitetest.Create(t, b, ws, s.ID, "/sub/z.md", "z", alice)
	embedQueued(t, b, func(string) []float32 { return axis(2) })
	if h := nearest(axis(1), "/sub/"); len(h) != 1 || h[0].Memory.ID != z.ID {
		t.Fatalf("below /sub/, nearest = %v", h)
	}
	// Vectors of another model or length are never compared.
	if h, err := a.NearestMemories(ctx, ws, []string{s.ID}, "other", axis(1), "", 10); err != nil || len(h) != 0 {
		t.Fatalf("another model found %v, %v", h, err)
	}
	if h, err := a.NearestMemories(ctx, ws, []string{s.ID}, "m", []float32{1, 0}, "", 10); err != nil || len(h) != 0 {
		t.Fatalf("another length found %v, %v", h, err)
	}
}

// Searches at once while vectors are stored read the file only for what
// changed: a search whose transaction began before another search brought
// the copy further never reads the store's vectors again whole.
func TestNearestConcurrentSearchesCatchUp(t *testing.T) {
	const memories, dims = 100, 8 // embedQueued embeds up to 100
	db := sqlitetest.OpenAt(t, filepath.Join(t.TempDir(), "memstore.db"), sqlite.Options{})
	ctx := context.Background()
	ws := sqlitetest.Workspace(t, db, "acme").ID
	s := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "notes"})
	r := rand.New(rand.NewPCG(1, 2))
	var mu sync.Mutex
	vec := func(string) []float32 {
		mu.Lock()
		defer mu.Unlock()
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	for i := range memories {
		sqlitetest.Create(t, db, ws, s.ID, fmt.Sprintf("/m/%03d.md", i), "x", alice)
	}
	embedQueued(t, db, vec)
	if _, err := db.NearestMemories(ctx, ws, []string{s.ID}, "m", vec(""), "", 10); err != nil {
		t.Fatal(err)
	}
	read := db.VectorRowsRead()
	const rounds = 60
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := db.NearestMemories(ctx, ws, []string{s.ID}, "m", vec(""), "", 10); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for i := range rounds {
		sqlitetest.Create(t, db, ws, s.ID, fmt.Sprintf("/new/%03d.md", i), "y", alice)
		embedQueued(t, db, vec)
	}
	close(stop)
	wg.Wait()
	if n := db.VectorRowsRead() - read; n > 2*rounds {
		t.Fatalf("searches during %d new vectors read %d vectors from the file: the store's %d again", rounds, n, memories)
	}
}

// The copies of stores' vectors stay within their bound: a store whose
// copy went for another's is read again, and answered exactly.
func TestNearestCopiesWithinTheirBound(t *testing.T) {
	db := sqlitetest.OpenAt(t, filepath.Join(t.TempDir(), "memstore.db"), sqlite.Options{})
	db.SetVectorCopyBytes(1) // one copy at a time
	ctx := context.Background()
	ws := sqlitetest.Workspace(t, db, "acme").ID
	stores, want := map[string]string{}, map[string]string{} // the memory at /NAME/2.md
	for _, name := range []string{"a", "b"} {
		s := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: name})
		stores[name] = s.ID
		for i := range 4 {
			m := sqlitetest.Create(t, db, ws, s.ID, fmt.Sprintf("/%s/%d.md", name, i), "x", alice)
			if i == 2 {
				want[name] = m.ID
			}
		}
	}
	embedQueued(t, db, func(p string) []float32 { return axis(int(p[len(p)-4] - '0')) })
	read := db.VectorRowsRead()
	for round, name := range []string{"a", "a", "b", "a", "b"} {
		hits, err := db.NearestMemories(ctx, ws, []string{stores[name]}, "m", axis(2), "", 1)
		if err != nil || len(hits) != 1 || hits[0].Memory.ID != want[name] {
			t.Fatalf("round %d, store %s: %v, %v; want /%s/2.md", round, name, hits, err, name)
		}
	}
	// a, then b (a goes), a (b goes), b: four reads of 4 vectors.
	if n := db.VectorRowsRead() - read; n != 16 {
		t.Fatalf("read %d vectors, want 16: each store again after the other's search", n)
	}
}

// A workspace that searches store after store cannot push another's copy
// out: past its share its own copies go, and the other workspace's next
// search reads nothing from the file.
func TestNearestCopiesShareBetweenWorkspaces(t *testing.T) {
	db := sqlitetest.OpenAt(t, filepath.Join(t.TempDir(), "memstore.db"), sqlite.Options{})
	ctx := context.Background()
	type store struct{ ws, id, want string }
	var busy []store
	var quiet store
	var per int64 // the bytes of one store's copy
	for _, name := range []string{"quiet", "busy"} {
		ws := sqlitetest.Workspace(t, db, name).ID
		for i := range 6 {
			s := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: fmt.Sprint(i)})
			var set vector.Set
			var want string // the memory at /2.md
			for j := range 4 {
				m := sqlitetest.Create(t, db, ws, s.ID, fmt.Sprintf("/%d.md", j), "x", alice)
				set.Add(m.ID, vector.Encode(axis(j)))
				if j == 2 {
					want = m.ID
				}
			}
			per = max(per, set.Bytes())
			if name == "quiet" {
				quiet = store{ws, s.ID, want}
				break
			}
			busy = append(busy, store{ws, s.ID, want})
		}
	}
	embedQueued(t, db, func(p string) []float32 { return axis(int(p[1] - '0')) })
	db.SetVectorCopyBytes(4*per + per/2)
	db.SetVectorCopyShare(2*per + per/2)
	search := func(s store) {
		hits, err := db.NearestMemories(ctx, s.ws, []string{s.id}, "m", axis(2), "", 1)
		if err != nil || len(hits) != 1 || hits[0].Memory.ID != s.want {
			t.Fatalf("search of %s: %v, %v; want /2.md", s.id, hits, err)
		}
	}
	search(quiet)
	for range 3 {
		for _, s := range busy {
			search(s)
		}
	}
	read := db.VectorRowsRead()
	search(quiet)
	if n := db.VectorRowsRead() - read; n != 0 {
		t.Fatalf("the quiet workspace's search read %d vectors again: the busy one pushed its copy out", n)
	}
}

// A search naming another workspace's store, or no store at all, is
// refused before it locks or makes any copy: the other workspace's copy
// keeps its place, and no entry is left behind.
func TestNearestOtherWorkspaceTouchesNoCopy(t *testing.T) {
	db := sqlitetest.Open(t, sqlite.Options{})
	ctx := context.Background()
	acme := sqlitetest.Workspace(t, db, "acme").ID
	evil := sqlitetest.Workspace(t, db, "evil").ID
	s := sqlitetest.Store(t, db, acme, memstore.StoreCreate{Name: "notes"})
	sqlitetest.Create(t, db, acme, s.ID, "/x.md", "x", alice)
	embedQueued(t, db, func(string) []float32 { return axis(0) })
	if _, err := db.NearestMemories(ctx, acme, []string{s.ID}, "m", axis(0), "", 10); err != nil {
		t.Fatal(err)
	}
	n, uses := db.VectorCopies()
	if n != 1 {
		t.Fatalf("%d copies after one search, want 1", n)
	}
	for _, stores := range [][]string{{s.ID}, {"memstore_01zzzzzzzzzzzzzzzzzzzzzzzz"}} {
		if _, err := db.NearestMemories(ctx, evil, stores, "m", axis(0), "", 10); memstore.ErrorCode(err) != memstore.ENotFound {
			t.Fatalf("search of %v by another workspace: %v, want not found", stores, err)
		}
		n2, uses2 := db.VectorCopies()
		if n2 != n || fmt.Sprint(uses2) != fmt.Sprint(uses) {
			t.Fatalf("a refused search of %v changed the copies: %v, was %v", stores, uses2, uses)
		}
	}
}

// A copy not searched for a while goes at the next sweep, taking the
// vectors of memories deleted since with it; a store deleted through
// this process takes its copy at once.
func TestVectorCopiesSweptAndDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memstore.db")
	a := sqlitetest.OpenAt(t, path, sqlite.Options{})
	b := sqlitetest.OpenAt(t, path, sqlite.Options{})
	ctx := context.Background()
	ws := sqlitetest.Workspace(t, a, "acme").ID
	s := sqlitetest.Store(t, a, ws, memstore.StoreCreate{Name: "notes"})
	x := sqlitetest.Create(t, a, ws, s.ID, "/x.md", "x", alice)
	embedQueued(t, a, func(string) []float32 { return axis(0) })
	if _, err := a.NearestMemories(ctx, ws, []string{s.ID}, "m", axis(0), "", 10); err != nil {
		t.Fatal(err)
	}
	// Another process deletes the memory; this one searches no more.
	if err := sqlitetest.Writer(b).DeleteMemory(ctx, ws, s.ID, x.ID, "", alice); err != nil {
		t.Fatal(err)
	}
	a.SweepVectorCopies(time.Now())
	if !a.VectorCopyHolds(x.ID) {
		t.Fatal("a copy used just now was swept")
	}
	a.SweepVectorCopies(time.Now().Add(memstore.VectorCopyIdle + time.Second))
	if a.VectorCopyHolds(x.ID) {
		t.Fatal("after the sweep, a copy still holds the vector of a deleted memory")
	}
	// A store deleted through this process takes its copy, unswept.
	y := sqlitetest.Create(t, a, ws, s.ID, "/y.md", "y", alice)
	embedQueued(t, a, func(string) []float32 { return axis(1) })
	if _, err := a.NearestMemories(ctx, ws, []string{s.ID}, "m", axis(1), "", 10); err != nil {
		t.Fatal(err)
	}
	if !a.VectorCopyHolds(y.ID) {
		t.Fatal("the search made no copy")
	}
	if err := a.DeleteStore(ctx, ws, s.ID); err != nil {
		t.Fatal(err)
	}
	if n, _ := a.VectorCopies(); n != 0 || a.VectorCopyHolds(y.ID) {
		t.Fatalf("after the store's deletion, %d copies are left", n)
	}
}

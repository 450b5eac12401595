package embedindex_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/embed"
	"github.com/memstore/memstore/embed/embedtest"
	"github.com/memstore/memstore/embedindex"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/internal/syncbuf"
	"github.com/memstore/memstore/postgres"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

func TestMain(m *testing.M) {
	if dims := os.Getenv(modelProcessEnv); dims != "" {
		serveModel(dims) // the model process of BenchmarkWritesWithIndexing
		return
	}
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// backend is a database the tests run on, and how to count its rows.
type backend interface {
	memstore.Database
	memstore.VectorStorage
}

// backends runs test on a SQLite file and on a PostgreSQL database.
func backends(t *testing.T, test func(t *testing.T, f *fixture)) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "memstore.db")
		db := sqlitetest.OpenAt(t, path, sqlite.Options{})
		f := newFixture(t, db, func(q string, args ...any) int {
			raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			var n int
			if err := raw.QueryRow(q, args...).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		})
		f.exec = func(q string, args ...any) {
			raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			if _, err := raw.Exec(q, args...); err != nil {
				t.Fatal(err)
			}
		}
		test(t, f)
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.DB(t, func(ctx context.Context, url string) error {
			db, err := postgres.Open(ctx, url, postgres.Options{})
			if err != nil {
				return err
			}
			return db.Close()
		})
		db, err := postgres.Open(context.Background(), url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		numbered := func(q string) string {
			for i := 1; strings.Contains(q, "?"); i++ {
				q = strings.Replace(q, "?", fmt.Sprintf("$%d", i), 1)
			}
			return q
		}
		f := newFixture(t, db, func(q string, args ...any) int {
			q = numbered(q)
			conn, err := pgx.Connect(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			var n int
			if err := conn.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		})
		f.exec = func(q string, args ...any) {
			conn, err := pgx.Connect(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(context.Background(), numbered(q), args...); err != nil {
				t.Fatal(err)
			}
		}
		test(t, f)
	})
}

const dims = 64

type fixture struct {
	t     *testing.T
	db    backend
	count func(q string, args ...any) int
	// exec runs a statement on the database beside the backend, for a
	// state the core does not make.
	exec  func(q string, args ...any)
	core  *memstore.Core
	emb   memstore.Embedder
	srv   *embedtest.Server
	ws    string
	store string
	c     *memstore.Caller
	// workers are the workers run started, whose counts settle waits for.
	workers []*embedindex.Worker
}

func newFixture(t *testing.T, db backend, count func(q string, args ...any) int) *fixture {
	f := &fixture{t: t, db: db, count: count}
	f.srv = embedtest.New(t, dims)
	e, err := embed.NewOpenAI(embed.OpenAIConfig{URL: f.srv.BaseURL(), Model: "hash-64", Dimensions: dims})
	if err != nil {
		t.Fatal(err)
	}
	f.emb = e
	// What a server with the model does first, through its worker: on
	// PostgreSQL, the queue is on from then on.
	if err := f.db.StartEmbeddings(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.core = memstore.NewCore(f.db, memstore.WithEmbedder(e))
	f.ws = f.workspace("acme")
	f.c = &memstore.Caller{WorkspaceID: f.ws, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_test"}}
	f.store = f.newStore(f.c, "notes")
	return f
}

func (f *fixture) workspace(name string) string {
	w, err := f.db.CreateWorkspace(context.Background(), name)
	if err != nil {
		f.t.Fatal(err)
	}
	return w.ID
}

func (f *fixture) newStore(c *memstore.Caller, name string) string {
	s, err := f.core.CreateStore(context.Background(), c, memstore.StoreCreate{Name: name})
	if err != nil {
		f.t.Fatal(err)
	}
	return s.ID
}

func (f *fixture) create(path, content string) *memstore.Memory {
	m, err := f.core.CreateMemory(context.Background(), f.c, f.store, memstore.MemoryCreate{Path: path, Content: content})
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}

// run starts a worker until the test ends.
func (f *fixture) run(e memstore.Embedder) *embedindex.Worker {
	ctx, cancel := context.WithCancel(context.Background())
	w := embedindex.New(embedindex.Config{Storage: f.db, Embedder: e, Idle: 20 * time.Millisecond})
	f.workers = append(f.workers, w)
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	f.t.Cleanup(func() { cancel(); <-done })
	return w
}

// settle waits, within a generous bound, until nothing is queued and the
// workers of run have counted every vector they stored (a worker counts
// a batch just after its transaction commits).
func (f *fixture) settle() {
	f.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, queued, err := f.db.EmbeddingCounts(context.Background())
		if err != nil {
			f.t.Fatal(err)
		}
		var counted int64
		for _, w := range f.workers {
			counted += w.Embedded()
		}
		if queued == 0 && (f.count == nil || len(f.workers) == 0 || counted >= int64(f.count(`SELECT count(*) FROM memory_vectors`))) {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%d memories still wait for a vector after 60s (the workers counted %d)", queued, counted)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (f *fixture) nearest(text string) []memstore.SearchResult {
	f.t.Helper()
	hits, err := nearest(f.core, f.c, f.store, memstore.SearchQuery{Text: text, Limit: 3})
	if err != nil {
		f.t.Fatal(err)
	}
	return hits
}

func TestWorkerEmbedsWrittenMemories(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		f.create("/deploys.md", "kubernetes rollout rollback deploy pipeline")
		f.create("/food.md", "lunch pizza pasta restaurant")
		f.create("/people.md", "alice bob carol team")
		w := f.run(f.emb)
		f.settle()
		hits := f.nearest("how do we rollback a kubernetes deploy")
		if len(hits) == 0 || hits[0].Memory.Path != "/deploys.md" {
			t.Fatalf("nearest = %v, want /deploys.md first", hits)
		}
		if hits[0].Score <= hits[len(hits)-1].Score || hits[0].Memory.Content != "" {
			t.Errorf("hits %v: want best first, without content", hits)
		}
		if w.Embedded() != 3 {
			t.Errorf("Embedded() = %d, want 3", w.Embedded())
		}
		if n := f.count(`SELECT count(*) FROM memory_vectors WHERE model = 'hash-64' AND dims = ? AND length(vector) = ?`, dims, dims); n != 3 {
			t.Errorf("%d vectors of the model stored, want 3", n)
		}
	})
}

// A write does not wait for the model: with the endpoint stuck, writes
// succeed and the lexical search finds them.
func TestWritesDoNotWaitForTheModel(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		stuck := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-stuck:
			case <-r.Context().Done():
			}
		}))
		defer srv.Close()
		defer close(stuck)
		e, _ := embed.NewOpenAI(embed.OpenAIConfig{URL: srv.URL, Model: "stuck", Dimensions: dims, Timeout: time.Minute})
		f.run(e)
		for i := range 20 {
			f.create("/n/"+string(rune('a'+i))+".md", "zebra crossing notes")
		}
		page, err := f.core.SearchMemories(context.Background(), f.c, []string{f.store}, memstore.SearchQuery{Text: "zebra"})
		if err != nil || len(page.Items) != 10 {
			t.Fatalf("lexical search while the model is stuck: %d results, %v", len(page.Items), err)
		}
	})
}

// No vector outlives its content: a change replaces it, a redaction of the
// version and a deletion of the memory remove it.
func TestVectorsFollowTheContent(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		m := f.create("/a.md", "volcano lava eruption")
		f.create("/b.md", "ocean waves surfing")
		f.run(f.emb)
		f.settle()
		old := m.VersionID
		content := "glacier ice snow"
		m2, err := f.core.UpdateMemory(context.Background(), f.c, f.store, m.ID, memstore.MemoryUpdate{Content: &content})
		if err != nil {
			t.Fatal(err)
		}
		if n := f.count(`SELECT count(*) FROM memory_vectors WHERE version_id = ?`, old); n != 0 {
			t.Fatalf("the vector of the replaced content remains")
		}
		f.settle()
		if hits := f.nearest("glacier snow"); hits[0].Memory.ID != m.ID {
			t.Fatalf("after the change, nearest = %v", hits)
		}
		if hits := f.nearest("volcano lava"); len(hits) > 0 && hits[0].Memory.ID == m.ID && hits[0].Score > 0.5 {
			t.Fatalf("the old content is still found: %v", hits)
		}
		// Redacting the current version (after a deletion made it history)
		// and deleting the memory leave no vector of either version.
		if err := f.core.DeleteMemory(context.Background(), f.c, f.store, m.ID, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := f.core.RedactVersion(context.Background(), f.c, f.store, m2.VersionID); err != nil {
			t.Fatal(err)
		}
		if n := f.count(`SELECT count(*) FROM memory_vectors WHERE memory_id = ? OR version_id IN (?, ?)`, m.ID, old, m2.VersionID); n != 0 {
			t.Fatalf("%d vectors of a deleted, redacted memory remain", n)
		}
		if n := f.count(`SELECT count(*) FROM vector_queue WHERE memory_id = ?`, m.ID); n != 0 {
			t.Fatalf("a deleted memory is still queued")
		}
	})
}

// Redacting a version leaves no vector of it, whichever version it is.
func TestRedactionErasesTheVector(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		m := f.create("/secret.md", "password hunter2 vault")
		f.run(f.emb)
		f.settle()
		if n := f.count(`SELECT count(*) FROM memory_vectors WHERE version_id = ?`, m.VersionID); n != 1 {
			t.Fatalf("%d vectors of the version before redaction, want 1", n)
		}
		// The current version cannot be redacted while it is current: replace it.
		content := "nothing to see"
		if _, err := f.core.UpdateMemory(context.Background(), f.c, f.store, m.ID, memstore.MemoryUpdate{Content: &content}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.core.RedactVersion(context.Background(), f.c, f.store, m.VersionID); err != nil {
			t.Fatal(err)
		}
		if n := f.count(`SELECT count(*) FROM memory_vectors WHERE version_id = ?`, m.VersionID); n != 0 {
			t.Fatalf("a vector of the redacted version remains")
		}
	})
}

// renamed is the same endpoint under another model name.
type renamed struct {
	memstore.Embedder
	name string
}

func (r renamed) Model() string { return r.name }

// A change of model computes every vector again.
func TestModelChangeReembeds(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		for _, p := range []string{"/a.md", "/b.md", "/c.md"} {
			f.create(p, "text of "+p)
		}
		ctx, cancel := context.WithCancel(context.Background())
		w := embedindex.New(embedindex.Config{Storage: f.db, Embedder: f.emb, Idle: 20 * time.Millisecond})
		done := make(chan struct{})
		go func() { defer close(done); w.Run(ctx) }()
		f.settle()
		cancel()
		<-done
		f.run(renamed{f.emb, "hash-64-v2"})
		deadline := time.Now().Add(60 * time.Second)
		for f.count(`SELECT count(*) FROM memory_vectors WHERE model = 'hash-64-v2'`) != 3 {
			if time.Now().After(deadline) {
				t.Fatal("the vectors were not computed again with the new model")
			}
			time.Sleep(20 * time.Millisecond)
		}
		if n := f.count(`SELECT count(*) FROM memory_vectors WHERE model <> 'hash-64-v2'`); n != 0 {
			t.Fatalf("%d vectors of the old model remain", n)
		}
	})
}

// One claim shares its batch between workspaces: a workspace with a large
// backlog does not hold back another's single memory.
func TestClaimsShareBetweenWorkspaces(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		for i := range 50 {
			f.create("/bulk/"+strings.Repeat("x", i+1)+".md", "bulk")
		}
		other := f.workspace("other")
		oc := &memstore.Caller{WorkspaceID: other, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_other"}}
		os := f.newStore(oc, "small")
		m, err := f.core.CreateMemory(context.Background(), oc, os, memstore.MemoryCreate{Path: "/one.md", Content: "one"})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		tasks, err := f.db.ClaimEmbeddings(context.Background(), now, now.Add(time.Minute), 10)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, task := range tasks {
			found = found || task.MemoryID == m.ID
		}
		if len(tasks) != 10 || !found {
			t.Fatalf("claim of 10 took %d tasks, the other workspace's memory among them: %v", len(tasks), found)
		}
		// Claimed memories are held by their lease: a second claim takes others.
		again, _ := f.db.ClaimEmbeddings(context.Background(), now, now.Add(time.Minute), 100)
		if len(again) != 41 {
			t.Fatalf("second claim took %d, want the 41 not held", len(again))
		}
	})
}

// The worker retries after the model fails, and gets there.
func TestWorkerRetriesFailures(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		var mu sync.Mutex
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			if calls.Add(1) <= 2 {
				http.Error(w, `{"error":{"message":"busy"}}`, http.StatusServiceUnavailable)
				return
			}
			f.srv.Config.Handler.ServeHTTP(w, r)
		}))
		defer srv.Close()
		e, _ := embed.NewOpenAI(embed.OpenAIConfig{URL: srv.URL + "/v1", Model: "hash-64", Dimensions: dims})
		f.create("/a.md", "retry me")
		w := f.run(e)
		f.settle()
		if w.Failures() < 1 || w.Embedded() != 1 {
			t.Fatalf("failures %d, embedded %d: want failures retried until embedded", w.Failures(), w.Embedded())
		}
	})
}

// A wrong key (401) is not a refusal of the texts: the worker backs off,
// drops nothing, and once the key is right the same memories embed.
func TestWrongKeyDropsNothing(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		var fixed atomic.Bool
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !fixed.Load() {
				http.Error(w, `{"error":{"message":"invalid api key"}}`, http.StatusUnauthorized)
				return
			}
			f.srv.Config.Handler.ServeHTTP(w, r)
		}))
		defer srv.Close()
		e, _ := embed.NewOpenAI(embed.OpenAIConfig{URL: srv.URL + "/v1", Model: "hash-64", Dimensions: dims})
		a := f.create("/a.md", "kept while the key is wrong")
		f.create("/b.md", "kept too")
		ctx, cancel := context.WithCancel(context.Background())
		w := embedindex.New(embedindex.Config{Storage: f.db, Embedder: e, Idle: 10 * time.Millisecond, RetryWait: time.Millisecond})
		done := make(chan struct{})
		go func() { defer close(done); w.Run(ctx) }()
		defer func() { cancel(); <-done }()
		deadline := time.Now().Add(60 * time.Second)
		// Each failure doubles the worker's back-off, from a second.
		for w.Failures() < 3 {
			if time.Now().After(deadline) {
				t.Fatalf("failures %d: want the worker to keep trying", w.Failures())
			}
			time.Sleep(20 * time.Millisecond)
		}
		if w.Dropped() != 0 {
			t.Fatalf("dropped %d memories for a wrong key", w.Dropped())
		}
		if n := f.count(`SELECT count(*) FROM vector_queue WHERE memory_id = ?`, a.ID); n != 1 {
			t.Fatalf("the memory left the queue while the key was wrong")
		}
		fixed.Store(true)
		deadline = time.Now().Add(60 * time.Second)
		for w.Embedded() != 2 {
			if time.Now().After(deadline) {
				t.Fatalf("embedded %d after the key was fixed, want 2", w.Embedded())
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

func TestNearestMemoriesChecks(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		off := memstore.NewCore(f.db)
		if _, err := nearest(off, f.c, f.store, memstore.SearchQuery{Text: "x"}); memstore.ErrorCode(err) != memstore.EInvalid || !strings.Contains(err.Error(), "no embedding model") {
			t.Errorf("without a model: %v", err)
		}
		if _, err := nearest(f.core, f.c, f.store, memstore.SearchQuery{Text: " "}); memstore.ErrorCode(err) != memstore.EInvalid {
			t.Errorf("empty query: %v", err)
		}
		stranger := &memstore.Caller{WorkspaceID: f.workspace("stranger"), Actor: f.c.Actor}
		if _, err := nearest(f.core, stranger, f.store, memstore.SearchQuery{Text: "x"}); memstore.ErrorCode(err) != memstore.ENotFound {
			t.Errorf("another workspace's store: %v", err)
		}
	})
}

// Two workers, as two servers on one PostgreSQL database, share the queue:
// every memory is embedded, each once.
func TestReplicasEmbedEachMemoryOnce(t *testing.T) {
	url := pgtest.DB(t, func(ctx context.Context, url string) error {
		db, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			return err
		}
		return db.Close()
	})
	open := func() *postgres.DB {
		db, err := postgres.Open(context.Background(), url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	a, b := open(), open()
	f := newFixture(t, a, nil)
	const n = 300
	for i := range n {
		f.create(fmt.Sprintf("/m/%03d.md", i), fmt.Sprintf("memory %d", i))
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var workers []*embedindex.Worker
	for _, db := range []*postgres.DB{a, b} {
		w := embedindex.New(embedindex.Config{Storage: db, Embedder: f.emb, Batch: 8, Idle: 20 * time.Millisecond})
		workers = append(workers, w)
		wg.Go(func() { w.Run(ctx) })
	}
	f.settle()
	cancel()
	wg.Wait()
	if got := f.srv.Texts(); got != n {
		t.Errorf("the endpoint embedded %d texts for %d memories: some twice", got, n)
	}
	if workers[0].Embedded() == 0 || workers[1].Embedded() == 0 || workers[0].Embedded()+workers[1].Embedded() != n {
		t.Errorf("the workers embedded %d and %d of %d", workers[0].Embedded(), workers[1].Embedded(), n)
	}
}

// A copy of a database (memstore migrate) copies no vectors: the memories
// restored wait for one, and a worker on the copy embeds them.
func TestRestoredMemoriesAreEmbeddedAgain(t *testing.T) {
	backends(t, func(t *testing.T, src *fixture) {
		for _, p := range []string{"/a.md", "/b.md"} {
			src.create(p, "text of "+p)
		}
		src.run(src.emb)
		src.settle()
		dstPath := filepath.Join(t.TempDir(), "copy.db")
		dst := sqlitetest.OpenAt(t, dstPath, sqlite.Options{})
		if err := dst.Restore(context.Background(), func(sink memstore.RecordSink) error { return src.db.Dump(context.Background(), sink) }); err != nil {
			t.Fatal(err)
		}
		embedded, queued, err := dst.EmbeddingCounts(context.Background())
		if err != nil || embedded != 0 || queued != 2 {
			t.Fatalf("the copy has %d vectors and %d memories queued, want 0 and 2: %v", embedded, queued, err)
		}
		w := embedindex.New(embedindex.Config{Storage: dst, Embedder: src.emb, Idle: 20 * time.Millisecond})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); w.Run(ctx) }()
		defer func() { cancel(); <-done }()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if n, _, _ := dst.EmbeddingCounts(context.Background()); n == 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the copy's memories were not embedded within a minute")
			}
		}
	})
}

// The whole path on real vectors: memories embedded in the background
// with a model2vec model of GloVe word vectors are found by meaning, by a
// query that shares no word with them.
func TestSemanticSearchOnGloveVectors(t *testing.T) {
	m, err := embed.LoadModel2Vec(embedtest.GloveModel(t, filepath.Join("..", "embed", "testdata", "glove")))
	if err != nil {
		t.Fatal(err)
	}
	backends(t, func(t *testing.T, f *fixture) {
		f.core = memstore.NewCore(f.db, memstore.WithEmbedder(m))
		f.create("/garage.md", "My truck needs new tires and the engine is broken.")
		f.create("/kitchen.md", "Apples and bananas for breakfast, with orange juice.")
		f.create("/concert.md", "The guitar and drums were loud at the show.")
		f.run(m)
		f.settle()
		for q, want := range map[string]string{
			"automobile repair mechanic": "/garage.md",
			"fruit salad":                "/kitchen.md",
			"rock band music":            "/concert.md",
		} {
			if hits := f.nearest(q); len(hits) == 0 || hits[0].Memory.Path != want {
				t.Errorf("%q: nearest %v, want %s first", q, hits, want)
			}
		}
	})
}

// While less than a batch waits, the worker lets the queue fill for its
// Idle period before it claims again: writes that come faster than the
// worker's round trips are embedded in full batches and a few partial
// ones, not in a claim and a store of vectors (each a write that the
// writes queue behind) for every few writes.
func TestWorkerBatchesSteadyWrites(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		ctx, cancel := context.WithCancel(context.Background())
		w := embedindex.New(embedindex.Config{Storage: f.db, Embedder: f.emb, Batch: 64, Idle: time.Second})
		done := make(chan struct{})
		go func() { defer close(done); w.Run(ctx) }()
		defer func() { cancel(); <-done }()
		// Longer than Idle, so that the worker is awake during the writes.
		start := time.Now()
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := 0; time.Since(start) < 2500*time.Millisecond; i++ {
					f.create(fmt.Sprintf("/w%d/%04d.md", g, i), "a note about the weather")
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		f.settle()
		n := int(w.Embedded())
		// The full batches, a partial one a second while the writes
		// went on, and the last ones after.
		if max := n/64 + int(elapsed/time.Second) + 3; f.srv.Requests() > max {
			t.Fatalf("%d memories written over %s embedded in %d requests to the model, want at most %d", n, elapsed.Round(time.Millisecond), f.srv.Requests(), max)
		}
	})
}

// refusing is an endpoint that refuses, with 400, any batch holding a
// text with word, and embeds the others as the fixture's endpoint does.
func refusing(t *testing.T, f *fixture, word string) *embed.OpenAI {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), word) {
			http.Error(w, `{"error":{"message":"input rejected"}}`, http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		f.srv.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e, err := embed.NewOpenAI(embed.OpenAIConfig{URL: srv.URL + "/v1", Model: "hash-64", Dimensions: dims})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A text the model refuses fails only its own memory: the other
// workspaces' memories, claimed in the same batch, are embedded.
func TestRefusedTextHoldsBackNoOtherWorkspace(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		f.create("/bad.md", "poison")
		var others []string
		for i := range 5 {
			ws := f.workspace(fmt.Sprintf("other%d", i))
			c := &memstore.Caller{WorkspaceID: ws, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_other"}}
			st := f.newStore(c, "notes")
			m, err := f.core.CreateMemory(context.Background(), c, st, memstore.MemoryCreate{Path: "/ok.md", Content: fmt.Sprintf("fine text %d", i)})
			if err != nil {
				t.Fatal(err)
			}
			others = append(others, m.ID)
		}
		f.run(refusing(t, f, "poison"))
		deadline := time.Now().Add(60 * time.Second)
		for {
			n := 0
			for _, id := range others {
				n += f.count(`SELECT count(*) FROM memory_vectors WHERE memory_id = ?`, id)
			}
			if n == len(others) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of the %d other workspaces' memories embedded after 60s, while one memory's text is refused", n, len(others))
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// A memory whose text the model refuses every time leaves the queue after
// EmbeddingAttempts claims, is counted, and is still found lexically.
func TestRefusedMemoryIsDroppedAfterItsAttempts(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		bad := f.create("/bad.md", "poison pill")
		ctx, cancel := context.WithCancel(context.Background())
		w := embedindex.New(embedindex.Config{Storage: f.db, Embedder: refusing(t, f, "poison"), Idle: 10 * time.Millisecond, RetryWait: time.Millisecond})
		done := make(chan struct{})
		go func() { defer close(done); w.Run(ctx) }()
		defer func() { cancel(); <-done }()
		deadline := time.Now().Add(60 * time.Second)
		for w.Dropped() == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("the refused memory was never dropped (failures %d)", w.Failures())
			}
			time.Sleep(20 * time.Millisecond)
		}
		if n := f.count(`SELECT count(*) FROM vector_queue WHERE memory_id = ?`, bad.ID); n != 0 {
			t.Fatalf("the dropped memory is still queued")
		}
		if n := f.count(`SELECT count(*) FROM memory_vectors WHERE memory_id = ?`, bad.ID); n != 0 {
			t.Fatalf("the refused memory has a vector")
		}
		if w.Dropped() != 1 || w.Failures() != 0 {
			t.Fatalf("dropped %d, failures %d: want 1 dropped, and no back-off of the worker for a refusal", w.Dropped(), w.Failures())
		}
		p, err := f.core.SearchMemories(context.Background(), f.c, []string{f.store}, memstore.SearchQuery{Text: "poison", Mode: memstore.ModeLexical})
		if err != nil || len(p.Items) != 1 || p.Items[0].Memory.ID != bad.ID {
			t.Fatalf("lexical search of the dropped memory: %v, %+v", err, p.Items)
		}
	})
}

// With more workspaces than a claim's limit, the workspaces that waited
// longest go first: every workspace is served within two claims, not the
// same first ones every time.
func TestClaimsRotateBetweenWorkspaces(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		type ws struct {
			c     *memstore.Caller
			store string
		}
		var all []ws
		for i := range 100 {
			c := &memstore.Caller{WorkspaceID: f.workspace(fmt.Sprintf("w%03d", i)), Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_w"}}
			all = append(all, ws{c, f.newStore(c, "notes")})
		}
		for round := range 2 {
			for _, w := range all {
				if _, err := f.core.CreateMemory(context.Background(), w.c, w.store, memstore.MemoryCreate{Path: fmt.Sprintf("/m%d.md", round), Content: "text"}); err != nil {
					t.Fatal(err)
				}
			}
		}
		served := map[string]bool{}
		now := time.Now()
		for range 2 {
			tasks, err := f.db.ClaimEmbeddings(context.Background(), now, now.Add(time.Minute), 64)
			if err != nil {
				t.Fatal(err)
			}
			if len(tasks) != 64 {
				t.Fatalf("a claim of 64 took %d", len(tasks))
			}
			for _, task := range tasks {
				served[task.WorkspaceID] = true
			}
		}
		if len(served) != len(all) {
			t.Fatalf("%d of %d workspaces served in two claims of 64", len(served), len(all))
		}
	})
}

// A redacted version gets no vector, and leaves the queue: even a
// version redacted while a worker holds its memory (the core redacts
// only past versions; the storage does not count on it).
func TestRedactedVersionGetsNoVector(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		m := f.create("/secret.md", "password hunter2 vault")
		now := time.Now()
		tasks, err := f.db.ClaimEmbeddings(context.Background(), now, now.Add(time.Minute), 10)
		if err != nil || len(tasks) != 1 {
			t.Fatalf("claim: %d tasks, %v", len(tasks), err)
		}
		f.exec(`UPDATE versions SET redacted_at = ? WHERE id = ?`, time.Now().UnixNano(), m.VersionID)
		if n := f.count(`SELECT count(*) FROM vector_queue WHERE version_id = ?`, m.VersionID); n != 0 {
			t.Errorf("the redacted version is still queued")
		}
		vec := embedtest.Vector("password hunter2 vault", dims)
		if err := f.db.PutEmbeddings(context.Background(), f.emb.Model(), []memstore.Embedding{{MemoryID: m.ID, VersionID: m.VersionID, Vector: vec}}); err != nil {
			t.Fatal(err)
		}
		if n := f.count(`SELECT count(*) FROM memory_vectors WHERE version_id = ?`, m.VersionID); n != 0 {
			t.Errorf("a vector of the redacted version was stored")
		}
	})
}

// nearest is a semantic search of the store.
func nearest(co *memstore.Core, c *memstore.Caller, store string, q memstore.SearchQuery) ([]memstore.SearchResult, error) {
	q.Mode = memstore.ModeSemantic
	p, err := co.SearchMemories(context.Background(), c, []string{store}, q)
	return p.Items, err
}

// refusedStart is storage whose StartEmbeddings fails until it has been
// called twice, and that records when each call came.
type refusedStart struct {
	backend
	mu    sync.Mutex
	calls []time.Time
}

func (r *refusedStart) StartEmbeddings(ctx context.Context) error {
	r.mu.Lock()
	r.calls = append(r.calls, time.Now())
	n := len(r.calls)
	r.mu.Unlock()
	if n < 2 {
		return errors.New("the database is away")
	}
	return r.backend.StartEmbeddings(ctx)
}

// TestWorkerRetriesTurningTheQueueOn: a worker whose first turn of the
// queue on fails logs it once, tries again after its back-off (not at
// once), and then embeds what is queued.
func TestWorkerRetriesTurningTheQueueOn(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		st := &refusedStart{backend: f.db}
		var logged syncbuf.Buffer
		w := embedindex.New(embedindex.Config{Storage: st, Embedder: f.emb, Idle: 20 * time.Millisecond, Log: slog.New(slog.NewTextHandler(&logged, nil))})
		f.workers = append(f.workers, w)
		f.create("/a.md", "embed me once the queue is on")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); w.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		f.settle()
		if w.Embedded() != 1 {
			t.Errorf("embedded %d, want 1", w.Embedded())
		}
		st.mu.Lock()
		calls := slices.Clone(st.calls)
		st.mu.Unlock()
		if len(calls) != 2 || calls[1].Sub(calls[0]) < 900*time.Millisecond {
			t.Errorf("StartEmbeddings called at %v, want twice, a back-off of 1 s apart", calls)
		}
		if n := strings.Count(logged.String(), "turn the queue of memories to embed on"); n != 1 {
			t.Errorf("the failure was logged %d times, want once:\n%s", n, logged.String())
		}
	})
}

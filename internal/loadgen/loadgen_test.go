package loadgen_test

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/loadgen"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// server starts memstore over a fresh database and returns its URL, a key
// and the database.
func server(t testing.TB) (string, string, *sqlite.DB) {
	t.Helper()
	db, _, key := backend(t)
	srv := httptest.NewServer(handler(db))
	t.Cleanup(srv.Close)
	return srv.URL, key, db
}

// backend makes a fresh database with a workspace and a key in it.
func backend(t testing.TB) (db *sqlite.DB, workspaceID, key string) {
	t.Helper()
	db = sqlitetest.Open(t, sqlite.Options{})
	w := sqlitetest.Workspace(t, db, memstore.DefaultWorkspace)
	_, key = sqlitetest.APIKey(t, db, w.ID, "bench")
	return db, w.ID, key
}

// handler is the HTTP API over db.
func handler(db *sqlite.DB) http.Handler {
	core := memstore.NewCore(db)
	return httpapi.New(httpapi.Config{Stores: core, Memories: core, Versions: core, Keys: core, Search: core})
}

func TestRunEveryMix(t *testing.T) {
	url, key, db := server(t)
	for _, mix := range loadgen.Mixes {
		t.Run(mix, func(t *testing.T) {
			r, err := loadgen.Run(t.Context(), loadgen.Config{
				URL: url, APIKey: key, Concurrency: 3, Duration: 300 * time.Millisecond,
				Mix: mix, Memories: 15, ContentBytes: 100,
			})
			if err != nil {
				t.Fatal(err)
			}
			if r.Total.Requests == 0 || len(r.Total.Errors) > 0 {
				t.Fatalf("%d requests, errors %v", r.Total.Requests, r.Total.Errors)
			}
			if r.Total.P50 <= 0 || r.Total.P50 > r.Total.P99 || r.Total.P99 > r.Total.P999 || r.Total.P999 > r.Total.Max {
				t.Errorf("percentiles out of order: %+v", r.Total)
			}
			sum := 0
			for _, s := range r.Ops {
				sum += s.Requests
			}
			if sum != r.Total.Requests {
				t.Errorf("per-op requests add up to %d, total %d", sum, r.Total.Requests)
			}
			// The throwaway store is gone, and with it what was seeded.
			c, err := db.Counts(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if c.Stores != 0 || c.Memories != 0 {
				t.Errorf("left behind %d stores, %d memories", c.Stores, c.Memories)
			}
		})
	}
}

// --stores spreads the writes over that many throwaway stores, each
// client on one, and leaves none behind.
func TestRunSpreadsWritesOverStores(t *testing.T) {
	db, _, key := backend(t)
	h := handler(db)
	var mu sync.Mutex
	creates := map[string]int{} // by store
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if store, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/v1/memory_stores/"), "/memories"); ok && r.Method == "POST" {
			mu.Lock()
			creates[store]++
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	r, err := loadgen.Run(t.Context(), loadgen.Config{URL: srv.URL, APIKey: key, Concurrency: 4, Duration: 300 * time.Millisecond,
		Mix: loadgen.MixWrite, Stores: 3, Memories: 2, ContentBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	if r.Stores != 3 || len(r.Total.Errors) > 0 {
		t.Fatalf("report of %d stores, errors %v", r.Stores, r.Total.Errors)
	}
	if len(creates) != 3 {
		t.Fatalf("memories created in %d stores, want 3: %v", len(creates), creates)
	}
	for store, n := range creates {
		if n < 2 {
			t.Errorf("store %s: %d creates", store, n)
		}
	}
	c, err := db.Counts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if c.Stores != 0 || c.Memories != 0 {
		t.Errorf("left behind %d stores, %d memories", c.Stores, c.Memories)
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	url, key, _ := server(t)
	for name, cfg := range map[string]loadgen.Config{
		"mix":                      {Mix: "chaos", Concurrency: 1, Duration: time.Second, Memories: 1},
		"concurrency":              {Mix: loadgen.MixRead, Duration: time.Second, Memories: 1},
		"no memories":              {Mix: loadgen.MixRead, Concurrency: 1, Duration: time.Second},
		"no memories to search":    {Mix: loadgen.MixSearch, Concurrency: 1, Duration: time.Second},
		"stores of reads":          {Mix: loadgen.MixRead, Concurrency: 4, Stores: 2, Duration: time.Second, Memories: 1},
		"stores and a store":       {Mix: loadgen.MixWrite, Concurrency: 4, Stores: 2, StoreID: "memstore_x", Duration: time.Second},
		"more stores than clients": {Mix: loadgen.MixWrite, Concurrency: 2, Stores: 3, Duration: time.Second},
	} {
		cfg.URL, cfg.APIKey = url, key
		if _, err := loadgen.Run(t.Context(), cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	_, err := loadgen.Run(t.Context(), loadgen.Config{URL: url, APIKey: "sk-memstore-wrong", Mix: loadgen.MixRead, Concurrency: 1, Duration: time.Second, Memories: 1})
	if err == nil {
		t.Error("a refused key: no error")
	}
}

// BenchmarkIngest runs the ingest mix in one process (32 clients, 5
// seconds, memories of 1 KiB) and then waits for the search indexes to
// take in every write. It reports the writes a second during the run and
// the memories indexed a second over the whole time, the run and the
// catching up: the indexer's own pace.
func BenchmarkIngest(b *testing.B) {
	for range b.N {
		url, key, db := server(b)
		r, err := loadgen.Run(b.Context(), loadgen.Config{
			URL: url, APIKey: key, Concurrency: 32, Duration: 5 * time.Second,
			Mix: loadgen.MixIngest, ContentBytes: 1024,
		})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := db.WaitSearchIndex(b.Context()); err != nil {
			b.Fatal(err)
		}
		caughtUp := time.Since(start)
		b.ReportMetric(r.Total.PerSecond, "writes/s")
		b.ReportMetric(float64(r.Total.P99)/float64(time.Millisecond), "p99-ms")
		b.ReportMetric(caughtUp.Seconds(), "catch-up-s")
		// Each create and each update leaves a memory to index.
		b.ReportMetric(float64(r.Total.Requests)/(r.Duration+caughtUp).Seconds(), "indexed/s")
	}
}

// TestRunOverEveryKindOfConnection runs the write mix over https, over a
// server that closes the connection after every answer, so that every
// request dials anew, and over one that sends its answers in chunks.
func TestRunOverEveryKindOfConnection(t *testing.T) {
	_, key, db := server(t)
	api := handler(db)
	closing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(closing.Close)
	chunked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.ServeHTTP(chunkedWriter{w}, r)
	}))
	t.Cleanup(chunked.Close)
	tlsSrv := httptest.NewUnstartedServer(api)
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	for name, cfg := range map[string]loadgen.Config{
		"https":            {URL: tlsSrv.URL, TLS: tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig},
		"connection close": {URL: closing.URL},
		"chunked":          {URL: chunked.URL},
	} {
		t.Run(name, func(t *testing.T) {
			cfg.APIKey, cfg.Mix, cfg.Concurrency, cfg.Duration, cfg.Memories = key, loadgen.MixWrite, 2, 200*time.Millisecond, 3
			r, err := loadgen.Run(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			// Creates, updates and deletes all succeeded.
			if len(r.Ops) != 3 || r.Total.Requests < 3 || len(r.Total.Errors) > 0 {
				t.Fatalf("ops %+v, errors %v", r.Ops, r.Total.Errors)
			}
		})
	}
	// An https server without the client knowing its certificate is an
	// error, not a run of failed requests.
	if _, err := loadgen.Run(t.Context(), loadgen.Config{URL: tlsSrv.URL, APIKey: key, Mix: loadgen.MixRead, Concurrency: 1, Duration: time.Second, Memories: 1}); err == nil {
		t.Error("unknown certificate: no error")
	}
	for _, bad := range []string{"ftp://localhost:1", "localhost:6366", "http://"} {
		if _, err := loadgen.Run(t.Context(), loadgen.Config{URL: bad, APIKey: key, Mix: loadgen.MixRead, Concurrency: 1, Duration: time.Second, Memories: 1}); err == nil {
			t.Errorf("URL %q: no error", bad)
		}
	}
}

// chunkedWriter answers without Content-Length and flushes every write,
// so that net/http sends the body in chunks.
type chunkedWriter struct{ http.ResponseWriter }

func (c chunkedWriter) WriteHeader(status int) {
	c.Header().Del("Content-Length")
	c.ResponseWriter.WriteHeader(status)
}

func (c chunkedWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.ResponseWriter.(http.Flusher).Flush()
	return n, err
}

// TestSearchFindsSeededText runs the search mix and checks, from the
// server's answers, that its queries find the memories it seeded, and
// that a store seeded before (by --store) is searched without seeding.
func TestSearchFindsSeededText(t *testing.T) {
	db, ws, key := backend(t)
	api := handler(db)
	var mu sync.Mutex
	var searches, found int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/search") {
			api.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, r)
		var p struct{ Data []json.RawMessage }
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != http.StatusOK {
			t.Errorf("search %q: %d %s", r.URL.Query().Get("q"), rec.Code, rec.Body)
		}
		mu.Lock()
		searches++
		if len(p.Data) > 0 {
			found++
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	s, err := db.CreateStore(t.Context(), ws, memstore.StoreCreate{Name: "search"}, memstore.Quota{})
	if err != nil {
		t.Fatal(err)
	}
	for _, memories := range []int{40, 0} {
		searches, found = 0, 0
		r, err := loadgen.Run(t.Context(), loadgen.Config{
			URL: srv.URL, APIKey: key, Concurrency: 2, Duration: 300 * time.Millisecond,
			Mix: loadgen.MixSearch, StoreID: s.ID, Memories: memories, ContentBytes: 300,
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Ops) != 1 || r.Ops[0].Op != loadgen.OpSearch || len(r.Total.Errors) > 0 {
			t.Fatalf("seeding %d: ops %+v, errors %v", memories, r.Ops, r.Total.Errors)
		}
		// A query finds a memory when one memory holds all its words:
		// about four queries in five do over 40 memories of prose (rare
		// words miss). Half leaves room for the few dozen searches a
		// slow, loaded machine makes in the time, and fails a search
		// that finds nothing.
		if searches == 0 || found < searches/2 {
			t.Errorf("seeding %d: %d of %d searches found memories", memories, found, searches)
		}
	}
}

// The search mix sends the search mode it is given with every search (a
// server without that mode, or without an embedding model for it, refuses
// the run before it is measured), sends none when given none, and a mode
// is refused for the other mixes.
func TestSearchMode(t *testing.T) {
	db, ws, key := backend(t)
	api := handler(db)
	var mu sync.Mutex
	modes := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/search") {
			q := r.URL.Query()
			mu.Lock()
			modes[q.Get("mode")]++
			mu.Unlock()
			switch q.Get("mode") {
			case "bogus":
				http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"mode \"bogus\" is not a search mode"}}`, http.StatusBadRequest)
				return
			case "semantic":
				// This server answers as one whose API takes the mode.
				q.Del("mode")
				r.URL.RawQuery = q.Encode()
			}
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s, err := db.CreateStore(t.Context(), ws, memstore.StoreCreate{Name: "search"}, memstore.Quota{})
	if err != nil {
		t.Fatal(err)
	}
	run := func(mix, mode string) (*loadgen.Report, error) {
		return loadgen.Run(t.Context(), loadgen.Config{
			URL: srv.URL, APIKey: key, Concurrency: 2, Duration: 200 * time.Millisecond,
			Mix: mix, StoreID: s.ID, Memories: 10, ContentBytes: 100, SearchMode: mode,
		})
	}
	r, err := run(loadgen.MixSearch, "semantic")
	if err != nil || len(r.Total.Errors) > 0 || r.Total.Requests == 0 {
		t.Fatalf("search mode semantic: %v, report %+v", err, r)
	}
	mu.Lock()
	if modes["semantic"] < r.Total.Requests || modes[""] != 0 {
		t.Errorf("searches by mode %v: want every one of the %d semantic", modes, r.Total.Requests)
	}
	clear(modes)
	mu.Unlock()
	if _, err := run(loadgen.MixSearch, ""); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if modes[""] == 0 || len(modes) != 1 {
		t.Errorf("searches by mode %v: want none sent", modes)
	}
	mu.Unlock()
	if _, err := run(loadgen.MixSearch, "bogus"); err == nil || !strings.Contains(err.Error(), `"bogus"`) || !strings.Contains(err.Error(), "400") {
		t.Errorf("a mode the server refuses: %v, want the run refused, naming the mode and the status", err)
	}
	if _, err := run(loadgen.MixWrite, "semantic"); err == nil || !strings.Contains(err.Error(), "search mix") {
		t.Errorf("a search mode with the write mix: %v, want it refused", err)
	}
}

package embedindex_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/embed"
	"github.com/memstore/memstore/embed/embedtest"
	"github.com/memstore/memstore/embedindex"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/cputime"
	"github.com/memstore/memstore/internal/loadgen"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// benchRound is how long each round of BenchmarkWritesWithIndexing writes.
const benchRound = 5 * time.Second

// BenchmarkWritesWithIndexing measures what indexing costs the writes:
// memstore bench's load generator (32 clients over the HTTP API of a core
// on a new SQLite file each round) in rounds without the indexing worker
// and with it, alternating (each iteration is one round of each, their
// order swapped every other time), the worker embedding through an
// OpenAI-compatible endpoint (embedtest's, 384 dimensions, in a process
// of its own, as a model is: its CPU time is not the server's, though it
// shares the machine). The write mix
// deletes what it writes; the ingest mix keeps every memory, each of
// which the worker must embed. It reports the median writes a second of
// each, their ratio, the process's CPU time a write (less moved by the
// machine's other work than the rate), and the memories still waiting
// for a vector when a round with the worker ends (a few: indexing keeps
// up).
func BenchmarkWritesWithIndexing(b *testing.B) {
	for _, mix := range []string{loadgen.MixWrite, loadgen.MixIngest} {
		b.Run("mix="+mix, func(b *testing.B) {
			var off, on, cpuOff, cpuOn, queued []float64
			for i := 0; b.Loop(); i++ {
				order := []bool{false, true}
				if i%2 == 1 {
					order = []bool{true, false}
				}
				for _, indexing := range order {
					perSec, cpu, left := writeRound(b, mix, indexing)
					if indexing {
						on, cpuOn = append(on, perSec), append(cpuOn, cpu)
						queued = append(queued, float64(left))
					} else {
						off, cpuOff = append(off, perSec), append(cpuOff, cpu)
					}
				}
			}
			b.ReportMetric(median(off), "writes/s-alone")
			b.ReportMetric(median(on), "writes/s-indexing")
			b.ReportMetric(median(on)/median(off), "indexing/alone")
			b.ReportMetric(median(cpuOff), "cpu-µs/write-alone")
			b.ReportMetric(median(cpuOn), "cpu-µs/write-indexing")
			b.ReportMetric(median(queued), "queued-at-end")
		})
	}
}

// writeRound runs one round of mix on a new database, with the indexing
// worker or without, and returns the requests a second, the process's CPU
// time a request in µs, and the memories waiting for a vector at its end.
func writeRound(b *testing.B, mix string, indexing bool) (float64, float64, int64) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := sqlitetest.OpenAt(b, filepath.Join(b.TempDir(), "memstore.db"), sqlite.Options{})
	w := sqlitetest.Workspace(b, db, memstore.DefaultWorkspace)
	_, key := sqlitetest.APIKey(b, db, w.ID, "bench")
	// A store of the test's own, which the load generator keeps, so
	// that the queue is counted before the store goes.
	s := sqlitetest.Store(b, db, w.ID, memstore.StoreCreate{Name: "bench"})
	core := memstore.NewCore(db, memstore.MaxMemoriesPerStore(0))
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Stores: core, Memories: core, Versions: core, Keys: core, Search: core}))
	defer srv.Close()
	var wg sync.WaitGroup
	var worker *embedindex.Worker
	if indexing {
		url, stop := modelProcess(b, 384)
		defer stop()
		client, err := embed.NewOpenAI(embed.OpenAIConfig{URL: url, Model: "hash-384"})
		if err != nil {
			b.Fatal(err)
		}
		worker = embedindex.New(embedindex.Config{Storage: db, Embedder: client})
		wg.Go(func() { worker.Run(ctx) })
	}
	c0 := cputime.Process(b)
	r, err := loadgen.Run(ctx, loadgen.Config{
		URL: srv.URL, APIKey: key, StoreID: s.ID, Concurrency: 32, Duration: benchRound,
		Mix: mix, Memories: 100, ContentBytes: 1024,
	})
	if err != nil {
		b.Fatal(err)
	}
	cpu := float64(cputime.Process(b)-c0) / float64(time.Microsecond) / float64(r.Total.Requests)
	if len(r.Total.Errors) > 0 {
		b.Fatalf("errors: %v", r.Total.Errors)
	}
	_, left, err := db.EmbeddingCounts(ctx)
	if err != nil {
		b.Fatal(err)
	}
	cancel()
	wg.Wait()
	if indexing && worker.Embedded() == 0 {
		b.Fatal("the worker embedded nothing")
	}
	b.Logf("%s, indexing %v: %.0f requests/s, %.0f µs of CPU a request, %d queued at the end", mix, indexing, r.Total.PerSecond, cpu, left)
	return r.Total.PerSecond, cpu, left
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// modelProcessEnv, set to a number of dimensions, makes the test binary
// an embedding endpoint (embedtest's) that prints its base URL.
const modelProcessEnv = "MEMSTORE_EMBEDTEST_DIMS"

// modelProcess starts the test binary as an embedding endpoint of dims
// dimensions and returns its base URL and what stops it.
func modelProcess(b *testing.B, dims int) (string, func()) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", modelProcessEnv, dims))
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		b.Fatalf("the model process printed no address: %v", err)
	}
	return strings.TrimSpace(line), stop
}

// serveModel serves embedtest's endpoint of dims dimensions on a free
// port of the loopback, until the process is killed. It writes each
// request's time in the handler to stderr ("embed µs"), so that a
// benchmark over HTTP can report the model's own time apart.
func serveModel(dims string) {
	n, err := strconv.Atoi(dims)
	if err != nil {
		panic(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Printf("http://%s/v1\n", l.Addr())
	h := embedtest.Handler(n)
	panic(http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h.ServeHTTP(w, r)
		fmt.Fprintf(os.Stderr, "embed %d\n", time.Since(start).Microseconds())
	})))
}

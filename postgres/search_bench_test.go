package postgres_test

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/internal/searchcorpus"
	"github.com/memstore/memstore/postgres"
)

// searchDB keeps BenchmarkSearch's memories in a database of one's own:
// building them takes minutes, so a later run reuses them.
var searchDB = flag.String("searchdb", "", "build BenchmarkSearch's store in the PostgreSQL database at `URL` once, and reuse it")

// searchBench opens the database of -searchdb, or a fresh one, with the
// benchmarks' store of searchcorpus.Memories memories in it, loaded
// straight into the table (LoadMemories) if the database has none, and
// returns it with the store's ID and the queries.
func searchBench(b *testing.B) (*postgres.DB, string, []string) {
	b.Helper()
	ctx := context.Background()
	url := *searchDB
	if url == "" {
		url = pgtest.DB(b, migrate)
	}
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	paths, contents, queries := searchcorpus.Bench()
	core := memstore.NewCore(db, memstore.MaxMemoriesPerStore(0))
	p, err := core.Stores(ctx, alice, memstore.StoreFilter{})
	if err != nil {
		b.Fatal(err)
	}
	if len(p.Items) == 1 {
		return db, p.Items[0].ID, queries
	}
	if len(p.Items) > 1 {
		b.Fatalf("%s: want one store, found %d", url, len(p.Items))
	}
	s, err := core.CreateStore(ctx, alice, memstore.StoreCreate{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := db.LoadMemories(ctx, s.ID, paths, contents); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d memories in %s", len(paths), time.Since(start).Round(time.Second))
	return db, s.ID, queries
}

// BenchmarkSearch runs searchcorpus's queries over its memories, one per
// iteration, as sqlite's BenchmarkSearch does, and reports the latency
// percentiles and the results a search.
func BenchmarkSearch(b *testing.B) {
	db, storeID, queries := searchBench(b)
	ctx := context.Background()
	var lat []time.Duration
	results := 0
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		p, err := db.SearchMemories(ctx, ws, []string{storeID}, memstore.SearchQuery{Text: queries[i%len(queries)]})
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		results += len(p.Items)
	}
	b.ReportMetric(searchcorpus.Millis(searchcorpus.Percentile(lat, 50)), "p50-ms")
	b.ReportMetric(searchcorpus.Millis(searchcorpus.Percentile(lat, 99)), "p99-ms")
	b.ReportMetric(float64(results)/float64(len(lat)), "results/op")
}

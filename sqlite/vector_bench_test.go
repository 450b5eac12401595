package sqlite_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/cputime"
	"github.com/memstore/memstore/internal/searchcorpus"
)

// benchDims is the length of the semantic benchmark's vectors, that of
// the small embedding models (all-MiniLM, bge-small, potion-base-8M's 256
// and up).
const benchDims = 384

func randomVector(r *rand.Rand) []float32 {
	v := make([]float32, benchDims)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// embedAll gives every memory of the fixture a random vector (the scan's
// cost does not depend on what the vectors mean), unless it has one.
func embedAll(b *testing.B, f *searchFixture) {
	ctx := context.Background()
	if err := f.db.ResetEmbeddings(ctx, "bench", benchDims); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	now := time.Now()
	for {
		tasks, err := f.db.ClaimEmbeddings(ctx, now, now.Add(time.Hour), 5000)
		if err != nil {
			b.Fatal(err)
		}
		if len(tasks) == 0 {
			break
		}
		es := make([]memstore.Embedding, len(tasks))
		for i, t := range tasks {
			es[i] = memstore.Embedding{MemoryID: t.MemoryID, VersionID: t.VersionID, Vector: randomVector(r)}
		}
		if err := f.db.PutEmbeddings(ctx, "bench", es); err != nil {
			b.Fatal(err)
		}
	}
	if n, _, err := f.db.EmbeddingCounts(ctx); err != nil || n != searchcorpus.Memories {
		b.Fatalf("%d memories embedded, want %d: %v", n, searchcorpus.Memories, err)
	}
}

// BenchmarkSemanticSearch runs, side by side over the 100,000 memories of
// BenchmarkSearch, a lexical search and a nearest-vector search with
// 384-dimension vectors (the model's own time apart: the query vector is
// given), alternating, and reports the percentiles of each, of the two
// together (what a hybrid search spends in the database, before fusion),
// their ratio, and the CPU time of a semantic search (what it costs on a
// busy machine). The first semantic search, which reads the store's
// vectors into memory, is reported apart.
func BenchmarkSemanticSearch(b *testing.B) {
	f := searchBench(b)
	embedAll(b, f)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 6))
	start := time.Now()
	if _, err := f.db.NearestMemories(ctx, ws, []string{f.storeID}, "bench", randomVector(r), "", 10); err != nil {
		b.Fatal(err)
	}
	first := time.Since(start)
	var lex, sem, both []time.Duration
	var cpu time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, err := f.db.SearchMemories(ctx, ws, []string{f.storeID}, memstore.SearchQuery{Text: f.queries[i%len(f.queries)]}); err != nil {
			b.Fatal(err)
		}
		lex = append(lex, time.Since(start))
		q := randomVector(r)
		c0 := cputime.Process(b)
		start = time.Now()
		hits, err := f.db.NearestMemories(ctx, ws, []string{f.storeID}, "bench", q, "", 10)
		sem = append(sem, time.Since(start))
		cpu += cputime.Process(b) - c0
		if err != nil || len(hits) != 10 {
			b.Fatalf("%d hits, %v", len(hits), err)
		}
		both = append(both, lex[len(lex)-1]+sem[len(sem)-1])
	}
	l50, s50 := searchcorpus.Percentile(lex, 50), searchcorpus.Percentile(sem, 50)
	b.ReportMetric(searchcorpus.Millis(l50), "lexical-p50-ms")
	b.ReportMetric(searchcorpus.Millis(searchcorpus.Percentile(lex, 99)), "lexical-p99-ms")
	b.ReportMetric(searchcorpus.Millis(s50), "semantic-p50-ms")
	b.ReportMetric(searchcorpus.Millis(searchcorpus.Percentile(sem, 99)), "semantic-p99-ms")
	b.ReportMetric(searchcorpus.Millis(searchcorpus.Percentile(both, 50)), "hybrid-p50-ms")
	b.ReportMetric(searchcorpus.Millis(searchcorpus.Percentile(both, 99)), "hybrid-p99-ms")
	b.ReportMetric(searchcorpus.Millis(cpu)/float64(len(sem)), "semantic-cpu-ms/op")
	b.ReportMetric(float64(s50)/float64(l50), "semantic/lexical")
	b.ReportMetric(searchcorpus.Millis(first), "semantic-first-ms")
}

// benchEmbedder embeds a query as a random vector of the benchmark's
// model: the model's own time apart, which the query's nearness does not
// change.
type benchEmbedder struct{ r *rand.Rand }

func (e benchEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = randomVector(e.r)
	}
	return out, nil
}
func (benchEmbedder) Model() string   { return "bench" }
func (benchEmbedder) Dimensions() int { return benchDims }

// BenchmarkHybridSearch runs hybrid searches of a page of ten through the
// core over the 100,000 memories of BenchmarkSearch, with 384-dimension
// vectors (the model's time apart), alternating with lexical ones through
// the core, and reports the percentiles of each and their ratio: what a
// hybrid search over HTTP spends in the process, its fusion included.
func BenchmarkHybridSearch(b *testing.B) {
	f := searchBench(b)
	embedAll(b, f)
	ctx := context.Background()
	co := memstore.NewCore(f.db, memstore.WithEmbedder(benchEmbedder{rand.New(rand.NewPCG(7, 8))}))
	c := &memstore.Caller{WorkspaceID: ws, Actor: alice}
	search := func(i int, mode string) time.Duration {
		start := time.Now()
		p, err := co.SearchMemories(ctx, c, []string{f.storeID}, memstore.SearchQuery{Text: f.queries[i%len(f.queries)], Mode: mode})
		if err != nil || len(p.Items) == 0 {
			b.Fatalf("%s search: %d results, %v", mode, len(p.Items), err)
		}
		return time.Since(start)
	}
	search(0, memstore.ModeHybrid) // reads the store's vectors into memory
	var lex, hyb []time.Duration
	for i := 0; b.Loop(); i++ {
		lex = append(lex, search(i, memstore.ModeLexical))
		hyb = append(hyb, search(i, memstore.ModeHybrid))
	}
	l50, h50 := searchcorpus.Percentile(lex, 50), searchcorpus.Percentile(hyb, 50)
	b.ReportMetric(searchcorpus.Millis(l50), "lexical-p50-ms")
	b.ReportMetric(searchcorpus.Millis(h50), "hybrid-p50-ms")
	b.ReportMetric(searchcorpus.Millis(searchcorpus.Percentile(hyb, 99)), "hybrid-p99-ms")
	b.ReportMetric(float64(h50)/float64(l50), "hybrid/lexical")
}

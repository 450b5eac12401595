package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/internal/vector"
	"github.com/memstore/memstore/postgres"
)

// BenchmarkNearest is semantic search's database part on PostgreSQL (the
// model's own time apart: the query vector is given) over a store of
// 100,000 memories with 384-dimension vectors, written straight into the
// tables (the search reads only their IDs, vectors and rows). It reports
// the percentiles of a search and, apart, the first, which reads the
// store's vectors.
func BenchmarkNearest(b *testing.B) {
	const memories, dims = 100_000, 384
	ctx := context.Background()
	url := pgtest.DB(b, migrate)
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s, err := memstore.NewCore(db).CreateStore(ctx, alice, memstore.StoreCreate{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO memories (id, store_id, path, content, sha256, size, version_id, created_at, updated_at, search_text, search_words)
		SELECT 'mem_' || lpad(i::text, 8, '0'), $1, '/m/' || i || '.md', 'x', '', 1, 'ver_' || i, 0, 0, '', ''::tsvector
		FROM generate_series(1, $2) i`, s.ID, memories); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	random := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	rows := make([][]any, memories)
	for i := range rows {
		rows[i] = []any{fmt.Sprintf("mem_%08d", i+1), s.ID, fmt.Sprintf("ver_%d", i+1), "bench", dims, vector.Encode(random())}
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"memory_vectors"}, []string{"memory_id", "store_id", "version_id", "model", "dims", "vector"}, pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	search := func() time.Duration {
		start := time.Now()
		hits, err := db.NearestMemories(ctx, ws, []string{s.ID}, "bench", random(), "", 10)
		if err != nil || len(hits) != 10 {
			b.Fatalf("%d hits, %v", len(hits), err)
		}
		return time.Since(start)
	}
	first := search()
	var lat []time.Duration
	for b.Loop() {
		lat = append(lat, search())
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2])/float64(time.Millisecond), "p50-ms")
	b.ReportMetric(float64(lat[(len(lat)-1)*99/100])/float64(time.Millisecond), "p99-ms")
	b.ReportMetric(float64(first)/float64(time.Millisecond), "first-ms")
}

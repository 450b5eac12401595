package vector

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

func randomSet(n, dims int) (*Set, []byte) {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, dims)
	next := func() []byte {
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		return Encode(v)
	}
	s := &Set{}
	for i := range n {
		s.Add(fmt.Sprintf("mem_%06d", i), next())
	}
	return s, next()
}

// BenchmarkScan is the exact scan's own cost at 100,000 vectors of 384
// dimensions, the kernel of semantic search on either backend, with each
// kernel of this CPU, on one goroutine and shared between the CPUs.
func BenchmarkScan(b *testing.B) {
	s, q := randomSet(100_000, 384)
	defer func(fn func(q, data []byte, dims int, out []int32), w int) { dots, scanWorkers = fn, w }(dots, scanWorkers)
	for _, k := range kernels() {
		for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("kernel=%s/workers=%d", k.name, workers), func(b *testing.B) {
				dots, scanWorkers = k.fn, workers
				for b.Loop() {
					if _, err := s.Nearest(q, 10); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

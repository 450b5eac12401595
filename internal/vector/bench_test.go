package vector

import (
	"fmt"
	"math/rand/v2"
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
// dimensions, the kernel of semantic search on either backend.
func BenchmarkScan(b *testing.B) {
	s, q := randomSet(100_000, 384)
	for b.Loop() {
		if _, err := s.Nearest(q, 10); err != nil {
			b.Fatal(err)
		}
	}
}

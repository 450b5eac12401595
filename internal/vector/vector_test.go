package vector

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func TestEncodeIsUnitInt8(t *testing.T) {
	b := Encode([]float32{3, 4})
	if int8(b[0]) != 76 || int8(b[1]) != 102 { // 0.6×127, 0.8×127
		t.Fatalf("Encode(3,4) = %v, want [76 102]", []int8{int8(b[0]), int8(b[1])})
	}
	if d := Decode(b); math.Abs(float64(d[0])-0.6) > 0.01 || math.Abs(float64(d[1])-0.8) > 0.01 {
		t.Fatalf("Decode = %v", d)
	}
	if z := Encode([]float32{0, 0, 0}); z[0] != 0 || z[1] != 0 || z[2] != 0 {
		t.Fatalf("zero vector encoded as %v", z)
	}
}

// The scan returns the same k vectors, in the same order, as sorting every
// cosine computed in float64 from the blobs: it is exact, also when it is
// shared between goroutines.
func TestNearestIsExact(t *testing.T) {
	defer func(w int) { scanWorkers = w }(scanWorkers)
	for _, workers := range []int{1, 3} {
		scanWorkers = workers
		r := rand.New(rand.NewPCG(7, 9))
		s := &Set{}
		n, dims := 3*minScanShare+17, 24
		type ref struct {
			id string
			s  float64
		}
		q := make([]float32, dims)
		for j := range q {
			q[j] = float32(r.NormFloat64())
		}
		qb := Encode(q)
		var all []ref
		for i := range n {
			v := make([]float32, dims)
			for j := range v {
				v[j] = float32(r.NormFloat64())
			}
			b := Encode(v)
			id := fmt.Sprintf("m%05d", i)
			if err := s.Add(id, b); err != nil {
				t.Fatal(err)
			}
			var d float64
			for j := range b {
				d += float64(int8(b[j])) * float64(int8(qb[j]))
			}
			all = append(all, ref{id, d / (127 * 127)})
		}
		sort.Slice(all, func(i, j int) bool {
			if all[i].s != all[j].s {
				return all[i].s > all[j].s
			}
			return all[i].id < all[j].id
		})
		got, err := s.Nearest(qb, 10)
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range got {
			if h.ID != all[i].id || math.Abs(h.Score-all[i].s) > 1e-9 {
				t.Fatalf("workers %d: hit %d = %v, want %v", workers, i, h, all[i])
			}
		}
	}
}

func TestSetRefusesOtherDimensions(t *testing.T) {
	s := &Set{}
	s.Add("a", Encode([]float32{1, 0}))
	if err := s.Add("b", Encode([]float32{1, 0, 0})); !errors.Is(err, ErrDimensions) {
		t.Fatalf("Add of another length: %v", err)
	}
	if _, err := s.Nearest(Encode([]float32{1, 0, 0}), 1); !errors.Is(err, ErrDimensions) {
		t.Fatalf("Nearest with another length: %v", err)
	}
	if h, _ := (&Set{}).Nearest([]byte{1}, 3); h != nil {
		t.Fatal("an empty set found something")
	}
}

func TestSetReplacesAndRemoves(t *testing.T) {
	s := &Set{}
	s.Add("a", Encode([]float32{1, 0}))
	s.Add("b", Encode([]float32{0, 1}))
	s.Add("c", Encode([]float32{-1, 0}))
	s.Add("a", Encode([]float32{0, -1})) // replaced: now the farthest from (1, 0)
	s.Remove("b")
	s.Remove("zzz")
	hits, _ := s.Nearest(Encode([]float32{1, 0}), 5)
	if s.Len() != 2 || len(hits) != 2 || hits[0].ID != "a" || hits[1].ID != "c" {
		t.Fatalf("len %d, hits %v: want a (replaced) then c, b removed", s.Len(), hits)
	}
	s.Remove("a")
	s.Remove("c")
	if h, _ := s.Nearest(Encode([]float32{1, 0}), 5); s.Len() != 0 || len(h) != 0 {
		t.Fatalf("an emptied set found %v", h)
	}
}

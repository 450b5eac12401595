// Package vector keeps embedding vectors compactly and finds the nearest
// ones by an exact scan. Both backends store a memory's vector as the blob
// Encode makes and search with Scan, so they rank alike.
//
// A blob is the vector quantised to int8 (each number times 127, the
// vector being of unit length), one byte a dimension: a 384-dimension
// vector is 384 bytes, a quarter of float32, and the scan reads a quarter
// as much. The loss is below what ranks of unit vectors notice.
package vector

import (
	"container/heap"
	"errors"
	"github.com/memstore/memstore/internal/storecopy"
	"math"
	"runtime"
	"sort"
	"sync"
)

// Encode quantises a vector to its blob. v is normalised to unit length
// first, so that every component fits [-1, 1] and a dot product of two
// blobs orders like the cosine of their vectors.
func Encode(v []float32) []byte {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	out := make([]byte, len(v))
	if s == 0 {
		return out
	}
	inv := 1 / math.Sqrt(s)
	for i, x := range v {
		q := math.Round(float64(x) * inv * 127)
		out[i] = byte(int8(max(-127, min(127, q))))
	}
	return out
}

// Decode returns the unit vector a blob holds, approximately.
func Decode(b []byte) []float32 {
	out := make([]float32, len(b))
	for i, x := range b {
		out[i] = float32(int8(x)) / 127
	}
	return out
}

// ErrDimensions is a query whose length differs from the stored vectors'.
var ErrDimensions = errors.New("vector dimensions differ")

// Dot is the dot product of two blobs, scaled back to [-1, 1]: the cosine
// similarity of the vectors they hold.
func Dot(a, b []byte) float64 {
	return float64(dot(a, b)) / (127 * 127)
}

// A Hit is one stored vector and its similarity to the query.
type Hit struct {
	ID    string
	Score float64 // cosine similarity, -1 to 1
}

// A Set is vectors of one length laid end to end, the layout a scan reads
// fastest. The zero value is an empty set of any length.
type Set struct {
	dims    int
	ids     []string
	data    []byte
	at      map[string]int // id → its place
	idBytes int64          // the IDs' lengths, summed
}

// Add puts one blob in the set, replacing the id's blob if it has one; a
// blob of another length than the set's is an error, as vectors of
// another model must never be compared.
func (s *Set) Add(id string, blob []byte) error {
	if len(blob) == 0 || (s.dims != 0 && len(blob) != s.dims) {
		return ErrDimensions
	}
	if s.at == nil {
		s.at = map[string]int{}
	}
	s.dims = len(blob)
	if i, ok := s.at[id]; ok {
		copy(s.data[i*s.dims:], blob)
		return nil
	}
	s.at[id] = len(s.ids)
	s.ids = append(s.ids, id)
	s.data = append(s.data, blob...)
	s.idBytes += int64(len(id))
	return nil
}

// Remove takes id's blob out of the set, if it has one: the last blob
// takes its place.
func (s *Set) Remove(id string) {
	i, ok := s.at[id]
	if !ok {
		return
	}
	last := len(s.ids) - 1
	if i != last {
		s.ids[i] = s.ids[last]
		s.at[s.ids[i]] = i
		copy(s.data[i*s.dims:(i+1)*s.dims], s.data[last*s.dims:])
	}
	delete(s.at, id)
	s.idBytes -= int64(len(id))
	s.ids = s.ids[:last]
	s.data = s.data[:last*s.dims]
}

// entryBytes is about what a vector's entry costs beside its bytes and
// its ID's: the ID's string header and slot in the list, and its entry in
// the map of places.
const entryBytes = 64

// Bytes is about how much memory the set holds (0 for a nil set).
func (s *Set) Bytes() int64 {
	if s == nil {
		return 0
	}
	return int64(len(s.data)) + s.idBytes + int64(len(s.ids))*entryBytes
}

// has says whether the set holds a vector of id, and its place.
func (s *Set) has(id string) (int, bool) {
	if s == nil {
		return 0, false
	}
	i, ok := s.at[id]
	return i, ok
}

// Len is how many vectors the set holds.
func (s *Set) Len() int { return len(s.ids) }

// scanWorkers is how many goroutines share a scan of a large set.
var scanWorkers = runtime.GOMAXPROCS(0)

// minScanShare is the fewest vectors worth a goroutine of their own.
const minScanShare = 8192

// Nearest returns the k vectors of the set nearest to query (a blob), best
// first, ties broken by ID. The scan is exact: every vector is compared.
func (s *Set) Nearest(query []byte, k int) ([]Hit, error) {
	if len(s.ids) == 0 || k <= 0 {
		return nil, nil
	}
	if len(query) != s.dims {
		return nil, ErrDimensions
	}
	n := len(s.ids)
	parts := max(1, min(scanWorkers, n/minScanShare))
	results := make([][]Hit, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*n/parts, (p+1)*n/parts
		wg.Go(func() { results[p] = s.scan(query, k, lo, hi) })
	}
	wg.Wait()
	var all []Hit
	for _, r := range results {
		all = append(all, r...)
	}
	SortHits(all)
	return all[:min(k, len(all))], nil
}

// SortHits orders hits best first, ties by ID: the order of Nearest, for
// hits of several sets merged.
func SortHits(hs []Hit) {
	sort.Slice(hs, func(i, j int) bool { return better(hs[i], hs[j]) })
}

// scanChunk is how many vectors a scan scores at a time, before it picks
// the best of them: few enough that their scores stay in the L1 cache.
const scanChunk = 256

// scan keeps the k best of vectors lo to hi in a min-heap.
func (s *Set) scan(query []byte, k, lo, hi int) []Hit {
	h := make(hits, 0, k)
	d := s.dims
	var buf [scanChunk]int32
	for start := lo; start < hi; start += scanChunk {
		scores := buf[:min(scanChunk, hi-start)]
		dots(query, s.data[start*d:(start+len(scores))*d], d, scores)
		for j, raw := range scores {
			score := float64(raw) / (127 * 127)
			if len(h) == k && score < h[0].Score {
				continue
			}
			c := Hit{ID: s.ids[start+j], Score: score}
			if len(h) < k {
				heap.Push(&h, c)
			} else if better(c, h[0]) {
				h[0] = c
				heap.Fix(&h, 0)
			}
		}
	}
	return h
}

// better orders hits: higher score, then smaller ID.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ID < b.ID
}

// hits is a min-heap: the worst kept hit on top.
type hits []Hit

func (h hits) Len() int           { return len(h) }
func (h hits) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hits) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hits) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hits) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Holds says whether s holds the vector of the memory: for the tests of
// erasure (storecopy.Set).
func (s *Set) Holds(memoryID string) bool {
	_, ok := s.has(memoryID)
	return ok
}

// Copies are a process's copies of the stores' vectors (storecopy.Copies),
// each brought up to a position P of its backend's log of vector changes.
type Copies[P comparable] = storecopy.Copies[P, *Set]

// A Copy is one store's vectors of one model and length.
type Copy[P comparable] = storecopy.Copy[P, *Set]

// A CopyKey names a copy of vectors.
type CopyKey = storecopy.CopyKey

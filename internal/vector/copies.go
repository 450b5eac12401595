package vector

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

// Copies are a process's copies in memory of the vectors of the stores it
// searched, one Set a store, model and length, each with the position in
// its database's log of vector changes it was brought up to (At: what a
// backend's log counts in). Reading a store's vectors from the database
// costs far more than comparing them, so a backend keeps a copy and reads
// only what changed since. A copy holds no content, only memory IDs and
// vectors, which the database holds too.
type Copies[P comparable] struct {
	// Limit bounds the bytes the copies keep (Set.Bytes); 0 keeps them
	// all. Past it the least recently used copies go, but never the ones
	// just used: a store larger than the limit alone is kept while it is
	// the one searched.
	Limit int64
	mu    sync.Mutex
	m     map[CopyKey]*Copy[P]
	clock uint64 // counts the locks, to tell the least recently used
}

// A CopyKey names a copy: a store's vectors of one model and length.
type CopyKey struct {
	Store, Model string
	Dims         int
}

// A Copy is one store's vectors, valid as of At; Set is nil before the
// first read and after a failed one.
type Copy[P comparable] struct {
	Key   CopyKey
	mu    sync.Mutex // held while the copy is brought up to date and scanned
	Set   *Set
	At    P
	used  uint64       // Copies.clock at its last lock, under Copies.mu
	bytes atomic.Int64 // Set.Bytes when it was last unlocked
}

// LockStores locks the copies of the stores' vectors of model and dims,
// as Lock does. A search locks them before its transaction reads
// anything: its snapshot is then never older than a copy's, which it can
// only bring forward; it may unlock them once it scanned them.
func (c *Copies[P]) LockStores(storeIDs []string, model string, dims int) ([]*Copy[P], func()) {
	keys := make([]CopyKey, len(storeIDs))
	for i, id := range storeIDs {
		keys[i] = CopyKey{Store: id, Model: model, Dims: dims}
	}
	return c.Lock(keys...)
}

// Lock returns the copies of keys (each once, whatever the repeats), each
// locked, in an order that two callers cannot deadlock in, and the
// function that unlocks them, which may be called more than once.
func (c *Copies[P]) Lock(keys ...CopyKey) ([]*Copy[P], func()) {
	keys = slices.Clone(keys)
	slices.SortFunc(keys, func(a, b CopyKey) int {
		return cmp.Or(cmp.Compare(a.Store, b.Store), cmp.Compare(a.Model, b.Model), cmp.Compare(a.Dims, b.Dims))
	})
	keys = slices.Compact(keys)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[CopyKey]*Copy[P]{}
	}
	copies := make([]*Copy[P], len(keys))
	c.clock++
	for i, k := range keys {
		if c.m[k] == nil {
			c.m[k] = &Copy[P]{Key: k}
		}
		copies[i] = c.m[k]
		copies[i].used = c.clock
	}
	c.mu.Unlock()
	for _, cp := range copies {
		cp.mu.Lock()
	}
	return copies, sync.OnceFunc(func() {
		for _, cp := range copies {
			cp.bytes.Store(cp.Set.Bytes())
			cp.mu.Unlock()
		}
		c.evict(copies)
	})
}

// evict drops the least recently used copies, but those just used and
// those a search holds, until the copies are within the limit.
func (c *Copies[P]) evict(keep []*Copy[P]) {
	if c.Limit <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var total int64
	var old []*Copy[P]
	for _, cp := range c.m {
		total += cp.bytes.Load()
		if !slices.Contains(keep, cp) {
			old = append(old, cp)
		}
	}
	slices.SortFunc(old, func(a, b *Copy[P]) int { return cmp.Compare(a.used, b.used) })
	for _, cp := range old {
		if total <= c.Limit {
			return
		}
		if !cp.mu.TryLock() {
			continue // in use: it goes later, if still the least used
		}
		// A search that took it from the map before this reads its
		// store again into it, and leaves it to the collector.
		total -= cp.bytes.Load()
		delete(c.m, cp.Key)
		cp.Set = nil
		cp.bytes.Store(0)
		cp.mu.Unlock()
	}
}

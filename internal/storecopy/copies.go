// Package storecopy keeps a process's copies in memory of what a backend
// reads of whole stores to search them (a store's vectors, where its
// memories are), each brought up to date from the database before use,
// within a limit of bytes with a fair share for each workspace.
package storecopy

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memstore/memstore/internal/fairshare"
)

// A Set is what a copy holds: a pointer type whose nil is "nothing read
// yet", with its size in memory (0 for nil) and whether it holds anything
// of a memory (false for nil), for the tests of erasure.
type Set interface {
	comparable
	Bytes() int64
	Holds(memoryID string) bool
}

// Copies are a process's copies in memory of what it read of the stores
// it searched, one Set a store (and, for vectors, model and length), each
// with the position in its database's changes it was brought up to (At:
// what the backend counts changes in). Reading a whole store from the
// database costs far more than looking into it, so a backend keeps a copy
// and reads only what changed since. A copy holds no content, only what
// the database holds too (memory IDs and vectors, rowids and paths). A
// copy is a workspace's: a search names its workspace, so that one
// naming another's store never locks nor touches that workspace's copy,
// and a copy that holds nothing (the store was not the workspace's, or
// its read failed) goes on unlock.
type Copies[P comparable, S Set] struct {
	// Limit bounds the bytes the copies keep (Set.Bytes); 0 keeps them
	// all. Past it the least recently used copies of the workspace
	// holding the most go (evict), but never the ones just used: a store
	// larger than the limit alone is kept while it is the one searched.
	Limit int64
	// WorkspaceLimit bounds the bytes of one workspace's copies, its share
	// of Limit; 0 for none. Past it the workspace's own least recently used
	// copies go, so that a workspace searching store after store never
	// takes the others' room.
	WorkspaceLimit int64
	mu             sync.Mutex
	m              map[CopyKey]*Copy[P, S]
	clock          uint64 // counts the locks, to tell the least recently used
}

// A CopyKey names a copy: a workspace's store's vectors of one model and
// length, or (with neither) what else a backend copies of it.
type CopyKey struct {
	Workspace, Store, Model string
	Dims                    int
}

// A Copy is what was read of one store, valid as of At; Set is nil before
// the first read and after a failed one.
type Copy[P comparable, S Set] struct {
	Key   CopyKey
	mu    sync.Mutex // held while the copy is brought up to date and scanned
	Set   S
	At    P
	used  uint64       // Copies.clock at its last lock, under Copies.mu
	last  time.Time    // when it was last locked, under Copies.mu
	bytes atomic.Int64 // Set.Bytes when it was last unlocked
}

// LockStores locks the copies of the stores (of their vectors of model
// and dims; "" and 0 for other copies), as Lock does. A search locks them before its transaction reads
// anything: its snapshot is then never older than a copy's, which it can
// only bring forward; it may unlock them once it scanned them.
func (c *Copies[P, S]) LockStores(workspaceID string, storeIDs []string, model string, dims int) ([]*Copy[P, S], func()) {
	keys := make([]CopyKey, len(storeIDs))
	for i, id := range storeIDs {
		keys[i] = CopyKey{Workspace: workspaceID, Store: id, Model: model, Dims: dims}
	}
	return c.Lock(keys...)
}

// Lock returns the copies of keys (each once, whatever the repeats), each
// locked, in an order that two callers cannot deadlock in, and the
// function that unlocks them, which may be called more than once.
func (c *Copies[P, S]) Lock(keys ...CopyKey) ([]*Copy[P, S], func()) {
	keys = slices.Clone(keys)
	slices.SortFunc(keys, func(a, b CopyKey) int {
		return cmp.Or(cmp.Compare(a.Workspace, b.Workspace), cmp.Compare(a.Store, b.Store), cmp.Compare(a.Model, b.Model), cmp.Compare(a.Dims, b.Dims))
	})
	keys = slices.Compact(keys)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[CopyKey]*Copy[P, S]{}
	}
	copies := make([]*Copy[P, S], len(keys))
	c.clock++
	now := time.Now()
	for i, k := range keys {
		if c.m[k] == nil {
			c.m[k] = &Copy[P, S]{Key: k}
		}
		copies[i] = c.m[k]
		copies[i].used, copies[i].last = c.clock, now
	}
	c.mu.Unlock()
	for _, cp := range copies {
		cp.mu.Lock()
	}
	return copies, sync.OnceFunc(func() {
		for _, cp := range copies {
			cp.bytes.Store(cp.Set.Bytes())
			var none S
			if cp.Set == none {
				c.remove(cp)
			}
			cp.mu.Unlock()
		}
		c.evict(copies)
	})
}

// remove takes cp, locked, out of the map, unless another took its place.
// A search that took it from the map before reads its store into it, and
// leaves it to the collector.
func (c *Copies[P, S]) remove(cp *Copy[P, S]) {
	c.mu.Lock()
	if c.m[cp.Key] == cp {
		delete(c.m, cp.Key)
	}
	c.mu.Unlock()
	var none S
	cp.Set = none
	cp.bytes.Store(0)
}

// Sweep drops the copies last locked before idleSince, but those a search
// holds (it brings them up to date): a copy that no search uses would
// keep the vectors of memories erased since it was last brought up to
// date. A backend runs it on a timer (Sweeper).
func (c *Copies[P, S]) Sweep(idleSince time.Time) {
	c.mu.Lock()
	var idle []*Copy[P, S]
	for _, cp := range c.m {
		if cp.last.Before(idleSince) {
			idle = append(idle, cp)
		}
	}
	c.mu.Unlock()
	for _, cp := range idle {
		if !cp.mu.TryLock() {
			continue // in use
		}
		c.mu.Lock()
		stale := cp.last.Before(idleSince)
		c.mu.Unlock()
		if stale {
			c.remove(cp)
		}
		cp.mu.Unlock()
	}
}

// Sweeper runs Sweep every period, dropping the copies not locked for
// idle, until stop is called; a vector erased by another process thus
// stays in this one's memory for at most idle and a period.
func (c *Copies[P, S]) Sweeper(idle, period time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				c.Sweep(now.Add(-idle))
			}
		}
	}()
	return sync.OnceFunc(func() { close(done) })
}

// DropStore drops the copies of a workspace's store, of every model, once
// the searches that hold them let go: the store was deleted.
func (c *Copies[P, S]) DropStore(workspaceID, storeID string) {
	c.mu.Lock()
	var drop []*Copy[P, S]
	for k, cp := range c.m {
		if k.Workspace == workspaceID && k.Store == storeID {
			drop = append(drop, cp)
		}
	}
	c.mu.Unlock()
	for _, cp := range drop {
		cp.mu.Lock()
		c.remove(cp)
		cp.mu.Unlock()
	}
}

// evict frees copies until each workspace of keep is within its share
// and all within the limit, never those just used (keep) nor those a
// search holds. Past its share, a workspace frees its own least recently
// used copies; past the limit, the workspace holding the most frees its
// least recently used one (fairshare.Reclaim, counting bytes), so that
// one workspace that searches store after store pushes out its own
// copies, never those of the others, and another's store still loads.
func (c *Copies[P, S]) evict(keep []*Copy[P, S]) {
	if c.Limit <= 0 && c.WorkspaceLimit <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var total int64
	held := map[string]int64{}        // bytes by workspace
	old := map[string][]*Copy[P, S]{} // what each may free, least recently used first
	for _, cp := range c.m {
		ws, n := cp.Key.Workspace, cp.bytes.Load()
		total += n
		held[ws] += n
		if !slices.Contains(keep, cp) {
			old[ws] = append(old[ws], cp)
		}
	}
	for _, cps := range old {
		slices.SortFunc(cps, func(a, b *Copy[P, S]) int { return cmp.Compare(a.used, b.used) })
	}
	// free frees ws's least recently used copy that no search holds;
	// false when it has none.
	free := func(ws string) bool {
		for len(old[ws]) > 0 {
			cp := old[ws][0]
			old[ws] = old[ws][1:]
			if !cp.mu.TryLock() {
				continue // in use: it goes later, if still the least used
			}
			// A search that took it from the map before this reads its
			// store again into it, and leaves it to the collector.
			n := cp.bytes.Load()
			total -= n
			held[ws] -= n
			delete(c.m, cp.Key)
			var none S
			cp.Set = none
			cp.bytes.Store(0)
			cp.mu.Unlock()
			return true
		}
		return false
	}
	var mine string
	for _, cp := range keep {
		mine = cp.Key.Workspace
		for c.WorkspaceLimit > 0 && held[mine] > c.WorkspaceLimit && free(mine) {
		}
	}
	for c.Limit > 0 && total > c.Limit {
		givers := map[string]int{mine: int(held[mine])}
		for ws, cps := range old {
			if len(cps) > 0 {
				givers[ws] = int(held[ws])
			}
		}
		from := fairshare.Reclaim(givers, mine)
		switch {
		case from != "":
		case len(old[mine]) > 0:
			from = mine
		default:
			// Mine's copies are all in use: the others' largest holder
			// gives, so that the copies stay within the limit however
			// many workspaces hold one each.
			delete(givers, mine)
			if from = fairshare.Reclaim(givers, mine); from == "" {
				return // every copy is in use or just used
			}
		}
		free(from)
	}
}

// Len is how many copies there are, for tests and metrics.
func (c *Copies[P, S]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Uses is each copy's place in the order of use (higher: used later), so
// that tests can tell that a search touched no copy but its own.
func (c *Copies[P, S]) Uses() map[CopyKey]uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[CopyKey]uint64, len(c.m))
	for k, cp := range c.m {
		out[k] = cp.used
	}
	return out
}

// Holds says whether a copy holds a vector of the memory, so that tests
// can tell that erased data left no copy; it waits for the searches.
func (c *Copies[P, S]) Holds(memoryID string) bool {
	c.mu.Lock()
	copies := make([]*Copy[P, S], 0, len(c.m))
	for _, cp := range c.m {
		copies = append(copies, cp)
	}
	c.mu.Unlock()
	for _, cp := range copies {
		cp.mu.Lock()
		ok := cp.Set.Holds(memoryID)
		cp.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

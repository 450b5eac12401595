package yardstick

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/memstore/memstore"
)

// mapEngine keeps everything in maps under one lock, and no versions.
type mapEngine struct {
	mu     sync.RWMutex
	stores map[string]*mapStore
}

type mapStore struct {
	byID   map[string]*memstore.Memory
	byPath map[string]*memstore.Memory
	paths  []string // sorted, for lists
}

func newMapEngine() *mapEngine { return &mapEngine{stores: map[string]*mapStore{}} }

func (e *mapEngine) close() error { return nil }

func (e *mapEngine) createStore(_ context.Context, s *memstore.Store) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stores[s.ID] = &mapStore{byID: map[string]*memstore.Memory{}, byPath: map[string]*memstore.Memory{}}
	return nil
}

func (e *mapEngine) deleteStore(_ context.Context, id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stores[id] == nil {
		return memstore.ErrStoreNotFound(id)
	}
	delete(e.stores, id)
	return nil
}

func (e *mapEngine) create(_ context.Context, m *memstore.Memory) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.stores[m.StoreID]
	if s == nil {
		return memstore.ErrStoreNotFound(m.StoreID)
	}
	if old := s.byPath[m.Path]; old != nil {
		return pathTaken(old.ID, old.Path)
	}
	stored := *m
	s.byID[m.ID], s.byPath[m.Path] = &stored, &stored
	i, _ := slices.BinarySearch(s.paths, m.Path)
	s.paths = slices.Insert(s.paths, i, m.Path)
	return nil
}

func (e *mapEngine) update(_ context.Context, m *memstore.Memory) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.memory(m.StoreID, m.ID)
	if old == nil {
		return memstore.ErrMemoryNotFound(m.ID)
	}
	m.Path, m.CreatedAt = old.Path, old.CreatedAt
	*old = *m
	return nil
}

func (e *mapEngine) delete(_ context.Context, storeID, id, _ string, _ time.Time) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.memory(storeID, id)
	if m == nil {
		return memstore.ErrMemoryNotFound(id)
	}
	s := e.stores[storeID]
	delete(s.byID, id)
	delete(s.byPath, m.Path)
	i, _ := slices.BinarySearch(s.paths, m.Path)
	s.paths = slices.Delete(s.paths, i, i+1)
	return nil
}

// memory is the memory id of the store, nil if there is none; the
// caller holds the lock.
func (e *mapEngine) memory(storeID, id string) *memstore.Memory {
	if s := e.stores[storeID]; s != nil {
		return s.byID[id]
	}
	return nil
}

func (e *mapEngine) get(_ context.Context, storeID, id string) (*memstore.Memory, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	m := e.memory(storeID, id)
	if m == nil {
		return nil, memstore.ErrMemoryNotFound(id)
	}
	c := *m
	return &c, nil
}

func (e *mapEngine) list(_ context.Context, storeID, after string, limit int) ([]memstore.Memory, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	s := e.stores[storeID]
	if s == nil {
		return nil, memstore.ErrStoreNotFound(storeID)
	}
	i, found := slices.BinarySearch(s.paths, after)
	if found {
		i++
	}
	var out []memstore.Memory
	for _, p := range s.paths[i:min(len(s.paths), i+limit)] {
		m := *s.byPath[p]
		m.Content = ""
		out = append(out, m)
	}
	return out, nil
}

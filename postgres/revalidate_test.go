package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/postgres"
)

// revalidation is what MemoryUnlessAt answered, comparable.
func revalidation(m *memstore.Memory, err error) string {
	switch {
	case err != nil:
		return "error: " + err.Error()
	case m == nil:
		return "unchanged"
	}
	return "memory " + m.ID + " at " + m.VersionID + ": " + m.Content
}

// TestRevalidateConcurrent proves that concurrent revalidations, batched
// together, answer each call exactly as it is answered alone: across
// stores and workspaces, a store or a memory not found told apart, and
// another workspace's memory refused.
func TestRevalidateConcurrent(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, postgres.Options{})
	core := memstore.NewCore(db)
	bob := &memstore.Caller{WorkspaceID: "wrkspc_other", Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_bob"}}
	type mem struct {
		c                  *memstore.Caller
		store, id, version string
	}
	var mems []mem
	for _, c := range []*memstore.Caller{alice, alice, bob} {
		s, err := core.CreateStore(ctx, c, memstore.StoreCreate{Name: "s"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			m, err := core.CreateMemory(ctx, c, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/%d.md", i), Content: fmt.Sprint("content ", i)})
			if err != nil {
				t.Fatal(err)
			}
			mems = append(mems, mem{c, s.ID, m.ID, m.VersionID})
		}
	}
	type call struct{ ws, store, id, version string }
	var calls []call
	for _, m := range mems {
		calls = append(calls,
			call{m.c.WorkspaceID, m.store, m.id, m.version},         // unchanged
			call{m.c.WorkspaceID, m.store, m.id, "ver_stale"},       // read again
			call{m.c.WorkspaceID, m.store, m.id, ""},                // read
			call{m.c.WorkspaceID, m.store, "mem_none", "ver_x"},     // memory not found
			call{m.c.WorkspaceID, "store_none", m.id, m.version},    // store not found
			call{alice.WorkspaceID, mems[0].store, m.id, m.version}, // another store's memory
			call{alice.WorkspaceID, m.store, m.id, m.version},       // another workspace's for bob's
			call{bob.WorkspaceID, m.store, m.id, m.version},         // another workspace's for alice's
		)
	}
	want := make([]string, len(calls))
	kinds := map[string]bool{}
	for i, c := range calls {
		want[i] = revalidation(db.MemoryUnlessAt(ctx, c.ws, c.store, c.id, c.version))
		kinds[want[i][:7]] = true
	}
	if len(kinds) != 3 {
		t.Fatalf("the calls answered only %v", kinds)
	}
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			for r := range 20 {
				i := (g*7 + r) % len(calls)
				c := calls[i]
				if got := revalidation(db.MemoryUnlessAt(ctx, c.ws, c.store, c.id, c.version)); got != want[i] {
					t.Errorf("%+v answered %q concurrently, %q alone", c, got, want[i])
				}
			}
		})
	}
	wg.Wait()
}

// TestRevalidateSeesWrites proves that a revalidation asked after a write
// was acknowledged sees it, from another goroutine, while other
// revalidations keep batches in flight.
func TestRevalidateSeesWrites(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, postgres.Options{})
	core := memstore.NewCore(db)
	s, err := core.CreateStore(ctx, alice, memstore.StoreCreate{Name: "s"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: "/a.md", Content: "0"})
	if err != nil {
		t.Fatal(err)
	}
	busy, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for busy.Err() == nil {
				db.MemoryUnlessAt(busy, ws, s.ID, m.ID, m.VersionID)
			}
		})
	}
	defer wg.Wait()
	defer stop()
	written, checked := make(chan *memstore.Memory), make(chan struct{})
	go func() {
		defer close(written)
		for i := range 200 {
			content := fmt.Sprint(i + 1)
			w, err := core.UpdateMemory(ctx, alice, s.ID, m.ID, memstore.MemoryUpdate{Content: &content})
			if err != nil {
				t.Error(err)
				return
			}
			written <- w
			<-checked // no newer write before the check
		}
	}()
	last := m
	for w := range written {
		got, err := db.MemoryUnlessAt(ctx, ws, s.ID, m.ID, last.VersionID)
		if err != nil || got == nil || got.VersionID != w.VersionID {
			t.Fatalf("after the write of version %s, revalidating %s answered %q", w.VersionID, last.VersionID, revalidation(got, err))
		}
		last = w
		checked <- struct{}{}
	}
}

package postgres_test

import (
	"context"
	"fmt"
	neturl "net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/postgres"
	"github.com/memstore/memstore/storetest"
)

// TestReplicasClaimEachDreamOnce proves that the workers of two
// processes sharing a database, claiming at once, take each dream
// exactly once (SKIP LOCKED), and that together they take them all.
func TestReplicasClaimEachDreamOnce(t *testing.T) {
	ctx := t.Context()
	url := pgtest.DB(t, migrate)
	cores := []*memstore.Core{
		memstore.NewCore(mustOpenAt(t, url, postgres.Options{}), memstore.WithDreams(true)),
		memstore.NewCore(mustOpenAt(t, url, postgres.Options{}), memstore.WithDreams(true)),
	}
	st, err := cores[0].CreateStore(ctx, alice, memstore.StoreCreate{Name: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	ses, _, _, err := cores[0].CreateSession(ctx, alice, memstore.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	var made []string
	for range memstore.MaxLiveDreams {
		d, err := cores[0].CreateDream(ctx, alice, memstore.DreamCreate{
			Inputs: []memstore.DreamInput{{Type: memstore.DreamInputMemoryStore, MemoryStoreID: st.ID},
				{Type: memstore.DreamInputSessions, SessionIDs: []string{ses.ID}}},
			Model: memstore.DreamModel{ID: "claude-test"}})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, d.ID)
	}
	var (
		mu      sync.Mutex
		claimed = map[string][]string{} // dream: its owners
		errs    []error
	)
	const workers = 8
	race(workers, func(i int) {
		owner := fmt.Sprintf("worker-%d", i)
		for {
			d, err := cores[i%2].ClaimDream(ctx, owner, time.Hour)
			mu.Lock()
			if err != nil {
				errs = append(errs, err)
			} else if d != nil {
				claimed[d.ID] = append(claimed[d.ID], owner)
				if d.Attempts != 1 || d.Owner != owner {
					errs = append(errs, fmt.Errorf("dream %s claimed by %s with attempts %d, owner %s", d.ID, owner, d.Attempts, d.Owner))
				}
			}
			mu.Unlock()
			if err != nil || d == nil {
				return
			}
		}
	})
	for _, err := range errs {
		t.Error(err)
	}
	for _, id := range made {
		if owners := claimed[id]; len(owners) != 1 {
			t.Errorf("dream %s was claimed by %v, want exactly one worker", id, owners)
		}
	}
	if len(claimed) != len(made) {
		t.Errorf("%d dreams claimed, want %d", len(claimed), len(made))
	}
	// Each is held by the worker that claimed it, on either handle.
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range claimed {
			if !yield(id) {
				return
			}
		}
	}) {
		if _, err := cores[1].RenewDream(ctx, id, claimed[id][0], time.Hour, memstore.DreamUsage{}); err != nil {
			t.Errorf("the renewal by the claiming worker of %s: %v", id, err)
		}
	}
}

// TestDreamCopyOnOneConnection begins a create_new dream, whose copy of
// its input store writes every memory again, on a pool of one
// connection: a copy that held a connection to read the input while it
// wrote would wait for itself. Past dreamCopyCheck memories the copy
// renews its lease too, which needs a connection as well.
func TestDreamCopyOnOneConnection(t *testing.T) {
	u, err := neturl.Parse(pgtest.DB(t, migrate))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", "1")
	u.RawQuery = q.Encode()
	co := memstore.NewCore(mustOpenAt(t, u.String(), postgres.Options{}), memstore.WithDreams(true))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	st := mustCreateStore(t, co, alice)
	const n = 130
	for i := range n {
		if _, err := co.CreateMemory(ctx, alice, st.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/notes/%03d.md", i), Content: fmt.Sprintf("note %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	ses, _, _, err := co.CreateSession(ctx, alice, memstore.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	d := storetest.BeganDream(ctx, t, co, alice, st.ID, ses.ID, "worker")
	var copied []string
	for _, it := range storetest.ListAll(t, memstore.MemoryFilter{Full: true}, func(f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
		return co.Memories(ctx, alice, d.OutputStoreID, f)
	}) {
		copied = append(copied, it.Memory.Path+"="+it.Memory.Content)
	}
	if len(copied) != n || copied[0] != "/notes/000.md=note 0" || copied[n-1] != fmt.Sprintf("/notes/%03d.md=note %d", n-1, n-1) {
		t.Errorf("the copy holds %d memories (%q...), want %d", len(copied), copied[:min(3, len(copied))], n)
	}
}

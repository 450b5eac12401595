package postgres_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/postgres"
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

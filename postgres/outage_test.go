package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/postgres"
)

// TestAfterOutage: once the server is back from an outage that ended
// every connection, the first ping and the first transaction succeed,
// although the pool still held connections that died with the outage.
func TestAfterOutage(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t, migrate)
	db := mustOpenAt(t, url, postgres.Options{})
	ws, err := db.CreateWorkspace(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	core := memstore.NewCore(db)
	c := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_x"}}
	s, err := core.CreateStore(ctx, c, memstore.StoreCreate{Name: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	// fill leaves several connections idle in the pool: three renames of
	// the store wait together for its row, which another connection
	// holds locked, each on a connection of its own, until that lets go.
	fill := func() {
		t.Helper()
		holder, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close(ctx)
		tx, err := holder.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `SELECT 1 FROM stores WHERE id = $1 FOR UPDATE`, s.ID); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range 3 {
			wg.Go(func() {
				name := fmt.Sprint("notes ", i)
				if _, err := core.UpdateStore(ctx, c, s.ID, memstore.StoreUpdate{Name: &name}); err != nil {
					t.Error(err)
				}
			})
		}
		for deadline := time.Now().Add(10 * time.Second); db.PoolStats().InUse < 3; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the renames hold %d connections, want 3", db.PoolStats().InUse)
			}
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if n := db.PoolStats().Idle; n < 3 {
			t.Fatalf("%d idle connections, want 3", n)
		}
	}

	fill()
	pgtest.Outage(t, url)()
	if err := db.Ping(ctx); err != nil {
		t.Errorf("the first ping after the outage: %v", err)
	}
	fill()
	pgtest.Outage(t, url)()
	name := "renamed"
	if _, err := core.UpdateStore(ctx, c, s.ID, memstore.StoreUpdate{Name: &name}); err != nil {
		t.Errorf("the first transaction after the outage: %v", err)
	}
}

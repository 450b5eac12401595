package postgres_test

import (
	"context"
	"sync"
	"testing"

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
	fill := func() { // several connections in the pool, idle
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { db.Ping(ctx) })
		}
		wg.Wait()
		if n := db.PoolStats().Idle; n < 2 {
			t.Fatalf("%d idle connections, want several", n)
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

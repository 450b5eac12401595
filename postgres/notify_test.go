package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/postgres"
)

// TestRevocationsReachOtherProcesses: what one process revokes, another
// on the same database hears of within a second: a key, a session token,
// a session. A process that never listens opens no connection for it.
func TestRevocationsReachOtherProcesses(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t, migrate)
	here, there := mustOpenAt(t, url, postgres.Options{}), mustOpenAt(t, url, postgres.Options{})
	heard := make(chan memstore.Revocation, 16)
	stop := there.NotifyRevocations(func(r memstore.Revocation) { heard <- r })
	defer stop()
	expect := func(what string, want memstore.Revocation) {
		t.Helper()
		deadline := time.After(time.Second)
		for {
			select {
			case r := <-heard:
				if r == want {
					return
				}
			case <-deadline:
				t.Fatalf("%s: not heard by the other process within a second", what)
			}
		}
	}

	ws, err := here.CreateWorkspace(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := here.CreateAPIKey(ctx, ws.ID, "laptop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := here.RevokeAPIKey(ctx, key.ID); err != nil {
		t.Fatal(err)
	}
	expect("a revoked key", memstore.Revocation{APIKeyID: key.ID})

	core := memstore.NewCore(here)
	admin := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: key.ID}}
	s, tok, _, err := core.CreateSession(ctx, admin, memstore.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.RevokeSessionToken(ctx, admin, tok.ID); err != nil {
		t.Fatal(err)
	}
	expect("a revoked token", memstore.Revocation{SessionID: s.ID, TokenID: tok.ID})
	if _, err := core.ArchiveSession(ctx, admin, s.ID); err != nil {
		t.Fatal(err)
	}
	expect("an archived session", memstore.Revocation{SessionID: s.ID})
}

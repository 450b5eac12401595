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

// TestRevocationsUnheardDuringOutage: a notice sent while another
// process's listening connection is down never reaches it, so once that
// process listens again it tells its listeners that notices went
// unheard, within moments of the database taking connections again, and
// an authentication cache then reads every caller afresh.
func TestRevocationsUnheardDuringOutage(t *testing.T) {
	url := pgtest.DB(t, migrate)
	there := mustOpenAt(t, url, postgres.Options{})
	heard := make(chan memstore.Revocation, 16)
	stop := there.NotifyRevocations(func(r memstore.Revocation) { heard <- r })
	defer stop()

	end := pgtest.Outage(t, url)
	time.Sleep(300 * time.Millisecond) // the listener finds its connection gone
	end()
	back := time.Now()
	for {
		select {
		case r := <-heard:
			if !r.Unheard {
				continue
			}
			if d := time.Since(back); d > time.Second {
				t.Errorf("unheard notices told %v after the database was back; want within a second", d)
			}
			c := &memstore.Caller{WorkspaceID: "wrkspc_x", Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_x"}}
			if r.Stops(c) || !r.Stale(c) {
				t.Errorf("an unheard notice: Stops %v, Stale %v; want a caller read again, not stopped", r.Stops(c), r.Stale(c))
			}
			return
		case <-time.After(5 * time.Second):
			t.Fatal("the other process never said that notices went unheard after the outage")
		}
	}
}

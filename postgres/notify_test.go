package postgres_test

import (
	"context"
	"fmt"
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
	core := memstore.NewCore(here)
	key, _, err := core.CreateAPIKey(ctx, ws.ID, "laptop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.RevokeAPIKey(ctx, key.ID); err != nil {
		t.Fatal(err)
	}
	expect("a revoked key", memstore.Revocation{APIKeyID: key.ID})

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

// TestEventsReachOtherProcesses: a change made through one process wakes
// a stream that follows the store's feed through another within a
// second, far sooner than its periodic re-read, and the stream reads the
// change from the database.
func TestEventsReachOtherProcesses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := pgtest.DB(t, migrate)
	here, there := mustOpenAt(t, url, postgres.Options{}), mustOpenAt(t, url, postgres.Options{})
	key := &memstore.Caller{WorkspaceID: "wrkspc_events", Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_events"}}
	writer, reader := memstore.NewCore(here), memstore.NewCore(there)
	st, err := writer.CreateStore(ctx, key, memstore.StoreCreate{Name: "shared"})
	if err != nil {
		t.Fatal(err)
	}
	wake, stop := memstore.WakeOn(reader, st.ID)
	defer stop()
	got := make(chan memstore.Event, 16)
	const recheck = time.Hour // only a notice can wake the stream in time
	go memstore.FollowEvents(ctx, reader, key, st.ID, memstore.EventsNow, wake, recheck, func(p memstore.EventPage) error {
		for _, e := range p.Events {
			got <- e
		}
		return nil
	})
	time.Sleep(200 * time.Millisecond) // the stream has read the end
	for i := range 3 {
		start := time.Now()
		m, err := writer.CreateMemory(ctx, key, st.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/%d.md", i), Content: "x"})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case e := <-got:
			if e.VersionID != m.VersionID || e.Seq != int64(i+1) {
				t.Errorf("the other process read %+v, want version %s as event %d", e, m.VersionID, i+1)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("change %d reached the other process after %v", i, d)
			}
		case <-time.After(time.Second):
			t.Fatalf("change %d did not reach the other process within a second", i)
		}
	}
}

package sqlite_test

import (
	"context"
	"crypto/rand"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// heard collects the revocations a DB tells its listeners of.
type heard struct {
	mu sync.Mutex
	rs []memstore.Revocation
}

func (h *heard) add(r memstore.Revocation) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rs = append(h.rs, r)
}

func (h *heard) all() []memstore.Revocation {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.rs)
}

// revokeEverything revokes in every way through db, a key of its own, a
// token, a session's stores, a session ended and one deleted, and returns
// what its listeners must hear, in order.
func revokeEverything(t *testing.T, db *sqlite.DB) []memstore.Revocation {
	t.Helper()
	ctx := context.Background()
	ws := sqlitetest.Workspace(t, db, "revoked-"+rand.Text()).ID
	st, other := sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "notes"}), sqlitetest.Store(t, db, ws, memstore.StoreCreate{Name: "other"})
	key, _ := sqlitetest.APIKey(t, db, ws, "laptop")
	core := memstore.NewCore(db)
	admin := &memstore.Caller{WorkspaceID: ws, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: key.ID}}
	var sessions []*memstore.Session
	var tokens []*memstore.SessionToken
	for range 3 {
		s, tok, _, err := core.CreateSession(ctx, admin, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: st.ID}, {StoreID: other.ID}}})
		if err != nil {
			t.Fatal(err)
		}
		sessions, tokens = append(sessions, s), append(tokens, tok)
	}
	if _, err := core.RevokeAPIKey(ctx, key.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := core.RevokeSessionToken(ctx, admin, tokens[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := core.DetachStore(ctx, admin, sessions[0].ID, other.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := core.ArchiveSession(ctx, admin, sessions[1].ID); err != nil {
		t.Fatal(err)
	}
	if err := core.DeleteSession(ctx, admin, sessions[2].ID); err != nil {
		t.Fatal(err)
	}
	return []memstore.Revocation{
		{APIKeyID: key.ID},
		{SessionID: sessions[0].ID, TokenID: tokens[0].ID},
		{SessionID: sessions[0].ID, Refresh: true},
		{SessionID: sessions[1].ID},
		{SessionID: sessions[2].ID},
	}
}

// TestRevocationsOfAnotherHandle: a DB that listens hears, within
// moments, every revocation made through another handle on its file (as
// by another process), once; and its own, once, at their commit.
func TestRevocationsOfAnotherHandle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	server, elsewhere := mustOpenAt(t, path, sqlite.Options{}), mustOpenAt(t, path, sqlite.Options{})
	var h heard
	stop := server.NotifyRevocations(h.add)
	defer stop()

	want := revokeEverything(t, elsewhere)
	for deadline := time.Now().Add(5 * time.Second); len(h.all()) < len(want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("within 5s, heard %+v\nwant %+v", h.all(), want)
		}
	}
	// Its own, at once; none of them again from the table.
	own := revokeEverything(t, server)
	time.Sleep(1500 * time.Millisecond) // three reads of the table
	if got := h.all(); !slices.Equal(got, append(want, own...)) {
		t.Errorf("heard %+v\nwant %+v", got, append(want, own...))
	}
}

// TestRevocationsFallenBehind: a reader that finds rows it never read
// dropped from the table (it fell further behind than the table keeps)
// tells its listeners that notices went unheard, then the rows kept.
func TestRevocationsFallenBehind(t *testing.T) {
	kept := *sqlite.KeptRevocations
	*sqlite.KeptRevocations = 2
	t.Cleanup(func() { *sqlite.KeptRevocations = kept })
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	server, elsewhere := mustOpenAt(t, path, sqlite.Options{}), mustOpenAt(t, path, sqlite.Options{})
	var h heard
	// Through the embedded notifier, which starts no reader: the test
	// reads in its stead.
	stop := server.Revocations.NotifyRevocations(h.add)
	defer stop()
	want := revokeEverything(t, elsewhere)
	last, err := server.ReadRevocations(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if last != int64(len(want)) {
		t.Errorf("read up to row %d, want %d", last, len(want))
	}
	if got := h.all(); !slices.Equal(got, append([]memstore.Revocation{{Unheard: true}}, want[len(want)-2:]...)) {
		t.Errorf("heard %+v\nwant unheard, then %+v", got, want[len(want)-2:])
	}
	// Read to the end, nothing more.
	if again, err := server.ReadRevocations(ctx, last); err != nil || again != last || len(h.all()) != 3 {
		t.Errorf("read again: up to %d (%v), heard %d", again, err, len(h.all()))
	}
}

// BenchmarkRevocationPoll is the cost of one read of the revocations
// table that finds nothing new, which a listening server makes twice a
// second, off the path of every request.
func BenchmarkRevocationPoll(b *testing.B) {
	ctx := context.Background()
	db := mustOpenAt(b, filepath.Join(b.TempDir(), "m.db"), sqlite.Options{})
	last, err := db.ReadRevocations(ctx, 0)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := db.ReadRevocations(ctx, last); err != nil {
			b.Fatal(err)
		}
	}
}

package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
)

// runQuotas runs the tests of the quotas of workspaces, sessions and
// credentials (memstore.Limits). open returns fresh, empty services
// behind a core with limits l, whose clock (the backend's, which expires
// tokens, and the core's, which refills the shares of searches) is now.
//
// Each test fills one workspace to its limit, with the last places raced
// for by more creates than there is room for, and checks that exactly
// the room is made, that the rest are refused with the limit's own error,
// and that another workspace's creates and searches succeed at once.
func runQuotas(t *testing.T, open func(t *testing.T, l memstore.Limits, now func() time.Time) Services) {
	runWithClock(t, []clockTest[*quotaEnv]{
		{"Stores", testStoreQuota},
		{"Sessions", testSessionQuota},
		{"Tokens", testTokenQuota},
		{"SearchRate", testSearchRate},
	}, func(t *testing.T, c *Clock) *quotaEnv {
		return &quotaEnv{clock: c, open: func(l memstore.Limits) Services { return open(t, l, c.Now) }}
	})
}

type quotaEnv struct {
	clock *Clock
	open  func(memstore.Limits) Services
}

// The API keys of the quota tests: two of workspace A, one of B.
var (
	quotaKeyA  = keyCaller(wsA, memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_storetestquotaa1"})
	quotaKeyA2 = keyCaller(wsA, memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_storetestquotaa2"})
	quotaKeyB  = keyCaller(wsB, memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_storetestquotab1"})
)

// testStoreQuota: a workspace holds at most StoresPerWorkspace stores,
// archived ones included; deleting one makes room.
func testStoreQuota(t *testing.T, e *quotaEnv) {
	ctx := t.Context()
	const limit, room, racers = 6, 3, 8
	b := e.open(memstore.Limits{StoresPerWorkspace: limit})
	create := func(c *memstore.Caller, name string) (*memstore.Store, error) {
		return b.CreateStore(ctx, c, memstore.StoreCreate{Name: name})
	}
	var archived *memstore.Store
	for i := range limit - room {
		s, err := create(quotaKeyA, "filler")
		if err != nil {
			t.Fatalf("store %d of %d: %v", i+1, limit, err)
		}
		archived = s
	}
	if _, err := b.ArchiveStore(ctx, quotaKeyA, archived.ID); err != nil {
		t.Fatal(err)
	}
	made, errs := race(racers, func() error { _, err := create(quotaKeyA, "racer"); return err })
	if made != room {
		t.Errorf("%d concurrent creates made %d stores with room for %d", racers, made, room)
	}
	want := memstore.ErrStoreLimit(wsA, limit)
	for _, err := range errs {
		wantRefusal(t, err, want, "--max-stores-per-workspace", "a concurrent store beyond the limit")
	}
	_, err := create(quotaKeyA, "one more")
	wantRefusal(t, err, want, "--max-stores-per-workspace", "a store beyond the limit")
	// Another workspace creates at once.
	if _, err := create(quotaKeyB, "unaffected"); err != nil {
		t.Errorf("a store in another workspace while the first is full: %v", err)
	}
	page, err := b.Stores(ctx, quotaKeyA, memstore.StoreFilter{IncludeArchived: true, Limit: memstore.MaxPageSize})
	if err != nil || len(page.Items) != limit {
		t.Errorf("the full workspace holds %d stores (%v), want %d", len(page.Items), err, limit)
	}
	// Deleting the archived store makes room for one.
	if err := b.DeleteStore(ctx, quotaKeyA, archived.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := create(quotaKeyA, "in the room made"); err != nil {
		t.Errorf("a store once one was deleted: %v", err)
	}
	_, err = create(quotaKeyA, "again one more")
	wantRefusal(t, err, want, "--max-stores-per-workspace", "a store beyond the limit again")
}

// testSessionQuota: a workspace holds at most SessionsPerWorkspace live
// sessions; archiving or deleting one makes room.
func testSessionQuota(t *testing.T, e *quotaEnv) {
	ctx := t.Context()
	const limit, room, racers = 5, 2, 6
	b := e.open(memstore.Limits{SessionsPerWorkspace: limit})
	storeA, err := b.CreateStore(ctx, quotaKeyA, memstore.StoreCreate{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	storeB, err := b.CreateStore(ctx, quotaKeyB, memstore.StoreCreate{Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	create := func(c *memstore.Caller, storeID string) (*memstore.Session, error) {
		s, _, _, err := b.CreateSession(ctx, c, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: storeID}}})
		return s, err
	}
	var first *memstore.Session
	for i := range limit - room {
		s, err := create(quotaKeyA, storeA.ID)
		if err != nil {
			t.Fatalf("session %d of %d: %v", i+1, limit, err)
		}
		if first == nil {
			first = s
		}
	}
	made, errs := race(racers, func() error { _, err := create(quotaKeyA, storeA.ID); return err })
	if made != room {
		t.Errorf("%d concurrent creates made %d sessions with room for %d", racers, made, room)
	}
	want := memstore.ErrSessionLimit(wsA, limit)
	for _, err := range errs {
		wantRefusal(t, err, want, "--max-sessions-per-workspace", "a concurrent session beyond the limit")
	}
	_, err = create(quotaKeyA, storeA.ID)
	wantRefusal(t, err, want, "--max-sessions-per-workspace", "a session beyond the limit")
	if _, err := create(quotaKeyB, storeB.ID); err != nil {
		t.Errorf("a session in another workspace while the first is full: %v", err)
	}
	// Archiving one makes room for one; an archived session does not
	// count.
	if _, err := b.ArchiveSession(ctx, quotaKeyA, first.ID); err != nil {
		t.Fatal(err)
	}
	second, err := create(quotaKeyA, storeA.ID)
	if err != nil {
		t.Fatalf("a session once one was archived: %v", err)
	}
	_, err = create(quotaKeyA, storeA.ID)
	wantRefusal(t, err, want, "--max-sessions-per-workspace", "a session beyond the limit after an archive")
	// So does deleting one.
	if err := b.DeleteSession(ctx, quotaKeyA, second.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := create(quotaKeyA, storeA.ID); err != nil {
		t.Errorf("a session once one was deleted: %v", err)
	}
}

// testTokenQuota: a session holds at most TokensPerSession live tokens,
// its first one included; revoked and expired ones do not count.
func testTokenQuota(t *testing.T, e *quotaEnv) {
	ctx := t.Context()
	const limit, room, racers = 4, 2, 5
	b := e.open(memstore.Limits{TokensPerSession: limit})
	newSession := func(c *memstore.Caller) *memstore.Session {
		t.Helper()
		st, err := b.CreateStore(ctx, c, memstore.StoreCreate{Name: "s"})
		if err != nil {
			t.Fatal(err)
		}
		s, _, _, err := b.CreateSession(ctx, c, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := newSession(quotaKeyA) // its first token is one
	create := func(c *memstore.Caller, sessionID string, ttl time.Duration) (*memstore.SessionToken, error) {
		tok, _, err := b.CreateSessionToken(ctx, c, sessionID, ttl)
		return tok, err
	}
	revocable, err := create(quotaKeyA, s.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	made, errs := race(racers, func() error { _, err := create(quotaKeyA, s.ID, time.Minute); return err })
	if made != room {
		t.Errorf("%d concurrent creates made %d tokens with room for %d", racers, made, room)
	}
	want := memstore.ErrTokenLimit(s.ID, limit)
	for _, err := range errs {
		wantRefusal(t, err, want, "--max-tokens-per-session", "a concurrent token beyond the limit")
	}
	_, err = create(quotaKeyA, s.ID, 0)
	wantRefusal(t, err, want, "--max-tokens-per-session", "a token beyond the limit")
	// Another session of the workspace, and another workspace, are not
	// held back.
	if _, err := create(quotaKeyA, newSession(quotaKeyA).ID, 0); err != nil {
		t.Errorf("a token of another session while the first is full: %v", err)
	}
	if _, err := create(quotaKeyB, newSession(quotaKeyB).ID, 0); err != nil {
		t.Errorf("a token in another workspace while the first is full: %v", err)
	}
	// A revoked token does not count.
	if _, err := b.RevokeSessionToken(ctx, quotaKeyA, revocable.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := create(quotaKeyA, s.ID, 0); err != nil {
		t.Errorf("a token once one was revoked: %v", err)
	}
	_, err = create(quotaKeyA, s.ID, 0)
	wantRefusal(t, err, want, "--max-tokens-per-session", "a token beyond the limit after a revocation")
	// Nor do expired ones: the racers' expire after a minute.
	e.clock.Advance(time.Minute)
	for i := range room {
		if _, err := create(quotaKeyA, s.ID, 0); err != nil {
			t.Errorf("token %d once %d expired: %v", i+1, room, err)
		}
	}
	_, err = create(quotaKeyA, s.ID, 0)
	wantRefusal(t, err, want, "--max-tokens-per-session", "a token beyond the limit after expiries")
}

// testSearchRate: each credential makes at most SearchesPerCredential
// searches a second, and a workspace's together SearchesPerWorkspace;
// one refused is told how long to wait, and another workspace's
// credentials search at once.
func testSearchRate(t *testing.T, e *quotaEnv) {
	ctx := t.Context()
	const perCred, perWS = 3, 5
	b := e.open(memstore.Limits{SearchesPerCredential: perCred, SearchesPerWorkspace: perWS})
	stA, err := b.CreateStore(ctx, quotaKeyA, memstore.StoreCreate{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	stB, err := b.CreateStore(ctx, quotaKeyB, memstore.StoreCreate{Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	search := func(c *memstore.Caller, storeID string) error {
		_, err := b.SearchMemories(ctx, c, []string{storeID}, memstore.SearchQuery{Text: "anything"})
		return err
	}
	wantRateLimited := func(err error, flag, what string) {
		t.Helper()
		if !wantCode(t, err, memstore.ERateLimited, what) {
			return
		}
		if !strings.Contains(err.Error(), flag+")") {
			t.Errorf("%s: error %q does not name %s", what, err, flag)
		}
		var me *memstore.Error
		if errors.As(err, &me); me.RetryAfter <= 0 || me.RetryAfter > time.Second {
			t.Errorf("%s: retry after %v, want (0, 1s]", what, me.RetryAfter)
		}
	}
	// A search the core refuses for its input takes nothing.
	if err := func() error {
		_, err := b.SearchMemories(ctx, quotaKeyA, []string{stA.ID}, memstore.SearchQuery{Text: ""})
		return err
	}(); memstore.ErrorCode(err) != memstore.EInvalid {
		t.Fatalf("an empty query: %v, want %s", err, memstore.EInvalid)
	}
	for i := range perCred {
		if err := search(quotaKeyA, stA.ID); err != nil {
			t.Fatalf("search %d of %d: %v", i+1, perCred, err)
		}
	}
	wantRateLimited(search(quotaKeyA, stA.ID), "--search-rate-per-credential", "a search beyond the credential's rate")
	// Another key of the workspace has its own share, within the
	// workspace's.
	for i := range perWS - perCred {
		if err := search(quotaKeyA2, stA.ID); err != nil {
			t.Fatalf("search %d of the second key: %v", i+1, err)
		}
	}
	wantRateLimited(search(quotaKeyA2, stA.ID), "--search-rate-per-workspace", "a search beyond the workspace's rate")
	// Another workspace searches at once.
	for i := range perCred {
		if err := search(quotaKeyB, stB.ID); err != nil {
			t.Errorf("search %d in another workspace while the first is at its rate: %v", i+1, err)
		}
	}
	// A second later, the shares are whole again.
	e.clock.Advance(time.Second)
	for i := range perCred {
		if err := search(quotaKeyA, stA.ID); err != nil {
			t.Errorf("search %d a second later: %v", i+1, err)
		}
	}
	wantRateLimited(search(quotaKeyA, stA.ID), "--search-rate-per-credential", "a search beyond the rate a second later")
}

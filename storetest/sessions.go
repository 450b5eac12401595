package storetest

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
)

// runSessions runs the tests of memstore.SessionService (docs/api.md,
// Sessions), with the keys beside them: a session token must never pass
// for an API key, nor the reverse. open returns fresh, empty services for
// each subtest whose clock is now: the suite moves that clock to order sessions and to
// expire tokens, so the backend must take every timestamp from it.
func runSessions(t *testing.T, open func(t *testing.T, now func() time.Time) Services) {
	runWithClock(t, []clockTest[*sessionEnv]{
		{"Create", testCreateSession},
		{"Rules", testSessionRules},
		{"Snapshots", testSessionSnapshots},
		{"MountPaths", testMountPaths},
		{"List", testListSessions},
		{"Tokens", testSessionTokens},
		{"TokenPages", testTokenPages},
		{"Expiry", testTokenExpiry},
		{"Archive", testArchiveSession},
		{"Isolation", testSessionIsolation},
		{"Revocations", testRevocations},
		{"Update", testUpdateSession},
		{"Delete", testDeleteSession},
		{"Resources", testSessionResources},
		{"ListFilters", testSessionListFilters},
		{"RefreshNotices", testRefreshNotices},
	}, func(t *testing.T, c *Clock) *sessionEnv {
		raw := open(t, c.Now)
		b := &asKeys{stores: raw, sessions: raw, KeyService: raw}
		e := &sessionEnv{b: b, raw: raw, clock: c}
		e.ws = e.workspace(t, "one")
		e.ws2 = e.workspace(t, "two")
		return e
	})
}

// clockTest is a named test of an environment E with a clock.
type clockTest[E any] struct {
	name string
	fn   func(*testing.T, E)
}

// runWithClock runs each test in a subtest of its own, on the environment
// env makes with a fresh clock.
func runWithClock[E any](t *testing.T, tests []clockTest[E], env func(*testing.T, *Clock) E) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
			tc.fn(t, env(t, c))
		})
	}
}

// A Clock is a time that moves only when told to, for a backend or core
// whose timestamps a test sets.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock that reads start until advanced.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// twice makes a change that must be idempotent, then makes it again, each
// after moving c by step; it returns when the first was made and both
// results.
func twice[T any](t *testing.T, c *Clock, step time.Duration, change func() (T, error)) (at time.Time, first, again T) {
	t.Helper()
	c.Advance(step)
	at = c.Now()
	first, err := change()
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(step)
	if again, err = change(); err != nil {
		t.Fatal(err)
	}
	return at, first, again
}

// sessionEnv is one subtest's backend, clock and two workspaces.
type sessionEnv struct {
	b       sessionBackend
	raw     Services // b as given
	clock   *Clock
	ws, ws2 string
}

func (e *sessionEnv) workspace(t *testing.T, name string) string {
	t.Helper()
	w, err := e.b.CreateWorkspace(t.Context(), name)
	if err != nil {
		t.Fatalf("CreateWorkspace(%q): %v", name, err)
	}
	return w.ID
}

func (e *sessionEnv) store(t *testing.T, ws, name, description string) *memstore.Store {
	t.Helper()
	s, err := e.b.CreateStore(t.Context(), ws, memstore.StoreCreate{Name: name, Description: description})
	if err != nil {
		t.Fatalf("CreateStore(%q): %v", name, err)
	}
	return s
}

func (e *sessionEnv) create(t *testing.T, ws string, c memstore.SessionCreate) (*memstore.Session, *memstore.SessionToken, string) {
	t.Helper()
	s, tok, secret, err := e.b.CreateSession(t.Context(), ws, c)
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	return s, tok, secret
}

func (e *sessionEnv) session(t *testing.T, ws, id string) *memstore.Session {
	t.Helper()
	s, err := e.b.Session(t.Context(), ws, id)
	if err != nil {
		t.Fatalf("Session(%s): %v", id, err)
	}
	return s
}

func (e *sessionEnv) newToken(t *testing.T, ws, sessionID string, ttl time.Duration) (*memstore.SessionToken, string) {
	t.Helper()
	tok, secret, err := e.b.CreateSessionToken(t.Context(), ws, sessionID, ttl)
	if err != nil {
		t.Fatalf("CreateSessionToken(%s): %v", sessionID, err)
	}
	return tok, secret
}

// tokens lists all the tokens of a session, page by page.
func (e *sessionEnv) tokens(t *testing.T, ws, sessionID string) []memstore.SessionToken {
	t.Helper()
	toks, _ := allTokens(t, e.b, ws, sessionID, memstore.SessionTokenFilter{})
	return toks
}

// wantTokens checks that the session of e's first workspace lists exactly
// the tokens want, in that order.
func (e *sessionEnv) wantTokens(t *testing.T, sessionID, what string, want ...*memstore.SessionToken) {
	t.Helper()
	toks := e.tokens(t, e.ws, sessionID)
	if len(toks) != len(want) {
		t.Errorf("%s: %d tokens, want %d", what, len(toks), len(want))
		return
	}
	for i := range toks {
		checkToken(t, &toks[i], want[i], fmt.Sprintf("%s: token %d", what, i))
	}
}

// allTokens pages through a session's tokens.
func allTokens(t *testing.T, b sessionBackend, ws, sessionID string, f memstore.SessionTokenFilter) ([]memstore.SessionToken, []int) {
	t.Helper()
	return allPages(t, "SessionTokens", effectiveLimit(f.Limit, false), f.Page, func(page string) (memstore.Page[memstore.SessionToken], error) {
		f.Page = page
		return b.SessionTokens(t.Context(), ws, sessionID, f)
	})
}

// authenticate checks that secret stands for session s.
func (e *sessionEnv) authenticate(t *testing.T, secret string, s *memstore.Session, what string) {
	t.Helper()
	c, err := e.b.AuthenticateSession(t.Context(), secret)
	if err != nil {
		t.Errorf("%s: AuthenticateSession: %v", what, err)
		return
	}
	want := memstore.Actor{Type: memstore.ActorSession, ID: s.ID}
	if c.WorkspaceID != s.WorkspaceID || c.Actor != want {
		t.Errorf("%s: caller in %s as %+v, want %s as %+v", what, c.WorkspaceID, c.Actor, s.WorkspaceID, want)
	}
	if c.Session == nil {
		t.Errorf("%s: the caller has no session", what)
		return
	}
	checkSession(t, c.Session, s, what+": caller's session")
}

// refused checks that secret no longer authenticates, and that the error
// does not repeat it.
func (e *sessionEnv) refused(t *testing.T, secret, what string) {
	t.Helper()
	c, err := e.b.AuthenticateSession(t.Context(), secret)
	if !wantCode(t, err, memstore.EUnauthenticated, what) {
		t.Errorf("%s: authenticated as %+v", what, c)
		return
	}
	if len(secret) > len(memstore.SessionTokenPrefix) && strings.Contains(err.Error(), secret[len(memstore.SessionTokenPrefix):]) {
		t.Errorf("%s: error %q repeats the secret", what, err)
	}
}

func checkSession(t *testing.T, got, want *memstore.Session, what string) {
	t.Helper()
	if got.ID != want.ID || got.WorkspaceID != want.WorkspaceID || got.Title != want.Title {
		t.Errorf("%s: session %s in %s titled %q, want %s in %s titled %q", what, got.ID, got.WorkspaceID, got.Title, want.ID, want.WorkspaceID, want.Title)
	}
	if got.Metadata == nil || !maps.Equal(got.Metadata, want.Metadata) {
		t.Errorf("%s: Metadata = %#v, want %#v", what, got.Metadata, want.Metadata)
	}
	if got.Fields == nil || !maps.EqualFunc(got.Fields, want.Fields, jsonEqual) {
		t.Errorf("%s: Fields = %s, want %s", what, fieldsString(got.Fields), fieldsString(want.Fields))
	}
	if !slices.Equal(got.Attachments, want.Attachments) {
		t.Errorf("%s: Attachments\n%+v\nwant\n%+v", what, got.Attachments, want.Attachments)
	}
	wantTime(t, got.CreatedAt, want.CreatedAt, what+": CreatedAt")
	wantTime(t, got.UpdatedAt, want.UpdatedAt, what+": UpdatedAt")
	wantTimeOrNil(t, got.ArchivedAt, want.ArchivedAt, what+": ArchivedAt")
}

// jsonEqual compares JSON values, not their spelling: a backend may keep
// them in a form that reorders keys or drops spaces.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func fieldsString(f map[string]json.RawMessage) string {
	b, _ := json.Marshal(f)
	return string(b)
}

func checkToken(t *testing.T, got, want *memstore.SessionToken, what string) {
	t.Helper()
	if got.ID != want.ID || got.SessionID != want.SessionID || got.WorkspaceID != want.WorkspaceID || got.Hint != want.Hint {
		t.Errorf("%s: token %+v, want %+v", what, got, want)
	}
	wantTime(t, got.CreatedAt, want.CreatedAt, what+": CreatedAt")
	for _, p := range []struct {
		name      string
		got, want *time.Time
	}{{"ExpiresAt", got.ExpiresAt, want.ExpiresAt}, {"RevokedAt", got.RevokedAt, want.RevokedAt}} {
		switch {
		case (p.got == nil) != (p.want == nil):
			t.Errorf("%s: %s = %v, want %v", what, p.name, p.got, p.want)
		case p.got != nil:
			wantTime(t, *p.got, *p.want, what+": "+p.name)
		}
	}
}

func sessionIDs(ss []memstore.Session) []string {
	var ids []string
	for _, s := range ss {
		ids = append(ids, s.ID)
	}
	return ids
}

// allSessions pages through a sessions list.
func allSessions(t *testing.T, b sessionBackend, ws string, f memstore.SessionFilter) ([]memstore.Session, []int) {
	t.Helper()
	return allPages(t, "Sessions", effectiveLimit(f.Limit, false), f.Page, func(page string) (memstore.Page[memstore.Session], error) {
		f.Page = page
		return b.Sessions(t.Context(), ws, f)
	})
}

func testCreateSession(t *testing.T, e *sessionEnv) {
	ctx := t.Context()
	prefs := e.store(t, e.ws, "User Preferences", "Per-user preferences and project context.")
	notes := e.store(t, e.ws, "Project Notes", "")
	e.clock.Advance(time.Second)
	c := memstore.SessionCreate{
		Title:    "Fix the flaky test",
		Metadata: map[string]string{"ticket": "ENG-1"},
		Stores: []memstore.AttachmentCreate{
			{StoreID: notes.ID},
			{StoreID: prefs.ID, Access: memstore.AccessReadOnly, Instructions: "Check before starting any task."},
		},
		Fields: map[string]json.RawMessage{
			"agent":          json.RawMessage(`{"id":"agent_1","version":2}`),
			"environment_id": json.RawMessage(`"env_1"`),
		},
	}
	s, tok, secret := e.create(t, e.ws, c)
	wantPrefix(t, s.ID, "sesn_", "session")
	want := &memstore.Session{
		ID: s.ID, WorkspaceID: e.ws, Title: c.Title,
		Metadata: map[string]string{"ticket": "ENG-1"},
		Attachments: []memstore.Attachment{
			{StoreID: notes.ID, Access: memstore.AccessReadWrite, Name: "Project Notes", MountPath: "/mnt/memory/project-notes"},
			{StoreID: prefs.ID, Access: memstore.AccessReadOnly, Instructions: "Check before starting any task.",
				Name: "User Preferences", Description: "Per-user preferences and project context.", MountPath: "/mnt/memory/user-preferences"},
		},
		Fields:    maps.Clone(c.Fields),
		CreatedAt: e.clock.Now(), UpdatedAt: e.clock.Now(),
	}
	checkSession(t, s, want, "created")
	c.Metadata["ticket"] = "changed after the call"
	checkSession(t, e.session(t, e.ws, s.ID), want, "retrieved")

	wantPrefix(t, tok.ID, "sesntok_", "token")
	if !strings.HasPrefix(secret, memstore.SessionTokenPrefix) || len(secret) < len(memstore.SessionTokenPrefix)+40 {
		t.Errorf("secret %q is not a long %s... secret", secret, memstore.SessionTokenPrefix)
	}
	if strings.HasPrefix(secret, memstore.APIKeyPrefix) {
		t.Errorf("secret %q looks like an API key", secret)
	}
	wantTok := &memstore.SessionToken{ID: tok.ID, SessionID: s.ID, WorkspaceID: e.ws, Hint: "..." + secret[len(secret)-4:], CreatedAt: e.clock.Now()}
	checkToken(t, tok, wantTok, "first token")
	e.wantTokens(t, s.ID, "listed token", wantTok)
	e.authenticate(t, secret, want, "first token")

	t.Run("Defaults", func(t *testing.T) {
		s, _, _, err := e.b.CreateSession(ctx, e.ws, memstore.SessionCreate{})
		if err != nil {
			t.Fatal(err)
		}
		for what, s := range map[string]*memstore.Session{"created": s, "retrieved": e.session(t, e.ws, s.ID)} {
			if s.Title != "" || s.Metadata == nil || len(s.Metadata) != 0 || s.Fields == nil || len(s.Fields) != 0 || len(s.Attachments) != 0 || s.ArchivedAt != nil {
				t.Errorf("%s empty session: %+v; want an empty title, metadata and fields (not nil) and no attachments", what, s)
			}
		}
	})
}

func testSessionRules(t *testing.T, e *sessionEnv) {
	ctx := t.Context()
	var s []*memstore.Store
	for i := range 9 {
		s = append(s, e.store(t, e.ws, fmt.Sprintf("store %d", i), ""))
	}
	other := e.store(t, e.ws2, "another workspace's", "")
	archived := e.store(t, e.ws, "archived", "")
	if _, err := e.b.ArchiveStore(ctx, e.ws, archived.ID, reader); err != nil {
		t.Fatal(err)
	}
	attach := func(ss ...*memstore.Store) []memstore.AttachmentCreate {
		var a []memstore.AttachmentCreate
		for _, st := range ss {
			a = append(a, memstore.AttachmentCreate{StoreID: st.ID})
		}
		return a
	}
	metadata := map[string]string{}
	for i := range memstore.MaxMetadataPairs + 1 {
		metadata[fmt.Sprintf("k%d", i)] = "v"
	}
	for _, tc := range []struct {
		name    string
		c       memstore.SessionCreate
		mention []string // in the message
	}{
		{"nine stores", memstore.SessionCreate{Stores: attach(s...)}, []string{"8"}},
		{"same store twice", memstore.SessionCreate{Stores: attach(s[0], s[1], s[0])}, []string{"resources[2]", s[0].ID}},
		{"unknown store", memstore.SessionCreate{Stores: append(attach(s[0]), memstore.AttachmentCreate{StoreID: "memstore_nope"})}, []string{"resources[1]", "memstore_nope"}},
		{"store of another workspace", memstore.SessionCreate{Stores: attach(other)}, []string{"resources[0]", other.ID}},
		{"archived store", memstore.SessionCreate{Stores: attach(s[0], archived)}, []string{"resources[1]", archived.ID}},
		{"no store ID", memstore.SessionCreate{Stores: append(attach(s[0]), memstore.AttachmentCreate{})}, []string{"resources[1]"}},
		{"bad access", memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: s[0].ID, Access: "write"}}}, []string{"resources[0]", "write"}},
		{"instructions of 4097 characters", memstore.SessionCreate{Stores: []memstore.AttachmentCreate{
			{StoreID: s[0].ID}, {StoreID: s[1].ID, Instructions: strings.Repeat("é", memstore.MaxInstructions+1)}}}, []string{"resources[1]"}},
		{"instructions not UTF-8", memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: s[0].ID, Instructions: "bad \xff"}}}, []string{"resources[0]"}},
		{"overlong title", memstore.SessionCreate{Title: strings.Repeat("t", memstore.MaxStoreName+1)}, []string{"title"}},
		{"too much metadata", memstore.SessionCreate{Metadata: metadata}, []string{"metadata"}},
		{"field not JSON", memstore.SessionCreate{Fields: map[string]json.RawMessage{"agent": json.RawMessage(`{"id":`)}}, []string{`"agent" is not valid JSON`}},
		{"field nested too deep", memstore.SessionCreate{Fields: map[string]json.RawMessage{
			"agent": json.RawMessage(strings.Repeat("[", memstore.MaxJSONDepth+1) + strings.Repeat("]", memstore.MaxJSONDepth+1))}}, []string{"agent"}},
		{"fields too large", memstore.SessionCreate{Fields: map[string]json.RawMessage{
			"agent": json.RawMessage(`"` + strings.Repeat("x", memstore.MaxSessionFieldsBytes) + `"`)}}, []string{"agent"}},
	} {
		_, tok, secret, err := e.b.CreateSession(ctx, e.ws, tc.c)
		if !wantCode(t, err, memstore.EInvalid, tc.name) {
			continue
		}
		if tok != nil || secret != "" {
			t.Errorf("%s: a token came back with the error", tc.name)
		}
		for _, m := range tc.mention {
			if !strings.Contains(memstore.ErrorMessage(err), m) {
				t.Errorf("%s: message %q does not mention %q", tc.name, memstore.ErrorMessage(err), m)
			}
		}
	}
	// A refused session leaves nothing behind.
	for _, ws := range []string{e.ws, e.ws2} {
		if got, _ := allSessions(t, e.b, ws, memstore.SessionFilter{}); len(got) != 0 {
			t.Errorf("refused creates left %d sessions in %s", len(got), ws)
		}
	}

	// At the limits: 8 stores, and 4,096 characters of instructions
	// (characters, not bytes: é is two bytes).
	c := memstore.SessionCreate{Stores: attach(s[:8]...)}
	long := strings.Repeat("é", memstore.MaxInstructions)
	c.Stores[7].Instructions = long
	got, _, _ := e.create(t, e.ws, c)
	if len(got.Attachments) != 8 || got.Attachments[7].Instructions != long {
		t.Errorf("8 stores with long instructions: %d attachments", len(got.Attachments))
	}
	if got := e.session(t, e.ws, got.ID); len(got.Attachments) != 8 || got.Attachments[7].Instructions != long {
		t.Errorf("retrieved: %d attachments, instructions kept: %v", len(got.Attachments), len(got.Attachments) == 8 && got.Attachments[7].Instructions == long)
	}
}

func testSessionSnapshots(t *testing.T, e *sessionEnv) {
	ctx := t.Context()
	st := e.store(t, e.ws, "Team Handbook", "how we work")
	a, _, secret := e.create(t, e.ws, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}})
	wantA := memstore.Attachment{StoreID: st.ID, Access: memstore.AccessReadWrite, Name: "Team Handbook", Description: "how we work", MountPath: "/mnt/memory/team-handbook"}
	if len(a.Attachments) != 1 || a.Attachments[0] != wantA {
		t.Fatalf("attachments %+v, want [%+v]", a.Attachments, wantA)
	}
	if _, err := e.b.UpdateStore(ctx, e.ws, st.ID, memstore.StoreUpdate{Name: ptr("Team Wiki"), Description: ptr("everything")}); err != nil {
		t.Fatal(err)
	}
	checkSession(t, e.session(t, e.ws, a.ID), a, "after the store's rename")
	e.clock.Advance(time.Millisecond)
	b, _, _ := e.create(t, e.ws, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}})
	wantB := memstore.Attachment{StoreID: st.ID, Access: memstore.AccessReadWrite, Name: "Team Wiki", Description: "everything", MountPath: "/mnt/memory/team-wiki"}
	if len(b.Attachments) != 1 || b.Attachments[0] != wantB {
		t.Errorf("a later session's attachments %+v, want [%+v]", b.Attachments, wantB)
	}

	// Archiving the store leaves existing sessions as they were: their
	// writes are refused by the store, not by the session.
	if _, err := e.b.ArchiveStore(ctx, e.ws, st.ID, reader); err != nil {
		t.Fatal(err)
	}
	checkSession(t, e.session(t, e.ws, a.ID), a, "after the store's archive")
	e.authenticate(t, secret, a, "after the store's archive")

	// Deleting it too: a session is history.
	if err := e.b.DeleteStore(ctx, e.ws, st.ID); err != nil {
		t.Fatal(err)
	}
	checkSession(t, e.session(t, e.ws, a.ID), a, "after the store's deletion")
	e.authenticate(t, secret, a, "after the store's deletion")
	if got, _ := allSessions(t, e.b, e.ws, memstore.SessionFilter{StoreID: st.ID}); !slices.Equal(sessionIDs(got), []string{b.ID, a.ID}) {
		t.Errorf("sessions of the deleted store: %v, want [%s %s]", sessionIDs(got), b.ID, a.ID)
	}
}

func testMountPaths(t *testing.T, e *sessionEnv) {
	names := []string{"User Preferences", "user preferences!", "USER-Preferences", "Ünïcode Notes 日本", "!!!", "  --  "}
	var c memstore.SessionCreate
	var stores []*memstore.Store
	for _, n := range names {
		st := e.store(t, e.ws, n, "")
		stores = append(stores, st)
		c.Stores = append(c.Stores, memstore.AttachmentCreate{StoreID: st.ID})
	}
	// A name without a letter or digit gives way to the store's ID.
	idSlug := func(st *memstore.Store) string {
		return "/mnt/memory/" + strings.ToLower(strings.ReplaceAll(st.ID, "_", "-"))
	}
	want := []string{
		"/mnt/memory/user-preferences",
		"/mnt/memory/user-preferences-2",
		"/mnt/memory/user-preferences-3",
		"/mnt/memory/ünïcode-notes-日本",
		idSlug(stores[4]),
		idSlug(stores[5]),
	}
	s, _, _ := e.create(t, e.ws, c)
	for what, s := range map[string]*memstore.Session{"created": s, "retrieved": e.session(t, e.ws, s.ID)} {
		var got []string
		for _, a := range s.Attachments {
			got = append(got, a.MountPath)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: mount paths\n%q\nwant\n%q", what, got, want)
		}
	}
}

func testListSessions(t *testing.T, e *sessionEnv) {
	ctx := t.Context()
	one := e.store(t, e.ws, "one", "")
	two := e.store(t, e.ws, "two", "")
	var all, ofOne, ofTwo []string // newest first
	for i := range 25 {
		// Every fifth session shares the previous one's time: the ID
		// breaks the tie.
		if i%5 != 0 {
			e.clock.Advance(time.Millisecond)
		}
		c := memstore.SessionCreate{Title: fmt.Sprintf("session %d", i)}
		switch i % 3 {
		case 0:
			c.Stores = []memstore.AttachmentCreate{{StoreID: one.ID}}
		case 1:
			c.Stores = []memstore.AttachmentCreate{{StoreID: two.ID, Access: memstore.AccessReadOnly}, {StoreID: one.ID}}
		}
		s, _, _ := e.create(t, e.ws, c)
		all = append([]string{s.ID}, all...)
		if i%3 != 2 {
			ofOne = append([]string{s.ID}, ofOne...)
		}
		if i%3 == 1 {
			ofTwo = append([]string{s.ID}, ofTwo...)
		}
	}
	// Archived sessions are listed only when asked for.
	if _, err := e.b.ArchiveSession(ctx, e.ws, all[3]); err != nil {
		t.Fatal(err)
	}
	live := slices.Delete(slices.Clone(all), 3, 4)
	if got, _ := allSessions(t, e.b, e.ws, memstore.SessionFilter{}); !slices.Equal(sessionIDs(got), live) {
		t.Errorf("live sessions\n%v\nwant\n%v", sessionIDs(got), live)
	}
	got, sizes := allSessions(t, e.b, e.ws, memstore.SessionFilter{IncludeArchived: true})
	if !slices.Equal(sizes, []int{20, 5}) {
		t.Errorf("page sizes %v, want [20 5]", sizes)
	}
	if !slices.Equal(sessionIDs(got), all) {
		t.Errorf("sessions\n%v\nwant newest first\n%v", sessionIDs(got), all)
	}
	for i := range got {
		checkSession(t, &got[i], e.session(t, e.ws, got[i].ID), "listed "+got[i].Title)
	}
	for _, n := range []int{1, 7, 24, 25, 100} {
		if got, _ := allSessions(t, e.b, e.ws, memstore.SessionFilter{Limit: n, IncludeArchived: true}); !slices.Equal(sessionIDs(got), all) {
			t.Errorf("Limit %d: %d sessions, each exactly once and in order expected", n, len(got))
		}
	}
	for _, tc := range []struct {
		store string
		limit int
		want  []string
	}{{one.ID, 3, ofOne}, {one.ID, 0, ofOne}, {two.ID, 2, ofTwo}, {"memstore_nope", 0, nil}} {
		if got, _ := allSessions(t, e.b, e.ws, memstore.SessionFilter{StoreID: tc.store, Limit: tc.limit, IncludeArchived: true}); !slices.Equal(sessionIDs(got), tc.want) {
			t.Errorf("sessions of %s, Limit %d:\n%v\nwant\n%v", tc.store, tc.limit, sessionIDs(got), tc.want)
		}
	}
	for _, f := range []memstore.SessionFilter{{}, {StoreID: one.ID}} {
		if got, _ := allSessions(t, e.b, e.ws2, f); len(got) != 0 {
			t.Errorf("another workspace lists %d sessions with %+v", len(got), f)
		}
	}

	storesPage, err := e.b.Stores(ctx, e.ws, memstore.StoreFilter{Limit: 1})
	if err != nil || storesPage.Next == "" {
		t.Fatalf("stores page: %+v, %v", storesPage, err)
	}
	for _, f := range []memstore.SessionFilter{
		{Limit: -1}, {Limit: 101}, {Page: "garbage"}, {Page: "page_!!!"}, {Page: storesPage.Next}, {Page: storesPage.Next, StoreID: one.ID},
	} {
		_, err := e.b.Sessions(ctx, e.ws, f)
		wantCode(t, err, memstore.EInvalid, fmt.Sprintf("Sessions(%+v)", f))
	}
}

func testSessionTokens(t *testing.T, e *sessionEnv) {
	ctx := t.Context()
	st := e.store(t, e.ws, "notes", "")
	s, tok1, secret1 := e.create(t, e.ws, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: st.ID, Access: memstore.AccessReadOnly}}})
	e.authenticate(t, secret1, s, "first token")

	e.clock.Advance(time.Second)
	tok2, secret2 := e.newToken(t, e.ws, s.ID, 0)
	if secret2 == secret1 || tok2.ID == tok1.ID || !strings.HasPrefix(secret2, memstore.SessionTokenPrefix) {
		t.Errorf("second token %s (%q) repeats or is not a token", tok2.ID, secret2)
	}
	wantTok2 := &memstore.SessionToken{ID: tok2.ID, SessionID: s.ID, WorkspaceID: e.ws, Hint: "..." + secret2[len(secret2)-4:], CreatedAt: e.clock.Now()}
	checkToken(t, tok2, wantTok2, "second token")
	e.authenticate(t, secret2, s, "second token")
	e.authenticate(t, secret1, s, "first token beside the second")
	e.wantTokens(t, s.ID, "listed oldest first", tok1, wantTok2)

	revokedAt, r, again := twice(t, e.clock, time.Second, func() (*memstore.SessionToken, error) {
		return e.b.RevokeSessionToken(ctx, e.ws, tok1.ID)
	})
	wantTok1 := *tok1
	wantTok1.RevokedAt = &revokedAt
	checkToken(t, r, &wantTok1, "revoked")
	checkToken(t, again, &wantTok1, "revoked again")
	for _, tc := range []struct {
		id   string
		want *memstore.SessionToken
	}{{tok1.ID, &wantTok1}, {tok2.ID, wantTok2}} {
		got, err := e.b.SessionToken(ctx, e.ws, tc.id)
		if err != nil {
			t.Fatalf("SessionToken(%s): %v", tc.id, err)
		}
		checkToken(t, got, tc.want, "SessionToken")
	}
	e.refused(t, secret1, "revoked token")
	e.authenticate(t, secret2, s, "the other token after a revocation")
	e.wantTokens(t, s.ID, "the revoked and the live token listed", &wantTok1, wantTok2)

	rest := secret2[len(memstore.SessionTokenPrefix):]
	for _, bad := range []string{"", "x", secret2 + "x", secret2[:len(secret2)-1], strings.ToUpper(secret2), " " + secret2,
		memstore.SessionTokenPrefix, memstore.APIKeyPrefix + rest, rest} {
		e.refused(t, bad, fmt.Sprintf("secret %q", bad))
	}
	// A session token is no API key, nor the reverse: authenticated as
	// any credential, a session token stands for its session alone, and
	// its secret under an API key's prefix for nothing.
	_, apiSecret, err := e.b.CreateAPIKey(ctx, e.ws, "admin")
	if err != nil {
		t.Fatal(err)
	}
	e.refused(t, apiSecret, "API key as a session token")
	c, err := e.b.Authenticate(ctx, secret2)
	if err != nil || c.Session == nil || c.Session.ID != s.ID || c.TokenID != tok2.ID ||
		c.Actor != (memstore.Actor{Type: memstore.ActorSession, ID: s.ID}) {
		t.Errorf("session token authenticated as any credential: %+v, %v; want the caller of session %s", c, err, s.ID)
	}
	_, err = e.b.Authenticate(ctx, memstore.APIKeyPrefix+rest)
	wantCode(t, err, memstore.EUnauthenticated, "session token's secret as an API key")

	_, _, err = e.b.CreateSessionToken(ctx, e.ws, "sesn_nope", 0)
	wantCode(t, err, memstore.ENotFound, "token for an unknown session")
	_, err = e.b.SessionTokens(ctx, e.ws, "sesn_nope", memstore.SessionTokenFilter{})
	wantCode(t, err, memstore.ENotFound, "tokens of an unknown session")
	_, err = e.b.SessionToken(ctx, e.ws, "sesntok_nope")
	wantCode(t, err, memstore.ENotFound, "an unknown token")
	_, err = e.b.RevokeSessionToken(ctx, e.ws, "sesntok_nope")
	wantCode(t, err, memstore.ENotFound, "revoke an unknown token")
	_, err = e.b.Session(ctx, e.ws, "sesn_nope")
	wantCode(t, err, memstore.ENotFound, "unknown session")
}

// testTokenPages: a session's tokens come in pages as every list does,
// oldest first, each once.
func testTokenPages(t *testing.T, e *sessionEnv) {
	ctx := t.Context()
	s, first, _ := e.create(t, e.ws, memstore.SessionCreate{})
	other, _, _ := e.create(t, e.ws, memstore.SessionCreate{})
	made := []memstore.SessionToken{*first}
	for i := 1; i < 250; i++ {
		// Every fifth token shares the previous one's time: the ID
		// breaks the tie.
		if i%5 != 0 {
			e.clock.Advance(time.Millisecond)
		}
		tok, _ := e.newToken(t, e.ws, s.ID, 0)
		made = append(made, *tok)
		if i%50 == 0 {
			e.newToken(t, e.ws, other.ID, 0)
		}
	}
	slices.SortStableFunc(made, func(a, b memstore.SessionToken) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	want := make([]string, len(made))
	for i := range made {
		want[i] = made[i].ID
	}
	ids := func(toks []memstore.SessionToken) []string {
		var out []string
		for _, tok := range toks {
			out = append(out, tok.ID)
		}
		return out
	}
	got, sizes := allTokens(t, e.b, e.ws, s.ID, memstore.SessionTokenFilter{Limit: 100})
	if !slices.Equal(sizes, []int{100, 100, 50}) {
		t.Errorf("page sizes %v, want [100 100 50]", sizes)
	}
	if !slices.Equal(ids(got), want) {
		t.Errorf("tokens are not each listed once, oldest first:\n%v\nwant\n%v", ids(got), want)
	}
	for i := range got {
		checkToken(t, &got[i], &made[i], "listed token")
	}
	if _, sizes := allTokens(t, e.b, e.ws, s.ID, memstore.SessionTokenFilter{}); len(sizes) != 13 || sizes[0] != 20 || sizes[12] != 10 {
		t.Errorf("default page sizes %v, want twelve of 20 and one of 10", sizes)
	}
	for _, n := range []int{1, 7, 99} {
		if got, _ := allTokens(t, e.b, e.ws, s.ID, memstore.SessionTokenFilter{Limit: n}); !slices.Equal(ids(got), want) {
			t.Errorf("Limit %d: %d tokens, each exactly once and in order expected", n, len(got))
		}
	}
	if got := e.tokens(t, e.ws, other.ID); len(got) != 5 {
		t.Errorf("the other session lists %d tokens, want 5", len(got))
	}

	sessionsPage, err := e.b.Sessions(ctx, e.ws, memstore.SessionFilter{Limit: 1})
	if err != nil || sessionsPage.Next == "" {
		t.Fatalf("sessions page: %+v, %v", sessionsPage, err)
	}
	page, err := e.b.SessionTokens(ctx, e.ws, s.ID, memstore.SessionTokenFilter{Limit: 10})
	if err != nil || page.Next == "" {
		t.Fatalf("tokens page: %+v, %v", page, err)
	}
	for _, f := range []memstore.SessionTokenFilter{
		{Limit: -1}, {Limit: 101}, {Page: "garbage"}, {Page: "page_!!!"}, {Page: page.Next + "x"}, {Page: page.Next[:len(page.Next)-2]},
		{Page: sessionsPage.Next},
	} {
		_, err := e.b.SessionTokens(ctx, e.ws, s.ID, f)
		wantCode(t, err, memstore.EInvalid, fmt.Sprintf("SessionTokens(%+v)", f))
	}
}

func testTokenExpiry(t *testing.T, e *sessionEnv) {
	s, tok, secret := e.create(t, e.ws, memstore.SessionCreate{TokenTTL: time.Hour})
	expires := e.clock.Now().Add(time.Hour)
	if tok.ExpiresAt == nil || !tok.ExpiresAt.Equal(expires) {
		t.Fatalf("ExpiresAt = %v, want %v", tok.ExpiresAt, expires)
	}
	e.clock.Advance(time.Hour - time.Second)
	e.authenticate(t, secret, s, "a second before expiry")
	short, shortSecret := e.newToken(t, e.ws, s.ID, 10*time.Minute)
	if want := e.clock.Now().Add(10 * time.Minute); short.ExpiresAt == nil || !short.ExpiresAt.Equal(want) {
		t.Errorf("ExpiresAt = %v, want %v", short.ExpiresAt, want)
	}
	forever, foreverSecret := e.newToken(t, e.ws, s.ID, -time.Minute)
	if forever.ExpiresAt != nil {
		t.Errorf("a token made with a negative TTL expires at %v", forever.ExpiresAt)
	}

	e.clock.Advance(time.Second) // exactly at ExpiresAt
	e.refused(t, secret, "token at its expiry")
	e.authenticate(t, shortSecret, s, "token with 10 minutes left")
	e.clock.Advance(10 * time.Minute)
	e.refused(t, shortSecret, "second token at its expiry")
	e.clock.Advance(1000 * time.Hour)
	e.authenticate(t, foreverSecret, s, "token without expiry")
	e.wantTokens(t, s.ID, "the expired tokens listed too", tok, short, forever)
}

func testArchiveSession(t *testing.T, e *sessionEnv) {
	ctx := t.Context()
	st := e.store(t, e.ws, "notes", "")
	s, _, secret1 := e.create(t, e.ws, memstore.SessionCreate{Title: "to archive", Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}})
	_, secret2 := e.newToken(t, e.ws, s.ID, 0)
	other, _, otherSecret := e.create(t, e.ws, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: st.ID}}})

	archivedAt, a, again := twice(t, e.clock, time.Minute, func() (*memstore.Session, error) {
		return e.b.ArchiveSession(ctx, e.ws, s.ID)
	})
	want := *s
	want.ArchivedAt, want.UpdatedAt = &archivedAt, archivedAt
	checkSession(t, a, &want, "archived")
	checkSession(t, again, &want, "archived again")
	checkSession(t, e.session(t, e.ws, s.ID), &want, "retrieved after archive")

	e.refused(t, secret1, "first token of an archived session")
	e.refused(t, secret2, "second token of an archived session")
	_, _, err := e.b.CreateSessionToken(ctx, e.ws, s.ID, 0)
	wantCode(t, err, memstore.EConflict, "token for an archived session")
	if toks := e.tokens(t, e.ws, s.ID); len(toks) != 2 {
		t.Errorf("an archived session lists %d tokens, want 2", len(toks))
	}
	e.authenticate(t, otherSecret, other, "token of another session")

	_, err = e.b.ArchiveSession(ctx, e.ws, "sesn_nope")
	wantCode(t, err, memstore.ENotFound, "archive an unknown session")
}

func testSessionIsolation(t *testing.T, e *sessionEnv) {
	ctx := t.Context()
	s1, tok1, secret1 := e.create(t, e.ws, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: e.store(t, e.ws, "mine", "").ID}}})
	s2, _, secret2 := e.create(t, e.ws2, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: e.store(t, e.ws2, "theirs", "").ID}}})
	e.authenticate(t, secret1, s1, "token of workspace one")
	e.authenticate(t, secret2, s2, "token of workspace two")

	_, err := e.b.Session(ctx, e.ws2, s1.ID)
	wantCode(t, err, memstore.ENotFound, "session of another workspace")
	_, err = e.b.ArchiveSession(ctx, e.ws2, s1.ID)
	wantCode(t, err, memstore.ENotFound, "archive a session of another workspace")
	_, _, err = e.b.CreateSessionToken(ctx, e.ws2, s1.ID, 0)
	wantCode(t, err, memstore.ENotFound, "token for a session of another workspace")
	_, err = e.b.SessionTokens(ctx, e.ws2, s1.ID, memstore.SessionTokenFilter{})
	wantCode(t, err, memstore.ENotFound, "tokens of a session of another workspace")
	_, err = e.b.SessionToken(ctx, e.ws2, tok1.ID)
	wantCode(t, err, memstore.ENotFound, "a token of another workspace")
	_, err = e.b.RevokeSessionToken(ctx, e.ws2, tok1.ID)
	wantCode(t, err, memstore.ENotFound, "revoke a token of another workspace")

	// None of that touched the session.
	checkSession(t, e.session(t, e.ws, s1.ID), s1, "after another workspace's attempts")
	e.authenticate(t, secret1, s1, "after another workspace's attempts")
	if toks := e.tokens(t, e.ws, s1.ID); len(toks) != 1 || toks[0].RevokedAt != nil {
		t.Errorf("tokens after another workspace's attempts: %+v", toks)
	}
	for ws, want := range map[string]string{e.ws: s1.ID, e.ws2: s2.ID} {
		if got, _ := allSessions(t, e.b, ws, memstore.SessionFilter{}); !slices.Equal(sessionIDs(got), []string{want}) {
			t.Errorf("sessions of %s: %v, want [%s]", ws, sessionIDs(got), want)
		}
	}
}

// revocationListener records the revocations a backend tells this
// process's listeners.
type revocationListener struct {
	mu   sync.Mutex
	got  []memstore.Revocation
	stop func() // ends the listening
}

// listenRevocations starts recording the revocations of e's backend, until
// stop or the end of the test; it skips the test for a backend that tells
// no listeners.
func (e *sessionEnv) listenRevocations(t *testing.T) *revocationListener {
	t.Helper()
	n, ok := e.raw.(memstore.RevocationNotifier)
	if !ok {
		t.Skip("the backend tells no listeners of revocations")
	}
	l := &revocationListener{}
	l.stop = sync.OnceFunc(n.NotifyRevocations(func(r memstore.Revocation) {
		l.mu.Lock()
		l.got = append(l.got, r)
		l.mu.Unlock()
	}))
	t.Cleanup(l.stop)
	return l
}

// take returns what was heard since the last take.
func (l *revocationListener) take() []memstore.Revocation {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := l.got
	l.got = nil
	return got
}

// testRevocations checks, for a backend that offers it, that every way a
// credential stops working is told to this process's listeners once
// committed, and that an authenticated caller names its credential and
// its expiry, so that a listener can match it.
func testRevocations(t *testing.T, e *sessionEnv) {
	listener := e.listenRevocations(t)
	ctx := t.Context()
	heard := func(what string, want memstore.Revocation, c *memstore.Caller) {
		t.Helper()
		got := listener.take()
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s: heard %+v, want [%+v]", what, got, want)
		}
		if c != nil && (len(got) == 0 || !got[0].Stops(c)) {
			t.Errorf("%s: the revocation does not stop the caller %+v", what, c)
		}
	}

	s, tok, secret := e.create(t, e.ws, memstore.SessionCreate{TokenTTL: time.Hour})
	c, err := e.b.AuthenticateSession(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if c.TokenID != tok.ID || c.ExpiresAt == nil || !c.ExpiresAt.Equal(*tok.ExpiresAt) {
		t.Errorf("caller names token %q expiring at %v, want %q at %v", c.TokenID, c.ExpiresAt, tok.ID, tok.ExpiresAt)
	}
	if c.Expired(e.clock.Now()) || !c.Expired(tok.ExpiresAt.Add(0)) {
		t.Errorf("Expired is wrong before or at %v", tok.ExpiresAt)
	}
	other, otherSecret := e.newToken(t, e.ws, s.ID, 0)
	oc, err := e.b.AuthenticateSession(ctx, otherSecret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.b.RevokeSessionToken(ctx, e.ws, tok.ID); err != nil {
		t.Fatal(err)
	}
	heard("token revoked", memstore.Revocation{SessionID: s.ID, TokenID: tok.ID}, c)
	if (memstore.Revocation{SessionID: s.ID, TokenID: tok.ID}).Stops(oc) {
		t.Errorf("revoking token %s stops the session's other token %s", tok.ID, other.ID)
	}
	if _, err := e.b.ArchiveSession(ctx, e.ws, s.ID); err != nil {
		t.Fatal(err)
	}
	heard("session archived", memstore.Revocation{SessionID: s.ID}, oc)

	k, keySecret, err := e.b.CreateAPIKey(ctx, e.ws, "to revoke")
	if err != nil {
		t.Fatal(err)
	}
	kc, err := e.b.Authenticate(ctx, keySecret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.b.RevokeAPIKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	heard("API key revoked", memstore.Revocation{APIKeyID: k.ID}, kc)

	// A refused change tells nobody, and stop ends the listening.
	_, err = e.b.RevokeSessionToken(ctx, e.ws2, other.ID)
	wantCode(t, err, memstore.ENotFound, "revoke a token of another workspace")
	listener.stop()
	if _, err := e.b.RevokeSessionToken(ctx, e.ws, other.ID); err != nil {
		t.Fatal(err)
	}
	if got := listener.take(); len(got) != 0 {
		t.Errorf("heard %+v after a refused change and after stop", got)
	}
}

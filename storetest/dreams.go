package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memstore/memstore"
)

// runDreams checks the dream service on every target: what a create
// makes and refuses, the list's order, filters and pages, cancel and
// archive, who may call it. open returns fresh, empty services (a core
// with dreams enabled) for each subtest.
func runDreams(t *testing.T, open func(t *testing.T) Services) {
	t.Run("Create", func(t *testing.T) { testDreamCreate(t, newDreamEnv(t, open(t))) })
	t.Run("BadInput", func(t *testing.T) { testDreamBadInput(t, newDreamEnv(t, open(t))) })
	t.Run("Callers", func(t *testing.T) { testDreamCallers(t, newDreamEnv(t, open(t))) })
	t.Run("List", func(t *testing.T) { testDreamList(t, newDreamEnv(t, open(t))) })
	t.Run("CancelArchive", func(t *testing.T) { testDreamCancelArchive(t, newDreamEnv(t, open(t))) })
	t.Run("UpdateExisting", func(t *testing.T) { testDreamUpdateExisting(t, newDreamEnv(t, open(t))) })
	t.Run("LiveLimit", func(t *testing.T) { testDreamLiveLimit(t, newDreamEnv(t, open(t))) })
}

// dreamEnv is a workspace with a store of two memories and two sessions,
// and another workspace with a store and a session of its own.
type dreamEnv struct {
	b             Services
	admin, adminB *memstore.Caller
	store, storeB string
	sessions      []string // sorted
	sessionB      string
	sessionToken  string // of sessions[0]
	memories      map[string]string
}

func newDreamEnv(t *testing.T, b Services) *dreamEnv { return newDreamEnvIn(t, b, wsA, wsB) }

// newDreamEnvIn is newDreamEnv in workspaces a and b.
func newDreamEnvIn(t *testing.T, b Services, a, other string) *dreamEnv {
	t.Helper()
	ctx := t.Context()
	e := &dreamEnv{b: b, admin: keyCaller(a, actorKey), adminB: keyCaller(other, actorKey),
		memories: map[string]string{"/prefs.md": "likes tabs", "/topics/go.md": "uses Go 1.26"}}
	st, err := b.CreateStore(ctx, e.admin, memstore.StoreCreate{Name: "Notes", Description: "what the agent learned"})
	if err != nil {
		t.Fatal(err)
	}
	e.store = st.ID
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range e.memories {
			if !yield(p) {
				return
			}
		}
	}) {
		if _, err := b.CreateMemory(ctx, e.admin, e.store, memstore.MemoryCreate{Path: p, Content: e.memories[p]}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		s, _, secret, err := b.CreateSession(ctx, e.admin, memstore.SessionCreate{Title: "past work"})
		if err != nil {
			t.Fatal(err)
		}
		e.sessions = append(e.sessions, s.ID)
		if e.sessionToken == "" {
			e.sessionToken = secret
		}
	}
	slices.Sort(e.sessions)
	stB, err := b.CreateStore(ctx, e.adminB, memstore.StoreCreate{Name: "elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	e.storeB = stB.ID
	sB, _, _, err := b.CreateSession(ctx, e.adminB, memstore.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	e.sessionB = sB.ID
	return e
}

// create is a valid create of e's store and sessions (in reverse order).
func (e *dreamEnv) create() memstore.DreamCreate {
	return memstore.DreamCreate{
		Inputs: []memstore.DreamInput{{Type: memstore.DreamInputMemoryStore, MemoryStoreID: e.store},
			{Type: memstore.DreamInputSessions, SessionIDs: []string{e.sessions[1], e.sessions[0]}}},
		Model: memstore.DreamModel{ID: "claude-test"},
	}
}

// mustCreateDream creates a dream of dc in workspace A.
func (e *dreamEnv) mustCreateDream(t *testing.T, dc memstore.DreamCreate) *memstore.Dream {
	t.Helper()
	d, err := e.b.CreateDream(t.Context(), e.admin, dc)
	if err != nil {
		t.Fatalf("create dream: %v", err)
	}
	return d
}

// dreamIDs lists every dream of workspace A, archived ones included.
func (e *dreamEnv) dreamIDs(t *testing.T) []string {
	t.Helper()
	ds, _ := allPages(t, "dreams", 100, "", func(page string) (memstore.Page[memstore.Dream], error) {
		return e.b.Dreams(t.Context(), e.admin, memstore.DreamFilter{IncludeArchived: true, Limit: 100, Page: page})
	})
	return dreamList(ds)
}

func testDreamCreate(t *testing.T, e *dreamEnv) {
	ctx := t.Context()
	in := "merge duplicates"
	dc := e.create()
	dc.Instructions = &in
	dc.Model.Speed = memstore.SpeedStandard
	d := e.mustCreateDream(t, dc)
	wantPrefix(t, d.ID, memstore.DreamIDPrefix, "dream ID")
	switch {
	case d.Status != memstore.DreamPending:
		t.Errorf("status %s, want pending", d.Status)
	case d.InputStoreID != e.store || !slices.Equal(d.SessionIDs, e.sessions):
		t.Errorf("inputs %s %v, want %s and the sessions sorted %v", d.InputStoreID, d.SessionIDs, e.store, e.sessions)
	case d.Model != memstore.DreamModel{ID: "claude-test", Speed: memstore.SpeedStandard}:
		t.Errorf("model %+v", d.Model)
	case d.Instructions != in || d.OutputBehavior != memstore.OutputCreateNew:
		t.Errorf("instructions %q, output behavior %q", d.Instructions, d.OutputBehavior)
	case len(d.Outputs()) != 0 || d.RunningSessionID() != "" || d.Error != nil || d.EndedAt != nil || d.ArchivedAt != nil:
		t.Errorf("a pending dream shows outputs %v, session %q, error %v, ended %v, archived %v",
			d.Outputs(), d.RunningSessionID(), d.Error, d.EndedAt, d.ArchivedAt)
	case d.Usage != memstore.DreamUsage{}:
		t.Errorf("usage %+v, want zeros", d.Usage)
	}
	got, err := e.b.Dream(ctx, e.admin, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != d.ID || got.Status != d.Status || !slices.Equal(got.SessionIDs, d.SessionIDs) || got.Instructions != in ||
		got.Model != d.Model || got.OutputBehavior != d.OutputBehavior || got.InputStoreID != e.store {
		t.Errorf("get %+v, want %+v", got, d)
	}
	wantTime(t, got.CreatedAt, d.CreatedAt, "created_at")
	// The model's short form: an ID alone.
	d2 := e.mustCreateDream(t, e.create())
	if d2.Model.Speed != memstore.SpeedStandard || d2.Instructions != "" {
		t.Errorf("a model ID alone made model %+v, instructions %q", d2.Model, d2.Instructions)
	}
}

func testDreamBadInput(t *testing.T, e *dreamEnv) {
	ctx := t.Context()
	long := strings.Repeat("x", memstore.MaxDreamInstructions+1)
	empty := ""
	tooMany := make([]string, memstore.MaxDreamSessions+1)
	for i := range tooMany {
		tooMany[i] = e.sessions[0] + "x" + string(rune('a'+i%26)) + strings.Repeat("y", i/26)
	}
	cases := []struct {
		name   string
		change func(dc *memstore.DreamCreate)
		want   string // in the message
	}{
		{"no inputs", func(dc *memstore.DreamCreate) { dc.Inputs = nil }, "exactly one memory_store entry and one sessions entry"},
		{"two stores", func(dc *memstore.DreamCreate) { dc.Inputs = append(dc.Inputs, dc.Inputs[0]) }, "exactly one memory_store"},
		{"no sessions input", func(dc *memstore.DreamCreate) { dc.Inputs = dc.Inputs[:1] }, "exactly one memory_store"},
		{"unknown input", func(dc *memstore.DreamCreate) { dc.Inputs[0].Type = "file" }, "inputs[0].type must be memory_store or sessions"},
		{"no session IDs", func(dc *memstore.DreamCreate) { dc.Inputs[1].SessionIDs = nil }, "1 to 100 sessions; 0 were given"},
		{"too many sessions", func(dc *memstore.DreamCreate) { dc.Inputs[1].SessionIDs = tooMany }, "1 to 100 sessions; 101 were given"},
		{"a session twice", func(dc *memstore.DreamCreate) { dc.Inputs[1].SessionIDs = []string{e.sessions[0], e.sessions[0]} }, "list each session once"},
		{"a session of no one", func(dc *memstore.DreamCreate) { dc.Inputs[1].SessionIDs = []string{"sesn_nosuchsession"} }, "session sesn_nosuchsession of the sessions input is not in this workspace"},
		{"no store ID", func(dc *memstore.DreamCreate) { dc.Inputs[0].MemoryStoreID = "" }, "inputs[0].memory_store_id is required"},
		{"a store in the sessions input", func(dc *memstore.DreamCreate) { dc.Inputs[1].MemoryStoreID = e.store }, "inputs[1] is a sessions input, which takes no memory_store_id"},
		{"sessions in the store input", func(dc *memstore.DreamCreate) { dc.Inputs[0].SessionIDs = e.sessions }, "inputs[0] is a memory_store input, which takes no session_ids"},
		{"a store of no one", func(dc *memstore.DreamCreate) { dc.Inputs[0].MemoryStoreID = "memstore_nosuchstore" }, "memory store memstore_nosuchstore of the memory_store input is not in this workspace"},
		{"no model", func(dc *memstore.DreamCreate) { dc.Model = memstore.DreamModel{} }, "model is required"},
		{"fast", func(dc *memstore.DreamCreate) { dc.Model.Speed = "fast" }, "model.speed must be standard"},
		{"empty instructions", func(dc *memstore.DreamCreate) { dc.Instructions = &empty }, "instructions must be 1 to 4096 characters; 0 were given"},
		{"long instructions", func(dc *memstore.DreamCreate) { dc.Instructions = &long }, "instructions must be 1 to 4096 characters; 4097 were given"},
		{"unknown output behavior", func(dc *memstore.DreamCreate) { dc.OutputBehavior = "replace" }, "output_behavior.type must be create_new or update_existing"},
		{"update_existing of another store", func(dc *memstore.DreamCreate) {
			dc.OutputBehavior, dc.OutputStoreID = memstore.OutputUpdateExisting, e.storeB
		}, "output_behavior.memory_store_id must be the memory store of the memory_store input"},
		{"another workspace's store", func(dc *memstore.DreamCreate) { dc.Inputs[0].MemoryStoreID = e.storeB }, "is not in this workspace"},
		{"another workspace's session", func(dc *memstore.DreamCreate) { dc.Inputs[1].SessionIDs = []string{e.sessions[0], e.sessionB} }, "session " + e.sessionB + " of the sessions input is not in this workspace"},
	}
	for _, c := range cases {
		dc := e.create()
		c.change(&dc)
		_, err := e.b.CreateDream(ctx, e.admin, dc)
		if wantCode(t, err, memstore.EInvalid, c.name) && !strings.Contains(memstore.ErrorMessage(err), c.want) {
			t.Errorf("%s: %q, want it to say %q", c.name, memstore.ErrorMessage(err), c.want)
		}
	}
	// An archived input store.
	if _, err := e.b.ArchiveStore(ctx, e.admin, e.store); err != nil {
		t.Fatal(err)
	}
	_, err := e.b.CreateDream(ctx, e.admin, e.create())
	if wantCode(t, err, memstore.EInvalid, "archived store") && !strings.HasPrefix(memstore.ErrorMessage(err), memstore.ArchivedMessage) {
		t.Errorf("archived store: %q, want the hosted API's %q", memstore.ErrorMessage(err), memstore.ArchivedMessage)
	}
	if ids := e.dreamIDs(t); len(ids) != 0 {
		t.Errorf("refused creates made dreams %v", ids)
	}
}

func testDreamCallers(t *testing.T, e *dreamEnv) {
	ctx := t.Context()
	d := e.mustCreateDream(t, e.create())
	// A session token may do nothing with dreams, its own session's
	// included.
	sc, err := e.b.AuthenticateSession(ctx, e.sessionToken)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.b.CreateDream(ctx, sc, e.create())
	wantCode(t, err, memstore.EPermission, "a session token's create")
	_, err = e.b.Dream(ctx, sc, d.ID)
	wantCode(t, err, memstore.EPermission, "a session token's get")
	_, err = e.b.Dreams(ctx, sc, memstore.DreamFilter{})
	wantCode(t, err, memstore.EPermission, "a session token's list")
	_, err = e.b.CancelDream(ctx, sc, d.ID)
	wantCode(t, err, memstore.EPermission, "a session token's cancel")
	_, err = e.b.ArchiveDream(ctx, sc, d.ID)
	wantCode(t, err, memstore.EPermission, "a session token's archive")
	// Another workspace sees none of workspace A's dreams.
	_, err = e.b.Dream(ctx, e.adminB, d.ID)
	wantCode(t, err, memstore.ENotFound, "another workspace's get")
	_, err = e.b.CancelDream(ctx, e.adminB, d.ID)
	wantCode(t, err, memstore.ENotFound, "another workspace's cancel")
	page, err := e.b.Dreams(ctx, e.adminB, memstore.DreamFilter{IncludeArchived: true})
	if err != nil || len(page.Items) != 0 {
		t.Errorf("another workspace's list: %d dreams, %v", len(page.Items), err)
	}
	if got, err := e.b.Dream(ctx, e.admin, d.ID); err != nil || got.Status != memstore.DreamPending {
		t.Errorf("after the refusals the dream is %v, %v; want it pending", got, err)
	}
	if ids := e.dreamIDs(t); len(ids) != 1 {
		t.Errorf("the refusals made dreams: %v", ids)
	}
}

func testDreamList(t *testing.T, e *dreamEnv) {
	ctx := t.Context()
	var made []*memstore.Dream
	for range 3 {
		made = append(made, e.mustCreateDream(t, e.create()))
		tick()
	}
	// Newest first, a page at a time.
	ds, sizes := allPages(t, "dreams", 1, "", func(page string) (memstore.Page[memstore.Dream], error) {
		return e.b.Dreams(ctx, e.admin, memstore.DreamFilter{Limit: 1, Page: page})
	})
	want := []string{made[2].ID, made[1].ID, made[0].ID}
	if got := dreamList(ds); !slices.Equal(got, want) || !slices.Equal(sizes, []int{1, 1, 1}) {
		t.Errorf("list by pages of 1: %v in pages %v, want %v", got, sizes, want)
	}
	// Statuses, archive and creation times.
	if _, err := e.b.CancelDream(ctx, e.admin, made[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.b.ArchiveDream(ctx, e.admin, made[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.b.CancelDream(ctx, e.admin, made[1].ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		f    memstore.DreamFilter
		want []string
	}{
		{"default", memstore.DreamFilter{}, []string{made[2].ID, made[1].ID}},
		{"archived included", memstore.DreamFilter{IncludeArchived: true}, want},
		{"pending", memstore.DreamFilter{Statuses: []memstore.DreamStatus{memstore.DreamPending}}, []string{made[2].ID}},
		{"canceled and archived", memstore.DreamFilter{IncludeArchived: true, Statuses: []memstore.DreamStatus{memstore.DreamCanceled}}, []string{made[1].ID, made[0].ID}},
		{"two statuses", memstore.DreamFilter{Statuses: []memstore.DreamStatus{memstore.DreamPending, memstore.DreamCanceled}}, []string{made[2].ID, made[1].ID}},
		{"created after the first", memstore.DreamFilter{IncludeArchived: true, CreatedAtGT: &made[0].CreatedAt}, []string{made[2].ID, made[1].ID}},
		{"created before the last", memstore.DreamFilter{IncludeArchived: true, CreatedAtLT: &made[2].CreatedAt}, []string{made[1].ID, made[0].ID}},
	} {
		page, err := e.b.Dreams(ctx, e.admin, c.f)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := dreamList(page.Items); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	for _, f := range []memstore.DreamFilter{{Statuses: []memstore.DreamStatus{"sleeping"}}, {Limit: 101}, {Page: "page_nonsense"}} {
		_, err := e.b.Dreams(ctx, e.admin, f)
		wantCode(t, err, memstore.EInvalid, "a bad filter")
	}
}

// dreamList is the IDs of ds, in their order.
func dreamList(ds []memstore.Dream) []string {
	ids := make([]string, len(ds))
	for i := range ds {
		ids[i] = ds[i].ID
	}
	return ids
}

func testDreamCancelArchive(t *testing.T, e *dreamEnv) {
	ctx := t.Context()
	d := e.mustCreateDream(t, e.create())
	_, err := e.b.ArchiveDream(ctx, e.admin, d.ID)
	if wantCode(t, err, memstore.EInvalid, "archive of a pending dream") && !strings.Contains(memstore.ErrorMessage(err), "cancel it first") {
		t.Errorf("archive of a pending dream: %q, want it to say to cancel it first", memstore.ErrorMessage(err))
	}
	c, err := e.b.CancelDream(ctx, e.admin, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != memstore.DreamCanceled || c.EndedAt == nil || len(c.Outputs()) != 0 {
		t.Errorf("a canceled pending dream: status %s, ended %v, outputs %v", c.Status, c.EndedAt, c.Outputs())
	}
	again, err := e.b.CancelDream(ctx, e.admin, d.ID)
	if err != nil || again.Status != memstore.DreamCanceled || !again.EndedAt.Equal(*c.EndedAt) {
		t.Errorf("canceling again: %v, %v; want it unchanged", again, err)
	}
	a, err := e.b.ArchiveDream(ctx, e.admin, d.ID)
	if err != nil || a.ArchivedAt == nil {
		t.Fatalf("archive of a canceled dream: %v, %v", a, err)
	}
	a2, err := e.b.ArchiveDream(ctx, e.admin, d.ID)
	if err != nil || !a2.ArchivedAt.Equal(*a.ArchivedAt) {
		t.Errorf("archiving again: %v, %v; want it unchanged", a2, err)
	}
	if got, err := e.b.Dream(ctx, e.admin, d.ID); err != nil || got.ArchivedAt == nil {
		t.Errorf("an archived dream by ID: %v, %v", got, err)
	}
	for _, id := range []string{"drm_nosuchdream", ""} {
		_, err := e.b.CancelDream(ctx, e.admin, id)
		wantCode(t, err, memstore.ENotFound, "cancel of no dream "+id)
	}
}

func testDreamUpdateExisting(t *testing.T, e *dreamEnv) {
	ctx := t.Context()
	dc := e.create()
	dc.OutputBehavior, dc.OutputStoreID = memstore.OutputUpdateExisting, e.store
	d := e.mustCreateDream(t, dc)
	if d.OutputBehavior != memstore.OutputUpdateExisting || len(d.Outputs()) != 0 {
		t.Errorf("update_existing: behavior %q, outputs %v while pending", d.OutputBehavior, d.Outputs())
	}
	_, err := e.b.CreateDream(ctx, e.admin, dc)
	if wantCode(t, err, memstore.EConflict, "a second update_existing of the store") && !strings.Contains(memstore.ErrorMessage(err), d.ID) {
		t.Errorf("the conflict does not name dream %s: %q", d.ID, memstore.ErrorMessage(err))
	}
	// A create_new of the same store is fine meanwhile, and once the
	// first is canceled (no worker held it), so is another update.
	e.mustCreateDream(t, e.create())
	c, err := e.b.CancelDream(ctx, e.admin, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Outputs()) != 0 || c.RunningSessionID() != "" {
		t.Errorf("an update_existing dream canceled before it ran shows outputs %v, session %q", c.Outputs(), c.RunningSessionID())
	}
	e.mustCreateDream(t, dc)
}

func testDreamLiveLimit(t *testing.T, e *dreamEnv) {
	ctx := t.Context()
	var first *memstore.Dream
	for i := range memstore.MaxLiveDreams {
		d := e.mustCreateDream(t, e.create())
		if i == 0 {
			first = d
		}
	}
	_, err := e.b.CreateDream(ctx, e.admin, e.create())
	if wantCode(t, err, memstore.EInvalid, "a dream past the limit") && !strings.Contains(memstore.ErrorMessage(err), "10 dreams pending or running, the most it may have") {
		t.Errorf("the refusal does not name the limit: %q", memstore.ErrorMessage(err))
	}
	// Another workspace has its own.
	dB := e.create()
	dB.Inputs = []memstore.DreamInput{{Type: memstore.DreamInputMemoryStore, MemoryStoreID: e.storeB},
		{Type: memstore.DreamInputSessions, SessionIDs: []string{e.sessionB}}}
	if _, err := e.b.CreateDream(ctx, e.adminB, dB); err != nil {
		t.Errorf("workspace B's dream while A is at its limit: %v", err)
	}
	if _, err := e.b.CancelDream(ctx, e.admin, first.ID); err != nil {
		t.Fatal(err)
	}
	e.mustCreateDream(t, e.create())
}

// runDreamRunner checks the worker's side of dreams on a database,
// through a core: claims and their leases, BeginDream made once,
// renewals, cancels seen by the worker, FinishDream and its webhook
// events.
func runDreamRunner(t *testing.T, open func(t *testing.T, now func() time.Time) memstore.Database) {
	t.Run("Claim", func(t *testing.T) { testDreamClaim(t, open) })
	t.Run("ClaimFair", func(t *testing.T) { testDreamClaimFair(t, open) })
	t.Run("Begin", func(t *testing.T) { testDreamBegin(t, open) })
	t.Run("BeginUpdateExisting", func(t *testing.T) { testDreamBeginUpdate(t, open) })
	t.Run("BeginLongCopy", func(t *testing.T) { testDreamBeginLongCopy(t, open) })
	t.Run("BeginStoreQuota", func(t *testing.T) { testDreamBeginStoreQuota(t, open) })
	t.Run("Cancel", func(t *testing.T) { testDreamRunnerCancel(t, open) })
	t.Run("Finish", func(t *testing.T) { testDreamFinish(t, open) })
	t.Run("FinishLongError", func(t *testing.T) { testDreamFinishLongError(t, open) })
}

// dreamClock is a clock the test moves.
type dreamClock struct {
	mu   sync.Mutex
	at   time.Time
	step time.Duration // added at each reading, beside a microsecond
}

func (c *dreamClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(time.Microsecond + c.step) // every call later than the last
	return c.at
}

func (c *dreamClock) setStep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.step = d
}

func (c *dreamClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
}

// openRunner opens a database on a clock the test moves, a core over it
// with dreams enabled, and a dream environment in two workspaces of it.
func openRunner(t *testing.T, open func(t *testing.T, now func() time.Time) memstore.Database) (memstore.Database, *memstore.Core, *dreamClock, *dreamEnv) {
	clock := &dreamClock{at: time.Now().UTC().Truncate(time.Second)}
	db := open(t, clock.now)
	co := memstore.NewCore(db, memstore.WithDreams(true), memstore.CoreClock(clock.now))
	a, b := webhookWorkspace(t, db, "dreams"), webhookWorkspace(t, db, "elsewhere")
	return db, co, clock, newDreamEnvIn(t, co, a.WorkspaceID, b.WorkspaceID)
}

const lease = time.Minute

func testDreamClaim(t *testing.T, open func(t *testing.T, now func() time.Time) memstore.Database) {
	ctx := t.Context()
	_, co, clock, e := openRunner(t, open)
	if d, err := co.ClaimDream(ctx, "w1", lease); d != nil || err != nil {
		t.Fatalf("a claim with no dream: %v, %v", d, err)
	}
	first := e.mustCreateDream(t, e.create())
	second := e.mustCreateDream(t, e.create())
	d, err := co.ClaimDream(ctx, "w1", lease)
	if err != nil || d == nil || d.ID != first.ID || d.Attempts != 1 || d.Owner != "w1" {
		t.Fatalf("the first claim: %+v, %v; want the oldest dream %s, attempt 1", d, err, first.ID)
	}
	d2, err := co.ClaimDream(ctx, "w2", lease)
	if err != nil || d2 == nil || d2.ID != second.ID {
		t.Fatalf("the second claim: %+v, %v; want %s", d2, err, second.ID)
	}
	if d3, err := co.ClaimDream(ctx, "w3", lease); d3 != nil || err != nil {
		t.Fatalf("a claim while both are held: %+v, %v", d3, err)
	}
	// w1 keeps its lease; w2's expires and w3 takes its dream.
	clock.add(lease / 2)
	if _, err := co.RenewDream(ctx, first.ID, "w1", lease, memstore.DreamUsage{}); err != nil {
		t.Fatal(err)
	}
	clock.add(lease/2 + time.Second)
	d3, err := co.ClaimDream(ctx, "w3", lease)
	if err != nil || d3 == nil || d3.ID != second.ID || d3.Attempts != 2 {
		t.Fatalf("the claim of an expired lease: %+v, %v; want %s, attempt 2", d3, err, second.ID)
	}
	// w2 lost it: it can change nothing.
	_, err = co.RenewDream(ctx, second.ID, "w2", lease, memstore.DreamUsage{InputTokens: 5})
	wantCode(t, err, memstore.EConflict, "a renewal of a lost lease")
	err = co.FinishDream(ctx, second.ID, "w2", memstore.DreamCompleted, memstore.DreamUsage{}, nil)
	wantCode(t, err, memstore.EConflict, "a finish of a lost lease")
	_, err = co.BeginDream(ctx, d, "w2")
	wantCode(t, err, memstore.EConflict, "a begin of another worker's dream")
	// A dream whose worker stopped MaxDreamAttempts times fails.
	for range memstore.MaxDreamAttempts - 2 {
		clock.add(2 * lease)
		if _, err := co.RenewDream(ctx, first.ID, "w1", lease, memstore.DreamUsage{}); err != nil {
			t.Fatal(err)
		}
		if d, err := co.ClaimDream(ctx, "w4", lease); err != nil || d == nil || d.ID != second.ID {
			t.Fatalf("a claim again: %+v, %v", d, err)
		}
	}
	clock.add(2 * lease)
	if _, err := co.RenewDream(ctx, first.ID, "w1", lease, memstore.DreamUsage{}); err != nil {
		t.Fatal(err)
	}
	if d, err := co.ClaimDream(ctx, "w5", lease); d != nil || err != nil {
		t.Fatalf("the claim past the attempts: %+v, %v; want none", d, err)
	}
	got, err := co.Dream(ctx, e.admin, second.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != memstore.DreamFailed || got.Error == nil || got.Error.Type != memstore.DreamErrorInternal ||
		!strings.Contains(got.Error.Message, "interrupted") || got.EndedAt == nil {
		t.Errorf("a dream past its attempts: status %s, error %+v, ended %v", got.Status, got.Error, got.EndedAt)
	}
}

// testDreamClaimFair: a workspace whose dream runs waits while another's
// pending dream, made later, is claimed first.
func testDreamClaimFair(t *testing.T, open func(t *testing.T, now func() time.Time) memstore.Database) {
	ctx := t.Context()
	_, co, _, e := openRunner(t, open)
	a1 := e.mustCreateDream(t, e.create())
	a2 := e.mustCreateDream(t, e.create())
	b1, err := co.CreateDream(ctx, e.adminB, memstore.DreamCreate{
		Inputs: []memstore.DreamInput{{Type: memstore.DreamInputMemoryStore, MemoryStoreID: e.storeB},
			{Type: memstore.DreamInputSessions, SessionIDs: []string{e.sessionB}}},
		Model: memstore.DreamModel{ID: "claude-test"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 3 {
		d, err := co.ClaimDream(ctx, "w", lease)
		if err != nil || d == nil {
			t.Fatalf("claim: %v, %v", d, err)
		}
		got = append(got, d.ID)
	}
	if want := []string{a1.ID, b1.ID, a2.ID}; !slices.Equal(got, want) {
		t.Errorf("claimed %v, want %v: the workspace running none first", got, want)
	}
}

func testDreamBegin(t *testing.T, open func(t *testing.T, now func() time.Time) memstore.Database) {
	ctx := t.Context()
	_, co, _, e := openRunner(t, open)
	stores := func() []memstore.Store {
		ss, _ := allStores(t, viewOf(co), e.admin.WorkspaceID, memstore.StoreFilter{IncludeArchived: true})
		return ss
	}
	before := len(stores())
	created := e.mustCreateDream(t, e.create())
	d, err := co.ClaimDream(ctx, "w1", lease)
	if err != nil || d == nil {
		t.Fatalf("claim: %v, %v", d, err)
	}
	c, err := co.BeginDream(ctx, d, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != memstore.DreamRunning || d.StartedAt == nil || d.OutputStoreID == "" || d.SessionID == "" {
		t.Fatalf("a begun dream: %+v", d)
	}
	if c.WorkspaceID != e.admin.WorkspaceID || c.Session == nil || c.Session.ID != d.SessionID || c.TokenID != "" ||
		c.Actor != (memstore.Actor{Type: memstore.ActorSession, ID: d.SessionID}) {
		t.Errorf("the dream's caller: %+v", c)
	}
	// Its session has the output store alone, read-write.
	ses, err := co.Session(ctx, e.admin, d.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ses.Attachments) != 1 || ses.Attachments[0].StoreID != d.OutputStoreID || !ses.Attachments[0].Writable() ||
		ses.Title != "Dream "+d.ID || ses.Metadata["dream_id"] != d.ID {
		t.Errorf("the dream's session: %+v", ses)
	}
	out, err := co.Store(ctx, e.admin, d.OutputStoreID)
	if err != nil {
		t.Fatal(err)
	}
	if out.Name != "Notes (dream "+d.ID+")" || out.Metadata["dream_id"] != d.ID {
		t.Errorf("the output store: %+v", out)
	}
	// The copy holds the input's memories, written as the dream's session.
	items, _ := allItems(t, viewOf(co), e.admin.WorkspaceID, d.OutputStoreID, memstore.MemoryFilter{Depth: 100})
	if len(items) != len(e.memories) {
		t.Fatalf("the copy holds %d memories, want %d", len(items), len(e.memories))
	}
	for _, it := range items {
		m := mustMemory(t, viewOf(co), e.admin.WorkspaceID, d.OutputStoreID, it.Memory.ID)
		if m.Content != e.memories[m.Path] {
			t.Errorf("the copy of %s holds %q, want %q", m.Path, m.Content, e.memories[m.Path])
		}
		v := mustVersion(t, viewOf(co), e.admin.WorkspaceID, d.OutputStoreID, m.VersionID)
		if v.CreatedBy != c.Actor {
			t.Errorf("the copy of %s was written by %+v, want the dream's session", m.Path, v.CreatedBy)
		}
	}
	// Its tool calls reach the output store, and no other.
	if _, err := co.CreateMemory(ctx, c, d.OutputStoreID, memstore.MemoryCreate{Path: "/merged.md", Content: "one topic"}); err != nil {
		t.Errorf("the dream's write to its output: %v", err)
	}
	_, err = co.CreateMemory(ctx, c, e.store, memstore.MemoryCreate{Path: "/x.md", Content: "x"})
	wantCode(t, err, memstore.EPermission, "the dream's write to its input")
	// Begun again (a resumed dream), it makes nothing more and copies
	// nothing over the dream's changes.
	if err := co.DeleteMemory(ctx, c, d.OutputStoreID, items[0].Memory.ID, ""); err != nil {
		t.Fatal(err)
	}
	d2 := *d
	c2, err := co.BeginDream(ctx, &d2, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if d2.OutputStoreID != d.OutputStoreID || d2.SessionID != d.SessionID || c2.Session.ID != d.SessionID || !d2.StartedAt.Equal(*d.StartedAt) {
		t.Errorf("begun again: %+v, want %+v", d2, d)
	}
	if n := len(stores()); n != before+1 {
		t.Errorf("%d stores after two begins, want %d", n, before+1)
	}
	// A store attached to the dream's session since (by a key of the
	// workspace) is not the dream's: resumed, it still reaches its output
	// alone, so a prompt in a transcript cannot write there.
	if _, err := co.AttachStore(ctx, e.admin, d.SessionID, memstore.AttachmentCreate{StoreID: e.store, Access: memstore.AccessReadWrite}); err != nil {
		t.Fatal(err)
	}
	d3 := *d
	c3, err := co.BeginDream(ctx, &d3, "w1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = co.CreateMemory(ctx, c3, e.store, memstore.MemoryCreate{Path: "/x.md", Content: "x"})
	wantCode(t, err, memstore.EPermission, "a resumed dream's write to a store attached to its session since")
	if len(c3.Session.Attachments) != 1 || c3.Session.Attachments[0].StoreID != d.OutputStoreID {
		t.Errorf("a resumed dream's caller reaches %+v, want its output %s alone", c3.Session.Attachments, d.OutputStoreID)
	}
	sessions, err := co.Sessions(ctx, e.admin, memstore.SessionFilter{IncludeArchived: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sessions.Items); n != len(e.sessions)+1 {
		t.Errorf("%d sessions after two begins, want %d", n, len(e.sessions)+1)
	}
	items2, _ := allItems(t, viewOf(co), e.admin.WorkspaceID, d.OutputStoreID, memstore.MemoryFilter{Depth: 100})
	if len(items2) != len(items) { // one deleted, one created
		t.Errorf("begun again, the output holds %d memories, want %d", len(items2), len(items))
	}
	got, err := co.Dream(ctx, e.admin, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Outputs(), []string{d.OutputStoreID}) || got.RunningSessionID() != d.SessionID {
		t.Errorf("a running dream shows outputs %v and session %q", got.Outputs(), got.RunningSessionID())
	}
	// The input is untouched.
	inItems, _ := allItems(t, viewOf(co), e.admin.WorkspaceID, e.store, memstore.MemoryFilter{Depth: 100})
	if len(inItems) != len(e.memories) {
		t.Errorf("the input holds %d memories, want %d", len(inItems), len(e.memories))
	}
}

func testDreamBeginUpdate(t *testing.T, open func(t *testing.T, now func() time.Time) memstore.Database) {
	ctx := t.Context()
	_, co, clock, e := openRunner(t, open)
	dc := e.create()
	dc.OutputBehavior, dc.OutputStoreID = memstore.OutputUpdateExisting, e.store
	e.mustCreateDream(t, dc)
	d, err := co.ClaimDream(ctx, "w1", lease)
	if err != nil || d == nil {
		t.Fatalf("claim: %v, %v", d, err)
	}
	c, err := co.BeginDream(ctx, d, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if d.OutputStoreID != e.store || c.Session.Attachment(e.store) == nil || len(c.Session.Attachments) != 1 {
		t.Fatalf("update_existing writes %s through %+v, want the input %s", d.OutputStoreID, c.Session.Attachments, e.store)
	}
	m, err := co.CreateMemory(ctx, c, e.store, memstore.MemoryCreate{Path: "/merged.md", Content: "one"})
	if err != nil {
		t.Fatal(err)
	}
	if v := mustVersion(t, viewOf(co), e.admin.WorkspaceID, e.store, m.VersionID); v.CreatedBy != c.Actor {
		t.Errorf("the change is attributed to %+v, want the dream's session", v.CreatedBy)
	}
	// The conflict holds until the worker has stopped: canceled but still
	// held, then finished.
	if _, err := co.CancelDream(ctx, e.admin, d.ID); err != nil {
		t.Fatal(err)
	}
	_, err = co.CreateDream(ctx, e.admin, dc)
	wantCode(t, err, memstore.EConflict, "update_existing while the canceled one's worker runs")
	if err := co.FinishDream(ctx, d.ID, "w1", memstore.DreamCanceled, memstore.DreamUsage{}, nil); err != nil {
		t.Fatal(err)
	}
	next := e.mustCreateDream(t, dc)
	// A worker that stopped without finishing (its dream canceled while
	// it held it) holds the store only until its lease expires.
	d, err = co.ClaimDream(ctx, "w2", lease)
	if err != nil || d == nil || d.ID != next.ID {
		t.Fatalf("claim: %v, %v", d, err)
	}
	if _, err := co.CancelDream(ctx, e.admin, d.ID); err != nil {
		t.Fatal(err)
	}
	_, err = co.BeginDream(ctx, d, "w2")
	wantCode(t, err, memstore.EConflict, "a begin of a dream canceled while claimed")
	_, err = co.CreateDream(ctx, e.admin, dc)
	wantCode(t, err, memstore.EConflict, "update_existing while a canceled dream's lease holds")
	clock.add(lease + time.Second)
	e.mustCreateDream(t, dc)
}

func testDreamRunnerCancel(t *testing.T, open func(t *testing.T, now func() time.Time) memstore.Database) {
	ctx := t.Context()
	_, co, clock, e := openRunner(t, open)
	e.mustCreateDream(t, e.create())
	d, err := co.ClaimDream(ctx, "w1", lease)
	if err != nil || d == nil {
		t.Fatalf("claim: %v, %v", d, err)
	}
	if _, err := co.BeginDream(ctx, d, "w1"); err != nil {
		t.Fatal(err)
	}
	usage := memstore.DreamUsage{InputTokens: 100, OutputTokens: 20, CacheCreationInputTokens: 3, CacheReadInputTokens: 4}
	if stop, err := co.RenewDream(ctx, d.ID, "w1", lease, usage); err != nil || stop {
		t.Fatalf("a renewal: %v, %v", stop, err)
	}
	if got, _ := co.Dream(ctx, e.admin, d.ID); got.Usage != usage {
		t.Errorf("usage so far %+v, want %+v", got.Usage, usage)
	}
	c, err := co.CancelDream(ctx, e.admin, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != memstore.DreamCanceled || !c.CancelRequested || c.EndedAt == nil {
		t.Errorf("a canceled running dream: %+v", c)
	}
	more := usage.Add(memstore.DreamUsage{InputTokens: 1})
	stop, err := co.RenewDream(ctx, d.ID, "w1", lease, more)
	if err != nil || !stop {
		t.Fatalf("the renewal after a cancel: %v, %v; want to stop", stop, err)
	}
	// The worker's last word: the dream stays canceled, its usage kept.
	if err := co.FinishDream(ctx, d.ID, "w1", memstore.DreamCompleted, more, nil); err != nil {
		t.Fatal(err)
	}
	got, err := co.Dream(ctx, e.admin, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != memstore.DreamCanceled || got.Usage != more || got.Owner != "" || !got.EndedAt.Equal(*c.EndedAt) {
		t.Errorf("after the worker finished: %+v", got)
	}
	if len(got.Outputs()) != 1 || got.RunningSessionID() == "" {
		t.Errorf("a dream canceled while running shows outputs %v, session %q", got.Outputs(), got.RunningSessionID())
	}
	// A dream canceled while it ran, whose worker stopped before it
	// learnt of it, is finished by the next claim: its session archived,
	// no owner left, nothing to run.
	g := e.mustCreateDream(t, e.create())
	if d, err = co.ClaimDream(ctx, "w1", lease); err != nil || d == nil || d.ID != g.ID {
		t.Fatalf("claim: %v, %v", d, err)
	}
	if _, err := co.BeginDream(ctx, d, "w1"); err != nil {
		t.Fatal(err)
	}
	if _, err := co.CancelDream(ctx, e.admin, d.ID); err != nil {
		t.Fatal(err)
	}
	clock.add(2 * lease)
	if next, err := co.ClaimDream(ctx, "w2", lease); next != nil || err != nil {
		t.Errorf("the claim after a canceled dream's worker stopped: %+v, %v; want none", next, err)
	}
	got, err = co.Dream(ctx, e.admin, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != memstore.DreamCanceled || got.Owner != "" || got.LeaseUntil != nil {
		t.Errorf("a canceled dream whose worker stopped, after the next claim: %+v", got)
	}
	if s, err := co.Session(ctx, e.admin, got.SessionID); err != nil || s.ArchivedAt == nil {
		t.Errorf("its session: %+v, %v; want archived", s, err)
	}
	// A canceled pending dream is never claimed.
	p := e.mustCreateDream(t, e.create())
	if _, err := co.CancelDream(ctx, e.admin, p.ID); err != nil {
		t.Fatal(err)
	}
	if d, err := co.ClaimDream(ctx, "w1", lease); d != nil || err != nil {
		t.Errorf("a claim with only canceled dreams: %+v, %v", d, err)
	}
}

func testDreamFinish(t *testing.T, open func(t *testing.T, now func() time.Time) memstore.Database) {
	ctx := t.Context()
	db, co, _, e := openRunner(t, open)
	hooks := memstore.NewWebhooks(db, memstore.WebhooksAllowPrivate(true))
	w, err := hooks.CreateWebhook(ctx, e.admin, memstore.WebhookCreate{URL: "http://127.0.0.1:9/hooks",
		EnabledEvents: []string{memstore.WebhookDreamCompleted, memstore.WebhookDreamFailed}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := hooks.CreateWebhook(ctx, e.admin, memstore.WebhookCreate{URL: "http://127.0.0.1:9/stores",
		EnabledEvents: []string{memstore.WebhookStoreCreated}})
	if err != nil {
		t.Fatal(err)
	}
	run := func() *memstore.Dream {
		e.mustCreateDream(t, e.create())
		d, err := co.ClaimDream(ctx, "w1", lease)
		if err != nil || d == nil {
			t.Fatalf("claim: %v, %v", d, err)
		}
		if _, err := co.BeginDream(ctx, d, "w1"); err != nil {
			t.Fatal(err)
		}
		return d
	}
	ok := run()
	usage := memstore.DreamUsage{InputTokens: 7, OutputTokens: 8}
	err = co.FinishDream(ctx, ok.ID, "w1", memstore.DreamFailed, usage, nil)
	wantCode(t, err, memstore.EInvalid, "a failure without its error")
	if err := co.FinishDream(ctx, ok.ID, "w1", memstore.DreamCompleted, usage, nil); err != nil {
		t.Fatal(err)
	}
	got, err := co.Dream(ctx, e.admin, ok.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != memstore.DreamCompleted || got.EndedAt == nil || got.Usage != usage || got.Error != nil {
		t.Errorf("a completed dream: %+v", got)
	}
	if ses, err := co.Session(ctx, e.admin, ok.SessionID); err != nil || ses.ArchivedAt == nil {
		t.Errorf("the session of a finished dream: %+v, %v; want it archived", ses, err)
	}
	err = co.FinishDream(ctx, ok.ID, "w1", memstore.DreamFailed, usage, &memstore.DreamError{Type: "x", Message: "y"})
	wantCode(t, err, memstore.EConflict, "finishing a completed dream again")
	_, err = co.CancelDream(ctx, e.admin, ok.ID)
	wantCode(t, err, memstore.EInvalid, "a cancel of a completed dream")

	bad := run()
	why := &memstore.DreamError{Type: memstore.EOverloaded, Message: "the model endpoint answered 529 every time"}
	if err := co.FinishDream(ctx, bad.ID, "w1", memstore.DreamFailed, usage, why); err != nil {
		t.Fatal(err)
	}
	if got, _ := co.Dream(ctx, e.admin, bad.ID); got.Status != memstore.DreamFailed || got.Error == nil || *got.Error != *why {
		t.Errorf("a failed dream: %+v", got)
	}
	canceled := run()
	if _, err := co.CancelDream(ctx, e.admin, canceled.ID); err != nil {
		t.Fatal(err)
	}
	if err := co.FinishDream(ctx, canceled.ID, "w1", memstore.DreamCanceled, usage, nil); err != nil {
		t.Fatal(err)
	}
	// One delivery for each of the first two, to the endpoint that asks
	// for them, naming the dream and its output store; none for the
	// canceled one, none to the other endpoint.
	ds, err := hooks.WebhookDeliveries(ctx, e.admin, w.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	type event struct{ typ, dream, store string }
	var evs []event
	for _, d := range ds {
		evs = append(evs, event{d.Event.Type, d.Event.DreamID, d.Event.StoreID})
		wantPrefix(t, d.Event.ID, memstore.WebhookEventIDPrefix, "event ID")
		if d.State != memstore.DeliveryPending || d.Event.WorkspaceID != e.admin.WorkspaceID {
			t.Errorf("delivery %+v", d)
		}
	}
	want := []event{{memstore.WebhookDreamFailed, bad.ID, bad.OutputStoreID}, {memstore.WebhookDreamCompleted, ok.ID, ok.OutputStoreID}}
	slices.SortFunc(evs, func(a, b event) int { return strings.Compare(a.typ, b.typ) })
	slices.SortFunc(want, func(a, b event) int { return strings.Compare(a.typ, b.typ) })
	if !slices.Equal(evs, want) {
		t.Errorf("the deliveries: %+v, want %+v", evs, want)
	}
	ds, err = hooks.WebhookDeliveries(ctx, e.admin, other.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if strings.HasPrefix(d.Event.Type, memstore.WebhookOwnPrefix+"dream.") {
			t.Errorf("an endpoint that does not ask for dreams got %+v", d.Event)
		}
	}
}

// testDreamFinishLongError: the worker's account of a failure is kept
// cut to MaxDreamError bytes, as valid text.
func testDreamFinishLongError(t *testing.T, open func(t *testing.T, now func() time.Time) memstore.Database) {
	ctx := t.Context()
	_, co, _, e := openRunner(t, open)
	e.mustCreateDream(t, e.create())
	d, err := co.ClaimDream(ctx, "w1", lease)
	if err != nil || d == nil {
		t.Fatalf("claim: %v, %v", d, err)
	}
	long := strings.Repeat("é", memstore.MaxDreamError) + "\x00\xff"
	if err := co.FinishDream(ctx, d.ID, "w1", memstore.DreamFailed, memstore.DreamUsage{}, &memstore.DreamError{Type: memstore.DreamErrorTimeout, Message: long}); err != nil {
		t.Fatal(err)
	}
	got, err := co.Dream(ctx, e.admin, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Error == nil || got.Error.Type != memstore.DreamErrorTimeout || len(got.Error.Message) > memstore.MaxDreamError ||
		!utf8.ValidString(got.Error.Message) || !strings.HasPrefix(long, got.Error.Message) {
		t.Errorf("the kept error: %+v", got.Error)
	}
	for _, owner := range []string{"", strings.Repeat("w", 65)} {
		_, err := co.ClaimDream(ctx, owner, lease)
		wantCode(t, err, memstore.EInvalid, "a claim by owner "+owner)
	}
}

// testDreamBeginLongCopy: a copy that lasts longer than the claim's
// lease keeps the lease up, so that no other worker takes the dream
// while it runs.
func testDreamBeginLongCopy(t *testing.T, open func(t *testing.T, now func() time.Time) memstore.Database) {
	ctx := t.Context()
	_, co, clock, e := openRunner(t, open)
	for i := range 250 {
		if _, err := co.CreateMemory(ctx, e.admin, e.store, memstore.MemoryCreate{Path: fmt.Sprintf("/many/%03d.md", i), Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	e.mustCreateDream(t, e.create())
	d, err := co.ClaimDream(ctx, "w1", lease)
	if err != nil || d == nil {
		t.Fatalf("claim: %v, %v", d, err)
	}
	clock.setStep(time.Second) // the copy's 250 writes take minutes
	if _, err := co.BeginDream(ctx, d, "w1"); err != nil {
		t.Fatal(err)
	}
	clock.setStep(0)
	if other, err := co.ClaimDream(ctx, "w2", lease); other != nil || err != nil {
		t.Errorf("another worker claimed the dream just begun: %+v, %v", other, err)
	}
	items, _ := allItems(t, viewOf(co), e.admin.WorkspaceID, d.OutputStoreID, memstore.MemoryFilter{Depth: 100})
	if len(items) != 250+len(e.memories) {
		t.Errorf("the copy holds %d memories, want %d", len(items), 250+len(e.memories))
	}
}

// BeganDream makes a create_new dream of c's store storeID and session
// sessionID, claims it as owner and begins it (its output store made, a
// copy of the input), for the tests of packages that act on a dream
// under way, within ctx. The dream returned is as BeginDream left it.
func BeganDream(ctx context.Context, tb testing.TB, co *memstore.Core, c *memstore.Caller, storeID, sessionID, owner string) *memstore.Dream {
	tb.Helper()
	if _, err := co.CreateDream(ctx, c, memstore.DreamCreate{
		Inputs: []memstore.DreamInput{{Type: memstore.DreamInputMemoryStore, MemoryStoreID: storeID},
			{Type: memstore.DreamInputSessions, SessionIDs: []string{sessionID}}},
		Model: memstore.DreamModel{ID: "claude-test"}}); err != nil {
		tb.Fatal(err)
	}
	d, err := co.ClaimDream(ctx, owner, time.Minute)
	if err != nil || d == nil {
		tb.Fatalf("claim: %v, %v", d, err)
	}
	if _, err := co.BeginDream(ctx, d, owner); err != nil {
		tb.Fatalf("begin: %v", err)
	}
	return d
}

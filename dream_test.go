package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
	"github.com/memstore/memstore/storetest"
)

// TestDreamRoles: console users reach dreams as they reach stores: an
// auditor lists and reads them but may not create, cancel or archive
// one; a member and an admin may. A refused call changes nothing.
func TestDreamRoles(t *testing.T) {
	ctx := t.Context()
	db := sqlitetest.Open(t, sqlite.Options{})
	co := memstore.NewCore(db, memstore.WithDreams(true))
	w, err := db.CreateWorkspace(ctx, "roles")
	if err != nil {
		t.Fatal(err)
	}
	key := &memstore.Caller{WorkspaceID: w.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_roles"}}
	user := func(r memstore.Role) *memstore.Caller {
		return &memstore.Caller{WorkspaceID: w.ID, Actor: memstore.Actor{Type: memstore.ActorUser, ID: "user_" + string(r)}, Role: r}
	}
	st, err := co.CreateStore(ctx, key, memstore.StoreCreate{Name: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	ses, _, _, err := co.CreateSession(ctx, key, memstore.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	dc := memstore.DreamCreate{Inputs: []memstore.DreamInput{{Type: memstore.DreamInputMemoryStore, MemoryStoreID: st.ID},
		{Type: memstore.DreamInputSessions, SessionIDs: []string{ses.ID}}}, Model: memstore.DreamModel{ID: "claude-test"}}
	d, err := co.CreateDream(ctx, key, dc)
	if err != nil {
		t.Fatal(err)
	}

	auditor := user(memstore.RoleAuditor)
	if _, err := co.Dreams(ctx, auditor, memstore.DreamFilter{}); err != nil {
		t.Errorf("an auditor's list: %v", err)
	}
	if _, err := co.Dream(ctx, auditor, d.ID); err != nil {
		t.Errorf("an auditor's get: %v", err)
	}
	for what, call := range map[string]func() error{
		"create":  func() error { _, err := co.CreateDream(ctx, auditor, dc); return err },
		"cancel":  func() error { _, err := co.CancelDream(ctx, auditor, d.ID); return err },
		"archive": func() error { _, err := co.ArchiveDream(ctx, auditor, d.ID); return err },
	} {
		err := call()
		if memstore.ErrorCode(err) != memstore.EPermission || !strings.Contains(memstore.ErrorMessage(err), "the auditor role cannot manage dreams") {
			t.Errorf("an auditor's %s: %v, want a permission_error naming the role", what, err)
		}
	}
	if got, err := co.Dream(ctx, key, d.ID); err != nil || got.Status != memstore.DreamPending {
		t.Errorf("after the auditor's refusals: %v, %v", got, err)
	}
	for _, r := range []memstore.Role{memstore.RoleMember, memstore.RoleAdmin} {
		made, err := co.CreateDream(ctx, user(r), dc)
		if err != nil {
			t.Errorf("a %s's create: %v", r, err)
			continue
		}
		if _, err := co.CancelDream(ctx, user(r), made.ID); err != nil {
			t.Errorf("a %s's cancel: %v", r, err)
		}
	}
	// The permission the console asks before it offers is the call's.
	if memstore.ErrorCode(auditor.CanDream(true)) != memstore.EPermission || auditor.CanDream(false) != nil || key.CanDream(true) != nil {
		t.Error("CanDream does not answer as the calls do")
	}
}

// TestCheckDreamRecords: a copied dream (memstore migrate) is held to
// the rules a create and the worker keep; a hostile one is refused,
// naming what is wrong.
func TestCheckDreamRecords(t *testing.T) {
	now := time.Now().UTC()
	good := func() *memstore.Dream {
		return &memstore.Dream{ID: "drm_01jq2x7v3k5m8n9p0r4s6t1w2y", WorkspaceID: "wrkspc_01jq2x7v3k5m8n9p0r4s6t1w2y",
			Status: memstore.DreamCompleted, InputStoreID: "memstore_01jq2x7v3k5m8n9p0r4s6t1w2y",
			SessionIDs: []string{"sesn_01jq2x7v3k5m8n9p0r4s6t1w2y"}, Model: memstore.DreamModel{ID: "claude-test", Speed: memstore.SpeedStandard},
			OutputBehavior: memstore.OutputCreateNew, OutputStoreID: "memstore_01jq2x7v3k5m8n9p0r4s6t1w2z",
			SessionID: "sesn_01jq2x7v3k5m8n9p0r4s6t1w2z", CreatedAt: now, UpdatedAt: now, StartedAt: &now, EndedAt: &now}
	}
	check := func(d *memstore.Dream) error {
		sink := memstore.CheckRecords(acceptAll{})
		if err := sink.Begin(memstore.KindDreams, 1); err != nil {
			t.Fatal(err)
		}
		return sink.Dream(d)
	}
	if err := check(good()); err != nil {
		t.Fatalf("a good dream: %v", err)
	}
	for _, c := range []struct {
		name   string
		change func(d *memstore.Dream)
		want   string
	}{
		{"bad ID", func(d *memstore.Dream) { d.ID = "drm_../x" }, "is not an ID"},
		{"unknown status", func(d *memstore.Dream) { d.Status = "sleeping" }, `status "sleeping" is not a dream's status`},
		{"failed without error", func(d *memstore.Dream) { d.Status = memstore.DreamFailed }, "a failed dream has no error"},
		{"running but ended", func(d *memstore.Dream) { d.Status = memstore.DreamRunning }, "ended_at is set exactly when the status is final"},
		{"no sessions", func(d *memstore.Dream) { d.SessionIDs = nil }, "1 to 100 sessions"},
		{"a session twice", func(d *memstore.Dream) { d.SessionIDs = append(d.SessionIDs, d.SessionIDs[0]) }, "list each session once"},
		{"fast", func(d *memstore.Dream) { d.Model.Speed = "fast" }, "model.speed must be standard"},
		{"bad output store", func(d *memstore.Dream) { d.OutputStoreID = "mem_x" }, "output_store_id"},
		{"update_existing of another store", func(d *memstore.Dream) { d.OutputBehavior = memstore.OutputUpdateExisting }, "must be the memory store of the memory_store input"},
		{"bad session", func(d *memstore.Dream) { d.SessionID = "sesn_\x00" }, "session_id"},
		{"a long error", func(d *memstore.Dream) {
			d.Status, d.Error = memstore.DreamFailed, &memstore.DreamError{Type: "timeout", Message: strings.Repeat("x", memstore.MaxDreamError+1)}
		}, "error.message is 1025 bytes; the limit is 1024"},
		{"an error of a completed dream", func(d *memstore.Dream) { d.Error = &memstore.DreamError{Type: "timeout", Message: "x"} }, "only a failed dream has an error"},
		{"negative usage", func(d *memstore.Dream) { d.Usage.OutputTokens = -1 }, "must not be negative"},
	} {
		d := good()
		c.change(d)
		err := check(d)
		if memstore.ErrorCode(err) != memstore.EInvalid || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal saying %q", c.name, err, c.want)
		}
	}
}

func (acceptAll) Dream(*memstore.Dream) error { return nil }

// pageHook is a SQLite database that calls after once each page of
// memories it lists has been read, as a writer between two pages would,
// and fails the pages fail refuses, as a server that stops would.
type pageHook struct {
	*sqlite.DB
	pages int
	after func(page int)
	fail  func(page int) error
}

func (p *pageHook) Memories(ctx context.Context, ws, storeID string, f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
	page, err := p.DB.Memories(ctx, ws, storeID, f)
	p.pages++
	if err == nil && p.fail != nil {
		if err := p.fail(p.pages); err != nil {
			return memstore.Page[memstore.ListItem]{}, err
		}
	}
	if err == nil && p.after != nil {
		p.after(p.pages)
	}
	return page, err
}

// contents is every memory of store storeID as c sees it: content by path.
func contents(t *testing.T, co *memstore.Core, c *memstore.Caller, storeID string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, it := range storetest.ListAll(t, memstore.MemoryFilter{Full: true}, func(f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
		return co.Memories(t.Context(), c, storeID, f)
	}) {
		got[it.Memory.Path] = it.Memory.Content
	}
	return got
}

// TestDreamCopyWhileTheInputChanges: the copy of a create_new dream's
// input, which reads it a page at a time, copies the memories the input
// had when it began, each once and at its path then, while an agent
// renames, deletes and creates memories of the input between its pages:
// a memory copied and then renamed ahead of the pages is not copied
// again; one renamed behind them, onto the path the first left, is still
// copied, at its own path; one deleted is not, nor one created.
func TestDreamCopyWhileTheInputChanges(t *testing.T) {
	ctx := t.Context()
	f := newCopyFixture(t)
	f.db.after = func(page int) {
		if page != 1 {
			return
		}
		f.rename(t, "/m/05.md", "/z/ahead.md") // copied already
		f.rename(t, "/m/30.md", "/m/05.md")    // not read yet
		f.remove(t, "/m/40.md")
		f.create(t, "/m/41b.md")
	}
	if _, err := f.co.BeginDream(ctx, f.d, "A"); err != nil {
		t.Fatalf("begin: %v", err)
	}
	f.db.after = nil
	got := contents(t, f.co, f.key, f.d.OutputStoreID)
	if len(got) != 44 || got["/m/05.md"] != "note /m/05.md" || got["/m/30.md"] != "note /m/30.md" {
		t.Errorf("the copy holds %d memories (/m/05.md %q, /m/30.md %q), want 44 with both as they were", len(got), got["/m/05.md"], got["/m/30.md"])
	}
	for _, p := range []string{"/z/ahead.md", "/m/40.md", "/m/41b.md"} {
		if _, ok := got[p]; ok {
			t.Errorf("the copy holds %s", p)
		}
	}
}

// TestDreamCopyResumed: a copy interrupted after its first page, and
// begun again after the input changed (a memory already copied renamed,
// one deleted, one edited, one not copied yet deleted, one created,
// one at a path that overlaps a copied one's old path), leaves the
// output the same as the input is when it begins again.
func TestDreamCopyResumed(t *testing.T) {
	f := newCopyFixture(t)
	f.interrupt(t)
	if got := contents(t, f.co, f.key, f.d.OutputStoreID); len(got) != 20 {
		t.Fatalf("the interrupted copy holds %d memories, want the first page's 20", len(got))
	}
	// The input changes while no worker holds the dream.
	f.rename(t, "/m/03.md", "/renamed/03.md")
	f.edit(t, "/m/06.md", "edited since")
	for _, p := range []string{"/m/04.md", "/m/30.md", "/m/07.md"} {
		f.remove(t, p)
	}
	f.create(t, "/m/50.md")
	f.create(t, "/m/07.md/under.md") // overlaps a path copied before
	if _, err := f.co.BeginDream(t.Context(), f.d, "A"); err != nil {
		t.Fatalf("begin again: %v", err)
	}
	want, got := contents(t, f.co, f.key, f.store), contents(t, f.co, f.key, f.d.OutputStoreID)
	if !maps.Equal(got, want) {
		t.Errorf("the output after the copy begun again differs from the input:\n got %d: %v\nwant %d: %v", len(got), got, len(want), want)
	}
}

// copyFixture is a workspace with a store of 45 memories (/m/00.md to
// /m/44.md, three pages of a copy) and a create_new dream of it, claimed
// by worker A, on a SQLite database whose pages can be failed or
// followed by a change, and whose clock the test moves.
type copyFixture struct {
	db    *pageHook
	co    *memstore.Core
	lax   *memstore.Core // lets an index past its cap be written
	key   *memstore.Caller
	store string
	ids   map[string]string // by path
	d     *memstore.Dream
	mu    sync.Mutex
	now   time.Time
}

func newCopyFixture(t *testing.T) *copyFixture {
	f := &copyFixture{now: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC), ids: map[string]string{}}
	clock := func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now }
	f.db = &pageHook{DB: sqlitetest.Open(t, sqlite.Options{Now: clock})}
	f.co = memstore.NewCore(f.db, memstore.WithDreams(true))
	f.lax = memstore.NewCore(f.db, memstore.WithDreams(true), memstore.WithContentRules(memstore.ContentRules{AllowOversizedIndex: true}))
	ctx := t.Context()
	w, err := f.db.CreateWorkspace(ctx, "copy")
	if err != nil {
		t.Fatal(err)
	}
	f.key = &memstore.Caller{WorkspaceID: w.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_copy"}}
	st, err := f.co.CreateStore(ctx, f.key, memstore.StoreCreate{Name: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	f.store = st.ID
	for i := range 45 {
		f.create(t, fmt.Sprintf("/m/%02d.md", i))
	}
	ses, _, _, err := f.co.CreateSession(ctx, f.key, memstore.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.co.CreateDream(ctx, f.key, memstore.DreamCreate{
		Inputs: []memstore.DreamInput{{Type: memstore.DreamInputMemoryStore, MemoryStoreID: st.ID},
			{Type: memstore.DreamInputSessions, SessionIDs: []string{ses.ID}}},
		Model: memstore.DreamModel{ID: "claude-test"}}); err != nil {
		t.Fatal(err)
	}
	if f.d, err = f.co.ClaimDream(ctx, "A", time.Minute); err != nil || f.d == nil {
		t.Fatalf("claim: %v, %v", f.d, err)
	}
	return f
}

func (f *copyFixture) create(t *testing.T, path string) {
	t.Helper()
	m, err := f.lax.CreateMemory(t.Context(), f.key, f.store, memstore.MemoryCreate{Path: path, Content: "note " + path})
	if err != nil {
		t.Fatal(err)
	}
	f.ids[path] = m.ID
}

func (f *copyFixture) edit(t *testing.T, path, content string) {
	t.Helper()
	if _, err := f.lax.UpdateMemory(t.Context(), f.key, f.store, f.ids[path], memstore.MemoryUpdate{Content: &content}); err != nil {
		t.Fatal(err)
	}
}

func (f *copyFixture) rename(t *testing.T, from, to string) {
	t.Helper()
	if _, err := f.co.UpdateMemory(t.Context(), f.key, f.store, f.ids[from], memstore.MemoryUpdate{Path: &to}); err != nil {
		t.Fatal(err)
	}
}

func (f *copyFixture) remove(t *testing.T, path string) {
	t.Helper()
	if err := f.co.DeleteMemory(t.Context(), f.key, f.store, f.ids[path], ""); err != nil {
		t.Fatal(err)
	}
}

// interrupt begins the dream as A, failing the copy's second page.
func (f *copyFixture) interrupt(t *testing.T) {
	t.Helper()
	stop := memstore.Errorf(memstore.EConflict, "the server stopped")
	f.db.fail = func(page int) error {
		if page == 2 {
			return stop
		}
		return nil
	}
	if _, err := f.co.BeginDream(t.Context(), f.d, "A"); !errors.Is(err, stop) {
		t.Fatalf("begin, stopped after a page: %v", err)
	}
	f.db.fail, f.db.pages = nil, 0
}

// TestDreamCopyResumedAsIs: an index past its cap (written while the
// cap was off) and edited before a copy begins again is copied as it is,
// as the copy's first run created it: the copy applies no content rule.
func TestDreamCopyResumedAsIs(t *testing.T) {
	f := newCopyFixture(t)
	f.create(t, "/MEMORY.md")
	f.edit(t, "/MEMORY.md", strings.Repeat("- a line\n", 300))
	f.interrupt(t)
	long := strings.Repeat("- another line\n", 300)
	f.edit(t, "/MEMORY.md", long)
	if _, err := f.co.BeginDream(t.Context(), f.d, "A"); err != nil {
		t.Fatalf("begin again: %v", err)
	}
	if got := contents(t, f.co, f.key, f.d.OutputStoreID)["/MEMORY.md"]; got != long {
		t.Errorf("the copy's index is %d bytes, want the input's %d", len(got), len(long))
	}
}

// TestDreamCopyStaleWorker: worker A begins a copy again and stalls past
// its lease; B takes the dream over, finishes the copy, and the dream
// edits a memory of its output. A, going on, must not undo that edit:
// its write names the content it found, is refused, and A's copy ends
// with the lease's word.
func TestDreamCopyStaleWorker(t *testing.T) {
	ctx := t.Context()
	f := newCopyFixture(t)
	f.interrupt(t) // /m/00.md to /m/19.md copied
	f.edit(t, "/m/10.md", "changed in the input")
	out := f.d.OutputStoreID
	f.db.after = func(page int) {
		f.db.after = nil
		f.mu.Lock()
		f.now = f.now.Add(2 * time.Minute) // A's lease ends
		f.mu.Unlock()
		dB, err := f.co.ClaimDream(ctx, "B", time.Minute)
		if err != nil || dB == nil {
			t.Fatalf("B's claim: %v, %v", dB, err)
		}
		dreamer, err := f.co.BeginDream(ctx, dB, "B")
		if err != nil {
			t.Fatalf("B's begin: %v", err)
		}
		for _, m := range storetest.ListAll(t, memstore.MemoryFilter{PathPrefix: "/m/10.md"}, func(lf memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
			return f.co.Memories(ctx, f.key, out, lf)
		}) {
			edit := "the dream's own edit"
			if _, err := f.co.UpdateMemory(ctx, dreamer, out, m.Memory.ID, memstore.MemoryUpdate{Content: &edit}); err != nil {
				t.Fatalf("the dream's edit: %v", err)
			}
		}
	}
	_, err := f.co.BeginDream(ctx, f.d, "A")
	if memstore.ErrorCode(err) != memstore.EConflict {
		t.Errorf("A going on after losing the dream: %v, want a conflict", err)
	}
	if got := contents(t, f.co, f.key, out)["/m/10.md"]; got != "the dream's own edit" {
		t.Errorf("/m/10.md in the output is %q, want the dream's own edit", got)
	}
}

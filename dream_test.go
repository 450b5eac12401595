package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
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
	db := &pageHook{DB: sqlitetest.Open(t, sqlite.Options{})}
	co := memstore.NewCore(db, memstore.WithDreams(true))
	w, err := db.CreateWorkspace(ctx, "copy")
	if err != nil {
		t.Fatal(err)
	}
	key := &memstore.Caller{WorkspaceID: w.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_copy"}}
	st, err := co.CreateStore(ctx, key, memstore.StoreCreate{Name: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for i := range 45 { // three pages: 20, 20 and 5
		path := fmt.Sprintf("/m/%02d.md", i)
		m, err := co.CreateMemory(ctx, key, st.ID, memstore.MemoryCreate{Path: path, Content: "note " + path})
		if err != nil {
			t.Fatal(err)
		}
		ids[path] = m.ID
	}
	ses, _, _, err := co.CreateSession(ctx, key, memstore.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	db.after = func(page int) {
		if page != 1 {
			return
		}
		rename := func(from, to string) {
			if _, err := co.UpdateMemory(ctx, key, st.ID, ids[from], memstore.MemoryUpdate{Path: &to}); err != nil {
				t.Fatal(err)
			}
		}
		rename("/m/05.md", "/z/ahead.md") // copied already
		rename("/m/30.md", "/m/05.md")    // not read yet
		if err := co.DeleteMemory(ctx, key, st.ID, ids["/m/40.md"], ""); err != nil {
			t.Fatal(err)
		}
		if _, err := co.CreateMemory(ctx, key, st.ID, memstore.MemoryCreate{Path: "/m/41b.md", Content: "new"}); err != nil {
			t.Fatal(err)
		}
	}
	d := storetest.BeganDream(ctx, t, co, key, st.ID, ses.ID, "worker")
	db.after = nil
	got := contents(t, co, key, d.OutputStoreID)
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
	ctx := t.Context()
	db := &pageHook{DB: sqlitetest.Open(t, sqlite.Options{})}
	co := memstore.NewCore(db, memstore.WithDreams(true))
	w, err := db.CreateWorkspace(ctx, "resume")
	if err != nil {
		t.Fatal(err)
	}
	key := &memstore.Caller{WorkspaceID: w.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_resume"}}
	st, err := co.CreateStore(ctx, key, memstore.StoreCreate{Name: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for i := range 45 {
		path := fmt.Sprintf("/m/%02d.md", i)
		m, err := co.CreateMemory(ctx, key, st.ID, memstore.MemoryCreate{Path: path, Content: "note " + path})
		if err != nil {
			t.Fatal(err)
		}
		ids[path] = m.ID
	}
	ses, _, _, err := co.CreateSession(ctx, key, memstore.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := co.CreateDream(ctx, key, memstore.DreamCreate{
		Inputs: []memstore.DreamInput{{Type: memstore.DreamInputMemoryStore, MemoryStoreID: st.ID},
			{Type: memstore.DreamInputSessions, SessionIDs: []string{ses.ID}}},
		Model: memstore.DreamModel{ID: "claude-test"}}); err != nil {
		t.Fatal(err)
	}
	d, err := co.ClaimDream(ctx, "worker", time.Minute)
	if err != nil || d == nil {
		t.Fatalf("claim: %v, %v", d, err)
	}
	stop := memstore.Errorf(memstore.EConflict, "the server stopped")
	db.fail = func(page int) error {
		if page == 2 {
			return stop
		}
		return nil
	}
	if _, err := co.BeginDream(ctx, d, "worker"); !errors.Is(err, stop) {
		t.Fatalf("begin, stopped after a page: %v", err)
	}
	db.fail = nil
	if got := contents(t, co, key, d.OutputStoreID); len(got) != 20 {
		t.Fatalf("the interrupted copy holds %d memories, want the first page's 20", len(got))
	}
	// The input changes while no worker holds the dream.
	to := "/renamed/03.md"
	if _, err := co.UpdateMemory(ctx, key, st.ID, ids["/m/03.md"], memstore.MemoryUpdate{Path: &to}); err != nil {
		t.Fatal(err)
	}
	edited := "edited since"
	if _, err := co.UpdateMemory(ctx, key, st.ID, ids["/m/06.md"], memstore.MemoryUpdate{Content: &edited}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/m/04.md", "/m/30.md", "/m/07.md"} {
		if err := co.DeleteMemory(ctx, key, st.ID, ids[p], ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"/m/50.md", "/m/07.md/under.md"} { // the second overlaps a copied path
		if _, err := co.CreateMemory(ctx, key, st.ID, memstore.MemoryCreate{Path: p, Content: "new " + p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := co.BeginDream(ctx, d, "worker"); err != nil {
		t.Fatalf("begin again: %v", err)
	}
	want, got := contents(t, co, key, st.ID), contents(t, co, key, d.OutputStoreID)
	if !maps.Equal(got, want) {
		t.Errorf("the output after the copy begun again differs from the input:\n got %d: %v\nwant %d: %v", len(got), got, len(want), want)
	}
}

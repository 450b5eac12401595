package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
)

// testDreamReview: a create_new dream's proposed changes are the paths it
// changed in its output store since the copy it began from, each checked
// against the input store now; applying the chosen ones writes each to
// the input store as a new version by the caller, conditional on the
// input's memory being still as the dream found it. Every memory of the
// input changed since the dream began is a conflict: reported, never
// overwritten.
func testDreamReview(t *testing.T, open func(t *testing.T, now func() time.Time) memstore.Database) {
	ctx := t.Context()
	core := memstore.NewCore(open(t, nil), memstore.WithDreams(true))
	key := keyCaller(wsA, actorKey)
	in, err := core.CreateStore(ctx, key, memstore.StoreCreate{Name: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	mem := map[string]*memstore.Memory{}
	for _, p := range []string{"/a.md", "/b.md", "/c.md", "/d.md", "/e.md"} {
		if mem[p], err = core.CreateMemory(ctx, key, in.ID, memstore.MemoryCreate{Path: p, Content: p + " as it was\n"}); err != nil {
			t.Fatal(err)
		}
	}
	ses, _, _, err := core.CreateSession(ctx, key, memstore.SessionCreate{Title: "yesterday"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := core.CreateDream(ctx, key, memstore.DreamCreate{
		Inputs: []memstore.DreamInput{
			{Type: memstore.DreamInputMemoryStore, MemoryStoreID: in.ID},
			{Type: memstore.DreamInputSessions, SessionIDs: []string{ses.ID}},
		},
		Model: memstore.DreamModel{ID: "test-model"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Before it starts, a dream proposes nothing.
	_, _, err = core.DreamChanges(ctx, key, d.ID)
	wantCode(t, err, memstore.EInvalid, "the changes of a pending dream")

	claimed, err := core.ClaimDream(ctx, "worker", time.Minute)
	if err != nil || claimed == nil || claimed.ID != d.ID {
		t.Fatalf("claim: %v, %v", claimed, err)
	}
	dreamer, err := core.BeginDream(ctx, claimed, "worker")
	if err != nil {
		t.Fatal(err)
	}
	out := claimed.OutputStoreID
	outMem := func(path string) *memstore.Memory {
		t.Helper()
		m, err := memstore.FindMemory(ctx, core, dreamer, out, path)
		if err != nil {
			t.Fatalf("%s in the output store: %v", path, err)
		}
		return m
	}
	tick()
	// The dream's writes, as its session.
	write := func(path, content string) {
		t.Helper()
		if _, err := core.UpdateMemory(ctx, dreamer, out, outMem(path).ID, memstore.MemoryUpdate{Content: &content}); err != nil {
			t.Fatal(err)
		}
	}
	create := func(path, content string) {
		t.Helper()
		if _, err := core.CreateMemory(ctx, dreamer, out, memstore.MemoryCreate{Path: path, Content: content}); err != nil {
			t.Fatal(err)
		}
	}
	write("/a.md", "a, consolidated\n")                                                  // ready
	write("/b.md", "b, consolidated\n")                                                  // conflict: changed in the input meanwhile
	write("/d.md", "d, consolidated\n")                                                  // conflict: deleted in the input meanwhile
	create("/new.md", "a new topic\n")                                                   // ready
	create("/x.md", "the dream's x\n")                                                   // conflict: created in the input meanwhile
	create("/same.md", "made alike\n")                                                   // applied already: the input got the same
	if err := core.DeleteMemory(ctx, dreamer, out, outMem("/c.md").ID, ""); err != nil { // ready
		t.Fatal(err)
	}
	// Someone changes the input meanwhile.
	human := keyCaller(wsA, actorKey2)
	if _, err := core.UpdateMemory(ctx, human, in.ID, mem["/b.md"].ID, memstore.MemoryUpdate{Content: ptr("b, by a person\n")}); err != nil {
		t.Fatal(err)
	}
	if err := core.DeleteMemory(ctx, human, in.ID, mem["/d.md"].ID, ""); err != nil {
		t.Fatal(err)
	}
	for p, c := range map[string]string{"/x.md": "the person's x\n", "/same.md": "made alike\n"} {
		if _, err := core.CreateMemory(ctx, human, in.ID, memstore.MemoryCreate{Path: p, Content: c}); err != nil {
			t.Fatal(err)
		}
	}

	wantStates := map[string]string{
		"/a.md": "changed ready", "/b.md": "changed conflict", "/c.md": "removed ready", "/d.md": "changed conflict",
		"/new.md": "added ready", "/same.md": "added applied", "/x.md": "added conflict",
	}
	checkChanges := func(what string, want map[string]string) {
		t.Helper()
		_, changes, err := core.DreamChanges(ctx, key, d.ID)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got := map[string]string{}
		for _, ch := range changes {
			got[ch.Path] = string(ch.Kind) + " " + string(ch.State)
		}
		if len(got) != len(want) {
			t.Errorf("%s: changes %v, want %v", what, got, want)
		}
		for p, w := range want {
			if got[p] != w {
				t.Errorf("%s: %s is %q, want %q", what, p, got[p], w)
			}
		}
	}
	checkChanges("while it runs", wantStates)
	all := []string{"/a.md", "/b.md", "/c.md", "/d.md", "/new.md", "/same.md", "/x.md"}
	_, err = core.ApplyDreamChanges(ctx, key, d.ID, all)
	wantCode(t, err, memstore.EInvalid, "an apply while the dream runs")

	if err := core.FinishDream(ctx, d.ID, "worker", memstore.DreamCompleted, memstore.DreamUsage{}, nil); err != nil {
		t.Fatal(err)
	}
	// A path the dream did not change, a session, and no path at all are
	// refused before anything is applied.
	_, err = core.ApplyDreamChanges(ctx, key, d.ID, []string{"/a.md", "/e.md"})
	wantCode(t, err, memstore.EInvalid, "a path the dream did not change")
	_, err = core.ApplyDreamChanges(ctx, key, d.ID, nil)
	wantCode(t, err, memstore.EInvalid, "no path")
	_, err = core.ApplyDreamChanges(ctx, key, d.ID, make([]string, memstore.MaxApplyPaths+1))
	if wantCode(t, err, memstore.EInvalid, "too many paths") && !strings.Contains(err.Error(), "MaxApplyPaths") {
		t.Errorf("too many paths: %v", err)
	}
	_, err = core.ApplyDreamChanges(ctx, dreamer, d.ID, []string{"/a.md"})
	wantCode(t, err, memstore.EPermission, "an apply by a session")
	_, err = core.ApplyDreamChanges(ctx, keyCaller(wsB, actorKey), d.ID, []string{"/a.md"})
	wantCode(t, err, memstore.ENotFound, "an apply from another workspace")
	checkChanges("after the refusals", wantStates)

	applied, err := core.ApplyDreamChanges(ctx, key, d.ID, all)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]memstore.ChangeState{}
	for _, a := range applied {
		got[a.Path] = a.State
		if (a.State == memstore.ChangeConflict) != (a.Message != "") {
			t.Errorf("%s: %s with message %q", a.Path, a.State, a.Message)
		}
	}
	for p, w := range map[string]memstore.ChangeState{
		"/a.md": memstore.ChangeApplied, "/c.md": memstore.ChangeApplied, "/new.md": memstore.ChangeApplied, "/same.md": memstore.ChangeApplied,
		"/b.md": memstore.ChangeConflict, "/d.md": memstore.ChangeConflict, "/x.md": memstore.ChangeConflict,
	} {
		if got[p] != w {
			t.Errorf("apply: %s is %q, want %q", p, got[p], w)
		}
	}
	// The input holds the applied changes, each a version by the caller,
	// and the conflicts as the person left them.
	inMem := func(path string) *memstore.Memory {
		t.Helper()
		m, err := memstore.FindMemory(ctx, core, key, in.ID, path)
		if memstore.ErrorCode(err) == memstore.ENotFound {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		m, err = core.Memory(ctx, key, in.ID, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for p, want := range map[string]string{
		"/a.md": "a, consolidated\n", "/b.md": "b, by a person\n", "/new.md": "a new topic\n",
		"/x.md": "the person's x\n", "/same.md": "made alike\n", "/e.md": "/e.md as it was\n",
	} {
		if m := inMem(p); m == nil || m.Content != want {
			t.Errorf("input %s: %+v, want %q", p, m, want)
		}
	}
	for _, p := range []string{"/c.md", "/d.md"} {
		if m := inMem(p); m != nil {
			t.Errorf("input %s is there: %q", p, m.Content)
		}
	}
	for _, p := range []string{"/a.md", "/new.md"} {
		v := mustVersion(t, viewOf(core), wsA, in.ID, inMem(p).VersionID)
		if v.CreatedBy != actorKey {
			t.Errorf("the version of %s applied is by %v, want %v", p, v.CreatedBy, actorKey)
		}
	}
	// Applied again, nothing changes: no new version.
	before := inMem("/a.md").VersionID
	if applied, err = core.ApplyDreamChanges(ctx, key, d.ID, []string{"/a.md", "/a.md"}); err != nil || len(applied) != 1 || applied[0].State != memstore.ChangeApplied {
		t.Errorf("apply again: %+v, %v", applied, err)
	}
	if after := inMem("/a.md").VersionID; after != before {
		t.Errorf("apply again made version %s", after)
	}
	checkChanges("after the apply", map[string]string{
		"/a.md": "changed applied", "/b.md": "changed conflict", "/c.md": "removed applied", "/d.md": "changed conflict",
		"/new.md": "added applied", "/same.md": "added applied", "/x.md": "added conflict",
	})

	// An update_existing dream has nothing to review apart from its input.
	upd, err := core.CreateDream(ctx, key, memstore.DreamCreate{
		Inputs: []memstore.DreamInput{
			{Type: memstore.DreamInputMemoryStore, MemoryStoreID: in.ID},
			{Type: memstore.DreamInputSessions, SessionIDs: []string{ses.ID}},
		},
		Model:          memstore.DreamModel{ID: "test-model"},
		OutputBehavior: memstore.OutputUpdateExisting, OutputStoreID: in.ID,
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = core.DreamChanges(ctx, key, upd.ID)
	wantCode(t, err, memstore.EInvalid, "the changes of an update_existing dream")
}

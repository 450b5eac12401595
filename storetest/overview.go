package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memstore/memstore"
)

// testOverview: the overview counts a workspace's changes of the last 24
// hours and 30 days, by day, store and kind of actor, from the counts the
// backend keeps as it writes (deletions count, a redaction changes
// nothing); another workspace's changes and older ones are left out;
// live sessions are counted for those who may read them, and a session
// token may not read the overview.
func testOverview(t *testing.T, open func(t *testing.T, now func() time.Time) memstore.Database) {
	ctx := context.Background()
	base := time.Date(2026, 11, 20, 10, 30, 0, 0, time.UTC)
	at := base
	db := open(t, func() time.Time { return at })
	core := memstore.NewCore(db)
	caller := func(name string, actor memstore.ActorType, id string, role memstore.Role) *memstore.Caller {
		w, err := db.CreateWorkspace(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return &memstore.Caller{WorkspaceID: w.ID, Actor: memstore.Actor{Type: actor, ID: id}, Role: role}
	}
	key := caller("one", memstore.ActorAPIKey, "apikey_one", "")
	other := caller("two", memstore.ActorAPIKey, "apikey_two", "")
	user := &memstore.Caller{WorkspaceID: key.WorkspaceID, Actor: memstore.Actor{Type: memstore.ActorUser, ID: "user_ann"}, Role: memstore.RoleMember}
	store := func(c *memstore.Caller, name string) string {
		st, err := core.CreateStore(ctx, c, memstore.StoreCreate{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return st.ID
	}
	s1, s2, s3 := store(key, "s1"), store(key, "s2"), store(other, "s3")
	ses, _, secret, err := core.CreateSession(ctx, key, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: s1}}})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := core.AuthenticateSession(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	write := func(c *memstore.Caller, storeID string, ago time.Duration) *memstore.Memory {
		t.Helper()
		at = base.Add(-ago)
		n++
		m, err := core.CreateMemory(ctx, c, storeID, memstore.MemoryCreate{Path: "/m" + string(rune('a'+n)) + ".md", Content: "x"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	day := 24 * time.Hour
	write(key, s1, 40*day) // before the 30 days
	write(key, s1, 10*day)
	gone := write(key, s1, 10*day)
	write(user, s2, 10*day)
	write(user, s2, 25*time.Hour) // in the 30 days, not the 24 hours
	write(agent, s1, 2*time.Hour)
	for range 3 {
		write(other, s3, time.Hour) // another workspace's
	}
	doomed := write(key, s2, 3*time.Hour)
	at = base.Add(-time.Hour)
	if err := core.DeleteMemory(ctx, key, s2, doomed.ID, ""); err != nil {
		t.Fatal(err)
	}
	at = base.Add(-time.Hour)
	vs, err := core.Versions(ctx, key, s1, memstore.VersionFilter{MemoryID: gone.ID})
	if err != nil || len(vs.Items) != 1 {
		t.Fatalf("versions of %s = %v, %v", gone.ID, vs.Items, err)
	}
	if _, err := core.RedactVersion(ctx, &memstore.Caller{WorkspaceID: key.WorkspaceID, Actor: user.Actor, Role: memstore.RoleAdmin}, s1, vs.Items[0].ID); err != nil {
		t.Fatal(err)
	}

	o, err := core.Overview(ctx, user, base)
	if err != nil {
		t.Fatal(err)
	}
	// 24 hours: the agent's, the key's write at -3h and its deletion at -1h.
	if o.Changes24h != 3 || o.Changes30d != 7 {
		t.Errorf("changes: 24h %d, 30d %d; want 3 and 7", o.Changes24h, o.Changes30d)
	}
	if len(o.Days) != memstore.OverviewDays || !o.Days[memstore.OverviewDays-1].Equal(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("days %v, want 30 ending 2026-11-20", o.Days)
	}
	if len(o.Stores) != 2 || o.Partial || o.Memories != 6 || o.Bytes != 6 {
		t.Errorf("stores %d (partial %v), memories %d, bytes %d; want 2 stores of 6 memories, 6 bytes", len(o.Stores), o.Partial, o.Memories, o.Bytes)
	}
	if o.Sessions != -1 {
		t.Errorf("a member sees %d sessions, want -1 (may not read them)", o.Sessions)
	}
	counts := func(days map[int]int64) []int64 {
		c := make([]int64, memstore.OverviewDays)
		for d, n := range days {
			c[d] = n
		}
		return c
	}
	want := func(what string, got []memstore.ChangeSeries, series []memstore.ChangeSeries) {
		t.Helper()
		if !slices.EqualFunc(got, series, func(a, b memstore.ChangeSeries) bool {
			return a.StoreID == b.StoreID && a.Actor == b.Actor && a.Total == b.Total && slices.Equal(a.Counts, b.Counts)
		}) {
			t.Errorf("%s:\n got %+v\nwant %+v", what, got, series)
		}
	}
	want("by store", o.ByStore, []memstore.ChangeSeries{
		{StoreID: s2, Counts: counts(map[int]int64{19: 1, 28: 1, 29: 2}), Total: 4},
		{StoreID: s1, Counts: counts(map[int]int64{19: 2, 29: 1}), Total: 3},
	})
	want("by actor", o.ByActor, []memstore.ChangeSeries{
		{Actor: memstore.ActorAPIKey, Counts: counts(map[int]int64{19: 2, 29: 2}), Total: 4},
		{Actor: memstore.ActorSession, Counts: counts(map[int]int64{29: 1}), Total: 1},
		{Actor: memstore.ActorUser, Counts: counts(map[int]int64{19: 1, 28: 1}), Total: 2},
	})
	// An admin reads the live sessions too; a session token reads none.
	if o, err := core.Overview(ctx, key, base); err != nil || o.Sessions != 1 {
		t.Errorf("the key's overview: sessions %v, %v; want 1", o, err)
	}
	if _, err := core.ArchiveSession(ctx, key, ses.ID); err != nil {
		t.Fatal(err)
	}
	if o, err := core.Overview(ctx, key, base); err != nil || o.Sessions != 0 {
		t.Errorf("after archiving: sessions %v, %v; want 0", o, err)
	}
	if _, err := core.Overview(ctx, agent, base); memstore.ErrorCode(err) != memstore.EPermission {
		t.Errorf("a session's overview: %v, want EPermission", err)
	}
	// 25 days on, the changes of 10 days ago have left the chart.
	if o, err := core.Overview(ctx, key, base.Add(25*day)); err != nil || o.Changes24h != 0 || o.Changes30d != 4 {
		t.Errorf("25 days on: %+v, %v; want 0 and 4 changes", o, err)
	}
	// A workspace of more stores than an overview counts says so.
	many := caller("three", memstore.ActorAPIKey, "apikey_three", "")
	for i := range memstore.MaxActivityStores + 1 {
		store(many, fmt.Sprint("store ", i))
	}
	if o, err := core.Overview(ctx, many, base); err != nil || !o.Partial || len(o.Stores) != memstore.MaxActivityStores {
		t.Errorf("an overview of %d stores: %+v, %v; want the first %d, partial", memstore.MaxActivityStores+1, o, err, memstore.MaxActivityStores)
	}
	// A deleted store's counts go with it.
	if err := core.DeleteStore(ctx, key, s2); err != nil {
		t.Fatal(err)
	}
	if o, err := core.Overview(ctx, key, base); err != nil || o.Changes30d != 3 || len(o.ByStore) != 1 {
		t.Errorf("after deleting s2: %+v, %v; want s1's 3 changes", o, err)
	}
}

package storetest

import (
	"testing"
	"time"

	"github.com/memstore/memstore"
)

// testDreamBeginStoreQuota: a create_new dream's output store counts in
// the workspace's quota of stores, archived ones included: at the quota,
// beginning the dream is refused with the store limit and makes no
// store.
func testDreamBeginStoreQuota(t *testing.T, open func(t *testing.T, now func() time.Time) memstore.Database) {
	ctx := t.Context()
	db, co, _, e := openRunner(t, open)
	stores := func() int {
		ss, _ := allStores(t, viewOf(co), e.admin.WorkspaceID, memstore.StoreFilter{IncludeArchived: true})
		return len(ss)
	}
	limit := stores()
	e.mustCreateDream(t, e.create())
	limited := memstore.NewCore(db, memstore.WithDreams(true), memstore.WithLimits(memstore.Limits{StoresPerWorkspace: limit}))
	d, err := limited.ClaimDream(ctx, "w1", lease)
	if err != nil || d == nil {
		t.Fatalf("claim: %v, %v", d, err)
	}
	_, err = limited.BeginDream(ctx, d, "w1")
	wantRefusal(t, err, memstore.ErrStoreLimit(e.admin.WorkspaceID, limit), "--max-stores-per-workspace", "a dream's output store beyond the limit")
	if n := stores(); n != limit {
		t.Errorf("%d stores after the refused begin, want %d", n, limit)
	}
}

package memstore

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"
)

// The overview of a workspace: what its stores hold, how many sessions
// it has, and how many changes were made lately, by store and by kind
// of actor. The changes are counted from counts the backend keeps as it
// writes, one row per store, hour and kind of actor (never from the
// versions themselves), so that an overview costs the same for a
// thousand memories as for a million.

// OverviewDays is how many days the overview's chart of changes spans,
// today (UTC) the last.
const OverviewDays = 30

// A ChangeCount is how many changes actors of one kind made to a store
// in one period.
type ChangeCount struct {
	StoreID string
	Actor   ActorType
	Start   time.Time // the period's first hour, UTC
	Changes int64
}

// OverviewStorage is what a backend counts for an overview. Its methods
// trust their caller (see Backend).
type OverviewStorage interface {
	// ChangeCounts counts the changes of the stores storeIDs of
	// workspaceID made from since, which is on a whole hour, by store,
	// kind of actor and period of hours hours from since; periods without
	// a change are left out.
	ChangeCounts(ctx context.Context, workspaceID string, storeIDs []string, since time.Time, hours int) ([]ChangeCount, error)
	// LiveSessions counts the sessions of workspaceID not archived.
	LiveSessions(ctx context.Context, workspaceID string) (int64, error)
}

// An Overview is a workspace at a glance.
type Overview struct {
	// Stores are the stores counted: the workspace's first
	// MaxActivityStores, archived ones included (Partial when it has
	// more).
	Stores   []Store
	Partial  bool
	Memories int64 // of Stores
	Bytes    int64 // of Stores' memories
	// Sessions counts the live sessions, or is -1 when the caller may
	// not read sessions.
	Sessions int64
	// Changes24h and Changes30d count the changes of the last 24 hours
	// (counted by the hour: the current hour and the 23 before it) and
	// of the OverviewDays days of Days.
	Changes24h, Changes30d int64
	// Days are the first instants of the chart's days, UTC, oldest first.
	Days []time.Time
	// ByStore and ByActor are the changes of each day of Days, by store
	// (the stores with a change) and by kind of actor (every kind of
	// ActorTypes that made one).
	ByStore []ChangeSeries
	ByActor []ChangeSeries
}

// A ChangeSeries is the changes of each day of an overview, of one store
// (StoreID) or one kind of actor (Actor).
type ChangeSeries struct {
	StoreID string
	Actor   ActorType
	Counts  []int64 // by day, as Overview.Days
	Total   int64
}

// Overview is the workspace's overview at now, for a caller that may
// list its stores (EPermission otherwise: a session token sees its own
// stores' activity instead).
func (co *Core) Overview(ctx context.Context, c *Caller, now time.Time) (*Overview, error) {
	if c == nil {
		return nil, errNoCaller()
	}
	if err := c.CanManageStores(false); err != nil {
		return nil, err
	}
	sp, err := co.b.Stores(ctx, c.WorkspaceID, StoreFilter{IncludeArchived: true, Limit: MaxActivityStores})
	if err != nil {
		return nil, err
	}
	o := &Overview{Stores: sp.Items, Partial: sp.Next != "", Sessions: -1}
	ids := make([]string, len(sp.Items))
	for i, st := range sp.Items {
		ids[i] = st.ID
		o.Memories += st.MemoryCount
		o.Bytes += st.ContentSize
	}
	if c.CanReadAdmin(ManageSessions) == nil {
		if o.Sessions, err = co.b.LiveSessions(ctx, c.WorkspaceID); err != nil {
			return nil, err
		}
	}
	if len(ids) == 0 {
		return o, nil
	}
	now = now.UTC()
	hour := now.Truncate(time.Hour)
	recent, err := co.b.ChangeCounts(ctx, c.WorkspaceID, ids, hour.Add(-23*time.Hour), 24)
	if err != nil {
		return nil, err
	}
	for _, n := range recent {
		o.Changes24h += n.Changes
	}
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	first := today.AddDate(0, 0, 1-OverviewDays)
	for d := range OverviewDays {
		o.Days = append(o.Days, first.AddDate(0, 0, d))
	}
	daily, err := co.b.ChangeCounts(ctx, c.WorkspaceID, ids, first, 24)
	if err != nil {
		return nil, err
	}
	byStore := map[string]*ChangeSeries{}
	byActor := map[ActorType]*ChangeSeries{}
	add := func(s *ChangeSeries, day int, n int64) {
		if s.Counts == nil {
			s.Counts = make([]int64, OverviewDays)
		}
		s.Counts[day] += n
		s.Total += n
	}
	for _, n := range daily {
		day := int(n.Start.Sub(first) / (24 * time.Hour))
		if day < 0 || day >= OverviewDays {
			continue
		}
		o.Changes30d += n.Changes
		if byStore[n.StoreID] == nil {
			byStore[n.StoreID] = &ChangeSeries{StoreID: n.StoreID}
		}
		add(byStore[n.StoreID], day, n.Changes)
		if byActor[n.Actor] == nil {
			byActor[n.Actor] = &ChangeSeries{Actor: n.Actor}
		}
		add(byActor[n.Actor], day, n.Changes)
	}
	// The busiest stores first, else in the order of the list; the
	// kinds in the order of ActorTypes.
	for _, id := range ids {
		if s := byStore[id]; s != nil {
			o.ByStore = append(o.ByStore, *s)
		}
	}
	slices.SortStableFunc(o.ByStore, func(a, b ChangeSeries) int { return cmp.Compare(b.Total, a.Total) })
	kinds := slices.Clone(ActorTypes)
	for _, t := range slices.Sorted(maps.Keys(byActor)) {
		if !slices.Contains(kinds, t) {
			kinds = append(kinds, t) // a kind this build does not list
		}
	}
	for _, t := range kinds {
		if s := byActor[t]; s != nil {
			o.ByActor = append(o.ByActor, *s)
		}
	}
	return o, nil
}

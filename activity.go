package memstore

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// The workspace's activity: its stores' versions, newest first, merged.
//
// It is built on the versions rather than the change feed: each store's
// versions are listed newest first on an index (store, id), and by actor
// on another (store, actor, id), while the feed is read oldest first. A
// page reads one page of versions from each store (at most
// MaxActivityStores of them) and merges them by ID, which orders versions
// by time across stores (IDs are time-ordered), so a page costs
// O(page × stores) rows, never O(store). The filters that no index serves
// (the operation, a user as the actor) are applied to the rows read, so a
// page of a rare operation may hold few rows, and still has a next page.

// MaxActivityStores is how many stores one view of the activity merges:
// the first ones the workspace lists when there are more (the page then
// says Partial), so that a page stays O(page × stores).
const MaxActivityStores = 50

// ActivityService reads the activity of the caller's stores, and the
// workspace's overview (overview.go).
type ActivityService interface {
	Activity(ctx context.Context, c *Caller, f ActivityFilter) (ActivityPage, error)
	Overview(ctx context.Context, c *Caller, now time.Time) (*Overview, error)
}

var _ ActivityService = (*Core)(nil)

// ActivityFilter selects a page of the activity of the caller's stores.
type ActivityFilter struct {
	StoreID   string    // only this store's changes; "" for every store
	Actor     Actor     // only this actor's changes; the zero Actor for anyone's
	Operation Operation // only changes of this operation; "" for any
	Limit     int       // how many versions a page reads, 1-100
	Page      string    // cursor from a previous page's Next
}

// An ActivityPage is versions (without content) of several stores,
// newest first.
type ActivityPage struct {
	Items []Version
	Next  string // "" on the last page
	// Partial says that the workspace has more stores than
	// MaxActivityStores and that only the first ones are shown.
	Partial bool
}

// activityCursor is where each store's list of versions resumes: at its
// page Page, after the version Last, or, before any of its versions was
// shown, at Top, the newest version the first page read (so that versions
// made since then wait for a new first page). A store that is done is
// left out.
type activityCursor struct {
	Stores  map[string]activityPos `json:"s"`
	Top     string                 `json:"t,omitempty"`
	Partial bool                   `json:"p,omitempty"`
}

type activityPos struct {
	Page string `json:"p,omitempty"`
	Last string `json:"l,omitempty"`
}

func errActivityCursor() error {
	return Errorf(EInvalid, "the activity page cursor is not one this server made; start from the first page")
}

func parseActivityCursor(s string) (*activityCursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	var cur activityCursor
	if err != nil || json.Unmarshal(b, &cur) != nil || len(cur.Stores) == 0 || len(cur.Stores) > MaxActivityStores {
		return nil, errActivityCursor()
	}
	for id := range cur.Stores {
		if ValidateID("memory_store_id", id) != nil {
			return nil, errActivityCursor()
		}
	}
	return &cur, nil
}

// activitySource is one store's versions still to merge.
type activitySource struct {
	storeID string
	pos     activityPos
	items   []Version
	next    string
}

// Activity returns a page of the changes of the caller's stores, newest
// first: the store f names, else a session's attached stores, else the
// workspace's (EInvalid for a bad filter or cursor; EPermission as for
// reading each store's versions).
func (co *Core) Activity(ctx context.Context, c *Caller, f ActivityFilter) (ActivityPage, error) {
	var page ActivityPage
	if c == nil {
		return page, errNoCaller()
	}
	n, err := PageSize(f.Limit, false)
	if err != nil {
		return page, err
	}
	if f.Operation != "" && !slices.Contains(Operations, f.Operation) {
		return page, Errorf(EInvalid, "operation %q is not one of %v", f.Operation, Operations)
	}
	if f.Actor, err = activityActor(f.Actor); err != nil {
		return page, err
	}
	if err := validateIDs("memory_store_id", f.StoreID, "actor", f.Actor.ID); err != nil {
		return page, err
	}
	cur := &activityCursor{Stores: map[string]activityPos{}}
	switch {
	case f.Page != "":
		if cur, err = parseActivityCursor(f.Page); err != nil {
			return page, err
		}
		for id := range cur.Stores {
			if f.StoreID != "" && id != f.StoreID {
				return page, errActivityCursor()
			}
		}
	case f.StoreID != "":
		cur.Stores[f.StoreID] = activityPos{}
	case c.Session != nil:
		for _, a := range c.Session.Attachments {
			cur.Stores[a.StoreID] = activityPos{}
		}
	default:
		if err := c.CanManageStores(false); err != nil {
			return page, err
		}
		sp, err := co.b.Stores(ctx, c.WorkspaceID, StoreFilter{IncludeArchived: true, Limit: MaxActivityStores})
		if err != nil {
			return page, err
		}
		for _, st := range sp.Items {
			cur.Stores[st.ID] = activityPos{}
		}
		cur.Partial = sp.Next != ""
	}
	page.Partial = cur.Partial
	vf := VersionFilter{Limit: n}
	switch f.Actor.Type {
	case ActorSession:
		vf.SessionID = f.Actor.ID
	case ActorAPIKey:
		vf.APIKeyID = f.Actor.ID
	case ActorServiceAccount:
		vf.ServiceAccountID = f.Actor.ID
	}
	var srcs []*activitySource
	for _, id := range slices.Sorted(maps.Keys(cur.Stores)) {
		if err := c.CanRead(id); err != nil {
			return page, err
		}
		pos := cur.Stores[id]
		vf.Page = pos.Page
		vp, err := co.b.Versions(ctx, c.WorkspaceID, id, vf)
		switch {
		case ErrorCode(err) == ENotFound && f.StoreID == "":
			continue // deleted since the previous page
		case err != nil:
			return page, err
		}
		items := vp.Items
		if bound := cmp.Or(pos.Last, cur.Top); bound != "" {
			// Versions made since the first page, and those shown.
			i, found := slices.BinarySearchFunc(items, bound, func(v Version, b string) int { return -cmp.Compare(v.ID, b) })
			if found && pos.Last != "" {
				i++
			}
			items = items[i:]
		}
		srcs = append(srcs, &activitySource{storeID: id, pos: pos, items: items, next: vp.Next})
	}
	if cur.Top == "" {
		for _, s := range srcs {
			if len(s.items) > 0 {
				cur.Top = max(cur.Top, s.items[0].ID)
			}
		}
	}
	page.Items = []Version{}
	// A store whose rows read so far are all behind it (made since the
	// previous page, or read by it) but that has more may hold the
	// newest of the rest on its next page: read that page first, on the
	// next page of activity, rather than merge out of order.
	blocked := slices.ContainsFunc(srcs, func(s *activitySource) bool { return s.blocked() })
	for read := 0; read < n && !blocked; read++ {
		var top *activitySource
		for _, s := range srcs {
			if len(s.items) > 0 && (top == nil || s.items[0].ID > top.items[0].ID) {
				top = s
			}
		}
		if top == nil {
			break
		}
		v := top.items[0]
		top.items, top.pos.Last = top.items[1:], v.ID
		if (f.Operation == "" || v.Operation == f.Operation) && actorMatches(f.Actor, v.CreatedBy) {
			page.Items = append(page.Items, v)
		}
		blocked = top.blocked()
	}
	next := activityCursor{Stores: map[string]activityPos{}, Top: cur.Top, Partial: cur.Partial}
	for _, s := range srcs {
		switch {
		case len(s.items) > 0:
			next.Stores[s.storeID] = s.pos
		case s.next != "":
			next.Stores[s.storeID] = activityPos{Page: s.next, Last: s.pos.Last}
		}
	}
	if len(next.Stores) > 0 {
		b, _ := json.Marshal(next)
		page.Next = base64.RawURLEncoding.EncodeToString(b)
	}
	return page, nil
}

// activityActor checks the actor filter, each half of which works
// alone: an ID without its kind takes the kind its prefix names, and a
// kind without an ID keeps every actor of that kind. An ID whose prefix
// names no kind, or another kind than the one given, is refused rather
// than ignored (EInvalid).
func activityActor(a Actor) (Actor, error) {
	if a.Type != "" && !slices.Contains(ActorTypes, a.Type) {
		return a, Errorf(EInvalid, "actor type %q is not one of %v", a.Type, ActorTypes)
	}
	if a.ID == "" {
		return a, nil
	}
	t := ActorTypeOf(a.ID)
	switch {
	case t == "":
		return a, Errorf(EInvalid, "actor %q is not an actor's ID: give one beginning %s, or leave it empty", a.ID, actorPrefixList())
	case a.Type != "" && a.Type != t:
		return a, Errorf(EInvalid, "actor %q is a %s, not a %s: choose its kind, or leave the kind empty", a.ID, t, a.Type)
	}
	a.Type = t
	return a, nil
}

// actorMatches reports whether a change by by passes the actor filter f:
// anyone's for the zero Actor, else an actor of f's kind and, when f
// has an ID, that one. (The filters of sessions, API keys and service
// accounts with an ID are the backend's too, on an index.)
func actorMatches(f, by Actor) bool {
	return f.Type == "" || by.Type == f.Type && (f.ID == "" || by.ID == f.ID)
}

// blocked reports whether the source has no row left to merge but more
// on its next page.
func (s *activitySource) blocked() bool { return len(s.items) == 0 && s.next != "" }

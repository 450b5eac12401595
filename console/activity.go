package console

import (
	"net/http"
	"net/url"

	"github.com/memstore/memstore"
)

// activity is the workspace's recent changes, newest first, filtered by
// store, actor and operation as the core's Activity does.
func (h *Handler) activity(w http.ResponseWriter, r *http.Request, s *signedIn) {
	ctx := r.Context()
	q := r.URL.Query()
	f := memstore.ActivityFilter{
		StoreID: q.Get("store"), Operation: memstore.Operation(q.Get("op")),
		Actor: memstore.Actor{Type: memstore.ActorType(q.Get("actor_type")), ID: q.Get("actor")},
		Limit: pageSize, Page: q.Get("page"),
	}
	// The stores the filter offers and whose names the rows show: the
	// ones the activity merges.
	sp, err := h.cfg.Stores.Stores(ctx, s.caller, memstore.StoreFilter{IncludeArchived: true, Limit: memstore.MaxActivityStores})
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	names := make(map[string]string, len(sp.Items))
	for _, st := range sp.Items {
		names[st.ID] = st.Name
	}
	data := map[string]any{
		"Stores": sp.Items, "StoreNames": names, "Filter": f, "Operations": memstore.Operations, "ActorTypes": memstore.ActorTypes,
	}
	p, err := h.cfg.Activity.Activity(ctx, s.caller, f)
	if err != nil {
		if status, ok := fixable(err); ok {
			h.render(w, r, status, "activity", s, view{Title: "Activity", Error: memstore.ErrorMessage(err), Data: data})
			return
		}
		h.failErr(w, r, s, err)
		return
	}
	actors := make([]memstore.Actor, len(p.Items))
	for i, v := range p.Items {
		actors[i] = v.CreatedBy
	}
	// The next page's address, whole: its query written into the
	// template's href would be escaped again, as one value.
	next := q
	next.Set("page", p.Next)
	data["Items"], data["Next"], data["NextURL"], data["Partial"] = p.Items, p.Next, Prefix+"activity?"+next.Encode(), p.Partial
	data["Names"] = h.actorNames(ctx, s, actors...)
	data["Follow"] = followURL(q)
	data["Max"] = memstore.MaxActivityStores
	h.render(w, r, http.StatusOK, "activity", s, view{Title: "Activity", Data: data})
}

// followURL returns what makes the address of the activity filtered as
// q is, and further by a store or an actor: kv are query keys and their
// values, in pairs. The other filters stay, and paging starts again.
func followURL(q url.Values) func(kv ...string) string {
	return func(kv ...string) string {
		f := url.Values{}
		for k, v := range q {
			if k != "page" {
				f[k] = v
			}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		return Prefix + "activity?" + f.Encode()
	}
}

package console

import (
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/httpstatus"
	"github.com/memstore/memstore/internal/searchtext"
)

// notices are what a page says after the change that led to it, by the
// name a redirect gives in ?done=.
var notices = map[string]string{
	"created":        "Created.",
	"saved":          "Saved.",
	"deleted":        "Deleted.",
	"restored":       "Restored: the memory has the version's content again, as a new version.",
	"redacted":       "Redacted: this version's content and path are erased.",
	"archived":       "Archived: its memories are read-only now.",
	"revoked":        "Revoked: it no longer works.",
	"ended":          "Archived: none of the session's tokens works any more.",
	"password":       "Your password is set, and your other sign-ins have ended.",
	"enabled":        "Enabled: it is sent the changes it was owed, and new ones.",
	"disabled":       "Disabled: nothing is sent to it until it is enabled again.",
	"role":           "Role changed: it applies from the user's next page.",
	"removed":        "Removed: the user's sign-ins have ended; the changes they made still name them.",
	"canceled":       "Canceled: the dream stops at its next step; what it wrote stays.",
	"dream-archived": "Archived: the dream is listed only with the archived ones.",
}

// notice is the notice a request's ?done= names, "" for none.
func notice(r *http.Request) string { return notices[r.URL.Query().Get("done")] }

// withNotice is page u naming in ?done= the notice to show there, u
// alone when done is "".
func withNotice(u, done string) string {
	if done == "" {
		return u
	}
	return u + "?done=" + done
}

// storeURL is a store's page, or one below it.
func storeURL(storeID, below string) string {
	return Prefix + "stores/" + url.PathEscape(storeID) + below
}

func (h *Handler) newStorePage(w http.ResponseWriter, r *http.Request, s *signedIn) {
	if err := s.caller.CanManageStores(true); err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "storenew", s, view{Title: "New store", Data: memstore.StoreCreate{}})
}

func (h *Handler) createStore(w http.ResponseWriter, r *http.Request, s *signedIn) {
	sc := memstore.StoreCreate{Name: r.PostFormValue("name"), Description: r.PostFormValue("description")}
	st, err := h.cfg.Stores.CreateStore(r.Context(), s.caller, sc)
	if err != nil {
		if status, ok := fixable(err); ok {
			h.render(w, r, status, "storenew", s, view{Title: "New store", Error: memstore.ErrorMessage(err), Data: sc})
			return
		}
		h.failErr(w, r, s, err)
		return
	}
	http.Redirect(w, r, treeURL(st.ID, "/", "created"), http.StatusSeeOther)
}

func (h *Handler) storeSettings(w http.ResponseWriter, r *http.Request, s *signedIn) {
	h.renderSettings(w, r, s, http.StatusOK, "")
}

// renderSettings shows a store's settings page: its name and
// description, archive, and delete.
func (h *Handler) renderSettings(w http.ResponseWriter, r *http.Request, s *signedIn, status int, msg string) {
	st, err := h.cfg.Stores.Store(r.Context(), s.caller, r.PathValue("store"))
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, status, "settings", s, view{Title: "Settings of " + st.Name, Error: msg, Notice: notice(r), Data: st})
}

// updateStore renames or describes a store.
func (h *Handler) updateStore(w http.ResponseWriter, r *http.Request, s *signedIn) {
	id := r.PathValue("store")
	name, desc := r.PostFormValue("name"), r.PostFormValue("description")
	_, err := h.cfg.Stores.UpdateStore(r.Context(), s.caller, id, memstore.StoreUpdate{Name: &name, Description: &desc})
	if status, ok := fixable(err); ok {
		h.renderSettings(w, r, s, status, memstore.ErrorMessage(err))
		return
	}
	h.finish(w, r, s, err, storeURL(id, "/settings?done=saved"))
}

// storeConversation says whether a store's memories are turns of
// conversations (memstore.ConversationKey), removing the key when not.
func (h *Handler) storeConversation(w http.ResponseWriter, r *http.Request, s *signedIn) {
	id := r.PathValue("store")
	var on *string
	if r.PostFormValue("conversation") == "true" {
		on = new("true")
	}
	_, err := h.cfg.Stores.UpdateStore(r.Context(), s.caller, id, memstore.StoreUpdate{Metadata: map[string]*string{memstore.ConversationKey: on}})
	if status, ok := fixable(err); ok {
		h.renderSettings(w, r, s, status, memstore.ErrorMessage(err))
		return
	}
	h.finish(w, r, s, err, storeURL(id, "/settings?done=saved"))
}

func (h *Handler) archiveStore(w http.ResponseWriter, r *http.Request, s *signedIn) {
	id := r.PathValue("store")
	_, err := h.cfg.Stores.ArchiveStore(r.Context(), s.caller, id)
	h.finish(w, r, s, err, storeURL(id, "/settings?done=archived"))
}

// deleteStore deletes a store once the person has typed its name, the
// confirmation that they mean this store, for good.
func (h *Handler) deleteStore(w http.ResponseWriter, r *http.Request, s *signedIn) {
	ctx := r.Context()
	st, err := h.cfg.Stores.Store(ctx, s.caller, r.PathValue("store"))
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	if typed := r.PostFormValue("confirm"); typed != st.Name {
		h.renderSettings(w, r, s, http.StatusBadRequest, "To delete this store, type its name, "+st.Name+", exactly; nothing was deleted.")
		return
	}
	err = h.cfg.Stores.DeleteStore(ctx, s.caller, st.ID)
	h.finish(w, r, s, err, Prefix+"stores?done=deleted")
}

// searchRow is a search result as the page shows it: path and snippet
// with the query's terms marked.
type searchRow struct {
	Memory  memstore.Memory
	Path    template.HTML
	Snippet template.HTML
}

// highlight is text, escaped, with the ranges where the terms are found
// marked.
func highlight(text string, terms []searchtext.Term) template.HTML {
	var b strings.Builder
	at := 0
	for _, hl := range searchtext.Highlights(text, terms) {
		b.WriteString(template.HTMLEscapeString(text[at:hl[0]]))
		b.WriteString("<mark>")
		b.WriteString(template.HTMLEscapeString(text[hl[0]:hl[1]]))
		b.WriteString("</mark>")
		at = hl[1]
	}
	b.WriteString(template.HTMLEscapeString(text[at:]))
	return template.HTML(b.String()) // every piece of text escaped above
}

// searchModes are the choices of the search page's mode, the server's
// default first (memstore.SearchQuery.Mode).
var searchModes = []struct{ Value, Label string }{
	{"", "Default"},
	{memstore.ModeLexical, "Words"},
	{memstore.ModeSemantic, "Meaning"},
	{memstore.ModeHybrid, "Words and meaning"},
}

// search is a store's search, a page of results at a time, in the mode
// asked for (the server's default without one).
func (h *Handler) search(w http.ResponseWriter, r *http.Request, s *signedIn) {
	ctx := r.Context()
	st, err := h.cfg.Stores.Store(ctx, s.caller, r.PathValue("store"))
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	q, mode := r.URL.Query().Get("q"), r.URL.Query().Get("mode")
	data := map[string]any{"Store": st, "Query": q, "Mode": mode, "Modes": searchModes}
	if q == "" {
		h.render(w, r, http.StatusOK, "search", s, view{Title: "Search " + st.Name, Data: data})
		return
	}
	p, err := h.cfg.Search.SearchMemories(ctx, s.caller, []string{st.ID}, memstore.SearchQuery{Text: q, Limit: pageSize, Page: r.URL.Query().Get("page"), Mode: mode})
	if err != nil {
		if status, ok := fixable(err); ok {
			httpstatus.RetryAfter(w.Header(), err)
			h.render(w, r, status, "search", s, view{Title: "Search " + st.Name, Error: memstore.ErrorMessage(err), Data: data})
			return
		}
		h.failErr(w, r, s, err)
		return
	}
	terms := searchtext.ParseQuery(q)
	rows := make([]searchRow, len(p.Items))
	for i, res := range p.Items {
		rows[i] = searchRow{Memory: res.Memory, Path: highlight(res.Memory.Path, terms), Snippet: highlight(res.Snippet, terms)}
	}
	data["Rows"], data["Next"] = rows, p.Next
	h.render(w, r, http.StatusOK, "search", s, view{Title: "Search " + st.Name, Data: data})
}

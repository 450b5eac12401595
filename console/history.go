package console

import (
	"cmp"
	"context"
	"html/template"
	"net/http"
	"net/url"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/textdiff"
)

// unified is the line diff from one text to another, its lines
// classified for the stylesheet.
func unified(fromLabel, toLabel, from, to string) ([]textdiff.Line, error) {
	d, err := textdiff.Unified(fromLabel, toLabel, from, to)
	if err != nil {
		return nil, err
	}
	return textdiff.Lines(d), nil
}

// actorNames gives each actor how pages show it (actor): with the
// user's name, the session's title (else its agent) or the API key's
// name where the person may read them (one indexed read per distinct
// actor of the page; a member, who may not, sees kind and ID).
func (h *Handler) actorNames(ctx context.Context, s *signedIn, actors ...memstore.Actor) map[memstore.Actor]template.HTML {
	names := make(map[memstore.Actor]template.HTML, len(actors))
	for _, a := range actors {
		if _, done := names[a]; done {
			continue
		}
		name := ""
		switch a.Type {
		case memstore.ActorUser:
			if a == memstore.OperatorActor {
				name = memstore.OperatorName
			} else if u, err := h.cfg.Users.User(ctx, s.caller, a.ID); err == nil {
				name = u.Name
			}
		case memstore.ActorSession:
			if h.cfg.Sessions != nil {
				if ses, err := h.cfg.Sessions.Session(ctx, s.caller, a.ID); err == nil {
					name = cmp.Or(ses.Title, memstore.SessionAgentID(ses.Fields))
				}
			}
		case memstore.ActorAPIKey:
			if h.cfg.Keys != nil {
				if k, err := h.cfg.Keys.APIKey(ctx, s.caller, a.ID); err == nil {
					name = k.Name
				}
			}
		}
		names[a] = actor(a, name)
	}
	return names
}

// versionURL is the page of a version; done names a notice to show there.
func versionURL(storeID, id, done string) string {
	return withNotice(Prefix+"stores/"+url.PathEscape(storeID)+"/versions/"+url.PathEscape(id), done)
}

// history lists a memory's versions, newest first, a page at a time; it
// works for a deleted memory too, whose versions remain.
func (h *Handler) history(w http.ResponseWriter, r *http.Request, s *signedIn) {
	ctx := r.Context()
	storeID, id := r.PathValue("store"), r.PathValue("memory")
	p, err := h.cfg.Versions.Versions(ctx, s.caller, storeID, memstore.VersionFilter{MemoryID: id, Limit: pageSize, Page: r.URL.Query().Get("page")})
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	if len(p.Items) == 0 && r.URL.Query().Get("page") == "" {
		h.fail(w, r, s, http.StatusNotFound, "Store "+storeID+" has no memory "+id+", and never had.")
		return
	}
	m, err := h.cfg.Memories.Memory(ctx, s.caller, storeID, id)
	if err != nil && memstore.ErrorCode(err) != memstore.ENotFound {
		h.failErr(w, r, s, err)
		return
	}
	actors := make([]memstore.Actor, 0, len(p.Items))
	for _, v := range p.Items {
		actors = append(actors, v.CreatedBy)
	}
	h.render(w, r, http.StatusOK, "history", s, view{Title: "History of " + id, Data: map[string]any{
		"StoreID": storeID, "MemoryID": id, "Memory": m, "Versions": p.Items, "Next": p.Next,
		"Names": h.actorNames(ctx, s, actors...),
	}})
}

// diffSide is a version's text and label in a diff: a deletion's and a
// redacted version's text is empty.
func diffSide(v *memstore.Version) (string, string) {
	switch {
	case v.Redacted():
		return "", v.ID + " (redacted)"
	case !v.HasContent:
		return "", v.ID + " (deleted)"
	}
	return v.Content, v.ID + " " + v.Path
}

// diff shows the difference between two versions of a memory.
func (h *Handler) diff(w http.ResponseWriter, r *http.Request, s *signedIn) {
	ctx := r.Context()
	storeID, id := r.PathValue("store"), r.PathValue("memory")
	q := r.URL.Query()
	var sides [2]*memstore.Version
	for i, name := range []string{"from", "to"} {
		v, err := h.cfg.Versions.Version(ctx, s.caller, storeID, q.Get(name))
		if err != nil {
			h.failErr(w, r, s, err)
			return
		}
		if v.MemoryID != id {
			h.fail(w, r, s, http.StatusBadRequest, "Version "+v.ID+" is not a version of memory "+id+"; choose two versions from its history.")
			return
		}
		sides[i] = v
	}
	fromText, fromLabel := diffSide(sides[0])
	toText, toLabel := diffSide(sides[1])
	d, err := unified(fromLabel, toLabel, fromText, toText)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "diff", s, view{Title: "Changes of " + id, Data: map[string]any{
		"StoreID": storeID, "MemoryID": id, "From": sides[0], "To": sides[1], "Diff": d,
	}})
}

func (h *Handler) versionPage(w http.ResponseWriter, r *http.Request, s *signedIn) {
	h.renderVersion(w, r, s, http.StatusOK, "")
}

// renderVersion shows a version, with the current state of its memory
// so that a restore is conditional on it.
func (h *Handler) renderVersion(w http.ResponseWriter, r *http.Request, s *signedIn, status int, msg string) {
	ctx := r.Context()
	storeID := r.PathValue("store")
	v := h.pathVersion(w, r, s)
	if v == nil {
		return
	}
	m, err := h.cfg.Memories.Memory(ctx, s.caller, storeID, v.MemoryID)
	if err != nil && memstore.ErrorCode(err) != memstore.ENotFound {
		h.failErr(w, r, s, err)
		return
	}
	actors := []memstore.Actor{v.CreatedBy}
	if v.RedactedBy != nil {
		actors = append(actors, *v.RedactedBy)
	}
	names := h.actorNames(ctx, s, actors...)
	data := map[string]any{"StoreID": storeID, "Version": v, "Memory": m, "Names": names}
	if v.RedactedBy != nil {
		data["RedactedBy"] = names[*v.RedactedBy]
	}
	h.render(w, r, status, "version", s, view{Title: "Version " + v.ID, Error: msg, Notice: notice(r), Data: data})
}

// restore makes a version's content the memory's again, as a new
// version: conditional on the memory's content the person saw on the
// version's page, or, for a deleted memory, as a new memory at the
// version's path.
func (h *Handler) restore(w http.ResponseWriter, r *http.Request, s *signedIn) {
	ctx := r.Context()
	storeID := r.PathValue("store")
	v := h.pathVersion(w, r, s)
	if v == nil {
		return
	}
	if !v.HasContent {
		h.renderVersion(w, r, s, http.StatusBadRequest, "This version has no content to restore: it records a deletion, or it was redacted.")
		return
	}
	var err error
	id := v.MemoryID
	if sha := r.PostFormValue("sha"); sha != "" {
		_, err = h.cfg.Memories.UpdateMemory(ctx, s.caller, storeID, id, memstore.MemoryUpdate{Content: &v.Content, IfSHA256: sha})
	} else {
		var m *memstore.Memory
		if m, err = h.cfg.Memories.CreateMemory(ctx, s.caller, storeID, memstore.MemoryCreate{Path: v.Path, Content: v.Content}); err == nil {
			id = m.ID
		}
	}
	switch code := memstore.ErrorCode(err); {
	case code == "":
		http.Redirect(w, r, memoryURL(storeID, id, "restored"), http.StatusSeeOther)
	case code == memstore.EPreconditionFailed || code == memstore.ENotFound && r.PostFormValue("sha") != "":
		h.renderVersion(w, r, s, http.StatusConflict, "The memory was changed since you opened this page, so nothing was restored. Its current state is shown below; restore again if you still want this version.")
	default:
		if status, ok := fixable(err); ok {
			h.renderVersion(w, r, s, status, memstore.ErrorMessage(err))
			return
		}
		h.failErr(w, r, s, err)
	}
}

func (h *Handler) redactPage(w http.ResponseWriter, r *http.Request, s *signedIn) {
	if v := h.pathVersion(w, r, s); v != nil {
		h.render(w, r, http.StatusOK, "redact", s, view{Title: "Redact " + v.ID, Data: map[string]any{"StoreID": r.PathValue("store"), "Version": v}})
	}
}

// pathVersion reads the version that the request's path names; on an
// error it shows the error page and returns nil.
func (h *Handler) pathVersion(w http.ResponseWriter, r *http.Request, s *signedIn) *memstore.Version {
	v, err := h.cfg.Versions.Version(r.Context(), s.caller, r.PathValue("store"), r.PathValue("version"))
	if err != nil {
		h.failErr(w, r, s, err)
		return nil
	}
	return v
}

// redact redacts a version; the core decides who may.
func (h *Handler) redact(w http.ResponseWriter, r *http.Request, s *signedIn) {
	storeID, id := r.PathValue("store"), r.PathValue("version")
	_, err := h.cfg.Versions.RedactVersion(r.Context(), s.caller, storeID, id)
	h.finish(w, r, s, err, versionURL(storeID, id, "redacted"))
}

package console

import (
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/textdiff"
)

// editForm is what a memory's edit form carries: the person's path and
// text, and what they were when the person began, so that a save changes
// only what the person changed, and only if nobody changed it meanwhile.
type editForm struct {
	StoreID  string
	MemoryID string
	Path     string
	Content  string
	// OrigPath is the path the person saw: a path left as it was is not
	// sent, so that a rename made meanwhile is kept.
	OrigPath string
	// SHA is the content_sha256 of the content the person saw; the save
	// is conditional on it.
	SHA string
	// CRLF says that the content the person began from had CRLF line
	// endings, which a browser sends back as it got them; otherwise the
	// CRLF every browser sends for a text area's lines is made LF again.
	CRLF bool
	// Conflict is set when a save found the memory changed meanwhile.
	Conflict *conflict
}

// conflict is what the person is shown when someone else changed a
// memory during their edit: the difference from the current text to
// theirs, and who changed it.
type conflict struct {
	Current *memstore.Memory
	By      template.HTML
	Diff    []textdiff.Line
}

// formContent is the content of a form's text area, its line endings as
// the memory had them (see editForm.CRLF).
func formContent(r *http.Request) string {
	c := r.PostFormValue("content")
	if r.PostFormValue("crlf") == "" {
		c = strings.ReplaceAll(c, "\r\n", "\n")
	}
	return c
}

// fixable reports whether err is one the person can fix in the form they
// sent (the form is shown again, with the error), and its status.
func fixable(err error) (int, bool) {
	switch memstore.ErrorCode(err) {
	case memstore.EInvalid:
		return http.StatusBadRequest, true
	case memstore.EPathConflict, memstore.EConflict:
		return http.StatusConflict, true
	case memstore.ERateLimited:
		return http.StatusTooManyRequests, true
	}
	return 0, false
}

// memoryURL is the page of a memory; done names a notice to show there.
func memoryURL(storeID, id, done string) string {
	return withNotice(Prefix+"stores/"+url.PathEscape(storeID)+"/memories/"+url.PathEscape(id), done)
}

// treeURL is a store's tree at a prefix.
func treeURL(storeID, prefix, done string) string {
	q := url.Values{"path": {prefix}}
	if done != "" {
		q.Set("done", done)
	}
	return Prefix + "stores/" + url.PathEscape(storeID) + "?" + q.Encode()
}

// dirOf is the prefix a path is in ("/a/b.md" → "/a/").
func dirOf(path string) string { return path[:strings.LastIndex(path, "/")+1] }

func (h *Handler) newMemoryPage(w http.ResponseWriter, r *http.Request, s *signedIn) {
	st, err := h.cfg.Stores.Store(r.Context(), s.caller, r.PathValue("store"))
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	path := r.URL.Query().Get("path")
	if path == "" {
		path = "/"
	}
	h.render(w, r, http.StatusOK, "memnew", s, view{Title: "New memory", Data: editForm{StoreID: st.ID, Path: path}})
}

func (h *Handler) createMemory(w http.ResponseWriter, r *http.Request, s *signedIn) {
	f := editForm{StoreID: r.PathValue("store"), Path: r.PostFormValue("path"), Content: formContent(r)}
	m, err := h.cfg.Memories.CreateMemory(r.Context(), s.caller, f.StoreID, memstore.MemoryCreate{Path: f.Path, Content: f.Content})
	if err != nil {
		if status, ok := fixable(err); ok {
			h.render(w, r, status, "memnew", s, view{Title: "New memory", Error: memstore.ErrorMessage(err), Data: f})
			return
		}
		h.failErr(w, r, s, err)
		return
	}
	http.Redirect(w, r, memoryURL(f.StoreID, m.ID, "created"), http.StatusSeeOther)
}

func (h *Handler) editPage(w http.ResponseWriter, r *http.Request, s *signedIn) {
	storeID, id := r.PathValue("store"), r.PathValue("memory")
	m, err := h.cfg.Memories.Memory(r.Context(), s.caller, storeID, id)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "edit", s, view{Title: "Edit " + m.Path, Data: editForm{
		StoreID: storeID, MemoryID: id, Path: m.Path, Content: m.Content, OrigPath: m.Path, SHA: m.ContentSHA256,
		CRLF: strings.Contains(m.Content, "\r\n"),
	}})
}

// saveMemory saves an edit, conditional on the content the person saw.
// When someone changed the memory meanwhile, nothing is saved: the edit
// page comes back with the person's text, the difference from the
// current content, and a save that is now conditional on the current
// content (keep mine), a way back to the memory (take theirs), or more
// editing.
func (h *Handler) saveMemory(w http.ResponseWriter, r *http.Request, s *signedIn) {
	ctx := r.Context()
	f := editForm{
		StoreID: r.PathValue("store"), MemoryID: r.PathValue("memory"),
		Path: r.PostFormValue("path"), Content: formContent(r), OrigPath: r.PostFormValue("orig_path"),
		SHA: r.PostFormValue("sha"), CRLF: r.PostFormValue("crlf") != "",
	}
	if f.SHA == "" || f.OrigPath == "" {
		h.fail(w, r, s, http.StatusBadRequest, "This form does not say which version of the memory you edited, so it cannot be saved safely; open the memory and edit it again.")
		return
	}
	u := memstore.MemoryUpdate{Content: &f.Content, IfSHA256: f.SHA}
	if f.Path != f.OrigPath {
		u.Path = &f.Path
	}
	_, err := h.cfg.Memories.UpdateMemory(ctx, s.caller, f.StoreID, f.MemoryID, u)
	if err == nil {
		http.Redirect(w, r, memoryURL(f.StoreID, f.MemoryID, "saved"), http.StatusSeeOther)
		return
	}
	if memstore.ErrorCode(err) == memstore.EPreconditionFailed {
		h.conflict(w, r, s, f)
		return
	}
	if status, ok := fixable(err); ok {
		h.render(w, r, status, "edit", s, view{Title: "Edit " + f.OrigPath, Error: memstore.ErrorMessage(err), Data: f})
		return
	}
	h.failErr(w, r, s, err)
}

// conflict shows the edit page of a save that found the memory changed.
func (h *Handler) conflict(w http.ResponseWriter, r *http.Request, s *signedIn, f editForm) {
	ctx := r.Context()
	cur, err := h.cfg.Memories.Memory(ctx, s.caller, f.StoreID, f.MemoryID)
	if memstore.ErrorCode(err) == memstore.ENotFound {
		f.MemoryID, f.SHA, f.OrigPath = "", "", ""
		h.render(w, r, http.StatusConflict, "memnew", s, view{Title: "New memory", Data: f,
			Error: "This memory was deleted while you edited it, so nothing was saved. Your text is below: create it again, or leave this page to let it go."})
		return
	}
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	var by template.HTML
	if v, err := h.cfg.Versions.Version(ctx, s.caller, f.StoreID, cur.VersionID); err == nil {
		by = h.actorNames(ctx, s, v.CreatedBy)[v.CreatedBy] + " " + when(v.CreatedAt)
	}
	d, err := unified("current", "yours", cur.Content, f.Content)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	if f.Path == f.OrigPath {
		f.Path = cur.Path // theirs, unless the person renamed it too
	}
	f.OrigPath, f.SHA = cur.Path, cur.ContentSHA256
	f.Conflict = &conflict{Current: cur, By: by, Diff: d}
	h.render(w, r, http.StatusConflict, "edit", s, view{Title: "Edit " + cur.Path, Data: f,
		Error: "This memory was changed while you edited it, so nothing was saved. Your text is kept below; the difference from the current content is shown."})
}

func (h *Handler) deletePage(w http.ResponseWriter, r *http.Request, s *signedIn) {
	h.renderDelete(w, r, s, http.StatusOK, "")
}

// renderDelete shows the confirmation of a memory's deletion, for the
// memory as it is now.
func (h *Handler) renderDelete(w http.ResponseWriter, r *http.Request, s *signedIn, status int, msg string) {
	storeID, id := r.PathValue("store"), r.PathValue("memory")
	m, err := h.cfg.Memories.Memory(r.Context(), s.caller, storeID, id)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, status, "memdelete", s, view{Title: "Delete " + m.Path, Error: msg, Data: map[string]any{"StoreID": storeID, "Memory": m}})
}

// deleteMemory deletes a memory if its content is still what the person
// saw.
func (h *Handler) deleteMemory(w http.ResponseWriter, r *http.Request, s *signedIn) {
	storeID, id, sha := r.PathValue("store"), r.PathValue("memory"), r.PostFormValue("sha")
	if sha == "" {
		h.fail(w, r, s, http.StatusBadRequest, "This form does not say which version of the memory you meant to delete; open the memory and try again.")
		return
	}
	err := h.cfg.Memories.DeleteMemory(r.Context(), s.caller, storeID, id, sha)
	switch memstore.ErrorCode(err) {
	case "":
		http.Redirect(w, r, treeURL(storeID, dirOf(r.PostFormValue("path")), "deleted"), http.StatusSeeOther)
	case memstore.EPreconditionFailed:
		h.renderDelete(w, r, s, http.StatusConflict, "This memory was changed since you opened it, so it was not deleted. Look at it as it is now before you delete it.")
	default:
		h.failErr(w, r, s, err)
	}
}

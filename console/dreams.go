package console

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/textdiff"
	"github.com/memstore/memstore/storediff"
)

// reviewPage is how many of a dream's proposed changes one page shows
// with their content: each is up to two memories' content and a diff.
const reviewPage = 20

// dreamURL is a dream's page; done names a notice to show there.
func dreamURL(id, done string) string {
	return withNotice(Prefix+"dreams/"+url.PathEscape(id), done)
}

func (h *Handler) dreams(w http.ResponseWriter, r *http.Request, s *signedIn) {
	q := r.URL.Query()
	f := memstore.DreamFilter{Limit: pageSize, Page: q.Get("page"), IncludeArchived: q.Get("archived") != ""}
	status := q.Get("status")
	if status != "" {
		f.Statuses = []memstore.DreamStatus{memstore.DreamStatus(status)}
	}
	p, err := h.cfg.Dreams.Dreams(r.Context(), s.caller, f)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "dreams", s, view{Title: "Dreams", Notice: notice(r), Data: map[string]any{
		"Dreams": p.Items, "Next": p.Next, "Status": status, "Statuses": memstore.DreamStatuses, "Archived": f.IncludeArchived,
	}})
}

// reviewedChange is a proposed change as the dream's page shows it: the
// input store's content now beside the output store's, and their diff.
type reviewedChange struct {
	memstore.ProposedChange
	Original, Proposed string
	Diff               []textdiff.Line
	Binary             bool
	// Result is what an apply just did with it, "" before.
	Result *memstore.AppliedChange
}

func (h *Handler) dream(w http.ResponseWriter, r *http.Request, s *signedIn) {
	h.renderDream(w, r, s, http.StatusOK, "", notice(r), nil)
}

// renderDream shows a dream, and, for one that wrote a store of its own,
// a page of its proposed changes, each with a result of the apply that
// led here (applied, by path); msg is an error, note a notice.
func (h *Handler) renderDream(w http.ResponseWriter, r *http.Request, s *signedIn, status int, msg, note string, applied []memstore.AppliedChange) {
	ctx := r.Context()
	id := r.PathValue("dream")
	d, err := h.cfg.Dreams.Dream(ctx, s.caller, id)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	// The changes can be chosen once the dream has stopped, by whom the
	// core lets apply them.
	data := map[string]any{"Dream": d, "CanApply": d.Status.Final() && s.caller.CanDream(true) == nil}
	if d.OutputBehavior == memstore.OutputCreateNew && d.StartedAt != nil && h.cfg.Review != nil {
		_, changes, err := h.cfg.Review.DreamChanges(ctx, s.caller, id)
		if memstore.ErrorCode(err) == memstore.ENotFound {
			// A store of the dream was deleted since: the dream's
			// facts are still worth showing.
			data["Gone"] = memstore.ErrorMessage(err)
			h.render(w, r, status, "dream", s, view{Title: "Dream " + d.ID, Error: msg, Notice: note, Data: data})
			return
		}
		if err != nil {
			h.failErr(w, r, s, err)
			return
		}
		results := map[string]*memstore.AppliedChange{}
		for i := range applied {
			results[applied[i].Path] = &applied[i]
		}
		start, _ := strconv.Atoi(r.URL.Query().Get("start"))
		start = max(0, min(start, len(changes)))
		end := min(start+reviewPage, len(changes))
		shown := make([]reviewedChange, 0, end-start)
		counts := map[string]int{}
		for _, ch := range changes {
			counts[string(ch.State)]++
		}
		for _, ch := range changes[start:end] {
			rc := reviewedChange{ProposedChange: ch, Result: results[ch.Path]}
			if rc.Original, err = h.content(r, s, d.InputStoreID, ch.Input); err == nil {
				rc.Proposed, err = h.content(r, s, d.OutputStoreID, ch.Output)
			}
			if err != nil {
				h.failErr(w, r, s, err)
				return
			}
			unified, binary, err := storediff.Unified(ch.Path, ch.Input != nil, ch.Output != nil, rc.Original, rc.Proposed)
			if err != nil {
				h.failErr(w, r, s, err)
				return
			}
			rc.Diff, rc.Binary = textdiff.Lines(unified), binary
			shown = append(shown, rc)
		}
		data["Changes"], data["Total"], data["Counts"] = shown, len(changes), counts
		data["Start"], data["End"] = start, end
		if start > 0 {
			data["Prev"] = strconv.Itoa(max(0, start-reviewPage))
		}
		if end < len(changes) {
			data["More"] = strconv.Itoa(end)
		}
	}
	h.render(w, r, status, "dream", s, view{Title: "Dream " + d.ID, Error: msg, Notice: note, Data: data})
}

// content is the content of memory m of a store, "" for none (or one
// deleted since).
func (h *Handler) content(r *http.Request, s *signedIn, storeID string, m *memstore.Memory) (string, error) {
	if m == nil {
		return "", nil
	}
	full, err := h.cfg.Memories.Memory(r.Context(), s.caller, storeID, m.ID)
	if memstore.ErrorCode(err) == memstore.ENotFound {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return full.Content, nil
}

// applyDream applies the changes chosen on a dream's page to its input
// store; the core checks each against what the dream began from.
func (h *Handler) applyDream(w http.ResponseWriter, r *http.Request, s *signedIn) {
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, s, http.StatusBadRequest, "The form could not be read; choose the changes again.")
		return
	}
	paths := r.PostForm["path"]
	if len(paths) == 0 {
		h.renderDream(w, r, s, http.StatusBadRequest, "No change was chosen: tick the changes to apply, then Apply.", "", nil)
		return
	}
	applied, err := h.cfg.Review.ApplyDreamChanges(r.Context(), s.caller, r.PathValue("dream"), paths)
	if err != nil {
		if status, ok := fixable(err); ok {
			h.renderDream(w, r, s, status, memstore.ErrorMessage(err), "", applied)
			return
		}
		h.failErr(w, r, s, err)
		return
	}
	n, conflicts := 0, 0
	for _, a := range applied {
		if a.State == memstore.ChangeConflict {
			conflicts++
		} else {
			n++
		}
	}
	status, msg := http.StatusOK, ""
	if conflicts > 0 {
		status, msg = http.StatusConflict, strconv.Itoa(conflicts)+" of the chosen changes conflict with what the input store holds now, and were not applied: each is shown below."
	}
	h.renderDream(w, r, s, status, msg, strconv.Itoa(n)+" of the chosen changes applied to the input store, each as a new version.", applied)
}

func (h *Handler) cancelDream(w http.ResponseWriter, r *http.Request, s *signedIn) {
	id := r.PathValue("dream")
	_, err := h.cfg.Dreams.CancelDream(r.Context(), s.caller, id)
	h.finish(w, r, s, err, dreamURL(id, "canceled"))
}

func (h *Handler) archiveDream(w http.ResponseWriter, r *http.Request, s *signedIn) {
	id := r.PathValue("dream")
	_, err := h.cfg.Dreams.ArchiveDream(r.Context(), s.caller, id)
	h.finish(w, r, s, err, dreamURL(id, "dream-archived"))
}

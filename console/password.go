package console

import (
	"net/http"

	"github.com/memstore/memstore"
)

// passwordPage is where a signed-in user sets their own password: a
// first one for a user who signs in with links, else a new one given the
// current one.
func (h *Handler) passwordPage(w http.ResponseWriter, r *http.Request, s *signedIn) {
	h.renderPassword(w, r, s, http.StatusOK, "", notice(r))
}

func (h *Handler) renderPassword(w http.ResponseWriter, r *http.Request, s *signedIn, status int, msg, note string) {
	h.render(w, r, status, "password", s, view{Title: "Your password", Error: msg, Notice: note,
		Data: map[string]any{"Min": memstore.MinPasswordLength}})
}

// setPassword changes the signed-in user's password through the core,
// which ends the user's other sign-ins and gives this browser a new
// session (the old one ended with them).
func (h *Handler) setPassword(w http.ResponseWriter, r *http.Request, s *signedIn) {
	pw := r.PostFormValue("new")
	if pw != r.PostFormValue("again") {
		h.renderPassword(w, r, s, http.StatusBadRequest, "The two new passwords differ, so the password was not changed; type the same one twice.", "")
		return
	}
	secret, _, err := h.cfg.Users.ChangePassword(r.Context(), s.caller, r.PostFormValue("current"), pw)
	if waitAndRetry(w, err, func(status int, msg string) { h.renderPassword(w, r, s, status, msg, "") }) {
		return
	}
	switch code := memstore.ErrorCode(err); code {
	case "":
	case memstore.EInvalid, memstore.EPermission:
		status := http.StatusBadRequest
		if code == memstore.EPermission {
			status = http.StatusForbidden
		}
		h.renderPassword(w, r, s, status, memstore.ErrorMessage(err)+".", "")
		return
	default:
		h.failErr(w, r, s, err)
		return
	}
	h.setCookie(w, r, secret)
	http.Redirect(w, r, Prefix+"password?done=password", http.StatusSeeOther)
}

package console

import (
	"net/http"
	"net/url"

	"github.com/memstore/memstore"
)

// The users page's changes: an administrator changes another user's
// role, removes a user after confirming, or makes a new sign-in link for
// a user to be sent by hand. Every user changes their own password on
// the password page.

// LinkURL is the address of the console at base (ending in Prefix) that
// redeems a sign-in link's secret.
func LinkURL(base *url.URL, secret string) string {
	u := *base
	u.Path += "link"
	u.RawQuery = url.Values{"t": {secret}}.Encode()
	return u.String()
}

func (h *Handler) setRole(w http.ResponseWriter, r *http.Request, s *signedIn) {
	_, err := h.cfg.Users.SetRole(r.Context(), s.caller, r.PathValue("user"), memstore.Role(r.PostFormValue("role")))
	h.finish(w, r, s, err, Prefix+"users?done=role")
}

// removeUserPage asks before a user is removed.
func (h *Handler) removeUserPage(w http.ResponseWriter, r *http.Request, s *signedIn) {
	if err := s.caller.CanAdminister(memstore.ManageUsers); err != nil {
		h.failErr(w, r, s, err)
		return
	}
	u, err := h.cfg.Users.User(r.Context(), s.caller, r.PathValue("user"))
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "userremove", s, view{Title: "Remove " + u.Name, Data: u})
}

func (h *Handler) removeUser(w http.ResponseWriter, r *http.Request, s *signedIn) {
	err := h.cfg.Users.DeleteUser(r.Context(), s.caller, r.PathValue("user"))
	h.finish(w, r, s, err, Prefix+"users?done=removed")
}

// signInLink shows a new one-time sign-in link for a user, this once.
func (h *Handler) signInLink(w http.ResponseWriter, r *http.Request, s *signedIn) {
	ctx := r.Context()
	u, err := h.cfg.Users.User(ctx, s.caller, r.PathValue("user"))
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	secret, expires, err := h.cfg.Users.CreateSignInLink(ctx, s.caller, u.ID)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	base, _ := url.Parse(h.serverURL(r) + Prefix)
	h.render(w, r, http.StatusOK, "userlink", s, view{Title: "Sign-in link for " + u.Name, Data: map[string]any{
		"User": u, "Link": LinkURL(base, secret), "Expires": expires,
	}})
}

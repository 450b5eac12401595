package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/memstore/memstore"
)

// sessionURL is a session's page; done names a notice to show there.
func sessionURL(id, done string) string {
	return withNotice(Prefix+"sessions/"+url.PathEscape(id), done)
}

// sessionStatuses are the choices of the sessions list's status filter;
// "" lists every session.
var sessionStatuses = []memstore.SessionStatus{memstore.StatusIdle, memstore.StatusTerminated}

func (h *Handler) sessions(w http.ResponseWriter, r *http.Request, s *signedIn) {
	q := r.URL.Query()
	f := memstore.SessionFilter{Limit: pageSize, Page: q.Get("page"), IncludeArchived: true}
	status := q.Get("status")
	if status != "" {
		f.Statuses = []memstore.SessionStatus{memstore.SessionStatus(status)}
	}
	p, err := h.cfg.Sessions.Sessions(r.Context(), s.caller, f)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "sessions", s, view{Title: "Sessions", Notice: notice(r), Data: map[string]any{
		"Sessions": p.Items, "Next": p.Next, "Status": status, "Statuses": sessionStatuses,
	}})
}

func (h *Handler) session(w http.ResponseWriter, r *http.Request, s *signedIn) {
	ctx := r.Context()
	ses, err := h.cfg.Sessions.Session(ctx, s.caller, r.PathValue("session"))
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	toks, err := h.cfg.Sessions.SessionTokens(ctx, s.caller, ses.ID, memstore.SessionTokenFilter{Limit: pageSize, Page: r.URL.Query().Get("page")})
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "session", s, view{Title: "Session " + ses.ID, Notice: notice(r), Data: map[string]any{
		"Session": ses, "Tokens": toks.Items, "Next": toks.Next,
	}})
}

// newSessionPage is the form of a new session: a title and, for each
// store of the first page, whether to attach it and how.
func (h *Handler) newSessionPage(w http.ResponseWriter, r *http.Request, s *signedIn) {
	if err := s.caller.CanAdminister(memstore.ManageSessions); err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.renderNewSession(w, r, s, http.StatusOK, "", "")
}

func (h *Handler) renderNewSession(w http.ResponseWriter, r *http.Request, s *signedIn, status int, msg, title string) {
	p, err := h.cfg.Stores.Stores(r.Context(), s.caller, memstore.StoreFilter{Limit: pageSize})
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, status, "sessionnew", s, view{Title: "New session", Error: msg, Data: map[string]any{
		"Stores": p.Items, "More": p.Next != "", "Title": title, "Max": memstore.MaxSessionStores,
		"Access": []memstore.Access{memstore.AccessReadWrite, memstore.AccessReadOnly},
	}})
}

// createSession makes a session of the stores whose access was chosen,
// in the form's order, and shows its first token once.
func (h *Handler) createSession(w http.ResponseWriter, r *http.Request, s *signedIn) {
	sc := memstore.SessionCreate{Title: r.PostFormValue("title")}
	for _, id := range r.PostForm["store"] {
		access := r.PostFormValue("access." + id)
		if access == "" {
			continue // not attached
		}
		sc.Stores = append(sc.Stores, memstore.AttachmentCreate{StoreID: id, Access: memstore.Access(access),
			Instructions: r.PostFormValue("instructions." + id)})
	}
	ses, tok, secret, err := h.cfg.Sessions.CreateSession(r.Context(), s.caller, sc)
	if err != nil {
		if status, ok := fixable(err); ok {
			h.renderNewSession(w, r, s, status, memstore.ErrorMessage(err), sc.Title)
			return
		}
		h.failErr(w, r, s, err)
		return
	}
	h.renderToken(w, r, s, http.StatusCreated, ses, tok, secret)
}

// renderToken shows a session token's secret, this once, with what to
// paste to connect an agent to it.
func (h *Handler) renderToken(w http.ResponseWriter, r *http.Request, s *signedIn, status int, ses *memstore.Session, tok *memstore.SessionToken, secret string) {
	base := h.serverURL(r)
	h.render(w, r, status, "token", s, view{Title: "Session token", Data: map[string]any{
		"Session": ses, "Token": tok, "Secret": secret, "Snippets": connectSnippets(base, secret),
	}})
}

// serverURL is the address the person reached the console at, which is
// the server's for agents too unless a proxy in front rewrites it.
func (h *Handler) serverURL(r *http.Request) string {
	scheme := "http"
	if h.https(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// A snippet is a piece of configuration to copy, with what it is for.
type snippet struct{ Title, Text string }

// connectSnippets are the ways an agent connects with a session token:
// Claude Code over HTTP (/mcp takes the token as a bearer), Claude
// Desktop and the command line through 'memstore mcp'.
func connectSnippets(base, secret string) []snippet {
	desktop := `{
  "mcpServers": {
    "memstore": {
      "command": "memstore",
      "args": ["mcp", "--url", "` + base + `"],
      "env": {"MEMSTORE_TOKEN": "` + secret + `"}
    }
  }
}`
	return []snippet{
		{"Claude Code (MCP over HTTP)", `claude mcp add --transport http memstore ` + base + `/mcp --header "Authorization: Bearer ` + secret + `"`},
		{"Claude Desktop (claude_desktop_config.json)", desktop},
		{"Command line (memstore mcp)", `MEMSTORE_TOKEN=` + secret + ` memstore mcp --url ` + base},
	}
}

// mintToken makes another token of a session and shows it once.
func (h *Handler) mintToken(w http.ResponseWriter, r *http.Request, s *signedIn) {
	ctx := r.Context()
	tok, secret, err := h.cfg.Sessions.CreateSessionToken(ctx, s.caller, r.PathValue("session"), 0)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	ses, err := h.cfg.Sessions.Session(ctx, s.caller, tok.SessionID)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.renderToken(w, r, s, http.StatusCreated, ses, tok, secret)
}

func (h *Handler) revokeToken(w http.ResponseWriter, r *http.Request, s *signedIn) {
	sid := r.PathValue("session")
	ctx := r.Context()
	tok, err := h.cfg.Sessions.SessionToken(ctx, s.caller, r.PathValue("token"))
	if err == nil && tok.SessionID != sid {
		err = memstore.Errorf(memstore.ENotFound, "session %s has no token %s", sid, r.PathValue("token"))
	}
	if err == nil {
		_, err = h.cfg.Sessions.RevokeSessionToken(ctx, s.caller, tok.ID)
	}
	h.finish(w, r, s, err, sessionURL(sid, "revoked"))
}

func (h *Handler) archiveSession(w http.ResponseWriter, r *http.Request, s *signedIn) {
	id := r.PathValue("session")
	_, err := h.cfg.Sessions.ArchiveSession(r.Context(), s.caller, id)
	h.finish(w, r, s, err, sessionURL(id, "ended"))
}

func (h *Handler) keys(w http.ResponseWriter, r *http.Request, s *signedIn) {
	h.renderKeys(w, r, s, http.StatusOK, "", nil, "")
}

// renderKeys shows a page of the workspace's API keys, and a new key's
// secret when one was just made.
func (h *Handler) renderKeys(w http.ResponseWriter, r *http.Request, s *signedIn, status int, msg string, made *memstore.APIKey, secret string) {
	p, err := h.cfg.Keys.APIKeys(r.Context(), s.caller, r.URL.Query().Get("page"), pageSize)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, status, "keys", s, view{Title: "API keys", Error: msg, Notice: notice(r), Data: map[string]any{
		"Keys": p.Items, "Next": p.Next, "Made": made, "Secret": secret, "CanManage": s.caller.CanAdminister(memstore.ManageKeys) == nil,
	}})
}

func (h *Handler) createKey(w http.ResponseWriter, r *http.Request, s *signedIn) {
	k, secret, err := h.cfg.Keys.CreateAPIKey(r.Context(), s.caller, strings.TrimSpace(r.PostFormValue("name")))
	if err != nil {
		if status, ok := fixable(err); ok {
			h.renderKeys(w, r, s, status, memstore.ErrorMessage(err), nil, "")
			return
		}
		h.failErr(w, r, s, err)
		return
	}
	h.renderKeys(w, r, s, http.StatusCreated, "", k, secret)
}

func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request, s *signedIn) {
	_, err := h.cfg.Keys.RevokeAPIKey(r.Context(), s.caller, r.PathValue("key"))
	h.finish(w, r, s, err, Prefix+"keys?done=revoked")
}

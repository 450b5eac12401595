package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/agenttool"
)

// maxTokenLifetime bounds expires_in_seconds: ten years, far beyond any
// agent run, yet small enough never to overflow a time.Duration.
const maxTokenLifetime = 10 * 365 * 24 * time.Hour

// routeSessions adds the session routes: the SDKs', and memstore's tokens,
// prompt and search (docs/api.md, Sessions). The sessions service decides
// who may do what: a session token may read its own session and use its
// prompt and search; everything else about sessions needs an API key.
func (s *Server) routeSessions() {
	const (
		sessions = "/v1/sessions"
		session  = sessions + "/{session_id}"
		tokens   = session + "/tokens"
	)
	s.handle("POST "+sessions, s.createSession)
	s.handle("GET "+sessions, s.listSessions)
	s.handle("GET "+session, s.getSession)
	s.handle("POST "+session+"/archive", s.archiveSession)
	s.handle("POST "+tokens, s.createSessionToken)
	s.handle("GET "+tokens, s.listSessionTokens)
	s.handle("POST "+tokens+"/{token_id}/revoke", s.revokeSessionToken)
	s.handle("GET "+session+"/memory_prompt", s.memoryPrompt)
	if s.search != nil {
		s.handle("GET "+session+"/memories/search", s.searchSession)
	}
}

// sessionResource is a resources[] entry of a session create as read:
// every field a pointer, so that null and absent mean the default. The Go
// SDK leaves out a type it considers implied, so an entry without a type
// but with a memory_store_id is a memory store.
type sessionResource struct {
	Type          *string `json:"type"`
	MemoryStoreID *string `json:"memory_store_id"`
	Access        *string `json:"access"`
	Instructions  *string `json:"instructions"`
	Prompt        *string `json:"prompt"` // the research preview's name for instructions
}

// sessionCreate reads the body of POST /v1/sessions: resources, title and
// metadata are memstore's to interpret, token_expires_in_seconds is its
// own, and every other field is kept as sent.
func sessionCreate(body map[string]json.RawMessage) (memstore.SessionCreate, error) {
	c := memstore.SessionCreate{Fields: map[string]json.RawMessage{}}
	var resources []json.RawMessage
	var ttl *int64
	for k, v := range body {
		var err error
		switch k {
		case "resources":
			err = unmarshalNullable(v, &resources)
		case "title":
			err = unmarshalNullable(v, &c.Title)
		case "metadata":
			err = unmarshalNullable(v, &c.Metadata)
		case "token_expires_in_seconds":
			err = unmarshalNullable(v, &ttl)
		default:
			if !sessionKeys[k] {
				c.Fields[k] = v
			}
		}
		if err != nil {
			return c, invalid("%s has the wrong type: %v", k, err)
		}
	}
	for i, raw := range resources {
		var r sessionResource
		if err := json.Unmarshal(raw, &r); err != nil {
			return c, invalid("resources[%d] must be an object with type memory_store: %v", i, err)
		}
		switch {
		case r.Type == nil && r.MemoryStoreID == nil:
			return c, invalid("resources[%d].type is required (memory_store)", i)
		case r.Type != nil && *r.Type != typeStore:
			return c, invalid("resources[%d] is a %q resource; memstore attaches only memory_store resources", i, *r.Type)
		case r.MemoryStoreID == nil:
			return c, invalid("resources[%d].memory_store_id is required", i)
		case r.Instructions != nil && r.Prompt != nil && *r.Instructions != *r.Prompt:
			return c, invalid("resources[%d] has both instructions and prompt, which differ; send instructions only", i)
		}
		a := memstore.AttachmentCreate{StoreID: *r.MemoryStoreID}
		if r.Access != nil {
			a.Access = memstore.Access(*r.Access)
		}
		if r.Instructions != nil {
			a.Instructions = *r.Instructions
		} else if r.Prompt != nil {
			a.Instructions = *r.Prompt
		}
		c.Stores = append(c.Stores, a)
	}
	d, err := lifetime("token_expires_in_seconds", ttl)
	c.TokenTTL = d
	return c, err
}

// unmarshalNullable decodes v into dst unless it is null, which leaves
// dst alone.
func unmarshalNullable(v json.RawMessage, dst any) error {
	if string(v) == "null" {
		return nil
	}
	return json.Unmarshal(v, dst)
}

// lifetime turns a token lifetime in seconds into a duration (0 for
// none), refusing values out of range.
func lifetime(field string, secs *int64) (time.Duration, error) {
	if secs == nil {
		return 0, nil
	}
	if *secs < 1 || *secs > int64(maxTokenLifetime/time.Second) {
		return 0, invalid("%s must be from 1 to %d seconds, not %d", field, int64(maxTokenLifetime/time.Second), *secs)
	}
	return time.Duration(*secs) * time.Second, nil
}

// createSession serves POST /v1/sessions: the session and, in it, the
// secret of its first token, shown this once.
func (s *Server) createSession(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	var body map[string]json.RawMessage
	if err := s.decodeBody(w, r, &body); err != nil {
		return err
	}
	sc, err := sessionCreate(body)
	if err != nil {
		return err
	}
	sess, tok, secret, err := s.sessions.CreateSession(r.Context(), c, sc)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewCreatedSessionJSON(sess, tok, secret))
	return nil
}

// getSession serves GET /v1/sessions/{id}.
func (s *Server) getSession(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	sess, err := s.sessions.Session(r.Context(), c, r.PathValue("session_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewSessionJSON(sess))
	return nil
}

// listSessions serves GET /v1/sessions, newest first, optionally only
// those with memory_store_id attached, archived ones only with
// include_archived=true. A session token sees its own
// session alone: that is how a holder of a token learns its session.
func (s *Server) listSessions(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	f := memstore.SessionFilter{
		StoreID: p.get("memory_store_id"), IncludeArchived: p.boolean("include_archived"),
		Limit: p.limit(false), Page: p.get("page"),
	}
	if p.err != nil {
		return p.err
	}
	page, err := s.sessions.Sessions(r.Context(), c, f)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, pageOf(page, NewSessionJSON))
	return nil
}

// archiveSession serves POST /v1/sessions/{id}/archive: its tokens stop
// working.
func (s *Server) archiveSession(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	if err := s.readNoBody(w, r); err != nil {
		return err
	}
	sess, err := s.sessions.ArchiveSession(r.Context(), c, r.PathValue("session_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewSessionJSON(sess))
	return nil
}

// createSessionToken serves POST /v1/sessions/{id}/tokens: another token,
// with its secret shown this once.
func (s *Server) createSessionToken(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	b, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	var req SessionTokenRequest
	if err := unmarshalOptional(b, &req); err != nil {
		return err
	}
	ttl, err := lifetime("expires_in_seconds", req.ExpiresInSeconds)
	if err != nil {
		return err
	}
	tok, secret, err := s.sessions.CreateSessionToken(r.Context(), c, r.PathValue("session_id"), ttl)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewSessionTokenJSON(tok, secret))
	return nil
}

// listSessionTokens serves GET /v1/sessions/{id}/tokens, oldest first,
// paged as every list is; secrets are never shown again.
func (s *Server) listSessionTokens(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	f := memstore.SessionTokenFilter{Limit: p.limit(false), Page: p.get("page")}
	if p.err != nil {
		return p.err
	}
	page, err := s.sessions.SessionTokens(r.Context(), c, r.PathValue("session_id"), f)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, pageOf(page, func(t *memstore.SessionToken) SessionTokenJSON { return NewSessionTokenJSON(t, "") }))
	return nil
}

// revokeSessionToken serves POST /v1/sessions/{id}/tokens/{token_id}/revoke:
// only a token of that session.
func (s *Server) revokeSessionToken(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	if err := s.readNoBody(w, r); err != nil {
		return err
	}
	sid, id := r.PathValue("session_id"), r.PathValue("token_id")
	// The token first, which only an API key may see: a token of the
	// session proves the session, and only without one is the session
	// looked up, to say which of the two is missing.
	t, err := s.sessions.SessionToken(r.Context(), c, id)
	if memstore.ErrorCode(err) == memstore.ENotFound || err == nil && t.SessionID != sid {
		if _, err := s.sessions.Session(r.Context(), c, sid); err != nil {
			return err
		}
		return memstore.Errorf(memstore.ENotFound, "session %s has no token %s", sid, id)
	}
	if err != nil {
		return err
	}
	tok, err := s.sessions.RevokeSessionToken(r.Context(), c, id)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewSessionTokenJSON(tok, ""))
	return nil
}

// memoryPrompt serves GET /v1/sessions/{id}/memory_prompt: the memory
// section of the session's system prompt (agenttool.Prompt), the same text
// the MCP server gives as its instructions.
func (s *Server) memoryPrompt(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	sess, err := s.sessions.Session(r.Context(), c, r.PathValue("session_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, MemoryPromptJSON{Type: typeMemoryPrompt, SessionID: sess.ID, Prompt: agenttool.Prompt(sess)})
	return nil
}

// searchStore serves GET /v1/memory_stores/{id}/memories/search, memstore's
// own endpoint: the store's live memories that match q, best first.
func (s *Server) searchStore(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	return s.searchIn(w, r, c, []string{r.PathValue("memory_store_id")})
}

// searchSession serves GET /v1/sessions/{id}/memories/search: the same over
// every store attached to the session.
func (s *Server) searchSession(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	sess, err := s.sessions.Session(r.Context(), c, r.PathValue("session_id"))
	if err != nil {
		return err
	}
	ids := make([]string, len(sess.Attachments))
	for i, a := range sess.Attachments {
		ids[i] = a.StoreID
	}
	return s.searchIn(w, r, c, ids)
}

func (s *Server) searchIn(w *responseWriter, r *http.Request, c *memstore.Caller, storeIDs []string) error {
	p := newParams(r)
	q := memstore.SearchQuery{
		Text:       p.get("q"),
		PathPrefix: p.get("path_prefix"),
		Limit:      p.count("limit", memstore.DefaultSearchLimit, memstore.MaxSearchLimit),
		Page:       p.get("page"),
	}
	if p.err != nil {
		return p.err
	}
	page, err := s.search.SearchMemories(r.Context(), c, storeIDs, q)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, pageOf(page, NewSearchResultJSON))
	return nil
}

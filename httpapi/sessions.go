package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
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
	const (
		resources = session + "/resources"
		resource  = resources + "/{resource_id}"
	)
	s.handle("POST "+sessions, s.createSession)
	s.handle("GET "+sessions, s.listSessions)
	s.handle("GET "+session, s.getSession)
	s.handle("POST "+session, s.updateSession)
	s.handle("DELETE "+session, s.deleteSession)
	s.handle("POST "+session+"/archive", s.archiveSession)
	s.handle("GET "+resources, s.listResources)
	s.handle("POST "+resources, s.addResource)
	s.handle("GET "+resource, s.getResource)
	s.handle("POST "+resource, s.updateResource)
	s.handle("DELETE "+resource, s.deleteResource)
	// A session's transcript, when the sessions service keeps them.
	if s.events, _ = s.sessions.(memstore.EventService); s.events != nil {
		s.routeSessionEvents(session)
	}
	// The SDKs' threads belong to an agent's runs, and memstore runs no
	// agent: each of their routes is a 404 saying so.
	for _, p := range []string{session + "/threads", session + "/threads/"} {
		s.handle(p, noAgent)
	}
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
		a, err := parseResource(fmt.Sprintf("resources[%d]", i), raw)
		if err != nil {
			return c, err
		}
		c.Stores = append(c.Stores, a)
	}
	d, err := lifetime("token_expires_in_seconds", ttl)
	c.TokenTTL = d
	return c, err
}

// parseResource reads a memory_store resource, the entry what of a
// create's resources or the body of an add.
func parseResource(what string, raw json.RawMessage) (memstore.AttachmentCreate, error) {
	var r sessionResource
	if err := json.Unmarshal(raw, &r); err != nil {
		return memstore.AttachmentCreate{}, invalid("%s must be an object with type memory_store: %v", what, err)
	}
	switch {
	case r.Type == nil && r.MemoryStoreID == nil:
		return memstore.AttachmentCreate{}, invalid("%s.type is required (memory_store)", what)
	case r.Type != nil && *r.Type != typeStore:
		return memstore.AttachmentCreate{}, invalid("%s is a %q resource; memstore attaches only memory_store resources", what, *r.Type)
	case r.MemoryStoreID == nil:
		return memstore.AttachmentCreate{}, invalid("%s.memory_store_id is required", what)
	}
	a := memstore.AttachmentCreate{StoreID: *r.MemoryStoreID}
	if r.Access != nil {
		a.Access = memstore.Access(*r.Access)
	}
	in, err := r.instructions(what)
	if in != nil {
		a.Instructions = *in
	}
	return a, err
}

// instructions is the entry's instructions, under either name (nil when
// neither is given): both given must agree.
func (r *sessionResource) instructions(what string) (*string, error) {
	if r.Instructions != nil && r.Prompt != nil && *r.Instructions != *r.Prompt {
		return nil, invalid("%s has both instructions and prompt, which differ; send instructions only", what)
	}
	if r.Instructions != nil {
		return r.Instructions, nil
	}
	return r.Prompt, nil
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

// sessionListParams are the query parameters of the session list: the
// SDKs' filters that memstore can honour, and beta=true, which the SDKs
// add. Any other is refused by name, never ignored (docs/api.md, Listing
// sessions).
var sessionListParams = map[string]bool{
	"beta": true, "limit": true, "page": true, "memory_store_id": true, "include_archived": true,
	"order": true, "statuses[]": true, "statuses": true, "agent_id": true,
	"created_at[gt]": true, "created_at[gte]": true, "created_at[lt]": true, "created_at[lte]": true,
	"created_at_gte": true, "created_at_lte": true,
}

// listSessions serves GET /v1/sessions, newest first unless order=asc,
// filtered as docs/api.md (Listing sessions) says. A session token sees
// its own session alone: that is how a holder of a token learns its
// session.
func (s *Server) listSessions(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	if err := p.only(sessionListParams, "the session list cannot filter by %s: memstore keeps nothing it could honour it by; "+
		"it takes memory_store_id, agent_id, include_archived, statuses[], order and created_at[gt|gte|lt|lte]"); err != nil {
		return err
	}
	f := memstore.SessionFilter{
		StoreID: p.get("memory_store_id"), AgentID: p.get("agent_id"), IncludeArchived: p.boolean("include_archived"),
		CreatedAtGT: p.createdAt("gt"), CreatedAtGTE: p.createdAt("gte"), CreatedAtLT: p.createdAt("lt"), CreatedAtLTE: p.createdAt("lte"),
		Limit: p.limit(false), Page: p.get("page"),
	}
	f.Ascending = p.ascending(false)
	if p.err != nil {
		return p.err
	}
	for _, st := range p.list("statuses") {
		f.Statuses = append(f.Statuses, memstore.SessionStatus(st))
	}
	page, err := s.sessions.Sessions(r.Context(), c, f)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, pageOf(page, NewSessionJSON))
	return nil
}

// shortParam is a query parameter's name as a message shows it.
func shortParam(k string) string {
	const most = 64
	if len(k) > most {
		return strconv.Quote(k[:most] + "...")
	}
	return strconv.Quote(k)
}

// sessionUpdate reads the body of POST /v1/sessions/{id}: title and
// metadata (a patch: null removes a key) are memstore's to interpret; the
// session's stores change through its resources and its tokens through
// theirs; every other field replaces the kept field of that name, or
// with null removes it.
func sessionUpdate(body map[string]json.RawMessage) (memstore.SessionUpdate, error) {
	var u memstore.SessionUpdate
	for k, v := range body {
		var err error
		switch k {
		case "title":
			err = unmarshalNullable(v, &u.Title)
		case "metadata":
			err = unmarshalNullable(v, &u.Metadata)
		case "resources":
			return u, invalid("resources cannot be changed by a session update; use POST and DELETE /v1/sessions/{session_id}/resources")
		case "token_expires_in_seconds":
			return u, invalid("token_expires_in_seconds applies to a session's first token only; make another with POST /v1/sessions/{session_id}/tokens")
		default:
			if sessionKeys[k] {
				continue // the session's own keys, which no update sets
			}
			if u.Fields == nil {
				u.Fields = map[string]json.RawMessage{}
			}
			if string(v) == "null" {
				v = nil
			}
			u.Fields[k] = v
		}
		if err != nil {
			return u, invalid("%s has the wrong type: %v", k, err)
		}
	}
	return u, nil
}

// updateSession serves POST /v1/sessions/{id}.
func (s *Server) updateSession(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	var body map[string]json.RawMessage
	if err := s.decodeBody(w, r, &body); err != nil {
		return err
	}
	u, err := sessionUpdate(body)
	if err != nil {
		return err
	}
	sess, err := s.sessions.UpdateSession(r.Context(), c, r.PathValue("session_id"), u)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, NewSessionJSON(sess))
	return nil
}

// deleteSession serves DELETE /v1/sessions/{id}: its tokens stop at once.
func (s *Server) deleteSession(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	if err := s.readNoBody(w, r); err != nil {
		return err
	}
	id := r.PathValue("session_id")
	if err := s.sessions.DeleteSession(r.Context(), c, id); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, SessionDeleted(id))
	return nil
}

// maxResourcePage bounds a page of a session's resources, as the SDKs
// have it; a session has at most memstore.MaxSessionStores anyway.
const maxResourcePage = 1000

// listResources serves GET /v1/sessions/{id}/resources: the session's
// stores in the order attached, all of them unless limit is given; a
// page's cursor is the ID of the resource it follows.
func (s *Server) listResources(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	p := newParams(r)
	limit, after := p.count("limit", maxResourcePage, maxResourcePage), p.get("page")
	if p.err != nil {
		return p.err
	}
	sess, err := s.sessions.Session(r.Context(), c, r.PathValue("session_id"))
	if err != nil {
		return err
	}
	atts := sess.Attachments
	if after != "" {
		i := slices.IndexFunc(atts, func(a memstore.Attachment) bool { return a.StoreID == after })
		if i < 0 {
			return invalid("page %q is not a cursor of this list", after)
		}
		atts = atts[i+1:]
	}
	page := memstore.Page[memstore.Attachment]{Items: atts[:min(limit, len(atts))]}
	if len(atts) > limit {
		page.Next = page.Items[limit-1].StoreID
	}
	s.writeJSON(w, http.StatusOK, pageOf(page, NewSessionResourceJSON))
	return nil
}

// getResource serves GET /v1/sessions/{id}/resources/{resource_id}.
func (s *Server) getResource(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	id := r.PathValue("resource_id")
	if err := memstore.ValidateID("resource_id", id); err != nil {
		return err
	}
	sess, err := s.sessions.Session(r.Context(), c, r.PathValue("session_id"))
	if err != nil {
		return err
	}
	return s.writeResource(w, sess, id)
}

// writeResource answers with the resource id of sess (ENotFound when the
// store is not attached).
func (s *Server) writeResource(w *responseWriter, sess *memstore.Session, id string) error {
	a := sess.Attachment(id)
	if a == nil {
		return memstore.Errorf(memstore.ENotFound, "session %s has no resource %s; a memory_store resource's ID is its memory_store_id", sess.ID, id)
	}
	s.writeJSON(w, http.StatusOK, NewSessionResourceJSON(a))
	return nil
}

// addResource serves POST /v1/sessions/{id}/resources: a store attached to
// a live session, by the rules of session creation.
func (s *Server) addResource(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	b, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	a, err := parseResource("the resource", b)
	if err != nil {
		return err
	}
	sess, err := s.sessions.AttachStore(r.Context(), c, r.PathValue("session_id"), a)
	if err != nil {
		return err
	}
	return s.writeResource(w, sess, a.StoreID)
}

// resourceUpdate is the body of POST .../resources/{resource_id}: a
// memory store's access and instructions. authorization_token, which the
// SDKs send for repositories, has nothing to rotate in memstore.
type resourceUpdate struct {
	sessionResource
	AuthorizationToken *string `json:"authorization_token"`
}

// updateResource serves POST /v1/sessions/{id}/resources/{resource_id}.
func (s *Server) updateResource(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	var body resourceUpdate
	if err := s.decodeBody(w, r, &body); err != nil {
		return err
	}
	if body.AuthorizationToken != nil && *body.AuthorizationToken != "" {
		return invalid("authorization_token applies to github_repository resources, which memstore does not attach; a memory_store resource takes access and instructions")
	}
	var u memstore.AttachmentUpdate
	if body.Access != nil {
		u.Access = (*memstore.Access)(body.Access)
	}
	in, err := body.instructions("the resource")
	if err != nil {
		return err
	}
	u.Instructions = in
	id := r.PathValue("resource_id")
	sess, err := s.sessions.UpdateAttachment(r.Context(), c, r.PathValue("session_id"), id, u)
	if err != nil {
		return err
	}
	return s.writeResource(w, sess, id)
}

// deleteResource serves DELETE /v1/sessions/{id}/resources/{resource_id}:
// the store is detached, and the session's tokens stop reaching it.
func (s *Server) deleteResource(w *responseWriter, r *http.Request, c *memstore.Caller) error {
	if err := s.readNoBody(w, r); err != nil {
		return err
	}
	id := r.PathValue("resource_id")
	if _, err := s.sessions.DetachStore(r.Context(), c, r.PathValue("session_id"), id); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, ResourceDeleted(id))
	return nil
}

// noAgent answers the SDKs' session events and threads.
func noAgent(*responseWriter, *http.Request, *memstore.Caller) error {
	return memstore.Errorf(memstore.ENotFound, "memstore runs no agent, so its sessions have no threads; "+
		"a session here attaches memory stores to the tokens of an agent that runs elsewhere")
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
		// The memories are turns of conversations, or not; absent, the
		// session and the stores say: see memstore.SearchQuery.Conversation.
		Conversation: p.optionalBoolean("conversation"),
		// lexical, semantic or hybrid; empty for the server's default
		// (memstore.SearchQuery.Mode, checked by the core).
		Mode: p.get("mode"),
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

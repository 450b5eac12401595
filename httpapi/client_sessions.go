package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/memstore/memstore"
)

var (
	_ memstore.SessionService = (*Client)(nil)
	_ memstore.SearchService  = (*Client)(nil)
)

// clientSessionPath is the path of a session.
func clientSessionPath(id string) (string, error) {
	if id == "" {
		return "", memstore.Errorf(memstore.ENotFound, "no session with an empty ID")
	}
	return "/v1/sessions/" + url.PathEscape(id), nil
}

// session converts a wire session, with its workspace as store does.
func (c *Client) session(j *SessionJSON, h http.Header, workspaceID string) *memstore.Session {
	s := j.Session()
	s.WorkspaceID = c.store(&StoreJSON{}, h, workspaceID).WorkspaceID
	return s
}

// sessionToken converts a wire token.
func (c *Client) sessionToken(j *SessionTokenJSON, h http.Header, workspaceID string) *memstore.SessionToken {
	t := j.SessionToken()
	t.WorkspaceID = c.store(&StoreJSON{}, h, workspaceID).WorkspaceID
	return t
}

// CreateSession implements memstore.SessionService (POST /v1/sessions).
func (c *Client) CreateSession(ctx context.Context, caller *memstore.Caller, sc memstore.SessionCreate) (*memstore.Session, *memstore.SessionToken, string, error) {
	workspaceID, err := c.workspace(caller)
	if err != nil {
		return nil, nil, "", err
	}
	if err := memstore.ValidateSessionCreate(sc); err != nil {
		return nil, nil, "", err
	}
	body := map[string]any{}
	for k, v := range sc.Fields {
		body[k] = v
	}
	resources := make([]map[string]any, len(sc.Stores))
	for i, a := range sc.Stores {
		r := map[string]any{"type": typeStore, "memory_store_id": a.StoreID}
		if a.Access != "" {
			r["access"] = a.Access
		}
		if a.Instructions != "" {
			r["instructions"] = a.Instructions
		}
		resources[i] = r
	}
	body["resources"] = resources
	if sc.Title != "" {
		body["title"] = sc.Title
	}
	if sc.Metadata != nil {
		body["metadata"] = sc.Metadata
	}
	if sc.TokenTTL > 0 {
		body["token_expires_in_seconds"] = int64(sc.TokenTTL.Seconds())
	}
	var j SessionJSON
	h, err := c.do(ctx, clientRequest{method: http.MethodPost, path: "/v1/sessions", body: body, workspaceID: workspaceID}, &j)
	if err != nil {
		return nil, nil, "", err
	}
	s := c.session(&j, h, workspaceID)
	tok := &memstore.SessionToken{
		ID: j.TokenID, SessionID: s.ID, WorkspaceID: s.WorkspaceID, Hint: memstore.SecretHint(j.Token),
		CreatedAt: s.CreatedAt, ExpiresAt: timePtr(j.TokenExpiresAt),
	}
	return s, tok, j.Token, nil
}

// Session implements memstore.SessionService (GET /v1/sessions/{id}).
func (c *Client) Session(ctx context.Context, caller *memstore.Caller, id string) (*memstore.Session, error) {
	workspaceID, err := c.workspace(caller)
	if err != nil {
		return nil, err
	}
	p, err := clientSessionPath(id)
	if err != nil {
		return nil, err
	}
	var j SessionJSON
	h, err := c.do(ctx, clientRequest{method: http.MethodGet, path: p, workspaceID: workspaceID}, &j)
	if err != nil {
		return nil, err
	}
	return c.session(&j, h, workspaceID), nil
}

// Sessions implements memstore.SessionService (GET /v1/sessions).
func (c *Client) Sessions(ctx context.Context, caller *memstore.Caller, f memstore.SessionFilter) (memstore.Page[memstore.Session], error) {
	workspaceID, err := c.workspace(caller)
	if err != nil {
		return memstore.Page[memstore.Session]{}, err
	}
	q := clientListQuery(f.Limit, f.Page, false)
	if f.StoreID != "" {
		q.Set("memory_store_id", f.StoreID)
	}
	if f.IncludeArchived {
		q.Set("include_archived", "true")
	}
	if f.AgentID != "" {
		q.Set("agent_id", f.AgentID)
	}
	for _, st := range f.Statuses {
		q.Add("statuses[]", string(st))
	}
	if f.Ascending {
		q.Set("order", "asc")
	}
	for op, t := range map[string]*time.Time{"gt": f.CreatedAtGT, "gte": f.CreatedAtGTE, "lt": f.CreatedAtLT, "lte": f.CreatedAtLTE} {
		if t != nil {
			q.Set("created_at["+op+"]", t.Format(time.RFC3339Nano))
		}
	}
	var j PageJSON[SessionJSON]
	h, err := c.do(ctx, clientRequest{method: http.MethodGet, path: "/v1/sessions", query: q, workspaceID: workspaceID}, &j)
	if err != nil {
		return memstore.Page[memstore.Session]{}, err
	}
	return clientPage(&j, func(s *SessionJSON) memstore.Session { return *c.session(s, h, workspaceID) }), nil
}

// UpdateSession implements memstore.SessionService (POST
// /v1/sessions/{id}); a nil metadata value or field is sent as null, which
// removes it.
func (c *Client) UpdateSession(ctx context.Context, caller *memstore.Caller, id string, u memstore.SessionUpdate) (*memstore.Session, error) {
	workspaceID, err := c.workspace(caller)
	if err != nil {
		return nil, err
	}
	p, err := clientSessionPath(id)
	if err != nil {
		return nil, err
	}
	if err := memstore.ValidateSessionUpdate(u); err != nil {
		return nil, err
	}
	body := map[string]any{}
	for k, v := range u.Fields {
		if v == nil {
			body[k] = nil
		} else {
			body[k] = v
		}
	}
	if u.Title != nil {
		body["title"] = *u.Title
	}
	if u.Metadata != nil {
		body["metadata"] = u.Metadata
	}
	var j SessionJSON
	h, err := c.do(ctx, clientRequest{method: http.MethodPost, path: p, body: body, workspaceID: workspaceID}, &j)
	if err != nil {
		return nil, err
	}
	return c.session(&j, h, workspaceID), nil
}

// DeleteSession implements memstore.SessionService (DELETE
// /v1/sessions/{id}).
func (c *Client) DeleteSession(ctx context.Context, caller *memstore.Caller, id string) error {
	workspaceID, err := c.workspace(caller)
	if err != nil {
		return err
	}
	p, err := clientSessionPath(id)
	if err != nil {
		return err
	}
	var j DeletedJSON
	_, err = c.do(ctx, clientRequest{method: http.MethodDelete, path: p, workspaceID: workspaceID}, &j)
	return err
}

// AttachStore implements memstore.SessionService (POST
// /v1/sessions/{id}/resources), then reads the session as it is now.
func (c *Client) AttachStore(ctx context.Context, caller *memstore.Caller, sessionID string, a memstore.AttachmentCreate) (*memstore.Session, error) {
	body := map[string]any{"type": typeStore, "memory_store_id": a.StoreID}
	if a.Access != "" {
		body["access"] = a.Access
	}
	if a.Instructions != "" {
		body["instructions"] = a.Instructions
	}
	return c.changeResource(ctx, caller, sessionID, http.MethodPost, "", body)
}

// UpdateAttachment implements memstore.SessionService (POST
// /v1/sessions/{id}/resources/{store}), then reads the session.
func (c *Client) UpdateAttachment(ctx context.Context, caller *memstore.Caller, sessionID, storeID string, u memstore.AttachmentUpdate) (*memstore.Session, error) {
	if storeID == "" {
		return nil, errNoResource
	}
	body := map[string]any{}
	if u.Access != nil {
		body["access"] = *u.Access
	}
	if u.Instructions != nil {
		body["instructions"] = *u.Instructions
	}
	return c.changeResource(ctx, caller, sessionID, http.MethodPost, storeID, body)
}

// DetachStore implements memstore.SessionService (DELETE
// /v1/sessions/{id}/resources/{store}), then reads the session.
func (c *Client) DetachStore(ctx context.Context, caller *memstore.Caller, sessionID, storeID string) (*memstore.Session, error) {
	if storeID == "" {
		return nil, errNoResource
	}
	return c.changeResource(ctx, caller, sessionID, http.MethodDelete, storeID, nil)
}

var errNoResource = memstore.Errorf(memstore.ENotFound, "no resource with an empty ID")

// changeResource sends a change to a session's resources (to the
// resource storeID when not "") and returns the session as it is after.
func (c *Client) changeResource(ctx context.Context, caller *memstore.Caller, sessionID, method, storeID string, body any) (*memstore.Session, error) {
	workspaceID, err := c.workspace(caller)
	if err != nil {
		return nil, err
	}
	p, err := clientSessionPath(sessionID)
	if err != nil {
		return nil, err
	}
	p += "/resources"
	if storeID != "" {
		p += "/" + url.PathEscape(storeID)
	}
	var out json.RawMessage
	if _, err := c.do(ctx, clientRequest{method: method, path: p, body: body, workspaceID: workspaceID}, &out); err != nil {
		return nil, err
	}
	return c.Session(ctx, caller, sessionID)
}

// ArchiveSession implements memstore.SessionService (POST
// /v1/sessions/{id}/archive).
func (c *Client) ArchiveSession(ctx context.Context, caller *memstore.Caller, id string) (*memstore.Session, error) {
	workspaceID, err := c.workspace(caller)
	if err != nil {
		return nil, err
	}
	p, err := clientSessionPath(id)
	if err != nil {
		return nil, err
	}
	var j SessionJSON
	h, err := c.do(ctx, clientRequest{method: http.MethodPost, path: p + "/archive", workspaceID: workspaceID}, &j)
	if err != nil {
		return nil, err
	}
	return c.session(&j, h, workspaceID), nil
}

// CreateSessionToken implements memstore.SessionService (POST
// /v1/sessions/{id}/tokens).
func (c *Client) CreateSessionToken(ctx context.Context, caller *memstore.Caller, sessionID string, ttl time.Duration) (*memstore.SessionToken, string, error) {
	workspaceID, err := c.workspace(caller)
	if err != nil {
		return nil, "", err
	}
	p, err := clientSessionPath(sessionID)
	if err != nil {
		return nil, "", err
	}
	var body SessionTokenRequest
	if ttl > 0 {
		secs := int64(ttl.Seconds())
		body.ExpiresInSeconds = &secs
	}
	var j SessionTokenJSON
	h, err := c.do(ctx, clientRequest{method: http.MethodPost, path: p + "/tokens", body: body, workspaceID: workspaceID}, &j)
	if err != nil {
		return nil, "", err
	}
	return c.sessionToken(&j, h, workspaceID), j.Token, nil
}

// SessionTokens implements memstore.SessionService (GET
// /v1/sessions/{id}/tokens).
func (c *Client) SessionTokens(ctx context.Context, caller *memstore.Caller, sessionID string, f memstore.SessionTokenFilter) (memstore.Page[memstore.SessionToken], error) {
	workspaceID, err := c.workspace(caller)
	if err != nil {
		return memstore.Page[memstore.SessionToken]{}, err
	}
	p, err := clientSessionPath(sessionID)
	if err != nil {
		return memstore.Page[memstore.SessionToken]{}, err
	}
	var j PageJSON[SessionTokenJSON]
	h, err := c.do(ctx, clientRequest{method: http.MethodGet, path: p + "/tokens", query: clientListQuery(f.Limit, f.Page, false), workspaceID: workspaceID}, &j)
	if err != nil {
		return memstore.Page[memstore.SessionToken]{}, err
	}
	return clientPage(&j, func(t *SessionTokenJSON) memstore.SessionToken { return *c.sessionToken(t, h, workspaceID) }), nil
}

// RevokeSessionToken implements memstore.SessionService. The API revokes a
// token under its session, so the client first finds the token.
func (c *Client) RevokeSessionToken(ctx context.Context, caller *memstore.Caller, id string) (*memstore.SessionToken, error) {
	workspaceID, err := c.workspace(caller)
	if err != nil {
		return nil, err
	}
	t, err := c.SessionToken(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	p, _ := clientSessionPath(t.SessionID)
	var j SessionTokenJSON
	h, err := c.do(ctx, clientRequest{method: http.MethodPost, path: p + "/tokens/" + url.PathEscape(id) + "/revoke", workspaceID: workspaceID}, &j)
	if err != nil {
		return nil, err
	}
	return c.sessionToken(&j, h, workspaceID), nil
}

// SessionToken implements memstore.SessionService. The API lists tokens
// only by session, so the client walks the workspace's sessions, newest
// first, and each one's tokens.
func (c *Client) SessionToken(ctx context.Context, caller *memstore.Caller, id string) (*memstore.SessionToken, error) {
	f := memstore.SessionFilter{Limit: memstore.MaxPageSize, IncludeArchived: true}
	for {
		page, err := c.Sessions(ctx, caller, f)
		if err != nil {
			return nil, err
		}
		for _, s := range page.Items {
			tf := memstore.SessionTokenFilter{Limit: memstore.MaxPageSize}
			for {
				toks, err := c.SessionTokens(ctx, caller, s.ID, tf)
				if err != nil {
					return nil, err
				}
				for i := range toks.Items {
					if toks.Items[i].ID == id {
						return &toks.Items[i], nil
					}
				}
				if toks.Next == "" {
					break
				}
				tf.Page = toks.Next
			}
		}
		if page.Next == "" {
			return nil, memstore.Errorf(memstore.ENotFound, "session token %s not found", id)
		}
		f.Page = page.Next
	}
}

// AuthenticateSession implements memstore.SessionService over HTTP: it
// asks the server which session secret stands for (a session token lists
// its own session alone), without changing the client's own key. The
// caller it returns is what a client with secret as its key takes as its
// Caller.
func (c *Client) AuthenticateSession(ctx context.Context, secret string) (*memstore.Caller, error) {
	if memstore.CredentialOf(secret) != memstore.SessionTokenCredential {
		return nil, memstore.Errorf(memstore.EUnauthenticated, "the credential is not a session token (those begin with %s)", memstore.SessionTokenPrefix)
	}
	as := *c
	as.APIKey, as.WorkspaceID, as.Caller = secret, "", nil
	page, err := as.Sessions(ctx, nil, memstore.SessionFilter{})
	if err != nil {
		return nil, err
	}
	if len(page.Items) != 1 {
		return nil, memstore.Errorf(memstore.EUnauthenticated, "the credential is not a session token")
	}
	s := &page.Items[0]
	return &memstore.Caller{
		WorkspaceID: s.WorkspaceID,
		Actor:       memstore.Actor{Type: memstore.ActorSession, ID: s.ID},
		Session:     s,
	}, nil
}

// SearchMemories implements memstore.SearchService: GET
// .../memories/search for one store. The API has no search over a list of
// stores, only over a session's: for several stores the client's Caller
// must hold a session with each of them attached (EPermission for one that
// is not, as the server answers), and the client keeps the session's
// results that are in storeIDs (a page may then be shorter than the
// limit).
func (c *Client) SearchMemories(ctx context.Context, caller *memstore.Caller, storeIDs []string, q memstore.SearchQuery) (memstore.Page[memstore.SearchResult], error) {
	var none memstore.Page[memstore.SearchResult]
	workspaceID, err := c.workspace(caller)
	if err != nil {
		return none, err
	}
	if len(storeIDs) > 1 {
		if c.Caller == nil || c.Caller.Session == nil {
			return none, memstore.Errorf(memstore.EInvalid, "the API searches several stores only as a session's: set the client's Caller to its session's (AuthenticateSession)")
		}
		for _, id := range storeIDs {
			if err := c.Caller.CanRead(id); err != nil {
				return none, err
			}
		}
	}
	if err := memstore.ValidateSearchQuery(q); err != nil {
		return none, err
	}
	switch len(storeIDs) {
	case 0:
		return none, nil
	case 1:
		p, err := clientStorePath(storeIDs[0])
		if err != nil {
			return none, err
		}
		return c.search(ctx, workspaceID, p+"/memories/search", q)
	}
	p, _ := clientSessionPath(c.Caller.Session.ID)
	page, err := c.search(ctx, workspaceID, p+"/memories/search", q)
	page.Items = slices.DeleteFunc(page.Items, func(r memstore.SearchResult) bool { return !slices.Contains(storeIDs, r.Memory.StoreID) })
	return page, err
}

// SearchSession searches every store attached to a session (GET
// /v1/sessions/{id}/memories/search).
func (c *Client) SearchSession(ctx context.Context, caller *memstore.Caller, sessionID string, q memstore.SearchQuery) (memstore.Page[memstore.SearchResult], error) {
	workspaceID, err := c.workspace(caller)
	if err != nil {
		return memstore.Page[memstore.SearchResult]{}, err
	}
	p, err := clientSessionPath(sessionID)
	if err != nil {
		return memstore.Page[memstore.SearchResult]{}, err
	}
	return c.search(ctx, workspaceID, p+"/memories/search", q)
}

// search asks path for q, sending workspaceID as anthropic-workspace-id.
func (c *Client) search(ctx context.Context, workspaceID, path string, q memstore.SearchQuery) (memstore.Page[memstore.SearchResult], error) {
	query := clientListQuery(q.Limit, q.Page, false)
	query.Set("q", q.Text)
	if q.PathPrefix != "" {
		query.Set("path_prefix", q.PathPrefix)
	}
	var j PageJSON[SearchResultJSON]
	if _, err := c.do(ctx, clientRequest{method: http.MethodGet, path: path, query: query, workspaceID: workspaceID}, &j); err != nil {
		return memstore.Page[memstore.SearchResult]{}, err
	}
	return clientPage(&j, (*SearchResultJSON).SearchResult), nil
}

// MemoryPrompt returns the memory section of a session's system prompt
// (GET /v1/sessions/{id}/memory_prompt).
func (c *Client) MemoryPrompt(ctx context.Context, caller *memstore.Caller, sessionID string) (string, error) {
	workspaceID, err := c.workspace(caller)
	if err != nil {
		return "", err
	}
	p, err := clientSessionPath(sessionID)
	if err != nil {
		return "", err
	}
	var j MemoryPromptJSON
	if _, err := c.do(ctx, clientRequest{method: http.MethodGet, path: p + "/memory_prompt", workspaceID: workspaceID}, &j); err != nil {
		return "", err
	}
	return j.Prompt, nil
}

package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/memstore/memstore"
)

// clientSessionPath is the path of a session.
func clientSessionPath(id string) (string, error) {
	if id == "" {
		return "", memstore.Errorf(memstore.ENotFound, "no session with an empty ID")
	}
	return "/v1/sessions/" + url.PathEscape(id), nil
}

// sessionIn converts a wire session, in its workspace.
func sessionIn(j *SessionJSON, ws string) *memstore.Session {
	s := j.Session()
	s.WorkspaceID = ws
	return s
}

// tokenIn converts a wire token, in its workspace.
func tokenIn(j *SessionTokenJSON, ws string) *memstore.SessionToken {
	t := j.SessionToken()
	t.WorkspaceID = ws
	return t
}

// CreateSession implements memstore.SessionService (POST /v1/sessions).
func (c *Client) CreateSession(ctx context.Context, caller *memstore.Caller, sc memstore.SessionCreate) (*memstore.Session, *memstore.SessionToken, string, error) {
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
	var tok *memstore.SessionToken
	var secret string
	s, err := call(ctx, c, caller, clientRequest{method: http.MethodPost, path: "/v1/sessions", body: body, err: memstore.ValidateSessionCreate(sc)},
		func(j *SessionJSON, ws string) *memstore.Session {
			s := sessionIn(j, ws)
			tok = &memstore.SessionToken{
				ID: j.TokenID, SessionID: s.ID, WorkspaceID: s.WorkspaceID, Hint: memstore.SecretHint(j.Token),
				CreatedAt: s.CreatedAt, ExpiresAt: timePtr(j.TokenExpiresAt),
			}
			secret = j.Token
			return s
		})
	return s, tok, secret, err
}

// Session implements memstore.SessionService (GET /v1/sessions/{id}).
func (c *Client) Session(ctx context.Context, caller *memstore.Caller, id string) (*memstore.Session, error) {
	p, err := clientSessionPath(id)
	return call(ctx, c, caller, clientRequest{method: http.MethodGet, path: p, err: err}, sessionIn)
}

// Sessions implements memstore.SessionService (GET /v1/sessions).
func (c *Client) Sessions(ctx context.Context, caller *memstore.Caller, f memstore.SessionFilter) (memstore.Page[memstore.Session], error) {
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
	clientCreatedAt(q, f.CreatedAtGT, f.CreatedAtGTE, f.CreatedAtLT, f.CreatedAtLTE)
	return call(ctx, c, caller, clientRequest{method: http.MethodGet, path: "/v1/sessions", query: q},
		pageIn(func(j *SessionJSON, ws string) memstore.Session { return *sessionIn(j, ws) }))
}

// UpdateSession implements memstore.SessionService (POST
// /v1/sessions/{id}); a nil metadata value or field is sent as null, which
// removes it.
func (c *Client) UpdateSession(ctx context.Context, caller *memstore.Caller, id string, u memstore.SessionUpdate) (*memstore.Session, error) {
	p, err := clientSessionPath(id)
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
	return call(ctx, c, caller, clientRequest{method: http.MethodPost, path: p, body: body,
		err: cmp.Or(err, memstore.ValidateSessionUpdate(u))}, sessionIn)
}

// DeleteSession implements memstore.SessionService (DELETE
// /v1/sessions/{id}).
func (c *Client) DeleteSession(ctx context.Context, caller *memstore.Caller, id string) error {
	p, err := clientSessionPath(id)
	_, err = call(ctx, c, caller, clientRequest{method: http.MethodDelete, path: p, err: err}, deletedIn)
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
	p, err := clientSessionPath(sessionID)
	p += "/resources"
	if storeID != "" {
		p += "/" + url.PathEscape(storeID)
	}
	_, err = call(ctx, c, caller, clientRequest{method: method, path: p, body: body, err: err},
		func(*json.RawMessage, string) struct{} { return struct{}{} })
	if err != nil {
		return nil, err
	}
	return c.Session(ctx, caller, sessionID)
}

// ArchiveSession implements memstore.SessionService (POST
// /v1/sessions/{id}/archive).
func (c *Client) ArchiveSession(ctx context.Context, caller *memstore.Caller, id string) (*memstore.Session, error) {
	p, err := clientSessionPath(id)
	return call(ctx, c, caller, clientRequest{method: http.MethodPost, path: p + "/archive", err: err}, sessionIn)
}

// CreateSessionToken implements memstore.SessionService (POST
// /v1/sessions/{id}/tokens).
func (c *Client) CreateSessionToken(ctx context.Context, caller *memstore.Caller, sessionID string, ttl time.Duration) (*memstore.SessionToken, string, error) {
	p, err := clientSessionPath(sessionID)
	var body SessionTokenRequest
	if ttl > 0 {
		secs := int64(ttl.Seconds())
		body.ExpiresInSeconds = &secs
	}
	var secret string
	t, err := call(ctx, c, caller, clientRequest{method: http.MethodPost, path: p + "/tokens", body: body, err: err},
		func(j *SessionTokenJSON, ws string) *memstore.SessionToken {
			secret = j.Token
			return tokenIn(j, ws)
		})
	return t, secret, err
}

// SessionTokens implements memstore.SessionService (GET
// /v1/sessions/{id}/tokens).
func (c *Client) SessionTokens(ctx context.Context, caller *memstore.Caller, sessionID string, f memstore.SessionTokenFilter) (memstore.Page[memstore.SessionToken], error) {
	p, err := clientSessionPath(sessionID)
	return call(ctx, c, caller, clientRequest{method: http.MethodGet, path: p + "/tokens", query: clientListQuery(f.Limit, f.Page, false), err: err},
		pageIn(func(j *SessionTokenJSON, ws string) memstore.SessionToken { return *tokenIn(j, ws) }))
}

// RevokeSessionToken implements memstore.SessionService. The API revokes a
// token under its session, so the client first finds the token.
func (c *Client) RevokeSessionToken(ctx context.Context, caller *memstore.Caller, id string) (*memstore.SessionToken, error) {
	t, err := c.SessionToken(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	p, _ := clientSessionPath(t.SessionID)
	return call(ctx, c, caller, clientRequest{method: http.MethodPost, path: p + "/tokens/" + url.PathEscape(id) + "/revoke"}, tokenIn)
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
// must hold a session, and the client keeps the results of the session's
// stores that are in storeIDs (a page may then be shorter than the
// limit). The server decides what the session reaches: a store its
// Caller does not show attached is searched alone first, so that the
// server's refusal is the answer.
func (c *Client) SearchMemories(ctx context.Context, caller *memstore.Caller, storeIDs []string, q memstore.SearchQuery) (memstore.Page[memstore.SearchResult], error) {
	var none memstore.Page[memstore.SearchResult]
	if _, err := c.workspace(caller); err != nil {
		return none, err
	}
	if len(storeIDs) > 1 {
		if c.Caller == nil || c.Caller.Session == nil {
			return none, memstore.Errorf(memstore.EInvalid, "the API searches several stores only as a session's: set the client's Caller to its session's (AuthenticateSession)")
		}
		// A store the client's copy of the session does not show is asked
		// of the server alone, for one result: its refusal (the core
		// checks access before input) is the answer, and a store attached
		// since is searched with the others below.
		for _, id := range storeIDs {
			if c.Caller.Session.Attachment(id) == nil {
				p, err := clientStorePath(id)
				if _, err := c.search(ctx, caller, p, err, memstore.SearchQuery{Text: q.Text, Limit: 1}); err != nil {
					return none, err
				}
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
		return c.search(ctx, caller, p, err, q)
	}
	p, err := clientSessionPath(c.Caller.Session.ID)
	page, err := c.search(ctx, caller, p, err, q)
	page.Items = slices.DeleteFunc(page.Items, func(r memstore.SearchResult) bool { return !slices.Contains(storeIDs, r.Memory.StoreID) })
	return page, err
}

// SearchSession searches every store attached to a session (GET
// /v1/sessions/{id}/memories/search).
func (c *Client) SearchSession(ctx context.Context, caller *memstore.Caller, sessionID string, q memstore.SearchQuery) (memstore.Page[memstore.SearchResult], error) {
	p, err := clientSessionPath(sessionID)
	return c.search(ctx, caller, p, err, q)
}

// search asks the store or session at path for q; pathErr is the
// path's error.
func (c *Client) search(ctx context.Context, caller *memstore.Caller, path string, pathErr error, q memstore.SearchQuery) (memstore.Page[memstore.SearchResult], error) {
	query := clientListQuery(q.Limit, q.Page, false)
	query.Set("q", q.Text)
	if q.PathPrefix != "" {
		query.Set("path_prefix", q.PathPrefix)
	}
	if q.Conversation != nil {
		query.Set("conversation", strconv.FormatBool(*q.Conversation))
	}
	if q.Mode != "" {
		query.Set("mode", q.Mode)
	}
	return call(ctx, c, caller, clientRequest{method: http.MethodGet, path: path + "/memories/search", query: query, err: pathErr},
		pageIn(func(j *SearchResultJSON, _ string) memstore.SearchResult { return j.SearchResult() }))
}

// MemoryPrompt returns the memory section of a session's system prompt
// (GET /v1/sessions/{id}/memory_prompt).
func (c *Client) MemoryPrompt(ctx context.Context, caller *memstore.Caller, sessionID string) (string, error) {
	p, err := clientSessionPath(sessionID)
	return call(ctx, c, caller, clientRequest{method: http.MethodGet, path: p + "/memory_prompt", err: err},
		func(j *MemoryPromptJSON, _ string) string { return j.Prompt })
}

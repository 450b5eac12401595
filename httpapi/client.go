package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/origin"
)

var _ memstore.Services = (*Client)(nil)

// clientUserAgent names the client to the server.
const clientUserAgent = "memstore-client"

// SetHeaders sets the headers of an API request: the key, and the API
// version and beta of the official Go SDK, so that a server in strict-header
// mode accepts it.
func SetHeaders(h http.Header, apiKey string) {
	h.Set("x-api-key", apiKey)
	h.Set("anthropic-version", APIVersion)
	h.Set("anthropic-beta", BetaMemory)
}

// clientMaxResponseBytes bounds a response body read into memory. The
// largest legitimate answer, a full-view page of 20 memories of 100 kB,
// each byte escaped at worst six times, is well under it.
const clientMaxResponseBytes = 64 << 20

// Client is a Go client of the memory stores API: it implements
// memstore.Services over HTTP, against a memstore server or any server of the
// same wire contract. It is a remote core: the server authenticates each
// request, decides what its credential may do, and records every change as
// made by it.
//
// A client acts as its credential (APIKey) and never on behalf of anyone
// else. The caller argument of each method says so:
//
//   - nil is the credential's own caller, whoever that is: the usual
//     argument.
//   - A caller that is not nil must be the one the credential stands for,
//     which the client knows only once its Caller is set: of the same
//     workspace and actor (EPermission otherwise), and a client whose
//     Caller is nil takes none (EInvalid). Either is refused before any
//     request.
//
// Errors the server reports come back as *memstore.Error with the API's
// error type as Code; anything else (an unreachable server, an answer that
// is not the API's JSON) is an ordinary error naming the URL, never the
// key.
//
// The client does not retry: an error's Retry field says whether the server
// invited a retry (x-should-retry: true).
type Client struct {
	// BaseURL is the server's address without /v1, as the official SDKs
	// take it, e.g. http://localhost:8080.
	BaseURL string
	// APIKey is sent as x-api-key: an API key or a session token.
	APIKey string
	// HTTPClient makes the requests; http.DefaultClient when nil. Whichever
	// it is, the client follows a redirect only on the server of BaseURL
	// (see sameServer).
	HTTPClient *http.Client
	// WorkspaceID, when set, is sent as anthropic-workspace-id with every
	// request, and the server refuses the request unless the credential
	// is of that workspace (EPermission). Otherwise the workspace of a
	// known caller is sent, and without one none: a credential belongs
	// to one workspace.
	WorkspaceID string
	// Caller is who APIKey stands for, when known (AuthenticateSession
	// tells it for a session token); nil otherwise. Set, it lets the
	// methods take that caller, and with a session, SearchMemories
	// searches several of the session's stores at once.
	Caller *memstore.Caller
}

// NewClient returns a client of the server at baseURL (without /v1) that
// authenticates with apiKey.
func NewClient(baseURL, apiKey string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), APIKey: apiKey}
}

// clientRequest is one API call.
type clientRequest struct {
	method      string
	path        string // below the base URL, each ID already escaped
	query       url.Values
	body        any    // JSON-encoded when not nil
	workspaceID string // the anthropic-workspace-id header, "" for none
	// err is why the call cannot be made, found while making it (an
	// empty ID, text that JSON cannot carry): it is returned unsent.
	err error
}

// send sends r, asking for an answer of type accept, and returns the
// response, whose body the caller closes, and the request as messages
// name it (no query, no key).
func (c *Client) send(ctx context.Context, r clientRequest, accept string) (res *http.Response, where string, err error) {
	base := strings.TrimRight(c.BaseURL, "/")
	where = r.method + " " + base + r.path
	u := base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return nil, where, fmt.Errorf("%s: encode request: %w", where, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, where, fmt.Errorf("%s: %w", where, err)
	}
	SetHeaders(req.Header, c.APIKey)
	req.Header.Set("accept", accept)
	req.Header.Set("user-agent", clientUserAgent)
	if r.body != nil {
		req.Header.Set("content-type", "application/json")
	}
	if r.workspaceID != "" {
		req.Header.Set("anthropic-workspace-id", r.workspaceID)
	}

	res, err = c.httpClient().Do(req)
	if err != nil {
		// err is a *url.Error naming the URL; the key travels in a header
		// and so never appears in it.
		return nil, where, fmt.Errorf("memory stores API at %s: %w", base, err)
	}
	return res, where, nil
}

// clientMaxRedirects is how many redirects on its own server a request
// follows, as net/http's default does.
const clientMaxRedirects = 10

// httpClient is the HTTP client a request goes out with: HTTPClient (or
// the default), whose own redirect policy still applies, confined to the
// server the request was first sent to.
func (c *Client) httpClient() *http.Client {
	base := c.HTTPClient
	if base == nil {
		base = http.DefaultClient
	}
	hc := *base
	own := base.CheckRedirect
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := sameServer(req, via); err != nil {
			return err
		}
		if own != nil {
			return own(req, via)
		}
		if len(via) >= clientMaxRedirects {
			return fmt.Errorf("stopped after %d redirects", clientMaxRedirects)
		}
		return nil
	}
	return &hc
}

// sameServer refuses a redirect away from the first request's scheme,
// host and port. The credential travels in headers (x-api-key, and
// anthropic-workspace-id beside it) that net/http would copy to any host,
// and a server is one scheme, host and port: another port of the same
// host may be another program. So the client never sends its credential
// where it was not given: a server that moved is named in the error, to
// be given as the base URL by someone who trusts it.
func sameServer(req *http.Request, via []*http.Request) error {
	if !origin.Same(req.URL, via[0].URL) {
		return fmt.Errorf("redirected to another server, %s; the client sends its credential only to the server it was given (give that address instead if it is the one meant)", origin.Of(req.URL))
	}
	return nil
}

// prepare readies r to be sent as caller: the client may call as caller
// (see Client), and r has no error; r goes in caller's workspace.
func (c *Client) prepare(caller *memstore.Caller, r clientRequest) (clientRequest, error) {
	ws, err := c.workspace(caller)
	if err != nil {
		return r, err
	}
	r.workspaceID = ws
	return r, r.err
}

// call makes the API call r as caller and converts its answer, a W, with
// conv, given the workspace the answer is of: the one the server names
// (anthropic-workspace-id) or, failing that, the one asked for.
func call[W, T any](ctx context.Context, c *Client, caller *memstore.Caller, r clientRequest, conv func(j *W, workspaceID string) T) (T, error) {
	var zero T
	r, err := c.prepare(caller, r)
	if err != nil {
		return zero, err
	}
	var j W
	h, err := c.do(ctx, r, &j)
	if err != nil {
		return zero, err
	}
	ws := h.Get("anthropic-workspace-id")
	if ws == "" {
		ws = r.workspaceID
	}
	return conv(&j, ws), nil
}

// do sends r and decodes a successful answer into out. It returns the
// answer's headers.
func (c *Client) do(ctx context.Context, r clientRequest, out any) (http.Header, error) {
	res, where, err := c.send(ctx, r, "application/json")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, clientMaxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: read the answer: %w", where, err)
	}
	if len(data) > clientMaxResponseBytes {
		return nil, fmt.Errorf("%s: the answer is larger than %d bytes", where, clientMaxResponseBytes)
	}

	if res.StatusCode < 200 || res.StatusCode > 299 {
		return nil, clientError(where, res, data)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, fmt.Errorf("%s: the server answered %s with a body that is not the memory stores API's JSON (%s): %w",
			where, res.Status, clientDescribeBody(res, data), err)
	}
	return res.Header, nil
}

// clientRetryAfter is how long an error answer asks to wait before a
// retry, as the SDKs read it: retry-after-ms, else retry-after in whole
// seconds; 0 when it says nothing usable.
func clientRetryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 && ms < 1e9 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s > 0 && s < 1e6 {
		return time.Duration(s) * time.Second
	}
	return 0
}

// clientError turns an error answer into a *memstore.Error, or into a
// plain error when it is not the API's error envelope (a proxy's page, a
// server of another API).
func clientError(where string, res *http.Response, data []byte) error {
	var env ErrorJSON
	if json.Unmarshal(data, &env) != nil || env.Error.Type == "" {
		return fmt.Errorf("%s: the server answered %s without the memory stores API's error object (%s)",
			where, res.Status, clientDescribeBody(res, data))
	}
	e := &memstore.Error{
		Code:       env.Error.Type,
		Message:    env.Error.Message,
		Detail:     env.Error.Detail,
		Retry:      res.Header.Get("x-should-retry") == "true",
		RetryAfter: clientRetryAfter(res.Header),
	}
	if e.Message == "" {
		e.Message = fmt.Sprintf("%s (%s)", env.Error.Type, res.Status)
	}
	if p := env.Error.ConflictingMemoryID; p != nil {
		e.ConflictingMemoryID = *p
	}
	if p := env.Error.ConflictingPath; p != nil {
		e.ConflictingPath = *p
	}
	return e
}

// clientDescribeBody says what an unexpected body is, with a short
// printable excerpt to recognise it by (a proxy's error page, a wrong base
// URL). A JSON body gets no excerpt: it may hold memory content.
func clientDescribeBody(res *http.Response, data []byte) string {
	ct := res.Header.Get("content-type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		ct = mt
	}
	if ct == "" {
		ct = "no content-type"
	}
	switch {
	case len(data) == 0:
		return ct + ", empty"
	case json.Valid(data):
		return ct + ", JSON of another shape"
	}
	const max = 80
	excerpt := data
	if len(excerpt) > max {
		excerpt = excerpt[:max]
	}
	s := strings.Map(func(r rune) rune {
		if r < ' ' || r == utf8.RuneError {
			return ' '
		}
		return r
	}, string(excerpt))
	if len(data) > max {
		s += "..."
	}
	return fmt.Sprintf("%s: %q", ct, strings.TrimSpace(s))
}

// clientCheckText refuses strings that JSON cannot carry byte for byte,
// given as pairs of a field name and its value: encoding/json would
// replace invalid UTF-8 with U+FFFD, and the server would store (and hash)
// something other than what the caller gave.
func clientCheckText(fieldsAndValues ...string) error {
	for i := 0; i+1 < len(fieldsAndValues); i += 2 {
		if !utf8.ValidString(fieldsAndValues[i+1]) {
			return memstore.Errorf(memstore.EInvalid, "%s is not valid UTF-8", fieldsAndValues[i])
		}
	}
	return nil
}

// clientStorePath is the path of a store. An empty ID names nothing (and
// would turn the path into another endpoint's), so it is ENotFound without
// a request.
func clientStorePath(storeID string) (string, error) {
	if storeID == "" {
		return "", memstore.Errorf(memstore.ENotFound, "no memory store with an empty ID")
	}
	return "/v1/memory_stores/" + url.PathEscape(storeID), nil
}

// clientItemPath is the path of a memory or version (a noun) in collection
// ("memories" or "memory_versions") of a store.
func clientItemPath(storeID, collection, noun, id string) (string, error) {
	p, err := clientStorePath(storeID)
	if err != nil {
		return "", err
	}
	if id == "" {
		return "", memstore.Errorf(memstore.ENotFound, "no %s with an empty ID", noun)
	}
	return p + "/" + collection + "/" + url.PathEscape(id), nil
}

// pageIn converts a page of wire items with conv, each in the page's
// workspace.
func pageIn[W, T any](conv func(j *W, workspaceID string) T) func(*PageJSON[W], string) memstore.Page[T] {
	return func(p *PageJSON[W], ws string) memstore.Page[T] {
		out := memstore.Page[T]{Items: make([]T, 0, len(p.Data))}
		for i := range p.Data {
			out.Items = append(out.Items, conv(&p.Data[i], ws))
		}
		if p.NextPage != nil {
			out.Next = *p.NextPage
		}
		return out
	}
}

// The conversions of the answers the client decodes.
func storeIn(j *StoreJSON, ws string) *memstore.Store {
	st := j.Store()
	st.WorkspaceID = ws
	return st
}

func memoryIn(j *MemoryJSON, _ string) *memstore.Memory    { return j.Memory() }
func versionIn(j *VersionJSON, _ string) *memstore.Version { return j.Version() }
func deletedIn(*DeletedJSON, string) struct{}              { return struct{}{} }

// clientListQuery starts the query of a list with its paging parameters;
// zero values are left to the server's defaults.
func clientListQuery(limit int, page string, full bool) url.Values {
	q := url.Values{}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if page != "" {
		q.Set("page", page)
	}
	if full {
		q.Set("view", "full")
	}
	return q
}

// clientCreatedAt adds the created_at bounds a filter has (nil for
// none) as created_at[gt], [gte], [lt] and [lte], in RFC 3339 with the
// caller's zone (bounds are instants).
func clientCreatedAt(q url.Values, gt, gte, lt, lte *time.Time) {
	for _, b := range []struct {
		op string
		at *time.Time
	}{{"gt", gt}, {"gte", gte}, {"lt", lt}, {"lte", lte}} {
		if b.at != nil {
			q.Set("created_at["+b.op+"]", b.at.Format(time.RFC3339Nano))
		}
	}
}

// clientView is the query asking for a memory or version with its content,
// as the domain's methods return them.
var clientView = url.Values{"view": {"full"}}

// workspace checks that the client may call as caller (see Client) and
// returns the anthropic-workspace-id to send.
func (c *Client) workspace(caller *memstore.Caller) (string, error) {
	switch {
	case caller == nil:
		return c.WorkspaceID, nil
	case c.Caller == nil:
		return "", memstore.Errorf(memstore.EInvalid,
			"this client acts as its credential, whose caller it does not know, so it cannot call as %s %s: pass no caller, or set the client's Caller",
			caller.Actor.Type, caller.Actor.ID)
	case caller.WorkspaceID != c.Caller.WorkspaceID || caller.Actor != c.Caller.Actor:
		return "", memstore.Errorf(memstore.EPermission,
			"this client acts only as its credential, %s %s of workspace %s, not as %s %s of workspace %s",
			c.Caller.Actor.Type, c.Caller.Actor.ID, c.Caller.WorkspaceID, caller.Actor.Type, caller.Actor.ID, caller.WorkspaceID)
	case c.WorkspaceID != "":
		return c.WorkspaceID, nil
	}
	return caller.WorkspaceID, nil
}

// CreateStore implements memstore.StoreService (POST /v1/memory_stores).
func (c *Client) CreateStore(ctx context.Context, caller *memstore.Caller, sc memstore.StoreCreate) (*memstore.Store, error) {
	body := StoreCreateRequest{Name: &sc.Name, Metadata: sc.Metadata}
	if sc.Description != "" {
		body.Description = &sc.Description
	}
	return call(ctx, c, caller, clientRequest{method: http.MethodPost, path: "/v1/memory_stores", body: body,
		err: clientCheckStoreText(&sc.Name, &sc.Description, sc.Metadata, nil)}, storeIn)
}

// clientCheckStoreText checks the text fields of a store create or update.
func clientCheckStoreText(name, description *string, md map[string]string, patch map[string]*string) error {
	if name != nil {
		if err := clientCheckText("name", *name); err != nil {
			return err
		}
	}
	if description != nil {
		if err := clientCheckText("description", *description); err != nil {
			return err
		}
	}
	for k, v := range md {
		if err := clientCheckText("metadata key", k, "metadata value", v); err != nil {
			return err
		}
	}
	for k, v := range patch {
		if err := clientCheckText("metadata key", k); err != nil {
			return err
		}
		if v != nil {
			if err := clientCheckText("metadata value", *v); err != nil {
				return err
			}
		}
	}
	return nil
}

// Store implements memstore.StoreService (GET /v1/memory_stores/{id}).
func (c *Client) Store(ctx context.Context, caller *memstore.Caller, id string) (*memstore.Store, error) {
	p, err := clientStorePath(id)
	return call(ctx, c, caller, clientRequest{method: http.MethodGet, path: p, err: err}, storeIn)
}

// Stores implements memstore.StoreService (GET /v1/memory_stores).
func (c *Client) Stores(ctx context.Context, caller *memstore.Caller, f memstore.StoreFilter) (memstore.Page[memstore.Store], error) {
	q := clientListQuery(f.Limit, f.Page, false)
	if f.IncludeArchived {
		q.Set("include_archived", "true")
	}
	clientCreatedAt(q, nil, f.CreatedAtGTE, nil, f.CreatedAtLTE)
	return call(ctx, c, caller, clientRequest{method: http.MethodGet, path: "/v1/memory_stores", query: q},
		pageIn(func(j *StoreJSON, ws string) memstore.Store { return *storeIn(j, ws) }))
}

// UpdateStore implements memstore.StoreService (POST
// /v1/memory_stores/{id}); a nil metadata value is sent as null, which
// removes the key.
func (c *Client) UpdateStore(ctx context.Context, caller *memstore.Caller, id string, u memstore.StoreUpdate) (*memstore.Store, error) {
	p, err := clientStorePath(id)
	body := StoreUpdateRequest{Name: u.Name, Description: u.Description, Metadata: u.Metadata}
	return call(ctx, c, caller, clientRequest{method: http.MethodPost, path: p, body: body,
		err: cmp.Or(err, clientCheckStoreText(u.Name, u.Description, nil, u.Metadata))}, storeIn)
}

// ArchiveStore implements memstore.StoreService (POST
// /v1/memory_stores/{id}/archive, without a body, like the SDKs).
func (c *Client) ArchiveStore(ctx context.Context, caller *memstore.Caller, id string) (*memstore.Store, error) {
	p, err := clientStorePath(id)
	return call(ctx, c, caller, clientRequest{method: http.MethodPost, path: p + "/archive", err: err}, storeIn)
}

// DeleteStore implements memstore.StoreService (DELETE
// /v1/memory_stores/{id}).
func (c *Client) DeleteStore(ctx context.Context, caller *memstore.Caller, id string) error {
	p, err := clientStorePath(id)
	_, err = call(ctx, c, caller, clientRequest{method: http.MethodDelete, path: p, err: err}, deletedIn)
	return err
}

// errUpsert refuses an upsert, which the wire cannot ask for.
var errUpsert error = memstore.Errorf(memstore.EInvalid, "upsert cannot be requested over the memory stores API: a create at an occupied path is a conflict unless the server itself runs with --create-existing upsert")

// CreateMemory implements memstore.MemoryService (POST .../memories, with
// view=full so that the memory comes back with its content). IfNotExists
// is sent as the precondition {"type": "not_exists"}. Upsert cannot be
// asked for on the wire, where it is the server's choice
// (--create-existing upsert), so it is EInvalid.
func (c *Client) CreateMemory(ctx context.Context, caller *memstore.Caller, storeID string, mc memstore.MemoryCreate) (*memstore.Memory, error) {
	var upsert error
	if mc.Upsert {
		upsert = errUpsert
	}
	p, err := clientStorePath(storeID)
	body := MemoryCreateRequest{Path: &mc.Path, Content: &mc.Content}
	if mc.IfNotExists {
		body.Precondition = &Precondition{Type: PreconditionNotExists}
	}
	return call(ctx, c, caller, clientRequest{method: http.MethodPost, path: p + "/memories", query: clientView, body: body,
		err: cmp.Or(upsert, err, clientCheckText("path", mc.Path, "content", mc.Content))}, memoryIn)
}

// Memory implements memstore.MemoryService (GET .../memories/{id}).
func (c *Client) Memory(ctx context.Context, caller *memstore.Caller, storeID, id string) (*memstore.Memory, error) {
	p, err := clientItemPath(storeID, "memories", "memory", id)
	return call(ctx, c, caller, clientRequest{method: http.MethodGet, path: p, query: clientView, err: err}, memoryIn)
}

// Memories implements memstore.MemoryService (GET .../memories).
func (c *Client) Memories(ctx context.Context, caller *memstore.Caller, storeID string, f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
	p, err := clientStorePath(storeID)
	q := clientListQuery(f.Limit, f.Page, f.Full)
	if f.PathPrefix != "" {
		q.Set("path_prefix", f.PathPrefix)
	}
	if f.Depth != 0 {
		q.Set("depth", strconv.Itoa(f.Depth))
	}
	return call(ctx, c, caller, clientRequest{method: http.MethodGet, path: p + "/memories", query: q, err: err},
		pageIn(func(j *ListItemJSON, _ string) memstore.ListItem { return j.ListItem() }))
}

// errTwoPreconditions refuses an update with both preconditions, which
// the wire has no room for.
var errTwoPreconditions error = memstore.Errorf(memstore.EInvalid, "an update takes one precondition: content_sha256 or not_exists, not both")

// UpdateMemory implements memstore.MemoryService (POST .../memories/{id},
// with view=full). IfSHA256 is sent as the content_sha256 precondition and
// RenameIfFree as not_exists; the wire has room for one precondition, so
// both at once are EInvalid.
func (c *Client) UpdateMemory(ctx context.Context, caller *memstore.Caller, storeID, id string, u memstore.MemoryUpdate) (*memstore.Memory, error) {
	p, err := clientItemPath(storeID, "memories", "memory", id)
	body := MemoryUpdateRequest{Content: u.Content, Path: u.Path}
	if u.Content != nil {
		err = cmp.Or(err, clientCheckText("content", *u.Content))
	}
	if u.Path != nil {
		err = cmp.Or(err, clientCheckText("path", *u.Path))
	}
	switch {
	case u.IfSHA256 != "" && u.RenameIfFree:
		err = cmp.Or(err, errTwoPreconditions)
	case u.IfSHA256 != "":
		sum := u.IfSHA256
		body.Precondition = &Precondition{Type: PreconditionSHA256, ContentSHA256: &sum}
	case u.RenameIfFree:
		body.Precondition = &Precondition{Type: PreconditionNotExists}
	}
	return call(ctx, c, caller, clientRequest{method: http.MethodPost, path: p, query: clientView, body: body, err: err}, memoryIn)
}

// DeleteMemory implements memstore.MemoryService (DELETE
// .../memories/{id}, ifSHA256 as expected_content_sha256).
func (c *Client) DeleteMemory(ctx context.Context, caller *memstore.Caller, storeID, id, ifSHA256 string) error {
	p, err := clientItemPath(storeID, "memories", "memory", id)
	var q url.Values
	if ifSHA256 != "" {
		q = url.Values{"expected_content_sha256": {ifSHA256}}
	}
	_, err = call(ctx, c, caller, clientRequest{method: http.MethodDelete, path: p, query: q, err: err}, deletedIn)
	return err
}

// Versions implements memstore.VersionService (GET .../memory_versions).
func (c *Client) Versions(ctx context.Context, caller *memstore.Caller, storeID string, f memstore.VersionFilter) (memstore.Page[memstore.Version], error) {
	p, err := clientStorePath(storeID)
	q := clientListQuery(f.Limit, f.Page, f.Full)
	for k, v := range map[string]string{
		"memory_id":          f.MemoryID,
		"operation":          string(f.Operation),
		"session_id":         f.SessionID,
		"api_key_id":         f.APIKeyID,
		"service_account_id": f.ServiceAccountID,
	} {
		if v != "" {
			q.Set(k, v)
		}
	}
	clientCreatedAt(q, nil, f.CreatedAtGTE, nil, f.CreatedAtLTE)
	return call(ctx, c, caller, clientRequest{method: http.MethodGet, path: p + "/memory_versions", query: q, err: err},
		pageIn(func(j *VersionJSON, _ string) memstore.Version { return *j.Version() }))
}

// Version implements memstore.VersionService (GET
// .../memory_versions/{id}).
func (c *Client) Version(ctx context.Context, caller *memstore.Caller, storeID, id string) (*memstore.Version, error) {
	p, err := clientItemPath(storeID, "memory_versions", "memory version", id)
	return call(ctx, c, caller, clientRequest{method: http.MethodGet, path: p, query: clientView, err: err}, versionIn)
}

// RedactVersion implements memstore.VersionService (POST
// .../memory_versions/{id}/redact, without a body, like the SDKs). The
// server records the redaction as made by the request's credential.
func (c *Client) RedactVersion(ctx context.Context, caller *memstore.Caller, storeID, id string) (*memstore.Version, error) {
	p, err := clientItemPath(storeID, "memory_versions", "memory version", id)
	return call(ctx, c, caller, clientRequest{method: http.MethodPost, path: p + "/redact", err: err}, versionIn)
}

package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/agenttool"
	"github.com/memstore/memstore/internal/heldcallers"
	"github.com/memstore/memstore/internal/netlimit"
	"github.com/memstore/memstore/internal/sse"
)

// HandlerConfig is what the streamable HTTP handler is made of. Limits
// left at 0 take their defaults.
type HandlerConfig struct {
	Sessions memstore.SessionService // authenticates the tokens
	Services agenttool.Services      // what the tools run on
	Version  string
	Logger   *slog.Logger // nil discards

	// IdleTimeout closes an MCP session that has sent no request for this
	// long (an open GET stream is no request); 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxSessionsPerSession caps the MCP sessions open at once for one
	// memstore session: opening one more closes the least recently used.
	// 0 means DefaultMaxSessionsPerSession.
	MaxSessionsPerSession int
	// MaxSessionsPerWorkspace caps the MCP sessions open at once for
	// one workspace, its share of MaxSessions: at it, opening one more
	// closes the least recently used of the memstore session's own, and
	// is refused (429) if it has none. 0 means
	// DefaultMaxSessionsPerWorkspace(MaxSessions); as many as
	// MaxSessions means no share.
	MaxSessionsPerWorkspace int
	// MaxSessions caps the MCP sessions open at once on the server: at
	// it, a request that would open one (any POST without an
	// Mcp-Session-Id) closes the least recently used session of the
	// workspace holding the most, if that one holds at least two more
	// than the request's, and is refused (503) otherwise. 0 means
	// DefaultMaxSessions.
	MaxSessions int
	// MaxBodyBytes caps a request body (413 beyond); 0 means the SDK's
	// default, mcp.DefaultMaxRequestBodyBytes. A request that may open an
	// MCP session is capped lower, at MaxOpeningBodyBytes.
	MaxBodyBytes int64
	// AllowedOrigins are the origins (SCHEME://HOST[:PORT]; those
	// NormalizeOrigin refuses are ignored) of the web pages that may use
	// the endpoint besides the server's own. Requests without an Origin
	// header, which browsers send with every request a page of another
	// site could make, are from other programs and allowed.
	AllowedOrigins []string
	// Registry, when set, receives the gauge memstore_mcp_sessions.
	Registry prometheus.Registerer
	// StreamHeartbeat is how often an idle GET stream sends a comment;
	// 0 means sse.DefaultHeartbeat.
	StreamHeartbeat time.Duration
}

// MaxOpeningBodyBytes caps the body of a request without an MCP session
// (no Mcp-Session-Id header), which may open one: a session keeps its
// initialize parameters for as long as it lives, and an initialize needs
// well under a kilobyte.
const MaxOpeningBodyBytes = 64 << 10

// HTTPHandler serves the tools over streamable HTTP.
//
// Every request must carry a session token as "Authorization: Bearer ..."
// (401 otherwise, with a WWW-Authenticate header). The token is checked on
// every request, so a revoked token stops working at once, and an MCP
// session is bound to the memstore session that opened it: another
// session's token cannot use it. MCP sessions are bounded (see
// HandlerConfig) and closed as soon as the token that opened them stops
// working, when the backend tells of it (memstore.RevocationNotifier), or
// expires.
type HTTPHandler struct {
	sessionsSvc memstore.SessionService
	services    agenttool.Services
	version     string
	log         *slog.Logger
	idle        time.Duration
	heartbeat   time.Duration
	maxBody     int64
	origins     map[string]bool
	sdk         http.Handler
	open        *sessions
	made        func(*mcp.Server) // for tests: told of each server serveNew makes
}

// Handler returns the streamable HTTP handler of c. Close it when the
// server shuts down.
func Handler(c HandlerConfig) *HTTPHandler {
	h := &HTTPHandler{
		sessionsSvc: c.Sessions, services: c.Services, version: c.Version, log: c.Logger,
		idle: orDefault(c.IdleTimeout, DefaultIdleTimeout), heartbeat: orDefault(c.StreamHeartbeat, sse.DefaultHeartbeat), maxBody: orDefault(c.MaxBodyBytes, mcp.DefaultMaxRequestBodyBytes),
		origins: map[string]bool{},
	}
	maxSessions := orDefault(c.MaxSessions, DefaultMaxSessions)
	// An MCP session stands on its token alone: its stores are read
	// again on each request.
	held := heldcallers.New(func(ctx context.Context, caller *memstore.Caller, _ string) error {
		return memstore.CheckHeld(ctx, c.Sessions, caller, "")
	}, c.Sessions)
	h.open = newSessions(orDefault(c.MaxSessionsPerSession, DefaultMaxSessionsPerSession),
		orDefault(c.MaxSessionsPerWorkspace, DefaultMaxSessionsPerWorkspace(maxSessions)), maxSessions, held)
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	for _, o := range c.AllowedOrigins {
		if n, err := NormalizeOrigin(o); err == nil {
			h.origins[n] = true
		}
	}
	sdk := mcp.NewStreamableHTTPHandler(serverOf, &mcp.StreamableHTTPOptions{
		Logger: h.log, SessionTimeout: h.idle, MaxRequestBodyBytes: h.maxBody,
	})
	// The SDK binds each MCP session to the memstore session that opened
	// it too, from the token info.
	h.sdk = auth.RequireBearerToken(tokenInfo, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(sdk)
	if c.Registry != nil {
		// A second handler on the same registry leaves the first's gauge.
		c.Registry.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "memstore_mcp_sessions",
			Help: "MCP sessions open over streamable HTTP.",
		}, func() float64 { return float64(h.open.count()) }))
	}
	return h
}

// orDefault is v, or def when v is 0 or less.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// OpenSessions is the number of MCP sessions open (see sessions.count).
func (h *HTTPHandler) OpenSessions() int { return h.open.count() }

// Close readies the handler for the server's shutdown: it refuses new MCP
// sessions and GET streams, ends the open GET streams (clients hold one
// open for as long as they run, which would hold the shutdown up), and
// closes every MCP session as soon as its requests in progress have been
// answered. It stops listening for revocations, and ends and waits for
// the tokens being read again, so that none reads a database closed
// after it. Call it when the server begins to shut down
// (http.Server.RegisterOnShutdown); calling it again is harmless.
func (h *HTTPHandler) Close() {
	h.open.shutdown()
	h.open.held.Close()
}

// sessionIDHeader names the MCP session of a request.
const sessionIDHeader = "Mcp-Session-Id"

// ServeHTTP checks the request's origin and token, then lets the SDK serve
// it within the bounds of the open MCP sessions.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); origin != "" && !h.allowedOrigin(origin, r.Host) {
		how := "it cannot be allowed: it is not SCHEME://HOST[:PORT]"
		if o, err := NormalizeOrigin(origin); err == nil {
			how = "allow it with memstore serve --allowed-origins " + o + " (or MEMSTORE_ALLOWED_ORIGINS)"
		}
		refuse(w, http.StatusForbidden, fmt.Sprintf("web pages of origin %q may not use /mcp, only the server's own and those allowed; %s", origin, how))
		return
	}
	caller, err := h.authenticate(r)
	if err != nil {
		if memstore.ErrorCode(err) != memstore.EUnauthenticated {
			h.log.LogAttrs(r.Context(), slog.LevelError, "mcp: authenticate", slog.String("error", err.Error()))
			refuse(w, http.StatusInternalServerError, memstore.ErrorMessage(err))
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="memstore", error="invalid_token"`)
		refuse(w, http.StatusUnauthorized, memstore.ErrorMessage(err))
		return
	}
	netlimit.Authenticated(r) // its body may take the server's time
	r = r.WithContext(context.WithValue(r.Context(), callerKey{}, caller))

	if id := r.Header.Get(sessionIDHeader); id != "" {
		h.serveSession(w, r, id, caller)
		return
	}
	if r.Method != http.MethodPost {
		h.sdk.ServeHTTP(w, r) // its 400 or 405
		return
	}
	body, ok := h.readBody(w, r, true)
	if !ok {
		return
	}
	if batchLen(body) >= 0 {
		refuse(w, http.StatusBadRequest, "a request without an "+sessionIDHeader+" header may not be a JSON-RPC batch: initialize is sent alone, "+
			"and MCP has had no batches since 2025-06-18; send each message in a request of its own")
		return
	}
	h.serveNew(w, r, caller)
}

// serveSession serves a request of the open MCP session id.
func (h *HTTPHandler) serveSession(w http.ResponseWriter, r *http.Request, id string, caller *memstore.Caller) {
	var stream *getStream
	if r.Method == http.MethodGet {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		stream = &getStream{cancel: cancel}
		r = r.WithContext(ctx)
	}
	e, err := h.open.use(id, caller, stream)
	switch {
	case errors.Is(err, errNotOpen):
		// Plain text, which clients take as the end of their session
		// (a JSON-RPC error would be taken as one request's failure).
		http.Error(w, "this MCP session is not open: it ended (closed by the client, idle for "+h.idle.String()+
			", replaced by a newer one of the same memstore session, or its token stopped working) or never was; "+
			"start a new one with initialize", http.StatusNotFound)
		return
	case errors.Is(err, errNotYours):
		refuse(w, http.StatusForbidden, "this MCP session belongs to another memstore session; start one of your own with initialize")
		return
	case err != nil:
		refuse(w, http.StatusServiceUnavailable, shuttingDown)
		return
	}
	defer h.open.done(e, stream)
	if r.Method == http.MethodPost {
		body, ok := h.readBody(w, r, false)
		if !ok {
			return
		}
		if n := batchLen(body); n >= 0 {
			if msg := batchRefused(h.open.protocol(e), n); msg != "" {
				refuse(w, http.StatusBadRequest, msg)
				return
			}
		}
	}
	if stream != nil {
		// A GET stream lasts as long as its client listens: past the
		// server's write timeout, with heartbeats, each write bounded.
		sw := sse.NewWriter(w)
		beating := make(chan struct{})
		go func() {
			defer close(beating)
			sw.Heartbeat(r.Context(), h.heartbeat, stream.cancel)
		}()
		// Nothing may write once the handler has returned.
		defer func() { stream.cancel(); <-beating }()
		w = sw
	}
	h.sdk.ServeHTTP(w, r)
}

// serveNew serves a POST without an MCP session. The SDK makes a session
// for every such request, whatever it holds, and keeps it if the request
// initializes it: so each one is entered here first, within the limits,
// with the ID the SDK will give it. Telling an initialize apart here
// would need the SDK's own reading of the body, to the letter; an entry
// whose request opened nothing is forgotten when the request ends.
func (h *HTTPHandler) serveNew(w http.ResponseWriter, r *http.Request, caller *memstore.Caller) {
	ts, err := agenttool.New(h.services, caller)
	if err != nil {
		h.log.LogAttrs(r.Context(), slog.LevelError, "mcp: cannot make the tools", slog.String("error", err.Error()))
		refuse(w, http.StatusInternalServerError, memstore.ErrorMessage(err))
		return
	}
	e, err := h.open.open(r.Context(), caller)
	if err != nil {
		h.refuseOpen(w, err)
		return
	}
	defer h.open.opened(e)
	srv := newServer(ts, caller.Session, h.version, &mcp.ServerOptions{Logger: h.log, GetSessionID: func() string { return e.id }})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				h.open.attach(e, ss)
			}
			return next(ctx, method, req)
		}
	})
	if h.made != nil {
		h.made(srv)
	}
	h.sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), serverKey{}, srv)))
}

// refuseOpen answers a request that may open no MCP session.
func (h *HTTPHandler) refuseOpen(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errServerFull):
		refuse(w, http.StatusServiceUnavailable, memstore.LimitReached("the server", h.open.max, "open MCP sessions",
			fmt.Sprintf("end the sessions no longer used (DELETE /mcp with their Mcp-Session-Id) or retry once idle ones have been closed, after %s without a request", h.idle),
			"--mcp-max-sessions"))
	case errors.Is(err, errOpening):
		w.Header().Set("Retry-After", "1")
		refuse(w, http.StatusTooManyRequests, memstore.LimitReached("this memstore session", h.open.perSession, "MCP sessions being opened at once",
			"wait for them to open", "--mcp-max-per-session"))
	case errors.Is(err, errShareOpening):
		w.Header().Set("Retry-After", "1")
		refuse(w, http.StatusTooManyRequests, memstore.LimitReached("this workspace", h.open.perWorkspace, "MCP sessions being opened at once, its share of the server's",
			"wait for them to open", "--mcp-max-sessions-per-workspace"))
	case errors.Is(err, errShareFull):
		// As the change feed's share: the caller's workspace, not the
		// server, is full, and only its own sessions make room.
		refuse(w, http.StatusTooManyRequests, memstore.LimitReached("this workspace", h.open.perWorkspace, "open MCP sessions, its share of the server's, all of other memstore sessions",
			fmt.Sprintf("end one no longer used (DELETE /mcp with its Mcp-Session-Id), or retry once idle ones have been closed, after %s without a request", h.idle),
			"--mcp-max-sessions-per-workspace"))
	default:
		refuse(w, http.StatusServiceUnavailable, shuttingDown)
	}
}

const shuttingDown = "the server is shutting down; connect again once it is back"

// MaxBatchMessages bounds a JSON-RPC batch in an MCP session of a
// revision that had batches (before 2025-06-18): each message's answer
// may be up to a memory long, and a batch's answers are sent together.
const MaxBatchMessages = 8

// batchRevisions are the revisions of MCP that had JSON-RPC batches; the
// SDK negotiates each of them when a client asks for it.
var batchRevisions = map[string]bool{"2024-11-05": true, "2025-03-26": true}

// batchLen is the number of messages of a body that is a JSON-RPC batch
// (a JSON array), -1 for any other (the SDK answers one that is not JSON).
func batchLen(body []byte) int {
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) == 0 || body[0] != '[' {
		return -1
	}
	var msgs []json.RawMessage
	if json.Unmarshal(body, &msgs) != nil {
		return -1
	}
	return len(msgs)
}

// batchRefused says why a batch of n messages in an MCP session of
// revision is refused, "" when it is not. The SDK refuses batches only
// to a request that names a revision without them in its
// Mcp-Protocol-Version header, and a request without that header is
// taken as of 2025-03-26: so the session's own revision decides here.
func batchRefused(revision string, n int) string {
	switch {
	case !batchRevisions[revision]:
		return fmt.Sprintf("MCP has had no JSON-RPC batches since 2025-06-18, and this session is of %s; send each message in a request of its own", revision)
	case n > MaxBatchMessages:
		return fmt.Sprintf("a JSON-RPC batch may hold at most %d messages here, and this one holds %d; send the rest in other requests", MaxBatchMessages, n)
	}
	return ""
}

// readBody reads a request body within the limit, for the SDK to read
// again, or answers 413. The body of a request that may open an MCP
// session has the smaller limit MaxOpeningBodyBytes.
func (h *HTTPHandler) readBody(w http.ResponseWriter, r *http.Request, opening bool) ([]byte, bool) {
	limit := h.maxBody
	if opening {
		limit = min(limit, MaxOpeningBodyBytes)
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		msg := fmt.Sprintf("the request body is larger than %d bytes, the server's limit", mbe.Limit)
		if opening && mbe.Limit == MaxOpeningBodyBytes {
			msg = fmt.Sprintf("the request body is larger than %d bytes, the limit of a request that opens an MCP session "+
				"(one without an %s header, such as initialize)", mbe.Limit, sessionIDHeader)
		}
		refuse(w, http.StatusRequestEntityTooLarge, msg)
		return nil, false
	case errors.Is(err, netlimit.ErrSlowBody):
		refuse(w, http.StatusBadRequest, err.Error())
		return nil, false
	case err != nil:
		refuse(w, http.StatusBadRequest, "cannot read the request body: "+err.Error())
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	return b, true
}

// needSessionToken is the answer to a request without a session token.
const needSessionToken = "/mcp needs a session token (st-memstore-...) as Authorization: Bearer; " +
	"API keys (sk-memstore-...) are for the /v1 API; make a session and its token with memstore sessions create or POST /v1/sessions"

// authenticate returns the caller of the request's session token.
func (h *HTTPHandler) authenticate(r *http.Request) (*memstore.Caller, error) {
	f := strings.Fields(r.Header.Get("Authorization"))
	if len(f) != 2 || !strings.EqualFold(f[0], "bearer") {
		return nil, memstore.Errorf(memstore.EUnauthenticated, "missing session token: %s", needSessionToken)
	}
	switch memstore.CredentialOf(f[1]) {
	case memstore.APIKeyCredential:
		return nil, memstore.Errorf(memstore.EUnauthenticated, "%s", needSessionToken)
	case memstore.NoCredential:
		return nil, memstore.Errorf(memstore.EUnauthenticated, "not a session token: %s", needSessionToken)
	}
	return h.sessionsSvc.AuthenticateSession(r.Context(), f[1])
}

// The request context's values for the SDK's callbacks.
type (
	callerKey struct{}
	serverKey struct{}
)

// tokenInfo gives the SDK the caller authenticated by ServeHTTP, which
// it hands each tool call of the request (requestCaller).
func tokenInfo(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
	c, _ := ctx.Value(callerKey{}).(*memstore.Caller)
	if c == nil {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: c.Session.ID, Extra: map[string]any{callerExtra: c}}, nil
}

// callerExtra names the caller in a request's auth.TokenInfo.
const callerExtra = "memstore.caller"

// requestCaller is the caller that authenticated a tool call's HTTP
// request, read afresh from the session token on every request: with it
// an open MCP session follows the stores attached to, changed in or
// detached from its memstore session since it was opened. nil over stdio,
// whose caller is the one the tools were made for.
func requestCaller(req *mcp.CallToolRequest) *memstore.Caller {
	if req.Extra == nil || req.Extra.TokenInfo == nil {
		return nil
	}
	c, _ := req.Extra.TokenInfo.Extra[callerExtra].(*memstore.Caller)
	return c
}

// serverOf is the server that serveNew made for a request; nil for
// requests of open sessions, which the SDK serves with their own.
func serverOf(r *http.Request) *mcp.Server {
	s, _ := r.Context().Value(serverKey{}).(*mcp.Server)
	return s
}

// NormalizeOrigin returns an origin as browsers send it in the Origin
// header, SCHEME://HOST[:PORT] in lower case, or an error saying what is
// wrong with it.
func NormalizeOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || u.Opaque != "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", fmt.Errorf("origin %q is not SCHEME://HOST[:PORT], such as https://app.example.com or http://localhost:6274", s)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// allowedOrigin reports whether a web page of origin may use the
// endpoint: one of the server's own, reached at host, or an allowed one.
// Browsers send Origin with every request that could be forged (DNS
// rebinding, a page of another site); the SDK also refuses, on a loopback
// address, a Host header that is not a loopback name.
func (h *HTTPHandler) allowedOrigin(origin, host string) bool {
	o, err := NormalizeOrigin(origin)
	if err != nil {
		return false // "null", from sandboxed and local pages, among others
	}
	_, oHost, _ := strings.Cut(o, "://")
	return h.origins[o] || strings.EqualFold(oHost, host)
}

// codeRefused is the JSON-RPC error code of a request refused before it
// reached the MCP server, in the range left to implementations.
const codeRefused = -32000

// refuse answers a request the handler will not serve with status and a
// JSON-RPC error saying why, for any client or person to read; its id is
// null, as the request's own may not have been read.
func refuse(w http.ResponseWriter, status int, message string) {
	code := codeRefused
	if status == http.StatusRequestEntityTooLarge || status == http.StatusBadRequest {
		code = jsonrpc.CodeInvalidRequest
	}
	body := errorMessage(code, message)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// errorMessage is a JSON-RPC error response to no request in particular
// (id null), ending with a newline.
func errorMessage(code int, message string) []byte {
	type errorObject struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct {
		JSONRPC string      `json:"jsonrpc"`
		ID      any         `json:"id"`
		Error   errorObject `json:"error"`
	}{"2.0", nil, errorObject{code, message}})
	return append(b, '\n')
}

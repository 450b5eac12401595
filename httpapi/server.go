package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/heldcallers"
	"github.com/memstore/memstore/internal/ids"
	"github.com/memstore/memstore/internal/netlimit"
)

// Server serves the memory stores API (docs/api.md) over the services of its
// Config. It is an http.Handler, safe for concurrent use.
//
// Every answer is JSON with a request-id header, errors included: unknown
// routes are 404 not_found_error and wrong methods 405 with an Allow
// header, never the plain-text pages of http.ServeMux. GET /healthz and
// GET /metrics need no API key (the metrics reveal request counts and the
// numbers of stores and memories, nothing of their content); every other
// route authenticates its caller and acts in the caller's workspace.
type Server struct {
	stores   memstore.StoreService
	memories memstore.MemoryService
	exports  memstore.ExportService // nil: no export stream
	versions memstore.VersionService
	keys     memstore.KeyService
	sessions memstore.SessionService // nil: no sessions, no session tokens
	events   memstore.EventService   // nil: no session transcripts
	search   memstore.SearchService  // nil: no search
	feed     memstore.FeedService    // nil: no change feed
	webhooks memstore.WebhookService // nil: no webhooks
	apiKeys  memstore.APIKeyService  // nil: no API key routes
	users    memstore.UserService    // nil: no user routes
	dreams   memstore.DreamService   // nil: no dream routes

	log     *slog.Logger
	now     func() time.Time
	ids     *ids.Generator
	maxBody int64
	upsert  bool
	strict  bool
	auth    authCache
	kept    memoryCache // answers of retrievals, when memories is a memstore.MemoryRevalidator
	metrics *metrics
	health  healthCheck // of GET /healthz; its ping is nil when not asked
	mux     *http.ServeMux

	heartbeatEvery time.Duration
	streams        streamSet // the open event streams
	wakes          wakeSet   // the feed's notices, by store

	stopNotify []func() // ends the listening to revocations (Close)
	// held ends an event stream whose credential stops working.
	held *heldcallers.Registry
}

// New returns a Server made of c. A CreateExisting other than
// CreateUpsert means CreateConflict.
func New(c Config) *Server {
	s := &Server{
		stores: c.Stores, memories: c.Memories, versions: c.Versions, keys: c.Keys,
		sessions: c.Sessions, search: c.Search, feed: c.Feed, webhooks: c.Webhooks,
		apiKeys: c.APIKeys, users: c.Users, dreams: c.Dreams,
		log: c.Logger, now: c.Now, ids: ids.NewGenerator(),
		maxBody: c.MaxBodyBytes, upsert: c.CreateExisting == CreateUpsert, strict: c.StrictHeaders,
		mux: http.NewServeMux(),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	s.auth.ttl = c.AuthCacheTTL
	if s.auth.ttl == 0 {
		s.auth.ttl = DefaultAuthCacheTTL
	}
	// A credential revoked through this process's services leaves the
	// cache at once, as does one revoked by another process when the
	// backend tells of it; otherwise this process waits out the TTL.
	s.stopNotify = append(s.stopNotify, heldcallers.Listen(s.auth.revoke, c.Keys, c.Sessions))
	// An event stream ends when its credential stops working or its
	// store is no longer its session's.
	s.held = heldcallers.New(func(ctx context.Context, c *memstore.Caller, storeID string) error {
		return memstore.CheckHeld(ctx, s.sessions, c, storeID)
	}, c.Keys, c.Sessions)
	s.heartbeatEvery = cmp.Or(c.StreamHeartbeat, DefaultStreamHeartbeat)
	s.streams.max = cmp.Or(c.MaxStreams, DefaultMaxStreams)
	s.streams.perWorkspace = cmp.Or(c.MaxStreamsPerWorkspace, DefaultMaxStreamsPerWorkspace(s.streams.max))
	s.streams.perCredential = cmp.Or(c.MaxStreamsPerCredential, DefaultMaxStreamsPerCredential)
	if n, ok := c.Feed.(memstore.EventNotifier); ok {
		s.stopNotify = append(s.stopNotify, n.NotifyEvents(s.wakes.notify))
	}
	s.metrics = newMetrics(c.Registry, c.Counts, c.PoolStats, s.log)
	s.health.ping = c.Ping

	// Update is routed for POST, PATCH and PUT alike: the SDKs send POST,
	// the research preview and older docs PATCH.
	const (
		stores   = "/v1/memory_stores"
		store    = stores + "/{memory_store_id}"
		memories = store + "/memories"
		memory   = memories + "/{memory_id}"
		versions = store + "/memory_versions"
		version  = versions + "/{memory_version_id}"
	)
	s.handle("POST "+stores, s.createStore)
	s.handle("GET "+stores, s.listStores)
	s.handle("GET "+store, s.getStore)
	s.handle("DELETE "+store, s.deleteStore)
	s.handle("POST "+store+"/archive", s.archiveStore)
	s.handle("POST "+memories, s.createMemory)
	s.handle("GET "+memories, s.listMemories)
	s.handle("GET "+memory, s.getMemory)
	s.handle("DELETE "+memory, s.deleteMemory)
	s.handle("GET "+versions, s.listVersions)
	s.handle("GET "+version, s.getVersion)
	s.handle("POST "+version+"/redact", s.redactVersion)
	for _, m := range []string{"POST ", "PATCH ", "PUT "} {
		s.handle(m+store, s.updateStore)
		s.handle(m+memory, s.updateMemory)
	}
	if s.search != nil {
		s.handle("GET "+memories+"/search", s.searchStore)
	}
	if s.exports, _ = c.Memories.(memstore.ExportService); s.exports != nil {
		s.handle("GET "+memories+"/export", s.exportMemories)
	}
	if s.sessions != nil {
		s.routeSessions()
	}
	if s.feed != nil {
		s.handle("GET "+store+"/events", s.storeEvents)
	}
	if s.webhooks != nil {
		s.routeWebhooks()
	}
	if s.apiKeys != nil {
		s.routeAPIKeys()
	}
	if s.users != nil {
		s.routeUsers()
	}
	if s.dreams != nil {
		s.routeDreams()
	}
	s.handleOpen("GET /healthz", http.HandlerFunc(s.healthz))
	s.handleOpen("GET /metrics", s.metrics.handler)
	return s
}

// EndStreams ends the event streams in progress, which would otherwise
// hold an http.Server's Shutdown up until its deadline: register it with
// RegisterOnShutdown. Their clients resume from their last event.
func (s *Server) EndStreams() { s.streams.closeAll() }

// Close stops the server listening for revocations and events in its
// services, so that a server no longer in use can be collected while
// they live on, and waits for the streams' credentials being read again
// (which it ends), so that none reads a database closed after it. It
// does not stop the requests in progress (that is http.Server's
// Shutdown).
func (s *Server) Close() error {
	for _, stop := range s.stopNotify {
		stop()
	}
	s.stopNotify = nil
	s.held.Close()
	return nil
}

// ServeHTTP serves one request: it names it (request-id), routes it, and
// then counts and logs it.
func (s *Server) ServeHTTP(hw http.ResponseWriter, r *http.Request) {
	start := time.Now()
	w := &responseWriter{ResponseWriter: hw, server: s, request: r, requestID: s.ids.New(memstore.RequestIDPrefix, s.now())}
	if r.Body != nil && r.Body != http.NoBody {
		w.body = &bodyReader{ReadCloser: r.Body}
		r.Body = w.body
	}
	h := hw.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Request-Id", w.requestID)
	defer s.finish(w, r, start)
	s.mux.ServeHTTP(w, r)
}

// finish turns a panic into a 500, then records the request in the
// metrics and the log. It must be deferred directly, for recover.
func (s *Server) finish(w *responseWriter, r *http.Request, start time.Time) {
	if v := recover(); v != nil {
		if v == http.ErrAbortHandler {
			panic(v)
		}
		err := fmt.Errorf("panic: %v\n%s", v, debug.Stack())
		if w.status == 0 {
			w.routed = true
			s.fail(w, r, err)
		} else {
			s.log.LogAttrs(r.Context(), slog.LevelError, "request failed",
				slog.String("request_id", w.requestID), slog.String("route", routeOf(r)), slog.String("error", err.Error()))
		}
	}
	if w.status == 0 {
		w.status = http.StatusOK // a handler that wrote nothing
	}
	if w.body != nil && !w.body.done.Load() {
		// The answer is given and the connection closes (WriteHeader):
		// end the wait for the rest of the body, which net/http makes
		// before closing, at once.
		http.NewResponseController(w.ResponseWriter).SetReadDeadline(time.Now())
	}
	d := time.Since(start)
	route := routeOf(r)
	s.metrics.observe(route, r.Method, w.status, d)
	// Neither the query string nor any header but the workspace is
	// logged: queries may hold memory paths, headers the API key.
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
		slog.String("method", r.Method), slog.String("route", route), slog.Int("status", w.status),
		slog.Duration("duration", d), slog.String("request_id", w.requestID),
		slog.String("workspace", w.workspace), slog.Int64("bytes", w.bytes))
}

// routeOf is the route label of a request: the pattern that matched it,
// or "unmatched".
func routeOf(r *http.Request) string {
	if r.Pattern == "" {
		return "unmatched"
	}
	return r.Pattern
}

// An apiHandler serves one endpoint for an authenticated caller, whom it
// passes to the services, which decide what the caller may do. It writes
// a success itself and returns any failure for fail to write.
type apiHandler func(w *responseWriter, r *http.Request, c *memstore.Caller) error

// handle routes pattern to h behind the header checks and authentication.
func (s *Server) handle(pattern string, h apiHandler) {
	s.mux.HandleFunc(pattern, func(hw http.ResponseWriter, r *http.Request) {
		w := hw.(*responseWriter)
		w.routed = true
		c, err := s.caller(w, r)
		if err == nil {
			err = h(w, r, c)
		}
		if err != nil {
			s.fail(w, r, err)
		}
	})
}

// handleOpen routes pattern to h without authentication.
func (s *Server) handleOpen(pattern string, h http.Handler) {
	s.mux.HandleFunc(pattern, func(hw http.ResponseWriter, r *http.Request) {
		hw.(*responseWriter).routed = true
		h.ServeHTTP(hw, r)
	})
}

// Mount serves h at pattern as one of the server's routes, without the
// API's authentication: h authenticates its own requests. Its requests are
// logged and counted like every other, a panic in it is a 500, and its
// request bodies are capped at the server's MaxBodyBytes: a read beyond
// fails with *http.MaxBytesError, for h to answer 413 in its own format.
// Mount before serving.
func (s *Server) Mount(pattern string, h http.Handler) {
	s.handleOpen(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
		h.ServeHTTP(w, r)
	}))
}

// healthz says whether this server can serve: "ok", or 503 and
// "unavailable" when its database does not answer, so that a load
// balancer sends requests to another replica meanwhile.
func (s *Server) healthz(hw http.ResponseWriter, r *http.Request) {
	type health struct {
		Status   string `json:"status"`
		Database string `json:"database,omitempty"`
	}
	w := hw.(*responseWriter)
	if s.health.ping != nil {
		if err := s.health.check(r.Context(), s.now, s.log); err != nil {
			w.Header().Set("x-should-retry", "true")
			s.writeJSON(w, http.StatusServiceUnavailable, health{"unavailable", "unreachable"})
			return
		}
		s.writeJSON(w, http.StatusOK, health{"ok", "ok"})
		return
	}
	s.writeJSON(w, http.StatusOK, health{Status: "ok"})
}

// healthCheck pings the database for /healthz at most once per
// HealthInterval, however many ask, one ping at a time: /healthz needs no
// key, and asking it often must not let anyone take the database's
// connections from the requests. A failed ping is logged once.
type healthCheck struct {
	ping func(context.Context) error
	mu   sync.Mutex
	at   time.Time // of the last ping; zero before the first
	err  error     // its outcome
}

// check returns the outcome of the last ping, pinging again when it is
// older than HealthInterval. The ping does not end with the request that
// set it off, whose outcome the others share.
func (h *healthCheck) check(ctx context.Context, now func() time.Time, log *slog.Logger) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.at.IsZero() && now().Sub(h.at) < HealthInterval {
		return h.err
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), HealthTimeout)
	defer cancel()
	h.err, h.at = h.ping(pctx), now()
	if h.err != nil {
		log.LogAttrs(ctx, slog.LevelWarn, "health check: the database does not answer", slog.String("error", h.err.Error()))
	}
	return h.err
}

// The API versions and betas that strict mode accepts (docs/api.md,
// Request headers).
const (
	APIVersion        = "2023-06-01"                // the Go SDK's; the TS SDK sends 2026-10-21
	BetaMemory        = "agent-memory-2026-07-22"   // what the SDKs send
	betaManagedAgents = "managed-agents-2026-04-01" // what the research-preview guide sends
)

// checkHeaders enforces anthropic-version and anthropic-beta in strict
// mode: the version must be one the SDKs send, and a memory beta
// must be among the comma-separated betas of every anthropic-beta header.
func checkHeaders(r *http.Request) error {
	switch v := r.Header.Get("Anthropic-Version"); v {
	case "2023-06-01", "2026-10-21":
	case "":
		return invalid("missing anthropic-version header: send anthropic-version: 2023-06-01")
	default:
		return invalid("anthropic-version %q is not supported: send 2023-06-01 or 2026-10-21", v)
	}
	for _, h := range r.Header.Values("Anthropic-Beta") {
		for b := range strings.SplitSeq(h, ",") {
			if b = strings.TrimSpace(b); b == BetaMemory || b == betaManagedAgents || b == BetaWebhooks || b == BetaDreams {
				return nil
			}
		}
	}
	return invalid("anthropic-beta must include %s (or %s, or %s for webhooks, or %s for dreams)", BetaMemory, betaManagedAgents, BetaWebhooks, BetaDreams)
}

// caller checks the headers and authenticates the request: the
// secret is x-api-key if sent, else the Authorization bearer token. A
// sent anthropic-workspace-id must be the credential's workspace, which
// the response then echoes.
func (s *Server) caller(w *responseWriter, r *http.Request) (*memstore.Caller, error) {
	if s.strict && !bareBearer(r) {
		if err := checkHeaders(r); err != nil {
			return nil, err
		}
	}
	secret := r.Header.Get("X-Api-Key")
	if secret == "" {
		auth := r.Header.Get("Authorization")
		if len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") {
			secret = strings.TrimSpace(auth[7:])
		}
	}
	if secret == "" {
		return nil, memstore.Errorf(memstore.EUnauthenticated,
			"missing API key: set the x-api-key header (or Authorization: Bearer <key>)")
	}
	c, err := s.authenticate(r, secret)
	if err != nil {
		return nil, err
	}
	netlimit.Authenticated(r) // its body may take the server's time
	w.workspace = c.WorkspaceID
	w.Header().Set("Anthropic-Workspace-Id", c.WorkspaceID)
	if ws := r.Header.Get("Anthropic-Workspace-Id"); ws != "" && ws != c.WorkspaceID {
		return nil, memstore.Errorf(memstore.EPermission,
			"this API key belongs to another workspace than %q: drop the anthropic-workspace-id header or use a key of that workspace", ws)
	}
	return c, nil
}

// authenticate returns the caller of secret, from the cache when it was
// authenticated less than the cache's TTL ago.
func (s *Server) authenticate(r *http.Request, secret string) (*memstore.Caller, error) {
	key := sha256.Sum256([]byte(secret))
	now := s.now()
	if c := s.auth.get(key, now); c != nil {
		return c, nil
	}
	gen := s.auth.generation()
	var c *memstore.Caller
	var err error
	if s.sessions == nil && memstore.CredentialOf(secret) == memstore.SessionTokenCredential {
		err = memstore.Errorf(memstore.EUnauthenticated, "this server does not accept session tokens")
	} else {
		c, err = s.keys.Authenticate(r.Context(), secret)
	}
	if err != nil {
		return nil, err
	}
	s.auth.put(key, c, now, gen)
	return c, nil
}

// authCache remembers the callers of recently authenticated secrets, so
// that most requests do not read the key store. It is keyed by the
// secret's SHA-256, never the secret, and remembers only successes: an
// unknown secret is looked up every time. An entry never outlives its
// credential's expiry, and a revocation heard from the backend
// (memstore.RevocationNotifier) removes the entries it stops at once; a
// credential revoked by another process that the backend does not tell
// of keeps working here for up to ttl.
type authCache struct {
	ttl time.Duration // <= 0: no caching
	mu  sync.RWMutex
	m   map[[sha256.Size]byte]cachedCaller
	// gen counts the revocations heard. An authentication that began
	// before one may have read the credential before it was revoked, so
	// its caller is not kept.
	gen uint64
}

type cachedCaller struct {
	caller  *memstore.Caller
	expires time.Time
}

// maxCachedCallers bounds the cache; beyond it, expired entries go, and if
// none has expired, all of them.
const maxCachedCallers = 10_000

func (a *authCache) get(key [sha256.Size]byte, now time.Time) *memstore.Caller {
	if a.ttl <= 0 {
		return nil
	}
	a.mu.RLock()
	e, ok := a.m[key]
	a.mu.RUnlock()
	if !ok || !now.Before(e.expires) {
		return nil
	}
	return e.caller
}

// generation is what put needs to know that no revocation came between
// the lookup of a caller and its keeping.
func (a *authCache) generation() uint64 {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.gen
}

// put keeps c, authenticated at now by a lookup that began at generation
// gen, until the TTL passes or c's credential expires, whichever is first.
func (a *authCache) put(key [sha256.Size]byte, c *memstore.Caller, now time.Time, gen uint64) {
	if a.ttl <= 0 {
		return
	}
	expires := now.Add(a.ttl)
	if c.ExpiresAt != nil && c.ExpiresAt.Before(expires) {
		expires = *c.ExpiresAt
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if gen != a.gen {
		return
	}
	if a.m == nil {
		a.m = make(map[[sha256.Size]byte]cachedCaller)
	}
	if len(a.m) >= maxCachedCallers {
		for k, e := range a.m {
			if !now.Before(e.expires) {
				delete(a.m, k)
			}
		}
		if len(a.m) >= maxCachedCallers {
			clear(a.m)
		}
	}
	a.m[key] = cachedCaller{caller: c, expires: expires}
}

// revoke forgets every caller that r stops or makes stale (a session
// whose attachments changed is authenticated afresh, with its new
// attachments, on its next request). It is the cache's
// memstore.RevocationNotifier listener: it only takes the lock.
func (a *authCache) revoke(r memstore.Revocation) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	for k, e := range a.m {
		if r.Stale(e.caller) {
			delete(a.m, k)
		}
	}
}

// responseWriter records what a request was answered, for the metrics
// and the log, and turns the plain-text 404 and 405 pages of
// http.ServeMux into the API's JSON errors.
type responseWriter struct {
	http.ResponseWriter
	server    *Server
	request   *http.Request
	requestID string
	workspace string // once authenticated
	status    int    // 0 until the header is written
	bytes     int64
	// routed is set by every handler of the server's routes; a write
	// without it comes from the mux's own 404, 405 or redirect.
	routed  bool
	discard bool        // the mux's body, replaced by JSON
	body    *bodyReader // the request's body; nil when it has none
}

// bodyReader tells whether a request's body was read to its end.
type bodyReader struct {
	io.ReadCloser
	done atomic.Bool
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.done.Store(true)
	}
	return n, err
}

func (w *responseWriter) WriteHeader(status int) {
	if !w.routed {
		w.unrouted(status)
		return
	}
	if w.status != 0 {
		return
	}
	w.status = status
	if w.body != nil && !w.body.done.Load() {
		// An answer given without reading the body (a refusal, or a
		// route that takes none) closes the connection (and finish ends
		// the wait for the body): net/http would otherwise read and
		// discard the rest of the body before answering, and a client
		// that never sends it would hold the connection, unanswered,
		// until the read timeout.
		w.Header().Set("Connection", "close")
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	if !w.routed {
		w.unrouted(http.StatusNotFound)
	}
	if w.discard {
		return len(b), nil
	}
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// unrouted answers a request that matched no route: 405 with the Allow
// header the mux set when the path exists for other methods, else 404
// (also for the mux's redirects to a cleaned path: API clients send clean
// paths, and a redirect would be an HTML page).
func (w *responseWriter) unrouted(status int) {
	w.routed = true // from here on, writes are the JSON error's
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("X-Content-Type-Options")
	h.Del("Location")
	r := w.request
	if status == http.StatusMethodNotAllowed {
		w.server.writeError(w, status, memstore.Errorf(memstore.EInvalid,
			"method %s is not allowed on %s; allowed: %s", r.Method, r.URL.EscapedPath(), h.Get("Allow")))
	} else {
		h.Del("Allow")
		w.server.writeError(w, http.StatusNotFound, memstore.Errorf(memstore.ENotFound,
			"no such endpoint: %s %s", r.Method, r.URL.EscapedPath()))
	}
	w.discard = true
}

// jsonBuffers are reused between responses; buffers that grew large are
// dropped instead, so that one big list does not pin memory.
var jsonBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeJSON writes v as the JSON body with status. HTML characters are
// not escaped: the bytes a client decodes are the same either way, and
// content stays readable.
func (s *Server) writeJSON(w *responseWriter, status int, v any) {
	buf := jsonBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	if err := encodeJSON(buf, v); err != nil {
		// Only a bug in the wire types can get here.
		s.log.LogAttrs(w.request.Context(), slog.LevelError, "encode response",
			slog.String("request_id", w.requestID), slog.String("error", err.Error()))
		buf.Reset()
		status = http.StatusInternalServerError
		fmt.Fprintf(buf, `{"type":"error","error":{"type":%q,"message":%q},"request_id":%q}`+"\n",
			memstore.EInternal, internalMessage, w.requestID)
	}
	writeBody(w, status, buf.Bytes())
	if buf.Cap() <= 64<<10 {
		jsonBuffers.Put(buf)
	}
}

// encodeJSON appends v to buf as every response's JSON is written: with
// "<", ">" and "&" as they are, and a final newline.
func encodeJSON(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeBody writes a response of status with an encoded JSON body.
func writeBody(w *responseWriter, status int, body []byte) {
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

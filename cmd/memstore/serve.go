package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/agenttool"
	"github.com/memstore/memstore/console"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/clientaddr"
	"github.com/memstore/memstore/internal/netlimit"
	"github.com/memstore/memstore/internal/private"
	"github.com/memstore/memstore/mcpserver"
	"github.com/memstore/memstore/webhook"
)

var serveHelp = fmt.Sprintf(`Usage: memstore serve [--db FILE|URL] [--addr HOST:PORT] [flags]

Serves the memory stores API, wire-compatible with Anthropic's
/v1/memory_stores: point an official SDK at http://HOST:PORT as its base
URL. GET /healthz answers 200 when the server is up and its database
answers, 503 when it does not; GET /metrics serves Prometheus metrics. Neither needs a key. /mcp serves the memory tools to
MCP clients holding a session token (streamable HTTP). /console/ is the
web console, where users made with 'memstore users create' sign in
(--console=false turns it off, --console-addr serves it elsewhere).

The database is --db, else MEMSTORE_DB, else memstore/memstore.db under
$XDG_DATA_HOME or ~/.local/share; it and its directory are created if
missing. --db postgres://USER:PASSWORD@HOST/DATABASE serves a PostgreSQL
database instead (an existing one; its tables are made or upgraded), which
several servers may share. On a database without API keys, serve makes
the workspace "default" and a key for it, and prints on standard output
(the log is on standard error) the API's and the console's URLs, the
command that makes the first console user, and the key, once, alone on
the last line; for a file, it also writes the key to FILE.key (mode
0600, never overwritten). Make more keys with 'memstore keys create'.
--init-admin NAME makes that first user, an admin, and prints a sign-in
link that works once, within 15 minutes; when the workspace has users
already it makes none, so the flag may stay in a service's command line.

The server holds at most --max-connections connections at once. At the
cap, a new connection closes one that waits on its client: the one idle
the longest (between requests, or with no request %[1]s
after it came), else the one that has waited the longest for its
requests' bodies, for its client to take an answer (a write blocked
for %[2]s), or for a turn to check a password; when none waits
so, new connections wait. A connection is also dropped when its
request's headers are slow to come, when its request's body comes
slower than %[3]s a second after its first %[4]s (or takes
over %[5]s without a credential), when its client takes nothing
of an answer for %[6]s, or when it stays idle between requests
for long. A password check waits at most %[7]s for its turn,
with at most %[8]d others; beyond, a sign-in is told that the server
is busy (503, with Retry-After).

Each workspace holds at most --max-stores-per-workspace stores
(archived ones included) and --max-sessions-per-workspace live sessions,
each session --max-tokens-per-session live tokens and
--max-events-per-session events of its transcript, of at most
--max-transcript-bytes bytes together; a create or append beyond
one is refused (400) naming the flag. Each API key, session token or console
user searches at most --search-rate-per-credential times a second, and a
workspace's credentials together --search-rate-per-workspace times (429
with Retry-After); each server counts its own searches.

The server's pools of MCP sessions (--mcp-max-sessions), change-feed
streams (--feed-max-streams) and webhook deliveries
(--webhook-max-deliveries) are shared: a workspace holds at most its
share of each (--mcp-max-sessions-per-workspace and
--feed-max-streams-per-workspace, a quarter of the pool unless given;
--webhook-max-deliveries-per-workspace, an eighth), a memstore session
at most --mcp-max-per-session MCP sessions, and an API key or session
token at most --feed-max-streams-per-credential streams. Beyond its
share, a memstore session's new MCP session closes its own least
recently used (429 if it holds none) and a stream is refused (429). At a
full pool, the workspace holding the most gives up its least recently
used MCP session or its oldest stream to one holding at least two fewer.

For a quota, a rate or a share, 0 means no limit. For a pool
(--max-connections, --mcp-max-sessions, --feed-max-streams,
--webhook-max-deliveries) and --max-body-bytes, 0 means its default:
they have no unlimited.

Webhooks (/v1/organizations/webhooks) are delivered by the server, with
retries that survive restarts: the retry after the first failed attempt
waits --webhook-retry-min, each next one twice as long, at most
--webhook-retry-max. An endpoint is disabled when one delivery fails all
--webhook-attempts attempts, or when that many attempts in a row find it
down (no answer, 408, 429 or 5xx). An endpoint that does not answer is
paused as long as a retry waits, then probed one delivery at a time, and
a workspace holds only its share of the deliveries in progress, so that
neither delays the others. An attempt in progress when the server stops
is neither counted nor logged as failed: it is made again once its claim
lapses, by this server restarted or another. Their URLs may not reach
loopback, link-local or private addresses unless --webhook-allow-private
is set.

Dreams (/v1/dreams) run when the server has a model: ANTHROPIC_API_KEY
or --model-api-key-file for Anthropic's API, --model-base-url
(ANTHROPIC_BASE_URL) for any endpoint that speaks the Messages API. Each
run is capped by --dream-max-steps, --dream-max-tokens,
--dream-max-writes and --dream-max-time, and --dream-concurrency run at
once. A dream running when the server stops is resumed by the next
server to claim it (docs/dreams.md).

Semantic search embeds memories in the background, after each write, with
the model the server is given: --embed-url and --embed-model for an
OpenAI-compatible /v1/embeddings API (Ollama, vLLM, llama.cpp, LM
Studio, OpenAI, Voyage; key in --embed-api-key-file or
MEMSTORE_EMBED_API_KEY), or --embed-model-file for a model2vec model
directory read in the process. Off when neither is set. With a model,
search is hybrid unless a request asks for another mode: its words and
its meaning fused, the meaning weighted --search-semantic-weight
(docs/search.md).

--tls-cert FILE and --tls-key FILE (a PEM certificate chain and its
private key) serve HTTPS, TLS 1.2 or newer, on --addr and --console-addr.
Behind a proxy that ends TLS, --console-secure-cookies makes the console's
session cookie Secure although the proxy forwards plain HTTP, and
--trusted-proxies names the proxies whose X-Forwarded-For (or, without
one, Forwarded) the console's sign-in limits believe (from any other peer
these headers are ignored).

Every flag may also be set by the environment variable named beside it;
flags win over variables. SIGINT or SIGTERM stops the server after the
requests in progress end (at most 10 seconds).
`, seconds(netlimit.FirstRequestGrace), seconds(netlimit.WriteGrace), kib(netlimit.MinBodyRate), seconds(netlimit.BodyGrace),
	seconds(netlimit.UnauthenticatedBodyTimeout), seconds(netlimit.WriteStallTimeout), seconds(memstore.HashWaitTimeout), memstore.MaxHashWaiters)

// seconds is d in words, for help: "1 second", "10 seconds".
func seconds(d time.Duration) string {
	if d == time.Second {
		return "1 second"
	}
	return fmt.Sprintf("%g seconds", d.Seconds())
}

// kib is n bytes in words, for help: "1 KiB", or "100 bytes".
func kib(n int) string {
	if n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d bytes", n)
}

// The timeouts of the HTTP server. Request bodies are at most a few MiB
// and every handler is one database transaction, so a minute is ample for
// a slow client; a client that holds a connection without sending headers
// is dropped sooner.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = time.Minute
	writeTimeout      = time.Minute
	idleTimeout       = 2 * time.Minute
	// shutdownTimeout bounds how long a stopping server waits for the
	// requests in progress.
	shutdownTimeout = 10 * time.Second
	// maxHeaderBytes bounds a request's headers: ample for any client's,
	// small enough that each connection's buffer stays small.
	maxHeaderBytes = 64 << 10
)

// minTLSVersion is the oldest TLS that serve accepts: older versions have
// known weaknesses, and every current client speaks 1.2.
const minTLSVersion = tls.VersionTLS12

// defaultMaxConnections bounds the connections a server holds at once
// (see netlimit.Listener): far more than the requests a database file
// serves at once, and few enough goroutines and file descriptors.
const defaultMaxConnections = 1024

// serveConfig is the configuration of serve.
type serveConfig struct {
	backend        *backendFlags // the database
	addr           hostPort
	createExisting *choice
	strictHeaders  boolValue
	refuseCreds    boolValue // the hosted API's content rules (memstore.ContentRules)
	refuseIndex    boolValue
	maxMemories    count
	maxStores      count // the quotas of memstore.Limits
	maxSessions    count
	maxTokens      count
	maxEvents      count
	maxEventBytes  count
	searchRate     count
	searchRateWS   count
	maxBodyBytes   count
	maxConns       count
	logFormat      *choice
	logLevel       *choice
	mcpIdle        duration // MCP over HTTP, /mcp
	mcpMax         count    // the pool of MCP sessions
	mcpPerSession  count    // and its shares
	mcpPerShare    count
	feedMax        count // the pool of the change feed's streams
	feedPerShare   count // and its shares, per workspace
	feedPerCred    count // and per credential
	origins        originList
	console        boolValue // serve the web console
	consoleAddr    hostPort  // on its own address, "" for the API's
	consoleIdle    duration  // a console session's idle and absolute expiry
	consoleLife    duration
	webhookPrivate boolValue // webhooks may reach private addresses
	webhookRetry   duration  // the webhooks' memstore.RetryPolicy
	webhookMaxWait duration
	webhookTries   count
	webhookMax     count              // the pool of webhook deliveries held
	webhookShare   count              // and a workspace's share
	consoleSecure  boolValue          // the console is reached over HTTPS through a proxy
	trustedProxies clientaddr.Proxies // whose X-Forwarded-For or Forwarded names the client
	tlsCert        string             // PEM files; both or neither
	tlsKey         string
	initAdmin      string      // the first console user to make, with a sign-in link
	tls            *tls.Config // loaded from tlsCert and tlsKey, nil for plain HTTP
	dreams         dreamFlags  // the model that runs dreams, and its caps
	embed          embedFlags  // the embedding model of semantic search
}

// serveEnv names the variable of each flag of serve (--db reads
// MEMSTORE_DB through the backend selection, like the keys commands).
var serveEnv = map[string]string{
	"addr":                   "MEMSTORE_ADDR",
	"create-existing":        "MEMSTORE_CREATE_EXISTING",
	"strict-headers":         "MEMSTORE_STRICT_HEADERS",
	"refuse-credentials":     "MEMSTORE_REFUSE_CREDENTIALS",
	"refuse-oversized-index": "MEMSTORE_REFUSE_OVERSIZED_INDEX",
	"max-memories-per-store": "MEMSTORE_MAX_MEMORIES_PER_STORE",
	"max-body-bytes":         "MEMSTORE_MAX_BODY_BYTES",
	"max-connections":        "MEMSTORE_MAX_CONNECTIONS",
	"log-format":             "MEMSTORE_LOG_FORMAT",
	"log-level":              "MEMSTORE_LOG_LEVEL",
	"mcp-idle-timeout":       "MEMSTORE_MCP_IDLE_TIMEOUT",
	"mcp-max-sessions":       "MEMSTORE_MCP_MAX_SESSIONS",
	"mcp-max-per-session":    "MEMSTORE_MCP_MAX_PER_SESSION",
	"allowed-origins":        "MEMSTORE_ALLOWED_ORIGINS",
	"console":                "MEMSTORE_CONSOLE",
	"console-addr":           "MEMSTORE_CONSOLE_ADDR",
	"console-idle-timeout":   "MEMSTORE_CONSOLE_IDLE_TIMEOUT",
	"console-session-max":    "MEMSTORE_CONSOLE_SESSION_MAX",
	"webhook-allow-private":  "MEMSTORE_WEBHOOK_ALLOW_PRIVATE",
	"webhook-retry-min":      "MEMSTORE_WEBHOOK_RETRY_MIN",
	"webhook-retry-max":      "MEMSTORE_WEBHOOK_RETRY_MAX",
	"webhook-attempts":       "MEMSTORE_WEBHOOK_ATTEMPTS",
	"console-secure-cookies": "MEMSTORE_CONSOLE_SECURE_COOKIES",
	"trusted-proxies":        "MEMSTORE_TRUSTED_PROXIES",
	"tls-cert":               "MEMSTORE_TLS_CERT",
	"tls-key":                "MEMSTORE_TLS_KEY",
	"init-admin":             "MEMSTORE_INIT_ADMIN",

	// The quotas of workspaces, sessions and credentials (memstore.Limits).
	"max-stores-per-workspace":   "MEMSTORE_MAX_STORES_PER_WORKSPACE",
	"max-sessions-per-workspace": "MEMSTORE_MAX_SESSIONS_PER_WORKSPACE",
	"max-tokens-per-session":     "MEMSTORE_MAX_TOKENS_PER_SESSION",
	"max-events-per-session":     "MEMSTORE_MAX_EVENTS_PER_SESSION",
	"max-transcript-bytes":       "MEMSTORE_MAX_TRANSCRIPT_BYTES",
	"search-rate-per-credential": "MEMSTORE_SEARCH_RATE_PER_CREDENTIAL",
	"search-rate-per-workspace":  "MEMSTORE_SEARCH_RATE_PER_WORKSPACE",

	// The pools of the server and their shares.
	"mcp-max-sessions-per-workspace":       "MEMSTORE_MCP_MAX_SESSIONS_PER_WORKSPACE",
	"feed-max-streams":                     "MEMSTORE_FEED_MAX_STREAMS",
	"feed-max-streams-per-workspace":       "MEMSTORE_FEED_MAX_STREAMS_PER_WORKSPACE",
	"feed-max-streams-per-credential":      "MEMSTORE_FEED_MAX_STREAMS_PER_CREDENTIAL",
	"webhook-max-deliveries":               "MEMSTORE_WEBHOOK_MAX_DELIVERIES",
	"webhook-max-deliveries-per-workspace": "MEMSTORE_WEBHOOK_MAX_DELIVERIES_PER_WORKSPACE",
}

// parseServeConfig reads serve's configuration from its defaults, the
// environment and args, in that order.
func parseServeConfig(e env, args []string) (*serveConfig, error) {
	c := &serveConfig{
		addr:           defaultAddr,
		createExisting: newChoice(httpapi.CreateConflict, httpapi.CreateConflict, httpapi.CreateUpsert),
		maxMemories:    memstore.DefaultMaxMemoriesPerStore,
		maxStores:      memstore.DefaultMaxStoresPerWorkspace,
		maxSessions:    memstore.DefaultMaxSessionsPerWorkspace,
		maxTokens:      memstore.DefaultMaxTokensPerSession,
		maxEvents:      memstore.DefaultMaxEventsPerSession,
		maxEventBytes:  memstore.DefaultMaxEventBytesPerSession,
		searchRate:     memstore.DefaultSearchRate,
		searchRateWS:   memstore.DefaultSearchRatePerWorkspace,
		logFormat:      newChoice("text", "text", "json"),
		logLevel:       newChoice("info", "debug", "info", "warn", "error"),
		mcpIdle:        duration(mcpserver.DefaultIdleTimeout),
		mcpMax:         mcpserver.DefaultMaxSessions,
		mcpPerSession:  mcpserver.DefaultMaxSessionsPerSession,
		feedMax:        httpapi.DefaultMaxStreams,
		feedPerCred:    httpapi.DefaultMaxStreamsPerCredential,
		webhookMax:     webhook.Pool,
		console:        true,
		refuseCreds:    true,
		refuseIndex:    true,
		consoleIdle:    duration(memstore.DefaultSignInIdle),
		consoleLife:    duration(memstore.DefaultSignInLifetime),
		webhookRetry:   duration(memstore.DefaultRetryPolicy.MinBackoff),
		webhookMaxWait: duration(memstore.DefaultRetryPolicy.MaxBackoff),
		webhookTries:   count(memstore.DefaultRetryPolicy.MaxAttempts),
	}
	fs := newFlags(e, "serve", serveHelp)
	c.backend = &backendFlags{cmd: "serve", kinds: withDB, admin: true, opts: dbOptions{create: true}}
	fs.StringVar(&c.backend.db, "db", "", "memstore database `FILE` or postgres:// URL (MEMSTORE_DB)")
	fs.Var(&c.addr, "addr", "listen on `HOST:PORT`; port 0 picks a free one (MEMSTORE_ADDR)")
	fs.Var(c.createExisting, "create-existing", "`MODE` of creating a memory at a taken path: conflict (409, as the SDKs expect) or upsert (MEMSTORE_CREATE_EXISTING)")
	fs.Var(&c.strictHeaders, "strict-headers", "refuse requests without anthropic-version or a memory beta in anthropic-beta, except a bearer token's to the memory stores that sends neither, as Claude Code does (MEMSTORE_STRICT_HEADERS)")
	fs.Var(&c.refuseCreds, "refuse-credentials", "refuse memory content that looks like it holds a credential or API key, as the hosted API does; =false to allow it (MEMSTORE_REFUSE_CREDENTIALS; default true)")
	fs.Var(&c.refuseIndex, "refuse-oversized-index", fmt.Sprintf("refuse a store's /MEMORY.md beyond the prompt-index cap (%d lines, %d UTF-16 units), as the hosted API does; =false to allow it (MEMSTORE_REFUSE_OVERSIZED_INDEX; default true)", memstore.MaxIndexLines, memstore.MaxIndexUnits))
	fs.Var(&c.maxMemories, "max-memories-per-store", "cap on the memories of a store, `N`; 0 for no limit (MEMSTORE_MAX_MEMORIES_PER_STORE)")
	fs.Var(&c.maxStores, "max-stores-per-workspace", "cap on the memory stores of a workspace, archived ones included, `N`; 0 for no limit (MEMSTORE_MAX_STORES_PER_WORKSPACE)")
	fs.Var(&c.maxSessions, "max-sessions-per-workspace", "cap on the live (unarchived) sessions of a workspace, `N`; 0 for no limit (MEMSTORE_MAX_SESSIONS_PER_WORKSPACE)")
	fs.Var(&c.maxTokens, "max-tokens-per-session", "cap on the live (neither revoked nor expired) tokens of a session, `N`; 0 for no limit (MEMSTORE_MAX_TOKENS_PER_SESSION)")
	fs.Var(&c.maxEvents, "max-events-per-session", "cap on the events of a session's transcript, `N`; 0 for no limit (MEMSTORE_MAX_EVENTS_PER_SESSION)")
	fs.Var(&c.maxEventBytes, "max-transcript-bytes", "cap on the size of a session's transcript, `BYTES` of its events together; 0 for no limit (MEMSTORE_MAX_TRANSCRIPT_BYTES)")
	fs.Var(&c.searchRate, "search-rate-per-credential", "searches a second of one API key, session token or console user, `N`, in bursts of as many; 0 for no limit (MEMSTORE_SEARCH_RATE_PER_CREDENTIAL)")
	fs.Var(&c.searchRateWS, "search-rate-per-workspace", "searches a second of all the credentials of a workspace together, `N`; 0 for no limit (MEMSTORE_SEARCH_RATE_PER_WORKSPACE)")
	fs.Var(&c.maxBodyBytes, "max-body-bytes", "cap on a request body, `N` bytes; 0 for the default of 1 MiB (MEMSTORE_MAX_BODY_BYTES)")
	fs.Var(&c.maxConns, "max-connections", fmt.Sprintf("cap on open connections, `N`: beyond it one that waits on its client is closed, the longest idle first; 0 for the default of %d (MEMSTORE_MAX_CONNECTIONS)", defaultMaxConnections))
	fs.Var(c.logFormat, "log-format", "`FORMAT` of the request log on standard error: text or json (MEMSTORE_LOG_FORMAT)")
	fs.Var(c.logLevel, "log-level", "least severe `LEVEL` logged: debug, info, warn or error (MEMSTORE_LOG_LEVEL)")
	fs.Var(&c.mcpIdle, "mcp-idle-timeout", "close an MCP session after `DURATION` without a request (MEMSTORE_MCP_IDLE_TIMEOUT)")
	fs.Var(&c.mcpMax, "mcp-max-sessions", fmt.Sprintf("cap on the MCP sessions open at once, `N`, at most half of --max-connections; 0 for the default of %d (MEMSTORE_MCP_MAX_SESSIONS)", mcpserver.DefaultMaxSessions))
	fs.Var(&c.mcpPerSession, "mcp-max-per-session", "cap on the MCP sessions open at once for one memstore session, `N`; opening one more closes its least recently used; 0 for no limit (MEMSTORE_MCP_MAX_PER_SESSION)")
	fs.Var(&c.mcpPerShare, "mcp-max-sessions-per-workspace", "cap on the MCP sessions open at once for one workspace, its share of --mcp-max-sessions, `N`; default a quarter of --mcp-max-sessions; a memstore session opening one more closes its own least recently used, or gets 429 if it has none; 0 for no limit (MEMSTORE_MCP_MAX_SESSIONS_PER_WORKSPACE)")
	fs.Var(&c.feedMax, "feed-max-streams", fmt.Sprintf("cap on the change feed's streams open at once, `N`; 0 for the default of %d (MEMSTORE_FEED_MAX_STREAMS)", httpapi.DefaultMaxStreams))
	fs.Var(&c.feedPerShare, "feed-max-streams-per-workspace", "cap on the change feed's streams open at once for one workspace, its share of --feed-max-streams, `N`; default a quarter of --feed-max-streams; 0 for no limit (MEMSTORE_FEED_MAX_STREAMS_PER_WORKSPACE)")
	fs.Var(&c.feedPerCred, "feed-max-streams-per-credential", "cap on the change feed's streams open at once for one API key or session token, `N`; 0 for no limit (MEMSTORE_FEED_MAX_STREAMS_PER_CREDENTIAL)")
	fs.Var(&c.origins, "allowed-origins", "comma-separated `ORIGINS`, such as https://app.example.com, of web pages allowed to use /mcp besides the server's own (MEMSTORE_ALLOWED_ORIGINS)")
	fs.Var(&c.console, "console", "serve the web console at /console/ (MEMSTORE_CONSOLE; default true)")
	fs.Var(&c.consoleAddr, "console-addr", "serve the web console on `HOST:PORT` instead of --addr (MEMSTORE_CONSOLE_ADDR)")
	fs.Var(&c.consoleIdle, "console-idle-timeout", "end a console session after `DURATION` without a request (MEMSTORE_CONSOLE_IDLE_TIMEOUT)")
	fs.Var(&c.consoleLife, "console-session-max", "end a console session `DURATION` after sign-in, however active (MEMSTORE_CONSOLE_SESSION_MAX)")
	fs.Var(&c.webhookPrivate, "webhook-allow-private", "let webhooks reach loopback, link-local and private addresses, and plain http: for tests and closed networks (MEMSTORE_WEBHOOK_ALLOW_PRIVATE)")
	fs.Var(&c.webhookRetry, "webhook-retry-min", "wait `DURATION` before the first retry of a failed webhook delivery, doubling for each next one (MEMSTORE_WEBHOOK_RETRY_MIN)")
	fs.Var(&c.webhookMaxWait, "webhook-retry-max", "wait at most `DURATION` between retries of a webhook delivery (MEMSTORE_WEBHOOK_RETRY_MAX)")
	fs.Var(&c.webhookTries, "webhook-attempts", "give up on a webhook delivery after `N` failed attempts, and disable its endpoint, as after N attempts in a row that find it down (MEMSTORE_WEBHOOK_ATTEMPTS)")
	fs.Var(&c.webhookMax, "webhook-max-deliveries", fmt.Sprintf("cap on the webhook deliveries the server holds at once, in flight or claimed and waiting for their endpoint, `N`; 0 for the default of %d (MEMSTORE_WEBHOOK_MAX_DELIVERIES)", webhook.Pool))
	fs.Var(&c.webhookShare, "webhook-max-deliveries-per-workspace", "cap on the webhook deliveries the server holds at once for one workspace's endpoints, its share of --webhook-max-deliveries, `N`; default an eighth of --webhook-max-deliveries; 0 for no limit (MEMSTORE_WEBHOOK_MAX_DELIVERIES_PER_WORKSPACE)")
	fs.Var(&c.consoleSecure, "console-secure-cookies", "the console is reached over HTTPS through a proxy that ends TLS: its session cookie is Secure, with the __Host- prefix, although requests come over plain HTTP (MEMSTORE_CONSOLE_SECURE_COOKIES)")
	fs.Var(&c.trustedProxies, "trusted-proxies", "comma-separated `CIDRS` (or addresses) of proxies in front, from which alone X-Forwarded-For (else Forwarded) is believed to name the client, for the console's sign-in limits; default none (MEMSTORE_TRUSTED_PROXIES)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "serve HTTPS with the PEM certificate chain in `FILE`; needs --tls-key (MEMSTORE_TLS_CERT)")
	fs.StringVar(&c.tlsKey, "tls-key", "", "the PEM private key `FILE` of --tls-cert (MEMSTORE_TLS_KEY)")
	fs.StringVar(&c.initAdmin, "init-admin", "", "when the workspace has no console user, make `NAME`, an admin, and print a one-time sign-in link (MEMSTORE_INIT_ADMIN)")
	c.dreams.register(fs)
	c.embed.register(fs)
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usageError(e, "memstore serve: unexpected argument %q", fs.Arg(0))
	}
	if err := applyEnv(e, "serve", fs, serveEnv); err != nil {
		return nil, err
	}
	if err := applyEnv(e, "serve", fs, dreamEnv); err != nil {
		return nil, err
	}
	if err := c.dreams.resolve(e); err != nil {
		return nil, err
	}
	if err := applyEnv(e, "serve", fs, embedEnv); err != nil {
		return nil, err
	}
	if err := c.embed.resolve(e); err != nil {
		return nil, err
	}
	if c.initAdmin != "" {
		if err := memstore.ValidateUserName(c.initAdmin); err != nil {
			return nil, usageError(e, "memstore serve: --init-admin: %v", err)
		}
		if !c.console {
			return nil, usageError(e, "memstore serve: --init-admin makes a console user, but --console=false turns the console off")
		}
	}
	if c.maxConns == 0 {
		c.maxConns = defaultMaxConnections
	}
	if c.maxBodyBytes == 0 {
		c.maxBodyBytes = httpapi.DefaultMaxBodyBytes
	}
	if c.mcpMax == 0 {
		c.mcpMax = mcpserver.DefaultMaxSessions
	}
	c.resolveShares(fs)
	// A GET stream is a busy connection, which the connection cap never
	// closes: MCP sessions alone must not be able to take every one.
	if c.mcpMax > c.maxConns/2 {
		return nil, usageError(e, "memstore serve: --mcp-max-sessions %d is more than half of --max-connections %d: each MCP session may hold a connection open for its GET stream; keep --mcp-max-sessions at most half of --max-connections", c.mcpMax, c.maxConns)
	}
	if c.webhookTries < 1 {
		return nil, usageError(e, "memstore serve: --webhook-attempts must be 1 or more (1: no retries), not %d", c.webhookTries)
	}
	if c.webhookMaxWait < c.webhookRetry {
		return nil, usageError(e, "memstore serve: --webhook-retry-max %v is shorter than --webhook-retry-min %v; the longest wait between retries must be at least the first", time.Duration(c.webhookMaxWait), time.Duration(c.webhookRetry))
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return nil, usageError(e, "memstore serve: --tls-cert and --tls-key go together (MEMSTORE_TLS_CERT and MEMSTORE_TLS_KEY): give both the certificate and its private key, or neither for plain HTTP")
	}
	return c, nil
}

// resolveShares sets the pools left at 0 to their defaults, and each
// share of a pool from its flag: 0 lifts it (the holder may take the
// whole pool), and a workspace's share not given is a part of the pool,
// whatever the pool is.
func (c *serveConfig) resolveShares(fs *flag.FlagSet) {
	if c.feedMax == 0 {
		c.feedMax = httpapi.DefaultMaxStreams
	}
	if c.webhookMax == 0 {
		c.webhookMax = webhook.Pool
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true }) // on the command line or by a variable
	share := func(name string, v *count, pool count, def func(int) int) {
		switch {
		case !given[name] && def != nil:
			*v = count(def(int(pool)))
		case *v == 0:
			*v = pool
		}
	}
	share("mcp-max-per-session", &c.mcpPerSession, c.mcpMax, nil)
	share("mcp-max-sessions-per-workspace", &c.mcpPerShare, c.mcpMax, mcpserver.DefaultMaxSessionsPerWorkspace)
	share("feed-max-streams-per-credential", &c.feedPerCred, c.feedMax, nil)
	share("feed-max-streams-per-workspace", &c.feedPerShare, c.feedMax, httpapi.DefaultMaxStreamsPerWorkspace)
	share("webhook-max-deliveries-per-workspace", &c.webhookShare, c.webhookMax, webhook.DefaultMaxHeldPerWorkspace)
}

// limits are the quotas the flags set.
func (c *serveConfig) limits() memstore.Limits {
	return memstore.Limits{
		StoresPerWorkspace:    int(c.maxStores),
		MemoriesPerStore:      int(c.maxMemories),
		SessionsPerWorkspace:  int(c.maxSessions),
		TokensPerSession:      int(c.maxTokens),
		EventsPerSession:      int(c.maxEvents),
		EventBytesPerSession:  int(c.maxEventBytes),
		SearchesPerCredential: int(c.searchRate),
		SearchesPerWorkspace:  int(c.searchRateWS),
	}
}

// contentRules are the content rules the flags leave on.
func (c *serveConfig) contentRules() memstore.ContentRules {
	return memstore.ContentRules{AllowCredentials: !bool(c.refuseCreds), AllowOversizedIndex: !bool(c.refuseIndex)}
}

// loadTLS reads the certificate and key of --tls-cert and --tls-key into
// c.tls, when given. Neither file's content is ever reported.
func (c *serveConfig) loadTLS() error {
	if c.tlsCert == "" {
		return nil
	}
	certPEM, err := os.ReadFile(c.tlsCert)
	if err != nil {
		return fmt.Errorf("cannot read the TLS certificate (--tls-cert): %w", err)
	}
	keyPEM, err := os.ReadFile(c.tlsKey)
	if err != nil {
		return fmt.Errorf("cannot read the TLS private key (--tls-key): %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("the TLS certificate %s and private key %s are not a PEM certificate and its key: %w", c.tlsCert, c.tlsKey, err)
	}
	c.tls = &tls.Config{MinVersion: minTLSVersion, Certificates: []tls.Certificate{cert}}
	return nil
}

// scheme is the scheme of the server's addresses.
func (c *serveConfig) scheme() string {
	if c.tls != nil {
		return "https"
	}
	return "http"
}

// serveOn serves srv on l, over TLS when the configuration has it.
func (c *serveConfig) serveOn(srv *http.Server, l net.Listener) error {
	if c.tls == nil {
		return srv.Serve(l)
	}
	srv.TLSConfig = c.tls.Clone() // the server adds its protocols to it
	return srv.ServeTLS(l, "", "")
}

// logger is the server's log on w, in the configured format and level.
func (c *serveConfig) logger(w io.Writer) *slog.Logger {
	var level slog.Level
	level.UnmarshalText([]byte(c.logLevel.value)) // one of the choices, all valid
	opts := &slog.HandlerOptions{Level: level}
	if c.logFormat.value == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func runServe(ctx context.Context, e env, args []string) error {
	c, err := parseServeConfig(e, args)
	if err != nil {
		return err
	}
	sel, err := c.backend.selectBackend(e)
	if err != nil {
		return err
	}
	if err := c.loadTLS(); err != nil {
		return err
	}
	// Listen first, so that a taken port is an error at once, and before
	// anything is written to the database.
	ln, err := net.Listen("tcp", string(c.addr))
	if err != nil {
		return fmt.Errorf("cannot listen on %s (is another server using it? pick another address with --addr): %w", c.addr, err)
	}
	defer ln.Close() // in case serving never starts; closing twice is harmless
	var cln net.Listener
	if c.console && c.consoleAddr != "" {
		if cln, err = net.Listen("tcp", string(c.consoleAddr)); err != nil {
			return fmt.Errorf("cannot listen on %s for the console (pick another address with --console-addr): %w", c.consoleAddr, err)
		}
		defer cln.Close()
	}
	log := c.logger(e.stderr)
	c.backend.opts.logger, c.backend.opts.limits, c.backend.opts.rules = log, c.limits(), c.contentRules()
	c.backend.opts.dreams = c.dreams.enabled()
	c.backend.opts.embedder, c.backend.opts.semanticWeight = c.embed.embedder, c.embed.weight
	conn, err := sel.open(ctx, e)
	if err != nil {
		return err
	}
	err = serve(ctx, e, c, log, ln, cln, sel.db, conn.db)
	if cerr := conn.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close database %s: %w", databaseName(sel.db), cerr)
	}
	return err
}

// serve runs the server on a listener and an open database until ctx is
// done, then waits for the requests in progress. The console is served on
// cln when it is not nil, else mounted beside the API.
func serve(ctx context.Context, e env, c *serveConfig, log *slog.Logger, ln, cln net.Listener, path string, db memstore.Database) error {
	core := newCore(db, c.backend.opts)
	run := &firstRun{api: c.scheme() + "://" + dialable(ln.Addr().String()), db: path}
	var err error
	if run.key, err = firstKey(ctx, e, core, path); err != nil {
		return err
	}
	if c.console {
		at := ln.Addr()
		if cln != nil {
			at = cln.Addr()
		}
		run.consoleURL = consoleBase(c.scheme(), at.String())
	}
	if c.initAdmin != "" {
		run.admin = c.initAdmin
		if run.link, run.expires, err = initAdmin(ctx, e, db, core, c.initAdmin, run.consoleURL); err != nil {
			return err
		}
	}
	run.print(e.stdout)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	hooks := memstore.NewWebhooks(db, memstore.WebhooksAllowPrivate(bool(c.webhookPrivate)))
	users := memstore.NewUsers(db, memstore.SignInExpiry(time.Duration(c.consoleIdle), time.Duration(c.consoleLife)))
	api := httpapi.New(httpapi.Config{
		Stores: core, Memories: core, Versions: core, Keys: core, Sessions: core, Search: core, Feed: core, Webhooks: hooks,
		APIKeys: memstore.NewKeys(core), Users: users, Dreams: core,
		Counts:                  db.Counts,
		PoolStats:               db.PoolStats,
		Ping:                    db.Ping,
		Logger:                  log,
		Registry:                reg,
		CreateExisting:          c.createExisting.value,
		StrictHeaders:           bool(c.strictHeaders),
		MaxBodyBytes:            int64(c.maxBodyBytes),
		MaxStreams:              int(c.feedMax),
		MaxStreamsPerWorkspace:  int(c.feedPerShare),
		MaxStreamsPerCredential: int(c.feedPerCred),
	})
	defer api.Close()
	// /mcp serves the agent tools to MCP clients holding a session token,
	// logged, counted and body-capped as the API's routes are.
	mcpHandler := mcpserver.Handler(mcpserver.HandlerConfig{
		Sessions: core, Services: agenttool.Services{Memories: core, Search: core}, Version: Version, Logger: log,
		IdleTimeout: time.Duration(c.mcpIdle), MaxSessions: int(c.mcpMax), MaxSessionsPerSession: int(c.mcpPerSession), MaxSessionsPerWorkspace: int(c.mcpPerShare),
		MaxBodyBytes:   int64(c.maxBodyBytes),
		AllowedOrigins: c.origins, Registry: reg,
	})
	defer mcpHandler.Close()
	api.Mount("/mcp", mcpHandler)
	var consoleSrv *http.Server
	if c.console {
		ch := console.New(console.Config{Stores: core, Memories: core, Versions: core, Search: core, Sessions: core, Activity: core, Keys: memstore.NewKeys(core), Users: users, Webhooks: hooks, Dreams: core, Review: core,
			SecureCookies: bool(c.consoleSecure), TrustedProxies: c.trustedProxies, Logger: log})
		if cln == nil {
			api.Mount(console.Prefix, ch)
			api.Mount(console.Root, ch) // GET / leads to the console
		} else {
			// Its own server, with the API's limits and a log.
			climited := netlimit.New(cln, int(c.maxConns))
			consoleSrv = httpServer(http.MaxBytesHandler(ch, int64(c.maxBodyBytes)), climited, log)
			go c.serveOn(consoleSrv, climited)
			defer consoleSrv.Close()
		}
	}
	limited := netlimit.New(ln, int(c.maxConns))
	srv := httpServer(api, limited, log)
	// MCP clients hold a GET stream open for as long as they run: the
	// handler ends those at once, so that they do not hold the shutdown up.
	srv.RegisterOnShutdown(mcpHandler.Close)
	// So do the change feed's streams; their clients resume from their
	// last event.
	srv.RegisterOnShutdown(api.EndStreams)
	// The webhooks' deliverer runs until the server stops; what it was
	// sending when stopped is not counted, and sent again after its
	// lease.
	dctx, stopDelivery := context.WithCancel(context.WithoutCancel(ctx))
	delivered := make(chan struct{})
	go func() {
		defer close(delivered)
		policy := memstore.RetryPolicy{MinBackoff: time.Duration(c.webhookRetry), MaxBackoff: time.Duration(c.webhookMaxWait), MaxAttempts: int(c.webhookTries)}
		webhook.New(db, webhook.Options{AllowPrivate: bool(c.webhookPrivate), Policy: policy, Logger: log,
			MaxHeld: int(c.webhookMax), MaxHeldPerWorkspace: int(c.webhookShare)}).Run(dctx)
	}()
	defer func() { stopDelivery(); <-delivered }()
	// The dream worker runs until the server stops; the dreams it runs
	// then let their leases go, to be resumed by this server restarted or
	// another.
	defer c.dreams.start(ctx, core, log)()
	// The indexing worker embeds written memories in the background
	// until the server stops; what it held is claimed again after its
	// lease.
	stopIndexing, err := c.embed.start(ctx, db, reg, log)
	if err != nil {
		fmt.Fprintf(e.stderr, "memstore: %v\n", err)
	}
	defer stopIndexing()
	served := make(chan error, 1)
	go func() { served <- c.serveOn(srv, limited) }()
	fmt.Fprintf(e.stderr, "memstore: serving %s://%s (database %s)\n", c.scheme(), ln.Addr(), databaseName(path))
	if run.consoleURL != nil {
		fmt.Fprintf(e.stderr, "memstore: console at %s (add users with 'memstore users create')\n", run.consoleURL)
	}
	if !c.dreams.enabled() {
		fmt.Fprintln(e.stderr, "memstore: dreams are off: no model endpoint (set ANTHROPIC_API_KEY, or --model-base-url; see docs/dreams.md)")
	}
	if m := c.embed.embedder; m != nil {
		fmt.Fprintf(e.stderr, "memstore: search is hybrid by default: memories are embedded in the background with %s (%d dimensions)\n", m.Model(), m.Dimensions())
	} else {
		fmt.Fprintln(e.stderr, "memstore: search is lexical: no embedding model (--embed-url and --embed-model, or --embed-model-file, for semantic and hybrid search; see docs/search.md)")
	}

	select {
	case err := <-served:
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	fmt.Fprintln(e.stderr, "memstore: stopping; waiting for the requests in progress")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	// The console's own server, if any, stops alongside, within the same
	// wait.
	var consoleStopped sync.WaitGroup
	if consoleSrv != nil {
		consoleStopped.Go(func() { shutdown(sctx, consoleSrv, log) })
	}
	shutdown(sctx, srv, log)
	consoleStopped.Wait()
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	}
	fmt.Fprintln(e.stderr, "memstore: stopped")
	return nil
}

// shutdown stops srv, waiting for its requests in progress until ctx
// ends, then cutting the rest: their transactions roll back when the
// database closes.
func shutdown(ctx context.Context, srv *http.Server, log *slog.Logger) {
	if err := srv.Shutdown(ctx); err != nil {
		log.Warn("requests still in progress at shutdown were cut off", "wait", shutdownTimeout.String(), "err", err)
		srv.Close()
	}
}

// httpServer is a server of h on the connections of l, with serve's
// timeouts and limits. It tells l which connections have a request in
// progress and which of those wait on their clients (for a body, to take
// an answer, or for a turn to hash a password: netlimit.Listener.Serve),
// without which the connection cap would take them for idle and close
// one mid-request to make room, or let slow clients keep every other
// client out; and it ends a body that comes too slowly. l itself ends a
// connection whose client takes nothing of an answer for long.
func httpServer(h http.Handler, l *netlimit.Listener, log *slog.Logger) *http.Server {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	l.Serve(srv)
	return srv
}

// writeKeyFile writes secret to a new file that only its owner may read.
// A file already there is left alone: it may hold a key still in use.
func writeKeyFile(name, secret string) error {
	err := private.WriteNew(name, []byte(secret+"\n"))
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w (it does not hold this key)", err)
	}
	return err
}

// Package httpapi serves memory stores over HTTP, wire-compatible with
// Anthropic's /v1/memory_stores API, so that the official SDKs work against
// memstore by changing their base URL; and it is a Go client of that API.
//
// The server receives the domain services as interfaces and never a
// concrete backend: it authenticates, reads the wire and writes it, and
// leaves every decision of access to the services. It holds the one table that maps memstore error codes
// to HTTP statuses and the JSON error envelope.
package httpapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/sse"
)

// Config is what a Server is made of. Stores, Memories, Versions and Keys
// are required; the rest have defaults.
//
// The services are the caller-facing ones, a memstore.Core's: the server
// authenticates each request and passes its caller on, and the services
// decide what that caller may do.
type Config struct {
	Stores   memstore.StoreService
	Memories memstore.MemoryService
	Versions memstore.VersionService
	// Keys authenticates the API key or session token of every request
	// but /healthz and /metrics (KeyService.Authenticate).
	Keys memstore.KeyService

	// Sessions, when set, serves /v1/sessions and lets session tokens in.
	Sessions memstore.SessionService
	// Search, when set, serves the search endpoints.
	Search memstore.SearchService
	// Feed, when set, serves the stores' change feeds
	// (/v1/memory_stores/{id}/events). When it is also a
	// memstore.EventNotifier (a Core is), its streams wake on its
	// notices; otherwise they read again every StreamRecheck.
	Feed memstore.FeedService
	// Webhooks, when set, serves /v1/organizations/webhooks.
	Webhooks memstore.WebhookService
	// APIKeys, when set, serves the workspace's API keys, and Users its
	// console users, under AdminPrefix (memstore.NewKeys, NewUsers).
	APIKeys memstore.APIKeyService
	Users   memstore.UserService
	// Dreams, when set, serves /v1/dreams.
	Dreams memstore.DreamService
	// StreamHeartbeat spaces the comments an idle event stream sends, so
	// that proxies keep it open and clients see it alive; 0 means
	// DefaultStreamHeartbeat.
	StreamHeartbeat time.Duration
	// MaxStreams bounds the event streams open at once,
	// MaxStreamsPerWorkspace those of one workspace (its share), and
	// MaxStreamsPerCredential those of one API key or session token; 0
	// means DefaultMaxStreams, DefaultMaxStreamsPerWorkspace(MaxStreams)
	// and DefaultMaxStreamsPerCredential. A share as large as MaxStreams
	// is none.
	MaxStreams              int
	MaxStreamsPerWorkspace  int
	MaxStreamsPerCredential int

	// Counts, when set, feeds the store and memory gauges of /metrics.
	Counts func(context.Context) (memstore.Counts, error)
	// PoolStats, when set, feeds the gauges of the database's connections
	// in /metrics.
	PoolStats func() memstore.PoolStats
	// Ping, when set, tells GET /healthz whether the database answers:
	// 503 when it does not, or not within HealthTimeout.
	Ping func(context.Context) error

	// Logger receives one line per request (never a secret or memory
	// content); nil discards.
	Logger *slog.Logger
	// Registry receives the server's metrics, which /metrics serves; nil
	// makes a private one.
	Registry *prometheus.Registry

	// CreateExisting is what creating a memory at an occupied path does:
	// "conflict" (409 memory_path_conflict_error, the default, as the SDKs
	// expect) or "upsert" (replace the content, as the seed API did).
	CreateExisting string
	// StrictHeaders refuses requests without anthropic-version or without
	// a memory beta in anthropic-beta (400), for testing clients.
	StrictHeaders bool
	// MaxBodyBytes caps a request body (413 beyond); 0 means 1 MiB.
	MaxBodyBytes int64
	// AuthCacheTTL is how long the server remembers a secret it has
	// authenticated, so that most requests do not read the key store; never
	// past the credential's expiry. A revocation made through Keys or
	// Sessions, when they are memstore.RevocationNotifiers, takes effect at
	// once, and one made by another process sharing the backend as soon as
	// the backend tells of it; one it does not tell of is seen within this
	// long. 0 means DefaultAuthCacheTTL; a negative value turns the cache
	// off.
	AuthCacheTTL time.Duration

	// Now is the clock, time.Now when nil.
	Now func() time.Time
}

// The values of Config.CreateExisting.
const (
	CreateConflict = "conflict"
	CreateUpsert   = "upsert"
)

// HealthTimeout bounds GET /healthz's ping of the database: a database
// slower than this is as good as down to a load balancer. HealthInterval
// is how long its outcome answers every /healthz before the next ping.
const (
	HealthTimeout  = 2 * time.Second
	HealthInterval = time.Second
)

// The defaults and fixed bounds of event streams (docs/api.md, Change
// feed). StreamRecheck is how often a stream reads its feed without a
// notice, which bounds how late it sees a change that no notice told of
// (one made by another process when the backend tells of none).
// StreamWriteTimeout bounds each write of a stream, in place of the
// server's write timeout, which would cut every stream after it.
const (
	DefaultStreamHeartbeat         = sse.DefaultHeartbeat
	DefaultMaxStreams              = 256
	DefaultMaxStreamsPerCredential = 16
	StreamRecheck                  = time.Second
	StreamWriteTimeout             = sse.WriteTimeout
)

// DefaultMaxStreamsPerWorkspace is a workspace's share of a server's
// maxStreams event streams when Config.MaxStreamsPerWorkspace is 0: a
// quarter, at least one, so that however many credentials a workspace
// has, three others find room beside it.
func DefaultMaxStreamsPerWorkspace(maxStreams int) int { return max(1, maxStreams/4) }

// DefaultMaxBodyBytes is the request body cap when Config.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 1 << 20

// DefaultAuthCacheTTL is how long an authenticated secret is remembered
// when Config.AuthCacheTTL is 0.
const DefaultAuthCacheTTL = 5 * time.Second

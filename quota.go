package memstore

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Limits are the quotas a Core holds each workspace, store, session and
// credential to, so that no tenant takes what the whole server shares. A
// zero field means no limit. memstore serve sets each from a flag, whose
// defaults are DefaultLimits.
type Limits struct {
	// StoresPerWorkspace caps a workspace's memory stores, archived ones
	// included: an archived store keeps its memories and versions, and
	// only deleting it gives its room back.
	StoresPerWorkspace int
	// MemoriesPerStore caps a store's live memories; deleting one makes
	// room, and updates, renames and upserts of a taken path still work.
	MemoriesPerStore int
	// SessionsPerWorkspace caps a workspace's live sessions; archiving or
	// deleting one makes room.
	SessionsPerWorkspace int
	// TokensPerSession caps a session's live tokens (neither revoked nor
	// expired), its first one included; revoking one makes room.
	TokensPerSession int
	// EventsPerSession caps the events of a session's transcript, which
	// are never removed but with the session, and EventBytesPerSession
	// the size of their bodies together.
	EventsPerSession     int
	EventBytesPerSession int
	// SearchesPerCredential caps the searches of one credential (an API
	// key, a session token, a console user) per second, with a burst of
	// as many; SearchesPerWorkspace those of all of a workspace's
	// credentials together. Each server counts its own.
	SearchesPerCredential int
	SearchesPerWorkspace  int
}

// The default limits of memstore serve (docs/security.md, Limits).
const (
	DefaultMaxStoresPerWorkspace   = 1000
	DefaultMaxMemoriesPerStore     = 2000 // the hosted service's (docs/api.md)
	DefaultMaxSessionsPerWorkspace = 10_000
	DefaultMaxTokensPerSession     = 100
	DefaultMaxEventsPerSession     = 10_000
	DefaultMaxEventBytesPerSession = 64 << 20
	DefaultSearchRate              = 10 // per credential, per second
	DefaultSearchRatePerWorkspace  = 50 // per second
)

// DefaultLimits are the limits of memstore serve when no flag changes
// them.
func DefaultLimits() Limits {
	return Limits{
		StoresPerWorkspace:    DefaultMaxStoresPerWorkspace,
		MemoriesPerStore:      DefaultMaxMemoriesPerStore,
		SessionsPerWorkspace:  DefaultMaxSessionsPerWorkspace,
		TokensPerSession:      DefaultMaxTokensPerSession,
		EventsPerSession:      DefaultMaxEventsPerSession,
		EventBytesPerSession:  DefaultMaxEventBytesPerSession,
		SearchesPerCredential: DefaultSearchRate,
		SearchesPerWorkspace:  DefaultSearchRatePerWorkspace,
	}
}

// WithLimits sets every quota of a Core; without it a Core has none.
func WithLimits(l Limits) CoreOption {
	return func(co *Core) {
		co.limits = l
		co.searches = newRateLimiter()
	}
}

// MaxMemoriesPerStore sets the one limit Limits.MemoriesPerStore: a
// create beyond n live memories in a store is refused (EInvalid) until
// some are deleted; 0 means no limit. (WithLimits, given after it, sets
// it again.)
func MaxMemoriesPerStore(n int) CoreOption {
	return func(co *Core) { co.limits.MemoriesPerStore = max(n, 0) }
}

// LimitReached is how memstore says that holder holds n of what, its
// limit, so that every limit reads alike wherever it is checked: then
// what makes room, and, for a limit that memstore serve's flag sets,
// that the server's operator may raise it with flag ("" for a fixed cap).
//
//	workspace wrkspc_1 is at its limit of 1000 memory stores, archived
//	ones included; delete a store to make room, or have the server's
//	operator raise the limit (memstore serve --max-stores-per-workspace)
func LimitReached(holder string, n int, what, room, flag string) string {
	msg := fmt.Sprintf("%s is at its limit of %d %s; %s", holder, n, what, room)
	if flag != "" {
		msg += ", or " + raiseWith(flag)
	}
	return msg
}

// raiseWith says who may raise a limit, and how.
func raiseWith(flag string) string {
	return "have the server's operator raise the limit (memstore serve " + flag + ")"
}

// A Quota is a cap on how many of something a workspace, a store or a
// session holds, which a backend checks in the transaction that inserts
// one more: it counts them only when Limited, and, when Check refuses the
// count, inserts nothing and returns Check's error. The backend makes
// concurrent inserts wait for one another (SQLite's one writer, a lock on
// PostgreSQL), so that they cannot pass the cap together. Only memstore
// makes a limited Quota, with its refusal; the zero Quota has no limit.
type Quota struct {
	max                      int // 0: no limit
	holder, what, room, flag string
	hosted                   string // the hosted API's message of this refusal, if it has one
}

// newQuota is a cap of max (0 for none) and its refusal, in the words of
// LimitReached.
func newQuota(max int, holder, what, room, flag string) Quota {
	return Quota{max: max, holder: holder, what: what, room: room, flag: flag}
}

// Limited reports whether q caps anything, so that the backend need not
// count otherwise.
func (q Quota) Limited() bool { return q.max > 0 }

// Max is the cap, as a value: Check refuses one more exactly when Max are
// already held. A backend need count no further, and one that checks the
// cap in its database compares the count with Max there.
func (q Quota) Max() int { return q.max }

// Check returns the refusal of one more when n are already held and that
// leaves no room under the cap, and nil otherwise.
func (q Quota) Check(n int) error {
	if q.max <= 0 || n < q.max {
		return nil
	}
	return q.refusal()
}

// refusal says what LimitReached says, as the detail of the hosted API's
// message where it has one.
func (q Quota) refusal() *Error {
	msg := LimitReached(q.holder, q.max, q.what, q.room, q.flag)
	if q.hosted != "" {
		return &Error{Code: EInvalid, Message: q.hosted, Detail: msg}
	}
	return &Error{Code: EInvalid, Message: msg}
}

// The flags of memstore serve that raise each limit, as its messages name
// them.
const (
	flagMaxStores           = "--max-stores-per-workspace"
	flagMaxMemories         = "--max-memories-per-store"
	flagMaxSessions         = "--max-sessions-per-workspace"
	flagMaxTokens           = "--max-tokens-per-session"
	flagSearchRate          = "--search-rate-per-credential"
	flagSearchRateWorkspace = "--search-rate-per-workspace"
)

// The quotas, each with its refusal. Those of Limits take their cap from
// it; API keys and webhook endpoints have fixed caps.

func storeQuota(workspaceID string, limit int) Quota {
	return newQuota(limit, "workspace "+workspaceID, "memory stores, archived ones included", "delete a store to make room", flagMaxStores)
}

func memoryQuota(storeID string, limit int) Quota {
	q := newQuota(limit, "memory store "+storeID, "memories", "delete some before creating more", flagMaxMemories)
	q.hosted = MemoryLimitMessage
	return q
}

func sessionQuota(workspaceID string, limit int) Quota {
	return newQuota(limit, "workspace "+workspaceID, "live sessions", "archive or delete a session to make room", flagMaxSessions)
}

func tokenQuota(sessionID string, limit int) Quota {
	return newQuota(limit, "session "+sessionID, "live tokens", "revoke one to make room (expired ones do not count)", flagMaxTokens)
}

// APIKeyQuota is the cap of a workspace's API keys,
// MaxAPIKeysPerWorkspace, which a backend's CreateAPIKey checks. Revoking
// does not make room: revoked keys count, and are kept.
func APIKeyQuota(workspaceID string) Quota {
	return newQuota(MaxAPIKeysPerWorkspace, "workspace "+workspaceID, "API keys, revoked ones included",
		"revoked keys are kept and keys cannot be deleted, so create further keys in another workspace", "")
}

func webhookQuota(workspaceID string) Quota {
	return newQuota(MaxWebhookEndpoints, "workspace "+workspaceID, "webhook endpoints", "delete one before creating another", "")
}

// The refusals of one more past each limit, the same from every backend.

// ErrStoreLimit is the refusal of a store beyond limit in workspaceID.
func ErrStoreLimit(workspaceID string, limit int) *Error {
	return storeQuota(workspaceID, limit).refusal()
}

// ErrMemoryLimit is the refusal of a memory beyond limit in store storeID.
func ErrMemoryLimit(storeID string, limit int) *Error {
	return memoryQuota(storeID, limit).refusal()
}

// ErrSessionLimit is the refusal of a session beyond limit live ones in
// workspaceID.
func ErrSessionLimit(workspaceID string, limit int) *Error {
	return sessionQuota(workspaceID, limit).refusal()
}

// ErrTokenLimit is the refusal of a token beyond limit live ones of
// session sessionID.
func ErrTokenLimit(sessionID string, limit int) *Error {
	return tokenQuota(sessionID, limit).refusal()
}

// ErrAPIKeyLimit is the refusal of a key past MaxAPIKeysPerWorkspace in
// workspaceID.
func ErrAPIKeyLimit(workspaceID string) *Error { return APIKeyQuota(workspaceID).refusal() }

// ErrWebhookLimit is the refusal of a webhook endpoint past
// MaxWebhookEndpoints in workspaceID.
func ErrWebhookLimit(workspaceID string) *Error { return webhookQuota(workspaceID).refusal() }

// allowSearch takes one search from c's credential's share and from its
// workspace's, or refuses it (ERateLimited, with the wait until both
// have room again) and takes from neither.
func (co *Core) allowSearch(c *Caller) error {
	if co.searches == nil {
		return nil
	}
	cred, name := c.Credential()
	perCred, perWS := co.limits.SearchesPerCredential, co.limits.SearchesPerWorkspace
	wait, which := co.searches.take(co.now(),
		rate{key: "c\x00" + cred, perSecond: perCred},
		rate{key: "w\x00" + c.WorkspaceID, perSecond: perWS})
	switch which {
	case -1:
		return nil
	case 0:
		return errSearchRate(wait, fmt.Sprintf("%s may make %d searches a second", name, perCred), flagSearchRate)
	default:
		return errSearchRate(wait, fmt.Sprintf("%s%s may make %d searches a second together", workspaceSearches, c.WorkspaceID, perWS), flagSearchRateWorkspace)
	}
}

// tooManySearches begins the refusal of a search over a rate, and
// workspaceSearches follows it when the rate is the workspace's.
const (
	tooManySearches   = "too many searches: "
	workspaceSearches = "the credentials of workspace "
)

// errSearchRate is the refusal of a search over a rate: what the rate is,
// when to retry, and the flag that raises it. It invites the retry
// (Retry, which the API sends as x-should-retry: true), as a refused
// change-feed stream does: the same search succeeds once the wait is
// over.
func errSearchRate(wait time.Duration, what, flag string) *Error {
	e := Errorf(ERateLimited, "%s%s; %s, or %s", tooManySearches, what, WaitAndRetry(wait), raiseWith(flag))
	e.RetryAfter, e.Retry = wait, true
	return e
}

// WorkspaceSearchRate reports whether err refused a search for its
// workspace's rate (Limits.SearchesPerWorkspace) rather than its own
// credential's, which another credential of the workspace would not
// escape. It reads the message, so that it tells them apart in an error
// from a remote server too.
func WorkspaceSearchRate(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == ERateLimited && strings.HasPrefix(e.Message, tooManySearches+workspaceSearches)
}

// A rate is a token bucket's key and its rate: perSecond a second, up to
// perSecond at once; 0 for no limit.
type rate struct {
	key       string
	perSecond int
}

// rateLimiter keeps token buckets by key, in memory: each server counts
// its own. A bucket left alone for a second is full again, the same as a
// missing one, so buckets unused for a while are dropped and the map
// holds only the keys of recent callers.
type rateLimiter struct {
	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	tokens float64
	at     time.Time // when tokens was counted
}

// sweepEvery spaces the drops of idle buckets.
const sweepEvery = 10 * time.Second

func newRateLimiter() *rateLimiter {
	return &rateLimiter{buckets: map[string]*bucket{}}
}

// take takes one token from the bucket of each rate, refilled up to now,
// when every one holds a whole token, and returns -1. Otherwise it takes
// none, and returns how long until all would hold one and the index of
// the rate that has the longest wait.
func (l *rateLimiter) take(now time.Time, rates ...rate) (wait time.Duration, which int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) >= sweepEvery {
		for k, b := range l.buckets {
			if now.Sub(b.at) >= time.Second {
				delete(l.buckets, k)
			}
		}
		l.swept = now
	}
	which = -1
	bs := make([]*bucket, len(rates))
	for i, r := range rates {
		if r.perSecond <= 0 {
			continue
		}
		interval := time.Second / time.Duration(r.perSecond)
		b := l.buckets[r.key]
		if b == nil {
			b = &bucket{tokens: float64(r.perSecond), at: now}
			l.buckets[r.key] = b
		}
		if now.After(b.at) {
			b.tokens = refill(b.tokens, now.Sub(b.at), interval, r.perSecond)
			b.at = now
		}
		bs[i] = b
		if b.tokens < 1 {
			if w := untilWhole(b.tokens, interval); w > wait || which == -1 {
				wait, which = w, i
			}
		}
	}
	if which != -1 {
		return wait, which
	}
	for _, b := range bs {
		if b != nil {
			b.tokens--
		}
	}
	return 0, -1
}

package memstore

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// Limits are the quotas a Core holds each workspace, session and
// credential to, so that no tenant takes what the whole server shares. A
// zero field means no limit. memstore serve sets each from a flag, whose
// defaults are DefaultLimits.
type Limits struct {
	// StoresPerWorkspace caps a workspace's memory stores, archived ones
	// included: an archived store keeps its memories and versions, and
	// only deleting it gives its room back.
	StoresPerWorkspace int
	// SessionsPerWorkspace caps a workspace's live sessions; archiving or
	// deleting one makes room.
	SessionsPerWorkspace int
	// TokensPerSession caps a session's live tokens (neither revoked nor
	// expired), its first one included; revoking one makes room.
	TokensPerSession int
	// SearchesPerCredential caps the searches of one credential (an API
	// key, a session token, a console user) per second, with a burst of
	// as many; SearchesPerWorkspace those of all of a workspace's
	// credentials together. Each server counts its own.
	SearchesPerCredential int
	SearchesPerWorkspace  int
}

// The default limits of memstore serve (README, Security and limits).
const (
	DefaultMaxStoresPerWorkspace   = 1000
	DefaultMaxSessionsPerWorkspace = 10_000
	DefaultMaxTokensPerSession     = 100
	DefaultSearchRate              = 10 // per credential, per second
	DefaultSearchRatePerWorkspace  = 50 // per second
)

// DefaultLimits are the limits of memstore serve when no flag changes
// them.
var DefaultLimits = Limits{
	StoresPerWorkspace:    DefaultMaxStoresPerWorkspace,
	SessionsPerWorkspace:  DefaultMaxSessionsPerWorkspace,
	TokensPerSession:      DefaultMaxTokensPerSession,
	SearchesPerCredential: DefaultSearchRate,
	SearchesPerWorkspace:  DefaultSearchRatePerWorkspace,
}

// WithLimits sets the quotas of a Core; without it a Core has none.
func WithLimits(l Limits) CoreOption {
	return func(co *Core) {
		co.limits = l
		co.searches = newRateLimiter()
	}
}

// A Quota is a cap on how many of something a workspace or a session
// holds, which a backend checks in the transaction that inserts one
// more: it counts them only when Limited, and, when Check refuses the
// count, inserts nothing and returns Check's error. The backend makes
// concurrent inserts wait for one another (SQLite's one writer, a lock on
// PostgreSQL), so that they cannot pass the cap together. The zero Quota
// has no limit.
type Quota struct {
	Max  int          // 0: no limit
	over func() error // the refusal of one more
}

// Limited reports whether q caps anything, so that the backend need not
// count otherwise.
func (q Quota) Limited() bool { return q.Max > 0 }

// Check returns the refusal of one more when n are already held and that
// leaves no room under the cap, and nil otherwise.
func (q Quota) Check(n int) error {
	if q.Max <= 0 || n < q.Max {
		return nil
	}
	if q.over == nil {
		return Errorf(EInvalid, "the limit of %d is reached", q.Max)
	}
	return q.over()
}

// The flags of memstore serve that raise each limit, as its messages name
// them.
const (
	flagMaxStores           = "--max-stores-per-workspace"
	flagMaxSessions         = "--max-sessions-per-workspace"
	flagMaxTokens           = "--max-tokens-per-session"
	flagSearchRate          = "--search-rate-per-credential"
	flagSearchRateWorkspace = "--search-rate-per-workspace"
)

// ErrStoreLimit is the refusal of a store beyond limit in workspaceID, the
// same from every backend.
func ErrStoreLimit(workspaceID string, limit int) *Error {
	return Errorf(EInvalid, "workspace %s is at its limit of %d memory stores, archived ones included; delete a store to make room, or have the server's operator raise the limit (memstore serve %s)",
		workspaceID, limit, flagMaxStores)
}

// ErrSessionLimit is the refusal of a session beyond limit live ones in
// workspaceID.
func ErrSessionLimit(workspaceID string, limit int) *Error {
	return Errorf(EInvalid, "workspace %s is at its limit of %d live sessions; archive or delete a session to make room, or have the server's operator raise the limit (memstore serve %s)",
		workspaceID, limit, flagMaxSessions)
}

// ErrTokenLimit is the refusal of a token beyond limit live ones of
// session sessionID.
func ErrTokenLimit(sessionID string, limit int) *Error {
	return Errorf(EInvalid, "session %s is at its limit of %d live tokens; revoke one to make room (expired ones do not count), or have the server's operator raise the limit (memstore serve %s)",
		sessionID, limit, flagMaxTokens)
}

// storeQuota, sessionQuota and tokenQuota are the Quotas of co's limits.
func (co *Core) storeQuota(workspaceID string) Quota {
	limit := co.limits.StoresPerWorkspace
	return Quota{Max: limit, over: func() error { return ErrStoreLimit(workspaceID, limit) }}
}

func (co *Core) sessionQuota(workspaceID string) Quota {
	limit := co.limits.SessionsPerWorkspace
	return Quota{Max: limit, over: func() error { return ErrSessionLimit(workspaceID, limit) }}
}

func (co *Core) tokenQuota(sessionID string) Quota {
	limit := co.limits.TokensPerSession
	return Quota{Max: limit, over: func() error { return ErrTokenLimit(sessionID, limit) }}
}

// allowSearch takes one search from c's credential's share and from its
// workspace's, or refuses it (ERateLimited, with the wait until both
// have room again) and takes from neither.
func (co *Core) allowSearch(c *Caller) error {
	if co.searches == nil {
		return nil
	}
	cred, name := credentialOf(c)
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
		return errSearchRate(wait, fmt.Sprintf("the credentials of workspace %s may make %d searches a second together", c.WorkspaceID, perWS), flagSearchRateWorkspace)
	}
}

// errSearchRate is the refusal of a search over a rate: what the rate is,
// when to retry, and the flag that raises it.
func errSearchRate(wait time.Duration, what, flag string) *Error {
	secs := max(int(math.Ceil(wait.Seconds())), 1)
	e := Errorf(ERateLimited, "too many searches: %s; retry in %d s, or have the server's operator raise the limit (memstore serve %s)", what, secs, flag)
	e.RetryAfter = wait
	return e
}

// credentialOf names the credential a caller authenticated with, as a
// key of the search shares and as messages say it: its session token,
// else its actor (API key, console user).
func credentialOf(c *Caller) (key, name string) {
	switch {
	case c.Session != nil && c.TokenID != "":
		return "token\x00" + c.TokenID, "session token " + c.TokenID
	case c.Session != nil:
		return "session\x00" + c.Session.ID, "session " + c.Session.ID
	case c.Actor.Type == ActorUser:
		return string(c.Actor.Type) + "\x00" + c.Actor.ID, "user " + c.Actor.ID
	}
	return string(c.Actor.Type) + "\x00" + c.Actor.ID, "API key " + c.Actor.ID
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
		b := l.buckets[r.key]
		if b == nil {
			b = &bucket{tokens: float64(r.perSecond), at: now}
			l.buckets[r.key] = b
		}
		if now.After(b.at) {
			b.tokens = min(float64(r.perSecond), b.tokens+now.Sub(b.at).Seconds()*float64(r.perSecond))
			b.at = now
		}
		bs[i] = b
		if b.tokens < 1 {
			if w := time.Duration((1 - b.tokens) / float64(r.perSecond) * float64(time.Second)); w > wait || which == -1 {
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

package console

import (
	"crypto/sha256"
	"math"
	"sync"
	"time"
)

// The sign-in rate limits: a burst of attempts, then one per interval,
// per user name (against guessing one user's password) and per client
// address (against trying many users from one place; an IPv6 client
// counts by its /64, see clientaddr.Proxies.Key). The tables hold
// at most maxTracked keys, so that a flood of names cannot grow them; a
// full table forgets its fullest bucket rather than refuse a new key, so
// that a flood of made-up names cannot shut everyone else out. (A flood
// of guesses at one name does slow that user's own sign-in: the price of
// limiting guesses per name.)
const (
	nameBurst      = 5
	nameInterval   = 12 * time.Second
	clientBurst    = 20
	clientInterval = 3 * time.Second
	maxTracked     = 10_000
	// maxKeyBytes bounds what the tables hold of a key (a user name may be
	// as long as a request's body): a longer key is kept as its hash.
	maxKeyBytes = 256
)

// limiter is a set of token buckets by key.
type limiter struct {
	burst    float64
	interval time.Duration
	mu       sync.Mutex
	buckets  map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newLimiter(burst int, interval time.Duration) *limiter {
	return &limiter{burst: float64(burst), interval: interval, buckets: make(map[string]*bucket)}
}

// allow takes one token of key's bucket at now, or reports how long to
// wait for one.
func (l *limiter) allow(key string, now time.Time) (bool, time.Duration) {
	if len(key) > maxKeyBytes {
		sum := sha256.Sum256([]byte(key))
		key = string(sum[:])
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= maxTracked {
			l.sweep(now)
		}
		if len(l.buckets) >= maxTracked {
			l.evictFullest(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	b.tokens = math.Min(l.burst, b.tokens+float64(now.Sub(b.at))/float64(l.interval))
	b.at = now
	if b.tokens < 1 {
		return false, time.Duration((1 - b.tokens) * float64(l.interval))
	}
	b.tokens--
	return true, 0
}

// sweep forgets the buckets that have refilled: they are as new.
func (l *limiter) sweep(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+float64(now.Sub(b.at))/float64(l.interval) >= l.burst {
			delete(l.buckets, k)
		}
	}
}

// evictFullest forgets the bucket with the most tokens at now: the key
// least in need of being held back.
func (l *limiter) evictFullest(now time.Time) {
	var key string
	most := math.Inf(-1)
	for k, b := range l.buckets {
		if t := b.tokens + float64(now.Sub(b.at))/float64(l.interval); t > most {
			key, most = k, t
		}
	}
	delete(l.buckets, key)
}

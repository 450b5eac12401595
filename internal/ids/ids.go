// Package ids makes memstore's identifiers: a prefix naming the kind
// (memstore.StoreIDPrefix, ...) and a lowercase ULID. ULIDs sort by time,
// so an ID doubles as a stable tie-breaker in lists ordered by creation.
package ids

import (
	"crypto/rand"
	"crypto/sha256"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memstore/memstore"
	"github.com/oklog/ulid/v2"
)

// Generator makes identifiers. Within one Generator, identifiers made in
// the same millisecond still increase. It is safe for concurrent use.
type Generator struct {
	mu      sync.Mutex
	entropy *ulid.MonotonicEntropy
}

// NewGenerator returns a Generator with cryptographically random entropy.
func NewGenerator() *Generator {
	return &Generator{entropy: ulid.Monotonic(rand.Reader, 0)}
}

// New returns prefix followed by a lowercase ULID for time t.
func (g *Generator) New(prefix string, t time.Time) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	id, err := ulid.New(ulid.Timestamp(t), g.entropy)
	if err != nil {
		// Only when the monotonic entropy overflows within one
		// millisecond (2^80 IDs): start afresh.
		g.entropy = ulid.Monotonic(rand.Reader, 0)
		id = ulid.MustNew(ulid.Timestamp(t), g.entropy)
	}
	return prefix + strings.ToLower(id.String())
}

// Floor returns the least identifier that New makes with prefix for a
// time at or after t: every identifier made before t's millisecond is
// less. A lookup of what was made before t reads the identifiers below it.
func Floor(prefix string, t time.Time) string {
	var id ulid.ULID
	if err := id.SetTime(ulid.Timestamp(t)); err != nil {
		id = ulid.ULID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff} // after 10889 AD: the greatest time
	}
	return prefix + strings.ToLower(id.String())
}

// crockford is the alphabet of a lowercase ULID, in order.
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// Next returns the least identifier above id, one made by New: its ULID
// plus one. A writer whose clock may lag another's uses it to keep
// identifiers in the order of writing.
func Next(id string) string {
	b := []byte(id)
	for i := len(b) - 1; i >= 0; i-- {
		d := strings.IndexByte(crockford, b[i])
		if d < 0 {
			break // the prefix: the ULID was all "z"s, which no time makes
		}
		if d < len(crockford)-1 {
			b[i] = crockford[d+1]
			return string(b)
		}
		b[i] = crockford[0]
	}
	return id + "0"
}

// Derived returns prefix followed by a lowercase ULID for time t whose
// random part is fixed by key: its first 20 bits are t's nanoseconds
// within the millisecond, so that derived IDs sort by time, and the rest
// is of key's SHA-256. The same time and key give the same ID wherever
// it is made; different keys, distinct ones.
func Derived(prefix string, t time.Time, key string) string {
	sum := sha256.Sum256([]byte(key))
	ns := uint32(t.Nanosecond() % int(time.Millisecond)) // < 2^20
	var entropy [10]byte
	entropy[0], entropy[1], entropy[2] = byte(ns>>12), byte(ns>>4), byte(ns<<4)|sum[0]&0x0f
	copy(entropy[3:], sum[1:])
	var id ulid.ULID
	if err := id.SetTime(ulid.Timestamp(t)); err != nil {
		id = ulid.ULID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	copy(id[6:], entropy[:])
	return prefix + strings.ToLower(id.String())
}

// FeedEvent is the ID of the webhook event of a store's change number
// seq, made at t: derived from them, the same wherever it is made.
func FeedEvent(storeID string, seq int64, t time.Time) string {
	return Derived(memstore.WebhookEventIDPrefix, t, storeID+"/"+strconv.FormatInt(seq, 10))
}

// DreamEvent is the ID of the webhook event of type typ of a dream, made
// at t: derived from them, so that every endpoint's delivery of it has
// the same ID.
func DreamEvent(dreamID, typ string, t time.Time) string {
	return Derived(memstore.WebhookEventIDPrefix, t, "dream/"+dreamID+"/"+typ)
}

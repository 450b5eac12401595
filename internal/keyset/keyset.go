// Package keyset is what the backends share for pagination and
// timestamps: the opaque cursor of a list's page (a keyset) or of a
// search's (an offset), the walk of a list of memories by path
// (MemoryWalk), and times as int64 unix nanoseconds, which every backend
// stores so that a time round-trips exactly.
package keyset

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/memstore/memstore"
)

// A Cursor is the last sort key of a page and a tag naming its list, so
// that a cursor from another list is refused. It travels as "page_" and
// base64url JSON: opaque to clients, readable when debugging.
type Cursor struct {
	Kind   string `json:"k"`
	Time   int64  `json:"t,omitempty"` // lists by time: the created_at
	Key    string `json:"a"`           // an ID, or a memory's path or prefix
	Prefix bool   `json:"p,omitempty"` // memories: Key is a rolled-up prefix
	Seq    int64  `json:"n,omitempty"` // events: the last event's number
}

// The kinds of list, one tag each.
const (
	Stores   = "s"
	Memories = "m"
	Versions = "v"
	Sessions = "sn"
	// SessionsAsc is the sessions list oldest first, whose cursors go the
	// other way.
	SessionsAsc = "sa"
	Tokens      = "st"
	Users       = "u"
	Events      = "e" // Key: the store's ID
	Dreams      = "d"
	// SessionEvents is a session's transcript oldest first, and
	// SessionEventsDesc newest first. Key: the session's ID.
	SessionEvents     = "se"
	SessionEventsDesc = "sd"
)

func (c Cursor) String() string {
	b, _ := json.Marshal(c)
	return "page_" + base64.RawURLEncoding.EncodeToString(b)
}

// ByTime cuts items, a page of n read with one more when there is one,
// to the page, whose Next is then the cursor of kind after the last item
// kept, by its creation time and ID (at).
func ByTime[T any](items []T, n int, kind string, at func(*T) (time.Time, string)) memstore.Page[T] {
	p := memstore.Page[T]{Items: items}
	if len(items) > n {
		p.Items = items[:n]
		t, key := at(&p.Items[n-1])
		p.Next = Cursor{Kind: kind, Time: Nanos(t), Key: key}.String()
	}
	return p
}

// Parse decodes page, which must be "" (nil: the first page) or a cursor
// of kind (EInvalid otherwise). Its key is text without NUL (JSON
// decoding makes it valid UTF-8), so that any database takes it.
func Parse(page, kind string) (*Cursor, error) {
	if page == "" {
		return nil, nil
	}
	bad := memstore.Errorf(memstore.EInvalid, "page %q is not a cursor of this list", page)
	raw, ok := strings.CutPrefix(page, "page_")
	if !ok {
		return nil, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return nil, bad
	}
	var c Cursor
	if err := json.Unmarshal(b, &c); err != nil || c.Kind != kind || c.Key == "" || strings.ContainsRune(c.Key, 0) {
		return nil, bad
	}
	return &c, nil
}

// Nanos is t as unix nanoseconds. A time beyond what they hold (before
// 1677-09-21 or after 2262-04-11, where UnixNano overflows) becomes the
// nearest end, so that a filter bound of any year keeps its meaning:
// everything is after the year 1, nothing after 9999.
func Nanos(t time.Time) int64 {
	switch {
	case t.Before(minNanos):
		return math.MinInt64
	case t.After(maxNanos):
		return math.MaxInt64
	}
	return t.UnixNano()
}

var minNanos, maxNanos = time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)

// Time is unix nanoseconds n as a time in UTC.
func Time(n int64) time.Time { return time.Unix(0, n).UTC() }

// NullNanos is Nanos of t, or nil (NULL) when t is nil.
func NullNanos(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	n := Nanos(*t)
	return &n
}

// NullTime is Time of n, or nil when n is nil.
func NullTime(n *int64) *time.Time {
	if n == nil {
		return nil
	}
	t := Time(*n)
	return &t
}

// Round is t as stored: to the nanosecond, in UTC.
func Round(t time.Time) time.Time { return Time(Nanos(t)) }

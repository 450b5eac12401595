package keyset

import (
	"strings"
	"unicode/utf8"

	"github.com/memstore/memstore"
)

// UpperBound returns the smallest text above every text that starts with
// prefix, or false when there is none: prefix with its last character
// that can be incremented, incremented. The memories under "/a/" are
// exactly those with "/a/" <= path < "/a0", one range of an index on
// path. A character incremented is still valid text, which every database
// takes; UTF-8 orders its bytes as the characters, so the range is the
// same in byte order.
func UpperBound(prefix string) (string, bool) {
	for end := len(prefix); end > 0; {
		r, size := utf8.DecodeLastRuneInString(prefix[:end])
		end -= size
		if r < utf8.MaxRune {
			next := r + 1
			if next == 0xd800 { // surrogates are not characters
				next = 0xe000
			}
			return prefix[:end] + string(next), true
		}
	}
	return "", false
}

// A MemoryRange is one read of a list's walk: up to Want live memories of
// the store, in path order, with a path after From (or at it, when
// Inclusive) and before To ("": no bound).
type MemoryRange struct {
	From      string
	Inclusive bool
	To        string
	Want      int
}

// A FetchMemories reads the memories of r, calling yield with each in
// order and stopping early, without error, when yield returns false.
type FetchMemories func(r MemoryRange, yield func(*memstore.Memory) bool) error

// A MemoryWalk is one page of a list of memories (the rule of
// memstore.MemoryFilter), its filter checked and cursor decoded, ready to
// be walked over a backend's (store_id, path) index. It lives here, with
// the cursor whose keys are its resumption points, because the root
// package cannot import the cursor: every backend walks a list by it, and
// implements storage alone (FetchMemories).
type MemoryWalk struct {
	n, depth int
	base, to string
	from     string
	incl     bool
	done     bool // the cursor is past every path
}

// NewMemoryWalk checks f's page size and cursor (EInvalid).
func NewMemoryWalk(f memstore.MemoryFilter) (MemoryWalk, error) {
	n, err := memstore.PageSize(f.Limit, f.Full)
	if err != nil {
		return MemoryWalk{}, err
	}
	cur, err := Parse(f.Page, Memories)
	if err != nil {
		return MemoryWalk{}, err
	}
	prefix := f.PathPrefix
	if prefix == "" {
		prefix = "/"
	}
	w := MemoryWalk{n: n, depth: f.Depth, from: prefix, incl: true}
	// The walk resumes strictly after a memory's path, or after
	// everything below a prefix.
	if cur != nil {
		w.from, w.incl = cur.Key, false
		if cur.Prefix {
			var ok bool
			w.from, ok = UpperBound(cur.Key)
			w.done, w.incl = !ok, true
		}
		if w.from < prefix {
			w.from, w.incl = prefix, true
		}
	}
	w.to, _ = UpperBound(prefix)
	// Depth counts segments below base, the prefix up to its last "/":
	// the prefix itself for a segment-aligned one.
	w.base = prefix[:strings.LastIndexByte(prefix, '/')+1]
	return w, nil
}

// Walk builds the page with fetch. It stops after the page's items and
// one more, so that a page costs O(page) whatever the store's size: with
// a depth, a memory deeper than it is rolled up into a prefix item, and
// the walk then seeks past everything under that prefix. Walk may run
// again, in a new transaction, and starts over.
func (w MemoryWalk) Walk(fetch FetchMemories) (memstore.Page[memstore.ListItem], error) {
	var items []memstore.ListItem
	from, incl, done := w.from, w.incl, w.done
	got, seek := 0, false
	yield := func(m *memstore.Memory) bool {
		got++
		rest := m.Path[len(w.base):]
		if w.depth > 0 && strings.Count(rest, "/") >= w.depth {
			// Deeper than the depth: roll up to the first depth segments
			// below the prefix, then seek past them.
			p := w.base + rest[:segmentsEnd(rest, w.depth)+1]
			items = append(items, memstore.ListItem{Prefix: p})
			var ok bool
			from, ok = UpperBound(p)
			incl, done, seek = true, !ok, true
			return false
		}
		items = append(items, memstore.ListItem{Memory: m})
		from, incl = m.Path, false
		return true
	}
	for !done && len(items) <= w.n {
		want := w.n + 1 - len(items)
		got, seek = 0, false
		if err := fetch(MemoryRange{From: from, Inclusive: incl, To: w.to, Want: want}, yield); err != nil {
			return memstore.Page[memstore.ListItem]{}, err
		}
		if !seek && got < want {
			break // the range is exhausted
		}
	}
	page := memstore.Page[memstore.ListItem]{Items: items}
	if len(items) > w.n {
		page.Items = items[:w.n]
		page.Next = itemCursor(items[w.n-1]).String()
	}
	return page, nil
}

// segmentsEnd is the index of the "/" that ends the first n segments of
// s, which has at least n.
func segmentsEnd(s string, n int) int {
	i := -1
	for range n {
		i += 1 + strings.IndexByte(s[i+1:], '/')
	}
	return i
}

// itemCursor is the cursor after item.
func itemCursor(item memstore.ListItem) Cursor {
	if item.Memory == nil {
		return Cursor{Kind: Memories, Key: item.Prefix, Prefix: true}
	}
	return Cursor{Kind: Memories, Key: item.Memory.Path}
}

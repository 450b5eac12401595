// Package storediff compares two memory stores path by path: which paths
// one has that the other has not, and which both have with different
// content, with the unified diff of each. It works over
// memstore.Services, so against a local core and a remote server alike;
// the command line's 'memstore stores diff' and the console's review of a
// dream use it.
package storediff

import (
	"context"
	"fmt"
	"sort"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/textdiff"
)

// Kind is what happened to a path from the first store to the second:
// the core's kinds of change, which a dream's review names too.
type Kind = memstore.ChangeKind

// The kinds of change.
const (
	Added   = memstore.ChangeAdded   // only the second store has the path
	Removed = memstore.ChangeRemoved // only the first store has it
	Changed = memstore.ChangeChanged // both have it, with different content
)

// A Change is one path that differs. From and To are the memories at
// the path in the first and second store, without their content (nil
// where that store has none).
type Change struct {
	Path     string
	Kind     Kind
	From, To *memstore.Memory
}

// A Diff is the comparison of two stores: the changes by path in byte
// order, and how many paths both stores hold alike.
type Diff struct {
	From, To *memstore.Store
	Changes  []Change
	Same     int
}

// Reader is what a comparison reads: a store's memories in one snapshot,
// and a memory's content.
type Reader interface {
	memstore.ExportService
	memstore.MemoryService
}

// Compare compares store fromID with store toID, as caller. It reads
// each store's listing once (one snapshot each, without content), so it
// holds at most the two listings; the content of a change is read by
// Text only when wanted.
func Compare(ctx context.Context, r Reader, caller *memstore.Caller, fromID, toID string) (*Diff, error) {
	from, fromMems, err := listing(ctx, r, caller, fromID)
	if err != nil {
		return nil, err
	}
	to, toMems, err := listing(ctx, r, caller, toID)
	if err != nil {
		return nil, err
	}
	d := &Diff{From: from, To: to}
	for p, f := range fromMems {
		t, ok := toMems[p]
		switch {
		case !ok:
			d.Changes = append(d.Changes, Change{Path: p, Kind: Removed, From: f})
		case t.ContentSHA256 != f.ContentSHA256:
			d.Changes = append(d.Changes, Change{Path: p, Kind: Changed, From: f, To: t})
		default:
			d.Same++
		}
	}
	for p, t := range toMems {
		if _, ok := fromMems[p]; !ok {
			d.Changes = append(d.Changes, Change{Path: p, Kind: Added, To: t})
		}
	}
	sort.Slice(d.Changes, func(i, j int) bool { return d.Changes[i].Path < d.Changes[j].Path })
	return d, nil
}

// listing is a store and its live memories by path, without content.
func listing(ctx context.Context, r Reader, caller *memstore.Caller, storeID string) (*memstore.Store, map[string]*memstore.Memory, error) {
	var store *memstore.Store
	mems := map[string]*memstore.Memory{}
	err := r.ExportMemories(ctx, caller, storeID, false, sink{
		store:  func(s *memstore.Store) { store = s },
		memory: func(m *memstore.Memory) { mems[m.Path] = m },
	})
	if err != nil {
		return nil, nil, err
	}
	return store, mems, nil
}

// sink is an ExportSink of two functions.
type sink struct {
	store  func(*memstore.Store)
	memory func(*memstore.Memory)
}

func (s sink) Store(st *memstore.Store) error { s.store(st); return nil }

func (s sink) Memory(m *memstore.Memory) error {
	c := *m
	s.memory(&c)
	return nil
}

// A Text is a change's content on both sides and their unified diff.
type Text struct {
	From, To string // "" for a side without the path
	// Diff is the unified diff from From to To, with the labels a/PATH and
	// b/PATH (/dev/null for a missing side); for binary content (a NUL
	// byte on either side) a one-line note instead, as git gives.
	Diff   string
	Binary bool
	// Added and Deleted count the diff's lines (0 for binary content).
	Added, Deleted int
}

// Text reads the content of both sides of ch and diffs them. A side whose
// memory was deleted since the comparison reads as empty.
func (d *Diff) Text(ctx context.Context, r Reader, caller *memstore.Caller, ch Change) (*Text, error) {
	var t Text
	var err error
	if t.From, err = content(ctx, r, caller, d.From.ID, ch.From); err != nil {
		return nil, err
	}
	if t.To, err = content(ctx, r, caller, d.To.ID, ch.To); err != nil {
		return nil, err
	}
	t.Diff, t.Binary, err = Unified(ch.Path, ch.From != nil, ch.To != nil, t.From, t.To)
	if err != nil {
		return nil, err
	}
	if !t.Binary {
		t.Added, t.Deleted = textdiff.Count(t.Diff)
	}
	return &t, nil
}

// Unified is the unified diff of the content at path from one side to
// the other, labelled a/PATH and b/PATH (/dev/null for a side that has
// no memory at the path), or a note when either side is binary.
func Unified(path string, hasFrom, hasTo bool, from, to string) (diff string, binary bool, err error) {
	fromLabel, toLabel := "a"+path, "b"+path
	if !hasFrom {
		fromLabel = "/dev/null"
	}
	if !hasTo {
		toLabel = "/dev/null"
	}
	if textdiff.Binary(from) || textdiff.Binary(to) {
		return fmt.Sprintf("Binary content %s and %s differ (%d and %d bytes)\n", fromLabel, toLabel, len(from), len(to)), true, nil
	}
	diff, err = textdiff.Unified(fromLabel, toLabel, from, to)
	return diff, false, err
}

// content is the content of memory m of a store, "" when m is nil or
// was deleted since.
func content(ctx context.Context, r Reader, caller *memstore.Caller, storeID string, m *memstore.Memory) (string, error) {
	if m == nil {
		return "", nil
	}
	full, err := r.Memory(ctx, caller, storeID, m.ID)
	switch {
	case memstore.ErrorCode(err) == memstore.ENotFound:
		return "", nil
	case err != nil:
		return "", err
	}
	return full.Content, nil
}

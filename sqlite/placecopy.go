package sqlite

import (
	"context"
	"math"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
	"github.com/memstore/memstore/internal/storecopy"
)

// A search of conversations reads where each of its best hits is and
// the rowids of the turns around them: a hundred rows and as many index
// seeks, a quarter of the search. Each process keeps a copy of where the
// memories of the stores of conversations it searched are, and brings it
// up to date before each search: the memories created since, from the
// store's events (numbered without gaps in the order of the commits);
// after a deletion or a move (stores.places_changed,
// migrations/0006_place_changes.sql), the whole store again. A copy is
// locked before the search's transaction begins, so it is never newer
// than the snapshot it is brought to; the search then keeps what it read
// (placeView), which later searches never change, and lets go of it.
type placeCopies struct {
	storecopy.Copies[placeAt, *placeSet]
}

// placeAt is the position a copy was brought to: the store's count of
// deletions and moves, and its last event.
type placeAt struct{ changed, seq int64 }

// A placeSet is where a store's memories are: a base read whole and the
// memories created since, each never changed once made, so that a search
// may keep them after it lets go of the copy.
type placeSet struct {
	base, added *places
}

type places struct {
	paths  map[int64]string
	rowids map[string]int64
	bytes  int64
}

// placeCopyMax is the largest copy of a store: beyond a workspace's share
// of the copies, the store is read from the database at each search.
var placeCopyMax int64 = memstore.PlaceCopyBytesPerWorkspace

// placeEntryBytes is about what an entry of places costs beyond its path:
// a rowid, a string header and a slot in each map.
const placeEntryBytes = 96

func newPlaces(n int) *places {
	return &places{paths: make(map[int64]string, n), rowids: make(map[string]int64, n)}
}

func (p *places) add(rowid int64, path string) {
	p.paths[rowid], p.rowids[path] = path, rowid
	p.bytes += placeEntryBytes + int64(len(path))
}

func (p *places) len() int { return len(p.paths) }

// Bytes implements storecopy.Set.
func (s *placeSet) Bytes() int64 {
	if s == nil {
		return 0
	}
	return s.base.bytes + s.added.bytes
}

// Holds implements storecopy.Set: a copy of places holds no memory ID.
func (s *placeSet) Holds(string) bool { return false }

// with returns s with the memories of more added: a new set, so that the
// searches holding s keep it as it was. The memories created since the
// base are copied each time, until they are more than about four times
// the square root of the base's (4,000 for a million): they then make a
// new base, so that neither the copies nor the new bases cost a search
// much as the store grows.
func (s *placeSet) with(more map[int64]keyset.Place) *placeSet {
	added := newPlaces(s.added.len() + len(more))
	for r, p := range s.added.paths {
		added.add(r, p)
	}
	for r, p := range more {
		added.add(r, p.Path)
	}
	if added.len() <= 4*int(math.Sqrt(float64(s.base.len())))+1024 {
		return &placeSet{base: s.base, added: added}
	}
	base := newPlaces(s.base.len() + added.len())
	for _, from := range []*places{s.base, added} {
		for r, p := range from.paths {
			base.add(r, p)
		}
	}
	return &placeSet{base: base, added: newPlaces(0)}
}

// A placeView is where the memories of the stores of conversations of one
// search are, as of its snapshot: a set for each store the copies held,
// and the search's transaction for the others.
type placeView struct {
	sets    map[string]*placeSet
	missing bool // a store of conversations is not in sets
	tx      *txn
	ctx     context.Context
}

// placesOf brings the copies of the stores, locked, up to date as of tx,
// and returns what the search reads of them. A store the copies cannot
// hold (larger alone than a workspace's share) is left to the database,
// checked before each use, since a store of conversations mostly grows.
// A copy is brought forward only: a position behind it (a store of that
// ID deleted and restored since) reads the store again.
func (db *DB) placesOf(ctx context.Context, tx *txn, copies []*storecopy.Copy[placeAt, *placeSet]) (*placeView, error) {
	v := &placeView{sets: map[string]*placeSet{}, tx: tx, ctx: ctx}
	for _, cp := range copies {
		var at placeAt
		var count int64
		err := tx.queryRow(ctx, `SELECT places_changed, memory_count, ifnull((SELECT seq FROM events WHERE store_id = s.id ORDER BY seq DESC LIMIT 1), 0)
			FROM stores s WHERE id = ? AND workspace_id = ?`, cp.Key.Store, cp.Key.Workspace).Scan(&at.changed, &count, &at.seq)
		if err != nil {
			return nil, err // the search checked the stores before
		}
		switch {
		case count*placeEntryBytes > placeCopyMax:
			cp.Set, v.missing = nil, true
			continue
		case cp.Set != nil && cp.At == at:
		case cp.Set != nil && cp.At.changed == at.changed && cp.At.seq < at.seq:
			more, err := createdSince(ctx, tx, cp.Key.Store, cp.At.seq, at.seq)
			if err != nil {
				return nil, err
			}
			if len(more) > 0 {
				cp.Set = cp.Set.with(more)
			}
			cp.At = at
		default:
			set, err := readPlaces(ctx, tx, cp.Key.Store, count)
			if err != nil {
				return nil, err
			}
			cp.Set, cp.At = set, at
		}
		if cp.Set.Bytes() > placeCopyMax { // its paths longer than most
			cp.Set, v.missing = nil, true
			continue
		}
		v.sets[cp.Key.Store] = cp.Set
	}
	return v, nil
}

// readPlaces reads where all the memories of a store are, from its index
// of paths alone.
func readPlaces(ctx context.Context, tx *txn, store string, count int64) (*placeSet, error) {
	all, err := scanPlaces(tx.query(ctx, `SELECT rowid, store_id, path FROM memories WHERE store_id = ?`, store))
	if err != nil {
		return nil, err
	}
	base := newPlaces(int(count))
	for r, p := range all {
		base.add(r, p.Path)
	}
	return &placeSet{base: base, added: newPlaces(0)}, nil
}

// createdSince reads where the memories of a store created by its events
// after seq from, up to to, are: those still there (a deletion or a move
// since would have changed places_changed).
func createdSince(ctx context.Context, tx *txn, store string, from, to int64) (map[int64]keyset.Place, error) {
	return scanPlaces(tx.query(ctx, `SELECT m.rowid, m.store_id, m.path FROM events e
		JOIN versions v ON v.store_id = e.store_id AND v.id = e.version_id
		JOIN memories m ON m.id = v.memory_id
		WHERE e.store_id = ? AND e.seq > ? AND e.seq <= ? AND e.type = ?`, store, from, to, string(memstore.EventMemoryCreated)))
}

// Places implements keyset.Turns.Places: the memories of the copied
// stores from their sets, the others from the database, of the stores of
// conversations only (a memory of another store has no neighbours).
func (v *placeView) Places(rowids []int64) (map[int64]keyset.Place, error) {
	out := make(map[int64]keyset.Place, len(rowids))
	for store, s := range v.sets {
		for _, r := range rowids {
			if p, ok := s.base.paths[r]; ok {
				out[r] = keyset.Place{Store: store, Path: p}
			} else if p, ok := s.added.paths[r]; ok {
				out[r] = keyset.Place{Store: store, Path: p}
			}
		}
	}
	if len(out) == len(rowids) || !v.missing {
		return out, nil // a memory in no set is in no store of conversations
	}
	var rest []int64
	for _, r := range rowids {
		if _, ok := out[r]; !ok {
			rest = append(rest, r)
		}
	}
	more, err := searchPlaces(v.ctx, v.tx, rest)
	for r, p := range more {
		out[r] = p
	}
	return out, err
}

// At implements keyset.Turns.At.
func (v *placeView) At(store string, paths []string) (map[string]int64, error) {
	s, ok := v.sets[store]
	if !ok {
		return searchAt(v.ctx, v.tx, store, paths)
	}
	out := make(map[string]int64, len(paths))
	for _, p := range paths {
		if r, ok := s.base.rowids[p]; ok {
			out[p] = r
		} else if r, ok := s.added.rowids[p]; ok {
			out[p] = r
		}
	}
	return out, nil
}

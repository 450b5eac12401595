package sqlite

import (
	"fmt"
	"testing"

	"github.com/memstore/memstore/internal/keyset"
)

// A set of places grows a memory at a time into new sets, merged into a
// new base past its bound, and leaves every set a search holds as it was.
func TestPlaceSetGrows(t *testing.T) {
	base := newPlaces(0)
	for r := range int64(100) {
		base.add(r, fmt.Sprintf("/c/%03d.md", r))
	}
	s := &placeSet{base: base, added: newPlaces(0)}
	held := s
	merged := false
	for r := int64(100); r < 1300; r++ {
		s = s.with(map[int64]keyset.Place{r: {Store: "st", Path: fmt.Sprintf("/c/%03d.md", r)}})
		merged = merged || s.added.len() == 0
		if s.added.len() > 4*10+1024 {
			t.Fatalf("%d memories added beside a base of %d", s.added.len(), s.base.len())
		}
	}
	if !merged {
		t.Fatal("never merged into a new base")
	}
	for r := range int64(1300) {
		p := fmt.Sprintf("/c/%03d.md", r)
		got, ok := s.base.paths[r]
		if !ok {
			got, ok = s.added.paths[r]
		}
		at, ok2 := s.base.rowids[p]
		if !ok2 {
			at, ok2 = s.added.rowids[p]
		}
		if !ok || got != p || !ok2 || at != r {
			t.Fatalf("memory %d: path %q %v, rowid %d %v", r, got, ok, at, ok2)
		}
	}
	if held.base.len() != 100 || held.added.len() != 0 || held.Bytes() != base.bytes {
		t.Fatalf("the set held before changed: base %d, added %d", held.base.len(), held.added.len())
	}
	if s.Bytes() <= held.Bytes() {
		t.Fatalf("a set of 1,300 memories is %d bytes, one of 100 %d", s.Bytes(), held.Bytes())
	}
}

package storecopy

import (
	"fmt"
	"testing"
	"time"
)

// A testSet holds what a backend would read of a store: an entry of bytes
// for each memory.
type testSet struct {
	held  map[string]bool
	bytes int64
}

func (s *testSet) Add(id string, b []byte) {
	if s.held == nil {
		s.held = map[string]bool{}
	}
	s.held[id] = true
	s.bytes += int64(len(id)+len(b)) + 16
}

func (s *testSet) Bytes() int64 {
	if s == nil {
		return 0
	}
	return s.bytes
}

func (s *testSet) Holds(id string) bool { return s != nil && s.held[id] }

func (s *testSet) Len() int { return len(s.held) }

// fill gives cp a set of n entries of 4 bytes, as a search that read its
// store would.
func fill(cp *Copy[int, *testSet], n int) {
	cp.Set = &testSet{}
	for i := range n {
		cp.Set.Add(fmt.Sprintf("mem_%04d", i), []byte{1, 2, 3, 4})
	}
}

// The copies stay within their limit: the least recently used go first,
// never the ones just used, even when those alone are over the limit.
func TestCopiesKeepTheirLimit(t *testing.T) {
	var one testSet
	for i := range 100 {
		one.Add(fmt.Sprintf("mem_%04d", i), []byte{1, 2, 3, 4})
	}
	per := one.Bytes()
	if per < 100*(4+8) {
		t.Fatalf("a set of 100 entries of 4 bytes with 8-byte IDs is %d bytes", per)
	}
	c := &Copies[int, *testSet]{Limit: 2*per + per/2}
	use := func(store string) bool {
		cps, unlock := c.LockStores("ws", []string{store}, "m", 4)
		defer unlock()
		had := cps[0].Set != nil
		if !had {
			fill(cps[0], 100)
		}
		return had
	}
	for _, s := range []string{"a", "b", "a", "c"} { // c pushes b, the least recently used, out
		use(s)
	}
	if !use("a") || !use("c") || use("b") {
		t.Fatal("after a, b, a, c within a limit of two and a half: want a and c kept, b dropped")
	}
	// b came back and pushed out a (used before c).
	if use("a") {
		t.Fatal("a is still kept after b came back")
	}
	// A copy over the limit alone is kept while it is the last used.
	c.Limit = per / 2
	use("z")
	if !use("z") {
		t.Fatal("the copy just used was dropped")
	}
	c.mu.Lock()
	n := len(c.m)
	c.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d copies kept over the limit, want only the last used", n)
	}
}

// A copy left empty (its store was not the workspace's, or its read
// failed) goes on unlock; an idle copy goes at a sweep, a busy one stays;
// a deleted store's copies go.
func TestCopiesLeaveNothingBehind(t *testing.T) {
	c := &Copies[int, *testSet]{}
	_, unlock := c.LockStores("ws", []string{"nope"}, "m", 4)
	unlock()
	if c.Len() != 0 {
		t.Fatalf("%d copies after a search that read nothing, want 0", c.Len())
	}
	cps, unlock := c.LockStores("ws", []string{"a", "b"}, "m", 4)
	fill(cps[0], 1)
	fill(cps[1], 1)
	unlock()
	busy, unlockB := c.LockStores("ws", []string{"b"}, "m", 4)
	c.Sweep(time.Now().Add(time.Hour))
	if c.Len() != 1 || busy[0].Set == nil {
		t.Fatalf("after a sweep, %d copies, want the busy one only", c.Len())
	}
	unlockB()
	c.DropStore("other", "b")
	if c.Len() != 1 {
		t.Fatal("another workspace's deletion dropped the copy")
	}
	c.DropStore("ws", "b")
	if c.Len() != 0 {
		t.Fatalf("%d copies after the store's deletion, want 0", c.Len())
	}
}

// sharedCopies are copies with room for four and a half copies of 100
// vectors (fill's), two and a half a workspace.
func sharedCopies() *Copies[int, *testSet] {
	var one Copy[int, *testSet]
	fill(&one, 100)
	per := one.Set.Bytes()
	return &Copies[int, *testSet]{Limit: 4*per + per/2, WorkspaceLimit: 2*per + per/2}
}

// One workspace cannot push another's copies out: past a workspace's
// share its own least recently used copies go, and at the limit the
// workspace holding the most gives, so that a store of another workspace
// still loads and stays while the first searches store after store.
func TestCopiesShareBetweenWorkspaces(t *testing.T) {
	c := sharedCopies()
	use := func(ws, store string) bool {
		cps, unlock := c.LockStores(ws, []string{store}, "m", 4)
		defer unlock()
		had := cps[0].Set != nil
		if !had {
			fill(cps[0], 100)
		}
		return had
	}
	held := func(ws string) (n int) {
		for k := range c.Uses() {
			if k.Workspace == ws {
				n++
			}
		}
		return n
	}
	use("quiet", "q1")
	// A busy workspace searches many stores, over and over.
	for range 3 {
		for i := range 10 {
			use("busy", fmt.Sprintf("b%d", i))
		}
	}
	if !use("quiet", "q1") {
		t.Fatal("the busy workspace pushed the quiet one's copy out")
	}
	if n := held("busy"); n > 2 {
		t.Fatalf("the busy workspace holds %d copies, over its share of two and a half", n)
	}
	// The quiet workspace loads more stores, up to its own share, while
	// the busy one keeps searching: the busy one gives.
	use("quiet", "q2")
	for i := range 10 {
		use("busy", fmt.Sprintf("b%d", i))
	}
	if !use("quiet", "q1") || !use("quiet", "q2") {
		t.Fatal("the quiet workspace's copies, within its share, were pushed out")
	}
	// At the limit, the workspace holding the most gives, not the least
	// recently used copy:
	// a third workspace's store pushes out the busy one's copy, though
	// the quiet one's were used before it, and stays.
	use("busy", "b9")
	use("busy", "b0")
	use("third", "t1")
	if held("quiet") != 2 || held("busy") != 1 {
		t.Fatalf("a third workspace's store took the room of the quiet one (%d copies) rather than the busy one's (%d)", held("quiet"), held("busy"))
	}
	use("busy", "b1")
	use("busy", "b2")
	if !use("third", "t1") {
		t.Fatal("the third workspace's copy was pushed out by the busiest one")
	}
	// A copy in use is never freed, however far over its share.
	cps, unlock := c.LockStores("busy", []string{"big"}, "m", 4)
	fill(cps[0], 500)
	for i := range 5 {
		use("busy", fmt.Sprintf("b%d", i))
	}
	if cps[0].Set == nil || cps[0].Set.Len() != 500 {
		t.Fatal("a copy in use was freed")
	}
	unlock()
}

// However many workspaces hold a copy each, the copies stay within the
// limit: when the one searching has only the copy it just used, the
// largest other holder gives.
func TestCopiesBoundedAcrossWorkspaces(t *testing.T) {
	c := sharedCopies()
	for i := range 8 {
		cps, unlock := c.LockStores(fmt.Sprintf("w%d", i), []string{"s"}, "m", 4)
		fill(cps[0], 100)
		unlock()
	}
	if c.Len() > 4 {
		t.Fatalf("%d copies of 8 workspaces kept, over the limit of four and a half", c.Len())
	}
	if _, ok := c.Uses()[CopyKey{Workspace: "w7", Store: "s", Model: "m", Dims: 4}]; !ok {
		t.Fatal("the copy just used was dropped")
	}
}

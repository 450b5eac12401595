package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
)

// Workspaces and actors used throughout; the backends treat them as opaque.
const (
	wsA = "wrkspc_storetestaaaaaaaaaaaaaaaa"
	wsB = "wrkspc_storetestbbbbbbbbbbbbbbbb"
)

var (
	actorKey     = memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_storetest1"}
	actorKey2    = memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_storetest2"}
	actorSession = memstore.Actor{Type: memstore.ActorSession, ID: "sesn_storetest1"}
	actorUser    = memstore.Actor{Type: memstore.ActorUser, ID: "user_storetest1"}
	actorUser2   = memstore.Actor{Type: memstore.ActorUser, ID: "user_storetest2"}
	actorSvc     = memstore.Actor{Type: memstore.ActorServiceAccount, ID: "svac_storetest1"}
)

// maxPages bounds every paging loop so that a backend handing out cursors
// forever fails instead of hanging.
const maxPages = 1000

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func ptr[T any](v T) *T { return &v }

// tick sleeps a little so that a change which wrongly bumps a timestamp is
// visible even with a coarse clock. Nothing relies on the sleep for
// correctness.
func tick() { time.Sleep(5 * time.Millisecond) }

// timeRange is a case of a created_at filter: its bounds and what it must
// include (the bounds are inclusive).
type timeRange struct {
	name     string
	gte, lte *time.Time
	must     []string
}

// farBounds are ranges with bounds in any year RFC 3339 can write, far
// beyond what a backend may hold (int64 nanoseconds end in 1677 and
// 2262): a bound before everything or after everything keeps its
// meaning. first and last are the oldest and newest items listed.
func farBounds(first, last string) []timeRange {
	year1 := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	year9999 := time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	y1600 := time.Date(1600, 6, 1, 0, 0, 0, 0, time.UTC)
	y2300 := time.Date(2300, 6, 1, 0, 0, 0, 0, time.FixedZone("UTC+14", 14*3600))
	return []timeRange{
		{"GTEYear1", &year1, nil, []string{first, last}},
		{"LTEYear9999", nil, &year9999, []string{first, last}},
		{"Year1ToYear9999", &year1, &year9999, []string{first, last}},
		{"Year1600To2300", &y1600, &y2300, []string{first, last}},
		{"GTEYear9999", &year9999, nil, nil},
		{"GTEYear2300", &y2300, nil, nil},
		{"LTEYear1", nil, &year1, nil},
		{"LTEYear1600", nil, &y1600, nil},
	}
}

// wantCode reports an error unless err has code.
func wantCode(t *testing.T, err error, code, what string) bool {
	t.Helper()
	if got := memstore.ErrorCode(err); got != code {
		t.Errorf("%s: error code %q (%v), want %q", what, got, err, code)
		return false
	}
	return true
}

// wantError checks that err is want: its code and its words, which every
// backend takes from the root (memstore.ErrStoreNotFound and the like).
func wantError(t *testing.T, err error, want *memstore.Error, what string) {
	t.Helper()
	if wantCode(t, err, want.Code, what) && memstore.ErrorMessage(err) != want.Message {
		t.Errorf("%s: %q, want %q", what, memstore.ErrorMessage(err), want.Message)
	}
}

// wantPathConflict checks that err is an EPathConflict naming the memory
// that blocks the path.
func wantPathConflict(t *testing.T, err error, blockerID, blockerPath, what string) {
	t.Helper()
	if !wantCode(t, err, memstore.EPathConflict, what) {
		return
	}
	var e *memstore.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: %T is not a *memstore.Error", what, err)
		return
	}
	if e.ConflictingMemoryID != blockerID || e.ConflictingPath != blockerPath {
		t.Errorf("%s: conflict with (%q, %q), want (%q, %q)", what, e.ConflictingMemoryID, e.ConflictingPath, blockerID, blockerPath)
	}
}

// pathConflict is a path that a memory blocks: the one of blockerID, at
// blockerAt.
type pathConflict struct{ name, path, blockerID, blockerAt string }

// mustBlockers creates a memory at /notes and one at /deep/a/b/c.md, and
// returns the first and the paths the two block: their own, paths below
// the first and paths above the second.
func mustBlockers(t *testing.T, b backend, storeID string) (*memstore.Memory, []pathConflict) {
	t.Helper()
	notes := mustCreateMemory(t, b, wsA, storeID, "/notes", "a file named notes")
	deep := mustCreateMemory(t, b, wsA, storeID, "/deep/a/b/c.md", "deep")
	return notes, []pathConflict{
		{"SamePath", "/notes", notes.ID, "/notes"},
		{"UnderAMemory", "/notes/a.md", notes.ID, "/notes"},
		{"FarUnderAMemory", "/notes/x/y/z.md", notes.ID, "/notes"},
		{"AboveAMemory", "/deep", deep.ID, "/deep/a/b/c.md"},
		{"JustAboveAMemory", "/deep/a/b", deep.ID, "/deep/a/b/c.md"},
	}
}

// wantPathConflicts checks that try refuses the path of each case with an
// EPathConflict naming its blocker.
func wantPathConflicts(t *testing.T, cases []pathConflict, try func(path string) error) {
	t.Helper()
	for _, c := range cases {
		wantPathConflict(t, try(c.path), c.blockerID, c.blockerAt, c.name)
	}
}

func wantPrefix(t *testing.T, id, prefix, what string) {
	t.Helper()
	if !strings.HasPrefix(id, prefix) || len(id) == len(prefix) {
		t.Errorf("%s: ID %q does not start with %q", what, id, prefix)
	}
}

func wantTime(t *testing.T, got, want time.Time, what string) {
	t.Helper()
	if !got.Equal(want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// wantTimeOrNil checks an optional time: both nil, or both set and equal.
func wantTimeOrNil(t *testing.T, got, want *time.Time, what string) {
	t.Helper()
	switch {
	case (got == nil) != (want == nil):
		t.Errorf("%s = %v, want %v", what, got, want)
	case got != nil:
		wantTime(t, *got, *want, what)
	}
}

func mustCreateStore(t *testing.T, b backend, ws, name string) *memstore.Store {
	t.Helper()
	s, err := b.CreateStore(t.Context(), ws, memstore.StoreCreate{Name: name})
	if err != nil {
		t.Fatalf("CreateStore(%q): %v", name, err)
	}
	return s
}

func mustStore(t *testing.T, b backend, ws, id string) *memstore.Store {
	t.Helper()
	s, err := b.Store(t.Context(), ws, id)
	if err != nil {
		t.Fatalf("Store(%s): %v", id, err)
	}
	return s
}

func mustArchiveStore(t *testing.T, b backend, ws, id string) *memstore.Store {
	t.Helper()
	s, err := b.ArchiveStore(t.Context(), ws, id, reader)
	if err != nil {
		t.Fatalf("ArchiveStore(%s): %v", id, err)
	}
	return s
}

// newStore opens a fresh backend with one store in workspace A.
func newStore(t *testing.T, open func(*testing.T) backend) (backend, string) {
	t.Helper()
	b := open(t)
	return b, mustCreateStore(t, b, wsA, "test store").ID
}

func mustCreateMemory(t *testing.T, b backend, ws, storeID, path, content string) *memstore.Memory {
	t.Helper()
	return mustCreateMemoryBy(t, b, ws, storeID, path, content, actorKey)
}

func mustCreateMemoryBy(t *testing.T, b backend, ws, storeID, path, content string, by memstore.Actor) *memstore.Memory {
	t.Helper()
	m, err := b.CreateMemory(t.Context(), ws, storeID, memstore.MemoryCreate{Path: path, Content: content}, by)
	if err != nil {
		t.Fatalf("CreateMemory(%q): %v", path, err)
	}
	return m
}

func mustMemory(t *testing.T, b backend, ws, storeID, id string) *memstore.Memory {
	t.Helper()
	m, err := b.Memory(t.Context(), ws, storeID, id)
	if err != nil {
		t.Fatalf("Memory(%s): %v", id, err)
	}
	return m
}

func mustUpdateMemory(t *testing.T, b backend, ws, storeID, id string, u memstore.MemoryUpdate, by memstore.Actor) *memstore.Memory {
	t.Helper()
	m, err := b.UpdateMemory(t.Context(), ws, storeID, id, u, by)
	if err != nil {
		t.Fatalf("UpdateMemory(%s): %v", id, err)
	}
	return m
}

func mustDeleteMemory(t *testing.T, b backend, ws, storeID, id string, by memstore.Actor) {
	t.Helper()
	if err := b.DeleteMemory(t.Context(), ws, storeID, id, "", by); err != nil {
		t.Fatalf("DeleteMemory(%s): %v", id, err)
	}
}

func mustVersion(t *testing.T, b backend, ws, storeID, id string) *memstore.Version {
	t.Helper()
	v, err := b.Version(t.Context(), ws, storeID, id)
	if err != nil {
		t.Fatalf("Version(%s): %v", id, err)
	}
	return v
}

// checkMemory checks a memory's path and content fields. withContent says
// whether Content must hold the text (a full view) or be "" (a basic one).
func checkMemory(t *testing.T, m *memstore.Memory, path, content string, withContent bool, what string) {
	t.Helper()
	if m.Path != path {
		t.Errorf("%s: Path = %q, want %q", what, m.Path, path)
	}
	wantContent := ""
	if withContent {
		wantContent = content
	}
	if m.Content != wantContent {
		t.Errorf("%s: Content = %q, want %q", what, m.Content, wantContent)
	}
	if m.ContentSHA256 != sha(content) {
		t.Errorf("%s: ContentSHA256 = %q, want %q", what, m.ContentSHA256, sha(content))
	}
	if m.ContentSize != int64(len(content)) {
		t.Errorf("%s: ContentSize = %d, want %d", what, m.ContentSize, len(content))
	}
	wantPrefix(t, m.VersionID, "memver_", what+": VersionID")
}

// checkVersion checks a created or modified version, not redacted.
func checkVersion(t *testing.T, v *memstore.Version, op memstore.Operation, memoryID, path, content string, by memstore.Actor, withContent bool, what string) {
	t.Helper()
	if v.Operation != op || v.MemoryID != memoryID || v.Path != path {
		t.Errorf("%s: (Operation, MemoryID, Path) = (%q, %q, %q), want (%q, %q, %q)", what, v.Operation, v.MemoryID, v.Path, op, memoryID, path)
	}
	wantContent := ""
	if withContent {
		wantContent = content
	}
	if !v.HasContent || v.Content != wantContent || v.ContentSHA256 != sha(content) || v.ContentSize != int64(len(content)) {
		t.Errorf("%s: (HasContent, Content, SHA256, Size) = (%v, %q, %q, %d), want (true, %q, %q, %d)",
			what, v.HasContent, v.Content, v.ContentSHA256, v.ContentSize, wantContent, sha(content), len(content))
	}
	if v.CreatedBy != by {
		t.Errorf("%s: CreatedBy = %+v, want %+v", what, v.CreatedBy, by)
	}
	if v.RedactedAt != nil || v.RedactedBy != nil {
		t.Errorf("%s: redacted (%v, %v), want not", what, v.RedactedAt, v.RedactedBy)
	}
}

// pageCheck checks the paging invariants of one page: a page with a Next
// is never empty and no page is larger than max.
func pageCheck(t *testing.T, n int, next string, max int, what string) {
	t.Helper()
	if n == 0 && next != "" {
		t.Fatalf("%s: empty page with Next %q", what, next)
	}
	if n > max {
		t.Fatalf("%s: page of %d items, limit %d", what, n, max)
	}
}

func effectiveLimit(limit int, full bool) int {
	if limit == 0 {
		limit = 20
	}
	if full && limit > 20 {
		limit = 20
	}
	return limit
}

// allPages pages through a list from cursor ("" for the first page),
// list(cursor) giving each page, checks
// every page against limit and returns the items and the size of each
// page. what names the list in failures.
func allPages[T any](t *testing.T, what string, limit int, cursor string, list func(page string) (memstore.Page[T], error)) ([]T, []int) {
	t.Helper()
	var all []T
	var sizes []int
	for range maxPages {
		p, err := list(cursor)
		if err != nil {
			t.Fatalf("%s(page %d): %v", what, len(sizes)+1, err)
		}
		pageCheck(t, len(p.Items), p.Next, limit, what)
		all = append(all, p.Items...)
		sizes = append(sizes, len(p.Items))
		if p.Next == "" {
			return all, sizes
		}
		cursor = p.Next
	}
	t.Fatalf("%s: more than %d pages", what, maxPages)
	return nil, nil
}

// allStores pages through a store list.
func allStores(t *testing.T, b backend, ws string, f memstore.StoreFilter) ([]memstore.Store, []int) {
	t.Helper()
	return allPages(t, "Stores", effectiveLimit(f.Limit, false), f.Page, func(page string) (memstore.Page[memstore.Store], error) {
		f.Page = page
		return b.Stores(t.Context(), ws, f)
	})
}

// allItems pages through a memory list; every item is a memory or a
// prefix, never both.
func allItems(t *testing.T, b backend, ws, storeID string, f memstore.MemoryFilter) ([]memstore.ListItem, []int) {
	t.Helper()
	all, sizes := allPages(t, "Memories", effectiveLimit(f.Limit, f.Full), f.Page, func(page string) (memstore.Page[memstore.ListItem], error) {
		f.Page = page
		return b.Memories(t.Context(), ws, storeID, f)
	})
	for _, it := range all {
		if (it.Memory == nil) == (it.Prefix == "") {
			t.Fatalf("Memories: item with Memory %v and Prefix %q: want exactly one", it.Memory, it.Prefix)
		}
	}
	return all, sizes
}

// allVersions pages through a version list.
func allVersions(t *testing.T, b backend, ws, storeID string, f memstore.VersionFilter) ([]memstore.Version, []int) {
	t.Helper()
	return allPages(t, "Versions", effectiveLimit(f.Limit, f.Full), f.Page, func(page string) (memstore.Page[memstore.Version], error) {
		f.Page = page
		return b.Versions(t.Context(), ws, storeID, f)
	})
}

// itemKeys renders list items as "M /path" for a memory and "P /prefix/"
// for a prefix, for comparison.
func itemKeys(items []memstore.ListItem) []string {
	keys := make([]string, len(items))
	for i, it := range items {
		if it.Memory != nil {
			keys[i] = "M " + it.Memory.Path
		} else {
			keys[i] = "P " + it.Prefix
		}
	}
	return keys
}

func storeIDs(ss []memstore.Store) []string {
	ids := make([]string, len(ss))
	for i, s := range ss {
		ids[i] = s.ID
	}
	return ids
}

func versionIDs(vs []memstore.Version) []string {
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v.ID
	}
	return ids
}

// memoryVersions lists all versions of one memory, newest first.
func memoryVersions(t *testing.T, b backend, ws, storeID, memoryID string) []memstore.Version {
	t.Helper()
	vs, _ := allVersions(t, b, ws, storeID, memstore.VersionFilter{MemoryID: memoryID, Limit: 100})
	return vs
}

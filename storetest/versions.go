package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
)

// history is a small store history written by several actors:
//
//	v1 created  m1 /one.md  "one"     by actorKey
//	v2 modified m1 /one.md  "one v2"  by actorSession
//	v3 created  m2 /two.md  "two"     by actorSvc
//	v4 modified m1 /uno.md  "one v2"  by actorUser   (rename)
//	v5 deleted  m2 /two.md            by actorKey2
type history struct {
	b      backend
	sid    string
	m1, m2 string
	v      [6]string // v[1]..v[5]
}

func newHistory(t *testing.T, open func(*testing.T) backend) *history {
	t.Helper()
	b, sid := newStore(t, open)
	h := &history{b: b, sid: sid}
	m1 := mustCreateMemoryBy(t, b, wsA, sid, "/one.md", "one", actorKey)
	h.m1, h.v[1] = m1.ID, m1.VersionID
	h.v[2] = mustUpdateMemory(t, b, wsA, sid, m1.ID, memstore.MemoryUpdate{Content: ptr("one v2")}, actorSession).VersionID
	m2 := mustCreateMemoryBy(t, b, wsA, sid, "/two.md", "two", actorSvc)
	h.m2, h.v[3] = m2.ID, m2.VersionID
	h.v[4] = mustUpdateMemory(t, b, wsA, sid, m1.ID, memstore.MemoryUpdate{Path: ptr("/uno.md")}, actorUser).VersionID
	mustDeleteMemory(t, b, wsA, sid, m2.ID, actorKey2)
	vs := memoryVersions(t, b, wsA, sid, m2.ID)
	if len(vs) != 2 || vs[0].Operation != memstore.OpDeleted {
		t.Fatalf("versions of the deleted memory: %v", versionIDs(vs))
	}
	h.v[5] = vs[0].ID
	return h
}

func (h *history) ids(ns ...int) []string {
	ids := make([]string, len(ns))
	for i, n := range ns {
		ids[i] = h.v[n]
	}
	return ids
}

func testVersions(t *testing.T, open func(*testing.T) backend) {
	t.Run("NewestFirst", func(t *testing.T) {
		h := newHistory(t, open)
		vs, _ := allVersions(t, h.b, wsA, h.sid, memstore.VersionFilter{})
		if got, want := versionIDs(vs), h.ids(5, 4, 3, 2, 1); !slices.Equal(got, want) {
			t.Fatalf("versions %v, want newest first %v", got, want)
		}
		for i := 1; i < len(vs); i++ {
			if vs[i].CreatedAt.After(vs[i-1].CreatedAt) {
				t.Errorf("version %d is newer than the one listed before it", i)
			}
		}
		// Basic view: no content, but hash and size; deletion has none.
		checkVersion(t, &vs[4], memstore.OpCreated, h.m1, "/one.md", "one", actorKey, false, "v1")
		checkVersion(t, &vs[3], memstore.OpModified, h.m1, "/one.md", "one v2", actorSession, false, "v2")
		checkVersion(t, &vs[2], memstore.OpCreated, h.m2, "/two.md", "two", actorSvc, false, "v3")
		checkVersion(t, &vs[1], memstore.OpModified, h.m1, "/uno.md", "one v2", actorUser, false, "v4")
		d := vs[0]
		if d.Operation != memstore.OpDeleted || d.MemoryID != h.m2 || d.Path != "/two.md" || d.HasContent || d.ContentSHA256 != "" || d.CreatedBy != actorKey2 {
			t.Errorf("v5 = %+v, want a deletion of %s at /two.md by %+v", d, h.m2, actorKey2)
		}
		for _, v := range vs {
			if v.StoreID != h.sid {
				t.Errorf("version %s has StoreID %q", v.ID, v.StoreID)
			}
		}
	})

	t.Run("Full", func(t *testing.T) {
		h := newHistory(t, open)
		vs, _ := allVersions(t, h.b, wsA, h.sid, memstore.VersionFilter{Full: true})
		if len(vs) != 5 {
			t.Fatalf("%d versions, want 5", len(vs))
		}
		checkVersion(t, &vs[4], memstore.OpCreated, h.m1, "/one.md", "one", actorKey, true, "v1")
		checkVersion(t, &vs[1], memstore.OpModified, h.m1, "/uno.md", "one v2", actorUser, true, "v4")
		if vs[0].Content != "" || vs[0].HasContent {
			t.Errorf("deleted version in full view has content %q", vs[0].Content)
		}
	})

	t.Run("Filters", func(t *testing.T) {
		h := newHistory(t, open)
		for _, c := range []struct {
			name string
			f    memstore.VersionFilter
			want []string
		}{
			{"MemoryID", memstore.VersionFilter{MemoryID: h.m1}, h.ids(4, 2, 1)},
			{"MemoryIDDeleted", memstore.VersionFilter{MemoryID: h.m2}, h.ids(5, 3)},
			{"Created", memstore.VersionFilter{Operation: memstore.OpCreated}, h.ids(3, 1)},
			{"Modified", memstore.VersionFilter{Operation: memstore.OpModified}, h.ids(4, 2)},
			{"Deleted", memstore.VersionFilter{Operation: memstore.OpDeleted}, h.ids(5)},
			{"APIKeyID", memstore.VersionFilter{APIKeyID: actorKey.ID}, h.ids(1)},
			{"APIKeyID2", memstore.VersionFilter{APIKeyID: actorKey2.ID}, h.ids(5)},
			{"SessionID", memstore.VersionFilter{SessionID: actorSession.ID}, h.ids(2)},
			{"ServiceAccountID", memstore.VersionFilter{ServiceAccountID: actorSvc.ID}, h.ids(3)},
			// An ID matches only in its own field.
			{"SessionIDOfAKey", memstore.VersionFilter{SessionID: actorKey.ID}, nil},
			{"APIKeyIDOfAUser", memstore.VersionFilter{APIKeyID: actorUser.ID}, nil},
			{"MemoryAndOperation", memstore.VersionFilter{MemoryID: h.m1, Operation: memstore.OpModified}, h.ids(4, 2)},
			{"MemoryAndActor", memstore.VersionFilter{MemoryID: h.m2, APIKeyID: actorKey.ID}, nil},
			{"UnknownMemory", memstore.VersionFilter{MemoryID: "mem_01jzzzzzzzzzzzzzzzzzzzzzzz"}, nil},
		} {
			vs, sizes := allVersions(t, h.b, wsA, h.sid, c.f)
			if got := versionIDs(vs); !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
			if len(c.want) == 0 && !slices.Equal(sizes, []int{0}) {
				t.Errorf("%s: page sizes %v, want one empty page", c.name, sizes)
			}
		}
	})

	t.Run("CreatedAtRange", func(t *testing.T) {
		h := newHistory(t, open)
		all, _ := allVersions(t, h.b, wsA, h.sid, memstore.VersionFilter{Limit: 100})
		at := map[string]time.Time{}
		for _, v := range all {
			at[v.ID] = v.CreatedAt
		}
		within := func(gte, lte *time.Time) []string {
			var ids []string
			for _, v := range all {
				if (gte == nil || !v.CreatedAt.Before(*gte)) && (lte == nil || !v.CreatedAt.After(*lte)) {
					ids = append(ids, v.ID)
				}
			}
			return ids
		}
		zone := time.FixedZone("UTC-5", -5*3600)
		for _, c := range append([]timeRange{
			{"Both", ptr(at[h.v[2]]), ptr(at[h.v[4]]), h.ids(4, 3, 2)},
			{"BothOtherZone", ptr(at[h.v[2]].In(zone)), ptr(at[h.v[4]].In(zone)), h.ids(4, 3, 2)},
			{"GTE", ptr(at[h.v[5]]), nil, h.ids(5)},
			{"LTE", nil, ptr(at[h.v[1]]), h.ids(1)},
			{"WithMemoryID", ptr(at[h.v[2]]), nil, h.ids(4, 2)},
		}, farBounds(h.v[1], h.v[5])...) {
			f := memstore.VersionFilter{CreatedAtGTE: c.gte, CreatedAtLTE: c.lte, Limit: 2}
			want := within(c.gte, c.lte)
			if c.name == "WithMemoryID" {
				f.MemoryID = h.m1
				want = slices.DeleteFunc(want, func(id string) bool { return !slices.Contains(h.ids(1, 2, 4), id) })
			}
			vs, _ := allVersions(t, h.b, wsA, h.sid, f)
			got := versionIDs(vs)
			if !slices.Equal(got, want) {
				t.Errorf("%s: %v, want %v", c.name, got, want)
			}
			for _, id := range c.must {
				if !slices.Contains(got, id) {
					t.Errorf("%s: %s missing (bounds are inclusive)", c.name, id)
				}
			}
		}
	})

	t.Run("Paging", func(t *testing.T) {
		b, sid := newStore(t, open)
		m := mustCreateMemory(t, b, wsA, sid, "/paged.md", "0")
		for i := 1; i < 25; i++ {
			mustUpdateMemory(t, b, wsA, sid, m.ID, memstore.MemoryUpdate{Content: ptr(fmt.Sprint(i))}, actorKey)
		}
		whole, _ := allVersions(t, b, wsA, sid, memstore.VersionFilter{Limit: 100})
		if len(whole) != 25 {
			t.Fatalf("%d versions, want 25", len(whole))
		}
		for i, v := range whole {
			if want := fmt.Sprint(24 - i); v.ContentSHA256 != sha(want) {
				t.Errorf("version %d holds the hash of something other than %q", i, want)
			}
		}
		paged, sizes := allVersions(t, b, wsA, sid, memstore.VersionFilter{Limit: 10})
		if !slices.Equal(sizes, []int{10, 10, 5}) {
			t.Errorf("page sizes %v, want [10 10 5]", sizes)
		}
		if !slices.Equal(versionIDs(paged), versionIDs(whole)) {
			t.Error("paged versions differ from the single page")
		}
		for _, c := range []struct {
			name   string
			f      memstore.VersionFilter
			n      int
			isNext bool
		}{
			{"DefaultLimit", memstore.VersionFilter{}, 20, true},
			{"FullCapped", memstore.VersionFilter{Full: true, Limit: 50}, 20, true},
			{"FullDefault", memstore.VersionFilter{Full: true}, 20, true},
			{"Limit100", memstore.VersionFilter{Limit: 100}, 25, false},
		} {
			p, err := b.Versions(t.Context(), wsA, sid, c.f)
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			if len(p.Items) != c.n || (p.Next != "") != c.isNext {
				t.Errorf("%s: %d items, Next %q; want %d items, cursor %v", c.name, len(p.Items), p.Next, c.n, c.isNext)
			}
		}
		full, _ := allVersions(t, b, wsA, sid, memstore.VersionFilter{Full: true, Limit: 20})
		for i, v := range full {
			if want := fmt.Sprint(24 - i); v.Content != want {
				t.Errorf("full version %d: Content %q, want %q", i, v.Content, want)
			}
		}
	})

	t.Run("Invalid", func(t *testing.T) {
		h := newHistory(t, open)
		for _, c := range []struct {
			name string
			f    memstore.VersionFilter
		}{
			{"Limit101", memstore.VersionFilter{Limit: 101}},
			{"LimitNegative", memstore.VersionFilter{Limit: -1}},
			{"Operation", memstore.VersionFilter{Operation: "renamed"}},
			{"GarbageCursor", memstore.VersionFilter{Page: "garbage"}},
			{"GarbledPageCursor", memstore.VersionFilter{Page: "page_!!!not-base64!!!"}},
		} {
			_, err := h.b.Versions(t.Context(), wsA, h.sid, c.f)
			wantCode(t, err, memstore.EInvalid, c.name)
		}
		_, err := h.b.Versions(t.Context(), wsA, "memstore_01jzzzzzzzzzzzzzzzzzzzzzzz", memstore.VersionFilter{})
		wantCode(t, err, memstore.ENotFound, "unknown store")
	})

	t.Run("Get", func(t *testing.T) {
		h := newHistory(t, open)
		v := mustVersion(t, h.b, wsA, h.sid, h.v[2])
		checkVersion(t, v, memstore.OpModified, h.m1, "/one.md", "one v2", actorSession, true, "Version(v2)")
		if v.ID != h.v[2] || v.StoreID != h.sid {
			t.Errorf("Version(v2) = (%q, %q)", v.ID, v.StoreID)
		}
		// The versions of a deleted memory stay retrievable.
		v = mustVersion(t, h.b, wsA, h.sid, h.v[3])
		checkVersion(t, v, memstore.OpCreated, h.m2, "/two.md", "two", actorSvc, true, "Version(v3) of a deleted memory")
		_, err := h.b.Version(t.Context(), wsA, h.sid, "memver_01jzzzzzzzzzzzzzzzzzzzzzzz")
		wantError(t, err, memstore.ErrVersionNotFound("memver_01jzzzzzzzzzzzzzzzzzzzzzzz"), "unknown version")
		_, err = h.b.Version(t.Context(), wsA, h.sid, h.m1)
		wantCode(t, err, memstore.ENotFound, "a memory ID as a version ID")
		other := mustCreateStore(t, h.b, wsA, "other")
		_, err = h.b.Version(t.Context(), wsA, other.ID, h.v[1])
		wantCode(t, err, memstore.ENotFound, "version via another store")
	})
}

func testRedact(t *testing.T, open func(*testing.T) backend) {
	t.Run("Version", func(t *testing.T) {
		b, sid := newStore(t, open)
		secret := "password: hunter2"
		m := mustCreateMemoryBy(t, b, wsA, sid, "/secret/path.md", secret, actorSession)
		u := mustUpdateMemory(t, b, wsA, sid, m.ID, memstore.MemoryUpdate{Content: ptr("password: [removed]")}, actorKey)
		before, r := mustRedact(t, b, sid, m.VersionID, actorUser, "RedactVersion result")
		got := mustVersion(t, b, wsA, sid, m.VersionID)
		checkRedacted(t, got, before, actorUser, "Version() after redaction")
		if !got.RedactedAt.Equal(*r.RedactedAt) {
			t.Errorf("Version().RedactedAt %v, want %v", got.RedactedAt, r.RedactedAt)
		}

		// Gone from every list, in both views; the version stays listed.
		for _, full := range []bool{false, true} {
			vs, _ := allVersions(t, b, wsA, sid, memstore.VersionFilter{Full: full})
			if len(vs) != 2 {
				t.Fatalf("%d versions after redaction, want 2", len(vs))
			}
			checkRedacted(t, &vs[1], before, actorUser, fmt.Sprintf("listed redacted version (full %v)", full))
			for _, v := range vs {
				if strings.Contains(v.Content, "hunter2") || v.Path == "/secret/path.md" && v.ID == m.VersionID {
					t.Errorf("redacted content or path still listed in version %s", v.ID)
				}
			}
		}
		// Filters still find it by memory and actor.
		vs, _ := allVersions(t, b, wsA, sid, memstore.VersionFilter{MemoryID: m.ID, SessionID: actorSession.ID})
		if got := versionIDs(vs); !slices.Equal(got, []string{m.VersionID}) {
			t.Errorf("redacted version by memory and session: %v", got)
		}

		// Re-redacting changes nothing, whoever asks.
		tick()
		again, err := b.RedactVersion(t.Context(), wsA, sid, m.VersionID, actorUser2)
		if err != nil {
			t.Fatal(err)
		}
		checkRedacted(t, again, before, actorUser, "second redaction")
		if !again.RedactedAt.Equal(*r.RedactedAt) {
			t.Errorf("second redaction: RedactedAt %v, want the first %v", again.RedactedAt, r.RedactedAt)
		}

		// The live memory is untouched.
		live := mustMemory(t, b, wsA, sid, m.ID)
		checkMemory(t, live, "/secret/path.md", "password: [removed]", true, "live memory")
		if live.VersionID != u.VersionID {
			t.Errorf("live VersionID %q, want %q", live.VersionID, u.VersionID)
		}
	})

	t.Run("CurrentVersion", func(t *testing.T) {
		b, sid := newStore(t, open)
		m := mustCreateMemory(t, b, wsA, sid, "/current.md", "current content")
		mustRedact(t, b, sid, m.VersionID, actorSvc, "redacted current version")
		live := mustMemory(t, b, wsA, sid, m.ID)
		checkMemory(t, live, "/current.md", "current content", true, "live memory after redacting its version")
		if live.VersionID != m.VersionID {
			t.Errorf("live VersionID %q, want %q", live.VersionID, m.VersionID)
		}
		wantTime(t, live.UpdatedAt, m.UpdatedAt, "live UpdatedAt")
		// The memory still takes updates guarded by its hash.
		u := mustUpdateMemory(t, b, wsA, sid, m.ID, memstore.MemoryUpdate{Content: ptr("next"), IfSHA256: sha("current content")}, actorKey)
		checkMemory(t, u, "/current.md", "next", true, "update after redaction")
	})

	t.Run("DeletedVersion", func(t *testing.T) {
		b, sid := newStore(t, open)
		m := mustCreateMemory(t, b, wsA, sid, "/to/delete.md", "x")
		mustDeleteMemory(t, b, wsA, sid, m.ID, actorKey)
		vs := memoryVersions(t, b, wsA, sid, m.ID)
		if len(vs) != 2 {
			t.Fatalf("%d versions, want 2", len(vs))
		}
		r, err := b.RedactVersion(t.Context(), wsA, sid, vs[0].ID, actorUser)
		if err != nil {
			t.Fatal(err)
		}
		if r.Path != "" || r.Operation != memstore.OpDeleted || r.RedactedAt == nil || r.RedactedBy == nil || *r.RedactedBy != actorUser {
			t.Errorf("redacted deletion: %+v", r)
		}
	})

	t.Run("NotFound", func(t *testing.T) {
		b, sid := newStore(t, open)
		m := mustCreateMemory(t, b, wsA, sid, "/x.md", "x")
		_, err := b.RedactVersion(t.Context(), wsA, sid, "memver_01jzzzzzzzzzzzzzzzzzzzzzzz", actorUser)
		wantCode(t, err, memstore.ENotFound, "unknown version")
		other := mustCreateStore(t, b, wsA, "other")
		_, err = b.RedactVersion(t.Context(), wsA, other.ID, m.VersionID, actorUser)
		wantCode(t, err, memstore.ENotFound, "version via another store")
		if v := mustVersion(t, b, wsA, sid, m.VersionID); v.Redacted() {
			t.Error("version redacted through another store")
		}
	})
}

// mustRedact redacts a version of workspace A by by, checks the result
// against the version as it was, and returns both.
func mustRedact(t *testing.T, b backend, storeID, versionID string, by memstore.Actor, what string) (before, redacted *memstore.Version) {
	t.Helper()
	before = mustVersion(t, b, wsA, storeID, versionID)
	redacted, err := b.RedactVersion(t.Context(), wsA, storeID, versionID, by)
	if err != nil {
		t.Fatal(err)
	}
	checkRedacted(t, redacted, before, by, what)
	return before, redacted
}

// checkRedacted checks a redacted version against the same version before
// redaction.
func checkRedacted(t *testing.T, v, before *memstore.Version, by memstore.Actor, what string) {
	t.Helper()
	if v.Path != "" || v.HasContent || v.Content != "" || v.ContentSHA256 != "" || v.ContentSize != 0 {
		t.Errorf("%s: (Path, HasContent, Content, SHA256, Size) = (%q, %v, %q, %q, %d), want all cleared",
			what, v.Path, v.HasContent, v.Content, v.ContentSHA256, v.ContentSize)
	}
	if v.RedactedAt == nil || v.RedactedBy == nil {
		t.Errorf("%s: RedactedAt %v, RedactedBy %v; want both set", what, v.RedactedAt, v.RedactedBy)
	} else {
		if *v.RedactedBy != by {
			t.Errorf("%s: RedactedBy %+v, want %+v", what, *v.RedactedBy, by)
		}
		if v.RedactedAt.Before(before.CreatedAt) {
			t.Errorf("%s: RedactedAt %v before the version's CreatedAt %v", what, *v.RedactedAt, before.CreatedAt)
		}
	}
	if !v.Redacted() {
		t.Errorf("%s: Redacted() is false", what)
	}
	if v.ID != before.ID || v.StoreID != before.StoreID || v.MemoryID != before.MemoryID || v.Operation != before.Operation || v.CreatedBy != before.CreatedBy {
		t.Errorf("%s: identity changed: (%q, %q, %q, %q, %+v), want (%q, %q, %q, %q, %+v)", what,
			v.ID, v.StoreID, v.MemoryID, v.Operation, v.CreatedBy, before.ID, before.StoreID, before.MemoryID, before.Operation, before.CreatedBy)
	}
	wantTime(t, v.CreatedAt, before.CreatedAt, what+": CreatedAt")
}

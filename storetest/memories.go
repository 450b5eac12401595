package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

func testCreateMemory(t *testing.T, open func(*testing.T) backend) {
	t.Run("ExactBytes", func(t *testing.T) {
		b, sid := newStore(t, open)
		for _, c := range []struct{ path, content string }{
			{"/crlf.md", "line one\r\nline two\r\n"},
			{"/bom.md", "\ufeffstarts with a BOM\n"},
			{"/emoji.md", "emoji 😀 and a family \U0001F468\u200D\U0001F469\u200D\U0001F467\n"},
			{"/nfd.md", "not normalised: e\u0301\n"},
			{"/whitespace.md", "  trailing spaces  \n\n\n\t"},
			{"/empty.md", ""},
			{"/max.md", strings.Repeat("x", memstore.MaxContentBytes)},
		} {
			m, err := b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: c.path, Content: c.content}, actorKey)
			if err != nil {
				t.Errorf("CreateMemory(%q): %v", c.path, err)
				continue
			}
			wantPrefix(t, m.ID, "mem_", c.path)
			if m.StoreID != sid {
				t.Errorf("%s: StoreID = %q, want %q", c.path, m.StoreID, sid)
			}
			checkMemory(t, m, c.path, c.content, true, "CreateMemory "+c.path)
			if m.CreatedAt.IsZero() {
				t.Errorf("%s: CreatedAt is zero", c.path)
			}
			wantTime(t, m.UpdatedAt, m.CreatedAt, c.path+": UpdatedAt")

			got := mustMemory(t, b, wsA, sid, m.ID)
			checkMemory(t, got, c.path, c.content, true, "Memory "+c.path)
			if got.VersionID != m.VersionID || got.StoreID != sid {
				t.Errorf("%s: Memory() VersionID %q StoreID %q, want %q %q", c.path, got.VersionID, got.StoreID, m.VersionID, sid)
			}
			wantTime(t, got.CreatedAt, m.CreatedAt, c.path+": Memory().CreatedAt")
			wantTime(t, got.UpdatedAt, m.UpdatedAt, c.path+": Memory().UpdatedAt")

			v := mustVersion(t, b, wsA, sid, m.VersionID)
			checkVersion(t, v, memstore.OpCreated, m.ID, c.path, c.content, actorKey, true, "created version of "+c.path)
			if v.StoreID != sid {
				t.Errorf("%s: version StoreID %q, want %q", c.path, v.StoreID, sid)
			}
			wantTime(t, v.CreatedAt, m.UpdatedAt, c.path+": version CreatedAt")
		}
	})

	t.Run("UnusualValidPaths", func(t *testing.T) {
		b, sid := newStore(t, open)
		for _, p := range []string{
			"/.hidden", "/with space/file name.md", `/back\slash`, "/ünïcödé.md", "/.anthropic-memory-store",
			"/" + strings.Repeat("a/", memstore.MaxPathSegments-1) + "z",
			"/" + strings.Repeat("p", memstore.MaxPathBytes-1),
		} {
			m, err := b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: p, Content: p}, actorKey)
			if err != nil {
				t.Errorf("CreateMemory(%q): %v", p, err)
				continue
			}
			checkMemory(t, mustMemory(t, b, wsA, sid, m.ID), p, p, true, p)
		}
	})

	t.Run("Invalid", func(t *testing.T) {
		b, sid := newStore(t, open)
		for _, c := range []struct{ name, path, content string }{
			{"EmptyPath", "", "x"},
			{"Relative", "notes.md", "x"},
			{"Root", "/", "x"},
			{"TrailingSlash", "/notes/", "x"},
			{"DoubleSlash", "/a//b", "x"},
			{"DotDot", "/a/../b", "x"},
			{"Dot", "/./a", "x"},
			{"NFD", "/e\u0301.md", "x"},
			{"ControlChar", "/a\x00b", "x"},
			{"Newline", "/a\nb", "x"},
			{"FormatChar", "/zero\u200bwidth", "x"},
			{"LineSeparator", "/a\u2028b", "x"},
			{"TooManySegments", "/" + strings.Repeat("a/", memstore.MaxPathSegments) + "z", "x"},
			{"TooLong", "/" + strings.Repeat("p", memstore.MaxPathBytes), "x"},
			{"InvalidUTF8Path", "/a\xffb", "x"},
			{"ContentTooLarge", "/big.md", strings.Repeat("x", memstore.MaxContentBytes+1)},
			{"ContentInvalidUTF8", "/bad.md", "bad \xff\xfe bytes"},
		} {
			_, err := b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: c.path, Content: c.content}, actorKey)
			wantCode(t, err, memstore.EInvalid, c.name)
		}
		items, _ := allItems(t, b, wsA, sid, memstore.MemoryFilter{})
		if len(items) != 0 {
			t.Errorf("invalid creates left %v", itemKeys(items))
		}
		vs, _ := allVersions(t, b, wsA, sid, memstore.VersionFilter{})
		if len(vs) != 0 {
			t.Errorf("invalid creates left %d versions", len(vs))
		}
	})

	t.Run("UnknownStore", func(t *testing.T) {
		b := open(t)
		_, err := b.CreateMemory(t.Context(), wsA, "memstore_01jzzzzzzzzzzzzzzzzzzzzzzz", memstore.MemoryCreate{Path: "/a.md"}, actorKey)
		wantCode(t, err, memstore.ENotFound, "CreateMemory in an unknown store")
	})

	t.Run("PathConflicts", func(t *testing.T) {
		b, sid := newStore(t, open)
		notes, blocked := mustBlockers(t, b, sid)
		wantPathConflicts(t, blocked, func(path string) error {
			_, err := b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: path, Content: "x"}, actorKey)
			return err
		})
		// Neighbours that share a string prefix but not a segment.
		for _, p := range []string{"/notes-old/x", "/notes.md", "/notesx", "/notes_backup/a.md", "/deep/a/b/c.md.bak", "/deep/a/bb", "/Notes"} {
			if _, err := b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: p, Content: "x"}, actorKey); err != nil {
				t.Errorf("CreateMemory(%q) next to /notes and /deep/a/b/c.md: %v", p, err)
			}
		}
		// The blockers are unchanged and have one version each.
		checkMemory(t, mustMemory(t, b, wsA, sid, notes.ID), "/notes", "a file named notes", true, "blocker")
		if vs := memoryVersions(t, b, wsA, sid, notes.ID); len(vs) != 1 {
			t.Errorf("blocker has %d versions, want 1", len(vs))
		}
	})

	t.Run("CaseSensitive", func(t *testing.T) {
		b, sid := newStore(t, open)
		upper := mustCreateMemory(t, b, wsA, sid, "/A", "upper")
		lower := mustCreateMemory(t, b, wsA, sid, "/a", "lower")
		mustCreateMemory(t, b, wsA, sid, "/a2/X.md", "x")
		mustCreateMemory(t, b, wsA, sid, "/A2/x.md", "x")
		if upper.ID == lower.ID {
			t.Fatal("/A and /a are the same memory")
		}
		checkMemory(t, mustMemory(t, b, wsA, sid, upper.ID), "/A", "upper", true, "/A")
		checkMemory(t, mustMemory(t, b, wsA, sid, lower.ID), "/a", "lower", true, "/a")
	})

	t.Run("IfNotExists", func(t *testing.T) {
		b, sid := newStore(t, open)
		m := mustCreateMemory(t, b, wsA, sid, "/dir/file.md", "original")
		for _, p := range []string{"/dir/file.md", "/dir", "/dir/file.md/sub"} {
			_, err := b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: p, Content: "new", IfNotExists: true}, actorKey)
			wantCode(t, err, memstore.EPreconditionFailed, "IfNotExists on "+p)
		}
		checkMemory(t, mustMemory(t, b, wsA, sid, m.ID), "/dir/file.md", "original", true, "memory after IfNotExists")
		n, err := b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: "/dir/other.md", Content: "free", IfNotExists: true}, actorKey)
		if err != nil {
			t.Fatalf("IfNotExists on a free path: %v", err)
		}
		checkMemory(t, n, "/dir/other.md", "free", true, "IfNotExists on a free path")
	})

	t.Run("Upsert", func(t *testing.T) {
		b, sid := newStore(t, open)
		m := mustCreateMemory(t, b, wsA, sid, "/up/sert.md", "v1")
		tick()
		u, err := b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: "/up/sert.md", Content: "v2", Upsert: true}, actorSession)
		if err != nil {
			t.Fatal(err)
		}
		if u.ID != m.ID {
			t.Errorf("upsert made memory %q, want the existing %q", u.ID, m.ID)
		}
		checkMemory(t, u, "/up/sert.md", "v2", true, "upserted memory")
		if u.VersionID == m.VersionID {
			t.Error("upsert kept the old VersionID")
		}
		wantTime(t, u.CreatedAt, m.CreatedAt, "upsert CreatedAt")
		checkMemory(t, mustMemory(t, b, wsA, sid, m.ID), "/up/sert.md", "v2", true, "Memory after upsert")
		vs := memoryVersions(t, b, wsA, sid, m.ID)
		if len(vs) != 2 {
			t.Fatalf("%d versions after upsert, want 2", len(vs))
		}
		if vs[0].ID != u.VersionID {
			t.Errorf("newest version %q, want %q", vs[0].ID, u.VersionID)
		}
		checkVersion(t, mustVersion(t, b, wsA, sid, u.VersionID), memstore.OpModified, m.ID, "/up/sert.md", "v2", actorSession, true, "upsert version")

		// Upsert on a free path creates.
		n, err := b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: "/up/new.md", Content: "n", Upsert: true}, actorKey)
		if err != nil {
			t.Fatal(err)
		}
		checkVersion(t, mustVersion(t, b, wsA, sid, n.VersionID), memstore.OpCreated, n.ID, "/up/new.md", "n", actorKey, true, "upsert on a free path")

		// Overlap is still a conflict.
		_, err = b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: "/up/sert.md/below", Content: "x", Upsert: true}, actorKey)
		wantPathConflict(t, err, m.ID, "/up/sert.md", "upsert below a memory")
		_, err = b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: "/up", Content: "x", Upsert: true}, actorKey)
		if wantCode(t, err, memstore.EPathConflict, "upsert above memories") {
			var id, path string
			var e *memstore.Error
			if errors.As(err, &e) {
				id, path = e.ConflictingMemoryID, e.ConflictingPath
			}
			if !(id == m.ID && path == "/up/sert.md") && !(id == n.ID && path == "/up/new.md") {
				t.Errorf("upsert above memories: blocker (%q, %q), want one of the memories below /up", id, path)
			}
		}
	})
}

func testGetMemory(t *testing.T, open func(*testing.T) backend) {
	b, sid := newStore(t, open)
	m := mustCreateMemory(t, b, wsA, sid, "/get.md", "content to get")
	t.Run("Found", func(t *testing.T) {
		got := mustMemory(t, b, wsA, sid, m.ID)
		checkMemory(t, got, "/get.md", "content to get", true, "Memory")
		if got.ID != m.ID || got.VersionID != m.VersionID {
			t.Errorf("Memory() = (%q, %q), want (%q, %q)", got.ID, got.VersionID, m.ID, m.VersionID)
		}
	})
	t.Run("Unknown", func(t *testing.T) {
		_, err := b.Memory(t.Context(), wsA, sid, "mem_01jzzzzzzzzzzzzzzzzzzzzzzz")
		wantError(t, err, memstore.ErrMemoryNotFound("mem_01jzzzzzzzzzzzzzzzzzzzzzzz"), "unknown memory")
		_, err = b.Memory(t.Context(), wsA, sid, m.VersionID)
		wantCode(t, err, memstore.ENotFound, "a version ID as a memory ID")
	})
	t.Run("OtherStore", func(t *testing.T) {
		other := mustCreateStore(t, b, wsA, "other")
		_, err := b.Memory(t.Context(), wsA, other.ID, m.ID)
		wantCode(t, err, memstore.ENotFound, "memory via another store")
	})
	t.Run("Revalidate", func(t *testing.T) {
		rv, ok := revalidator(b)
		if !ok {
			t.Skip("the backend is not a memstore.MemoryRevalidator")
		}
		m := mustCreateMemory(t, b, wsA, sid, "/revalidate.md", "first")
		if got, err := rv.MemoryUnlessAt(t.Context(), wsA, sid, m.ID, ""); err != nil || got == nil || got.Content != "first" || got.VersionID != m.VersionID {
			t.Fatalf("MemoryUnlessAt(no version) = %+v, %v; want the memory", got, err)
		}
		if got, err := rv.MemoryUnlessAt(t.Context(), wsA, sid, m.ID, m.VersionID); err != nil || got != nil {
			t.Errorf("MemoryUnlessAt(current version) = %+v, %v; want nil, nil", got, err)
		}
		u := mustUpdateMemory(t, b, wsA, sid, m.ID, memstore.MemoryUpdate{Path: ptr("/revalidated.md"), Content: ptr("second")}, actorKey)
		got, err := rv.MemoryUnlessAt(t.Context(), wsA, sid, m.ID, m.VersionID)
		if err != nil || got == nil {
			t.Fatalf("MemoryUnlessAt(old version) = %+v, %v; want the memory as it is now", got, err)
		}
		checkMemory(t, got, "/revalidated.md", "second", true, "MemoryUnlessAt(old version)")
		if want := mustMemory(t, b, wsA, sid, m.ID); got.VersionID != u.VersionID || !got.UpdatedAt.Equal(want.UpdatedAt) || !got.CreatedAt.Equal(want.CreatedAt) {
			t.Errorf("MemoryUnlessAt(old version) = %+v; want %+v", got, want)
		}
		for what, at := range map[string]struct{ ws, store string }{
			"another workspace": {wsB, sid},
			"another store":     {wsA, mustCreateStore(t, b, wsA, "elsewhere").ID},
		} {
			_, err := rv.MemoryUnlessAt(t.Context(), at.ws, at.store, m.ID, u.VersionID)
			wantCode(t, err, memstore.ENotFound, "MemoryUnlessAt from "+what)
		}
		if err := b.DeleteMemory(t.Context(), wsA, sid, m.ID, "", actorKey); err != nil {
			t.Fatal(err)
		}
		_, err = rv.MemoryUnlessAt(t.Context(), wsA, sid, m.ID, u.VersionID)
		wantCode(t, err, memstore.ENotFound, "MemoryUnlessAt of a deleted memory at its last version")
	})
	t.Run("ByPath", func(t *testing.T) {
		// Neighbours that share the path as a string prefix, or sort
		// just before it, must not be mistaken for it.
		for _, p := range []string{"/get.md.bak", "/get.mdx", "/get", "/gez.md", "/dir/get.md"} {
			mustCreateMemory(t, b, wsA, sid, p, "neighbour "+p)
		}
		got, err := findMemory(t.Context(), b, wsA, sid, "/get.md")
		if err != nil || got.ID != m.ID || got.Path != "/get.md" {
			t.Fatalf("FindMemory(/get.md) = %+v, %v", got, err)
		}
		if got, err := findMemory(t.Context(), b, wsA, sid, "/dir/get.md"); err != nil || got.Path != "/dir/get.md" {
			t.Errorf("FindMemory(/dir/get.md) = %+v, %v", got, err)
		}
		for _, p := range []string{"/ge", "/get.m", "/dir", "/nothing.md"} {
			_, err := findMemory(t.Context(), b, wsA, sid, p)
			wantCode(t, err, memstore.ENotFound, "FindMemory("+p+")")
		}
		_, err = findMemory(t.Context(), b, wsA, sid, "dir/../get.md")
		wantCode(t, err, memstore.EInvalid, "FindMemory of a bad path")
	})
}

func testUpdateMemory(t *testing.T, open func(*testing.T) backend) {
	t.Run("ContentRenameBoth", func(t *testing.T) {
		b, sid := newStore(t, open)
		m := mustCreateMemory(t, b, wsA, sid, "/v1.md", "one")
		steps := []struct {
			name          string
			u             memstore.MemoryUpdate
			path, content string
			by            memstore.Actor
		}{
			{"ContentOnly", memstore.MemoryUpdate{Content: ptr("two")}, "/v1.md", "two", actorKey2},
			{"RenameOnly", memstore.MemoryUpdate{Path: ptr("/dir/v2.md")}, "/dir/v2.md", "two", actorSession},
			{"Both", memstore.MemoryUpdate{Path: ptr("/v3.md"), Content: ptr("three\r\n")}, "/v3.md", "three\r\n", actorUser},
			{"ToEmpty", memstore.MemoryUpdate{Content: ptr("")}, "/v3.md", "", actorSvc},
		}
		prev := m
		versions := []string{m.VersionID}
		for _, s := range steps {
			tick()
			u, err := b.UpdateMemory(t.Context(), wsA, sid, m.ID, s.u, s.by)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if u.ID != m.ID || u.StoreID != sid {
				t.Errorf("%s: ID %q StoreID %q, want %q %q", s.name, u.ID, u.StoreID, m.ID, sid)
			}
			checkMemory(t, u, s.path, s.content, true, s.name)
			if u.VersionID == prev.VersionID {
				t.Errorf("%s: VersionID unchanged", s.name)
			}
			wantTime(t, u.CreatedAt, m.CreatedAt, s.name+": CreatedAt")
			if u.UpdatedAt.Before(prev.UpdatedAt) {
				t.Errorf("%s: UpdatedAt went back from %v to %v", s.name, prev.UpdatedAt, u.UpdatedAt)
			}
			v := mustVersion(t, b, wsA, sid, u.VersionID)
			checkVersion(t, v, memstore.OpModified, m.ID, s.path, s.content, s.by, true, s.name+" version")
			wantTime(t, u.UpdatedAt, v.CreatedAt, s.name+": UpdatedAt = version CreatedAt")
			got := mustMemory(t, b, wsA, sid, m.ID)
			checkMemory(t, got, s.path, s.content, true, s.name+": Memory()")
			if got.VersionID != u.VersionID {
				t.Errorf("%s: Memory().VersionID %q, want %q", s.name, got.VersionID, u.VersionID)
			}
			versions = append([]string{u.VersionID}, versions...)
			prev = u
		}
		if got := versionIDs(memoryVersions(t, b, wsA, sid, m.ID)); !slices.Equal(got, versions) {
			t.Errorf("versions %v, want one per change, newest first: %v", got, versions)
		}
	})

	t.Run("NoOp", func(t *testing.T) {
		b, sid := newStore(t, open)
		m := mustCreateMemory(t, b, wsA, sid, "/same.md", "same")
		tick()
		for _, c := range []struct {
			name string
			u    memstore.MemoryUpdate
		}{
			{"Nothing", memstore.MemoryUpdate{}},
			{"SameContent", memstore.MemoryUpdate{Content: ptr("same")}},
			{"SamePath", memstore.MemoryUpdate{Path: ptr("/same.md")}},
			{"SameBoth", memstore.MemoryUpdate{Content: ptr("same"), Path: ptr("/same.md")}},
			{"SameWithStaleHash", memstore.MemoryUpdate{Content: ptr("same"), IfSHA256: sha("something else")}},
			{"SameWithRightHash", memstore.MemoryUpdate{Content: ptr("same"), IfSHA256: sha("same")}},
			{"SameRenameIfFree", memstore.MemoryUpdate{Path: ptr("/same.md"), RenameIfFree: true}},
		} {
			u, err := b.UpdateMemory(t.Context(), wsA, sid, m.ID, c.u, actorKey2)
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			checkMemory(t, u, "/same.md", "same", true, c.name)
			if u.VersionID != m.VersionID {
				t.Errorf("%s: VersionID %q, want unchanged %q", c.name, u.VersionID, m.VersionID)
			}
			wantTime(t, u.UpdatedAt, m.UpdatedAt, c.name+": UpdatedAt")
		}
		if vs := memoryVersions(t, b, wsA, sid, m.ID); len(vs) != 1 {
			t.Errorf("%d versions after no-op updates, want 1", len(vs))
		}
		got := mustMemory(t, b, wsA, sid, m.ID)
		wantTime(t, got.UpdatedAt, m.UpdatedAt, "Memory().UpdatedAt after no-op updates")
	})

	t.Run("IfSHA256", func(t *testing.T) {
		b, sid := newStore(t, open)
		m := mustCreateMemory(t, b, wsA, sid, "/cas.md", "v1")
		other := mustCreateMemory(t, b, wsA, sid, "/taken.md", "taken")
		for _, c := range []struct {
			name string
			u    memstore.MemoryUpdate
		}{
			{"ContentMismatch", memstore.MemoryUpdate{Content: ptr("v2"), IfSHA256: sha("v0")}},
			{"RenameMismatch", memstore.MemoryUpdate{Path: ptr("/moved.md"), IfSHA256: sha("v0")}},
			// The precondition is checked before the path conflict.
			{"MismatchAndPathConflict", memstore.MemoryUpdate{Path: ptr("/taken.md"), IfSHA256: sha("v0")}},
			// The hash of the requested content is not the current one.
			{"HashOfNewContent", memstore.MemoryUpdate{Content: ptr("v2"), IfSHA256: sha("v2")}},
		} {
			_, err := b.UpdateMemory(t.Context(), wsA, sid, m.ID, c.u, actorKey)
			wantCode(t, err, memstore.EPreconditionFailed, c.name)
		}
		got := mustMemory(t, b, wsA, sid, m.ID)
		checkMemory(t, got, "/cas.md", "v1", true, "memory after refused updates")
		if got.VersionID != m.VersionID {
			t.Errorf("VersionID changed by refused updates")
		}
		if vs := memoryVersions(t, b, wsA, sid, m.ID); len(vs) != 1 {
			t.Errorf("%d versions after refused updates, want 1", len(vs))
		}
		checkMemory(t, mustMemory(t, b, wsA, sid, other.ID), "/taken.md", "taken", true, "other memory")

		u := mustUpdateMemory(t, b, wsA, sid, m.ID, memstore.MemoryUpdate{Content: ptr("v2"), IfSHA256: sha("v1")}, actorKey)
		checkMemory(t, u, "/cas.md", "v2", true, "update with the right hash")
		u = mustUpdateMemory(t, b, wsA, sid, m.ID, memstore.MemoryUpdate{Content: ptr("v3"), IfSHA256: strings.ToUpper(sha("v2"))}, actorKey)
		checkMemory(t, u, "/cas.md", "v3", true, "update with the right hash in upper case")
		u = mustUpdateMemory(t, b, wsA, sid, m.ID, memstore.MemoryUpdate{Path: ptr("/cas2.md"), IfSHA256: sha("v3")}, actorKey)
		checkMemory(t, u, "/cas2.md", "v3", true, "rename with the right hash")
	})

	t.Run("RenameConflict", func(t *testing.T) {
		b, sid := newStore(t, open)
		m := mustCreateMemory(t, b, wsA, sid, "/mover.md", "moving")
		_, blocked := mustBlockers(t, b, sid)
		wantPathConflicts(t, blocked, func(path string) error {
			_, err := b.UpdateMemory(t.Context(), wsA, sid, m.ID, memstore.MemoryUpdate{Path: ptr(path), Content: ptr("changed")}, actorKey)
			return err
		})
		got := mustMemory(t, b, wsA, sid, m.ID)
		checkMemory(t, got, "/mover.md", "moving", true, "memory after refused renames")
		if vs := memoryVersions(t, b, wsA, sid, m.ID); len(vs) != 1 {
			t.Errorf("%d versions after refused renames, want 1", len(vs))
		}
		_, err := b.UpdateMemory(t.Context(), wsA, sid, m.ID, memstore.MemoryUpdate{Path: ptr("/bad/../x")}, actorKey)
		wantCode(t, err, memstore.EInvalid, "rename to an invalid path")
		_, err = b.UpdateMemory(t.Context(), wsA, sid, m.ID, memstore.MemoryUpdate{Content: ptr(strings.Repeat("x", memstore.MaxContentBytes+1))}, actorKey)
		wantCode(t, err, memstore.EInvalid, "content too large")
		// Validation comes before the precondition.
		_, err = b.UpdateMemory(t.Context(), wsA, sid, m.ID, memstore.MemoryUpdate{Path: ptr("/trailing/"), IfSHA256: sha("stale")}, actorKey)
		wantCode(t, err, memstore.EInvalid, "invalid path with a stale hash")
	})

	t.Run("RenameWithinOwnSubtree", func(t *testing.T) {
		// A memory never conflicts with itself: moving /solo to
		// /solo/inner.md and back only overlaps its own old path.
		b, sid := newStore(t, open)
		m := mustCreateMemory(t, b, wsA, sid, "/solo", "solo")
		u := mustUpdateMemory(t, b, wsA, sid, m.ID, memstore.MemoryUpdate{Path: ptr("/solo/inner.md")}, actorKey)
		checkMemory(t, u, "/solo/inner.md", "solo", true, "renamed down")
		u = mustUpdateMemory(t, b, wsA, sid, m.ID, memstore.MemoryUpdate{Path: ptr("/solo")}, actorKey)
		checkMemory(t, u, "/solo", "solo", true, "renamed up")
	})

	t.Run("RenameIfFree", func(t *testing.T) {
		b, sid := newStore(t, open)
		m := mustCreateMemory(t, b, wsA, sid, "/src.md", "src")
		mustCreateMemory(t, b, wsA, sid, "/dst.md", "dst")
		tick()
		u, err := b.UpdateMemory(t.Context(), wsA, sid, m.ID, memstore.MemoryUpdate{Path: ptr("/dst.md"), RenameIfFree: true}, actorKey)
		if err != nil {
			t.Fatalf("RenameIfFree onto an occupied path: %v", err)
		}
		checkMemory(t, u, "/src.md", "src", true, "RenameIfFree onto an occupied path")
		if u.VersionID != m.VersionID {
			t.Error("RenameIfFree onto an occupied path changed VersionID")
		}
		wantTime(t, u.UpdatedAt, m.UpdatedAt, "UpdatedAt")
		if vs := memoryVersions(t, b, wsA, sid, m.ID); len(vs) != 1 {
			t.Errorf("%d versions after a RenameIfFree no-op, want 1", len(vs))
		}
		u = mustUpdateMemory(t, b, wsA, sid, m.ID, memstore.MemoryUpdate{Path: ptr("/free.md"), RenameIfFree: true}, actorKey)
		checkMemory(t, u, "/free.md", "src", true, "RenameIfFree onto a free path")
		if u.VersionID == m.VersionID {
			t.Error("RenameIfFree onto a free path wrote no version")
		}
	})

	t.Run("RenameFreesOldPath", func(t *testing.T) {
		b, sid := newStore(t, open)
		m := mustCreateMemory(t, b, wsA, sid, "/old/place.md", "x")
		mustUpdateMemory(t, b, wsA, sid, m.ID, memstore.MemoryUpdate{Path: ptr("/new/place.md")}, actorKey)
		n := mustCreateMemory(t, b, wsA, sid, "/old/place.md", "y")
		if n.ID == m.ID {
			t.Error("the new memory at the old path has the renamed memory's ID")
		}
		mustCreateMemory(t, b, wsA, sid, "/new/other.md", "z")
		_, err := b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: "/new/place.md", Content: "w"}, actorKey)
		wantPathConflict(t, err, m.ID, "/new/place.md", "create at the renamed memory's new path")
	})

	t.Run("NotFound", func(t *testing.T) {
		b, sid := newStore(t, open)
		_, err := b.UpdateMemory(t.Context(), wsA, sid, "mem_01jzzzzzzzzzzzzzzzzzzzzzzz", memstore.MemoryUpdate{Content: ptr("x")}, actorKey)
		wantCode(t, err, memstore.ENotFound, "update of an unknown memory")
		_, err = b.UpdateMemory(t.Context(), wsA, "memstore_01jzzzzzzzzzzzzzzzzzzzzzzz", "mem_01jzzzzzzzzzzzzzzzzzzzzzzz", memstore.MemoryUpdate{Content: ptr("x")}, actorKey)
		wantCode(t, err, memstore.ENotFound, "update in an unknown store")
	})
}

func testDeleteMemory(t *testing.T, open func(*testing.T) backend) {
	t.Run("Precondition", func(t *testing.T) {
		b, sid := newStore(t, open)
		m := mustCreateMemory(t, b, wsA, sid, "/keep.md", "keep")
		err := b.DeleteMemory(t.Context(), wsA, sid, m.ID, sha("not it"), actorKey)
		wantCode(t, err, memstore.EPreconditionFailed, "delete with a wrong hash")
		checkMemory(t, mustMemory(t, b, wsA, sid, m.ID), "/keep.md", "keep", true, "memory after a refused delete")
		if vs := memoryVersions(t, b, wsA, sid, m.ID); len(vs) != 1 {
			t.Errorf("%d versions after a refused delete, want 1", len(vs))
		}
		if err := b.DeleteMemory(t.Context(), wsA, sid, m.ID, strings.ToUpper(sha("keep")), actorKey); err != nil {
			t.Fatalf("delete with the right hash in upper case: %v", err)
		}
		_, err = b.Memory(t.Context(), wsA, sid, m.ID)
		wantCode(t, err, memstore.ENotFound, "memory after delete")
	})

	t.Run("Lifecycle", func(t *testing.T) {
		b, sid := newStore(t, open)
		m := mustCreateMemory(t, b, wsA, sid, "/first.md", "v1")
		u := mustUpdateMemory(t, b, wsA, sid, m.ID, memstore.MemoryUpdate{Path: ptr("/dir/last.md"), Content: ptr("v2")}, actorKey)
		if err := b.DeleteMemory(t.Context(), wsA, sid, m.ID, sha("v2"), actorSession); err != nil {
			t.Fatal(err)
		}
		_, err := b.Memory(t.Context(), wsA, sid, m.ID)
		wantCode(t, err, memstore.ENotFound, "Memory after delete")
		_, err = b.UpdateMemory(t.Context(), wsA, sid, m.ID, memstore.MemoryUpdate{Content: ptr("v3")}, actorKey)
		wantCode(t, err, memstore.ENotFound, "UpdateMemory after delete")
		err = b.DeleteMemory(t.Context(), wsA, sid, m.ID, "", actorKey)
		wantCode(t, err, memstore.ENotFound, "second delete")
		items, _ := allItems(t, b, wsA, sid, memstore.MemoryFilter{})
		if len(items) != 0 {
			t.Errorf("list after delete: %v", itemKeys(items))
		}

		vs := memoryVersions(t, b, wsA, sid, m.ID)
		if len(vs) != 3 {
			t.Fatalf("%d versions of the deleted memory, want 3", len(vs))
		}
		d := vs[0]
		wantPrefix(t, d.ID, "memver_", "deleted version")
		if d.Operation != memstore.OpDeleted || d.MemoryID != m.ID || d.Path != "/dir/last.md" || d.CreatedBy != actorSession {
			t.Errorf("deleted version: (%q, %q, %q, %+v), want (deleted, %q, /dir/last.md, %+v)", d.Operation, d.MemoryID, d.Path, d.CreatedBy, m.ID, actorSession)
		}
		if d.HasContent || d.Content != "" || d.ContentSHA256 != "" || d.ContentSize != 0 {
			t.Errorf("deleted version has content: (%v, %q, %q, %d)", d.HasContent, d.Content, d.ContentSHA256, d.ContentSize)
		}
		if vs[1].ID != u.VersionID || vs[2].ID != m.VersionID {
			t.Errorf("older versions %q %q, want %q %q", vs[1].ID, vs[2].ID, u.VersionID, m.VersionID)
		}
		// The version before the deletion keeps the last content.
		checkVersion(t, mustVersion(t, b, wsA, sid, u.VersionID), memstore.OpModified, m.ID, "/dir/last.md", "v2", actorKey, true, "last version before delete")
		dv := mustVersion(t, b, wsA, sid, d.ID)
		if dv.Operation != memstore.OpDeleted || dv.HasContent || dv.Path != "/dir/last.md" {
			t.Errorf("Version(deleted) = (%q, %v, %q)", dv.Operation, dv.HasContent, dv.Path)
		}

		// The path is free again; re-creating it starts a new lineage.
		n := mustCreateMemory(t, b, wsA, sid, "/dir/last.md", "reborn")
		if n.ID == m.ID {
			t.Error("re-created path reuses the deleted memory's ID")
		}
		if got := memoryVersions(t, b, wsA, sid, n.ID); len(got) != 1 || got[0].Operation != memstore.OpCreated {
			t.Errorf("new lineage has versions %v, want one created", versionIDs(got))
		}
		if got := memoryVersions(t, b, wsA, sid, m.ID); len(got) != 3 {
			t.Errorf("old lineage has %d versions after re-create, want 3", len(got))
		}
		// Also the paths around it.
		mustCreateMemory(t, b, wsA, sid, "/first.md", "free too")
	})

	t.Run("NotFound", func(t *testing.T) {
		b, sid := newStore(t, open)
		err := b.DeleteMemory(t.Context(), wsA, sid, "mem_01jzzzzzzzzzzzzzzzzzzzzzzz", "", actorKey)
		wantCode(t, err, memstore.ENotFound, "delete of an unknown memory")
	})
}

func testArchivedStore(t *testing.T, open func(*testing.T) backend) {
	b, sid := newStore(t, open)
	m := mustCreateMemory(t, b, wsA, sid, "/a.md", "a")
	mustArchiveStore(t, b, wsA, sid)

	t.Run("CreateRefused", func(t *testing.T) {
		_, err := b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: "/new.md", Content: "x"}, actorKey)
		wantArchived(t, err, sid, "create")
		_, err = b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: "/a.md", Content: "x", Upsert: true}, actorKey)
		wantArchived(t, err, sid, "upsert")
		// Archived comes before the path conflict, validation before both.
		_, err = b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: "/a.md", Content: "x"}, actorKey)
		wantArchived(t, err, sid, "create on a taken path")
		_, err = b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: "/a.md", Content: "x", IfNotExists: true}, actorKey)
		wantArchived(t, err, sid, "create if not exists on a taken path")
		_, err = b.CreateMemory(t.Context(), wsA, sid, memstore.MemoryCreate{Path: "/bad/", Content: "x"}, actorKey)
		if wantCode(t, err, memstore.EInvalid, "create with an invalid path") && memstore.IsArchived(err) {
			t.Errorf("create with an invalid path: %v, want the path refused first", err)
		}
	})

	t.Run("UpdateRefused", func(t *testing.T) {
		_, err := b.UpdateMemory(t.Context(), wsA, sid, m.ID, memstore.MemoryUpdate{Content: ptr("b")}, actorKey)
		wantArchived(t, err, sid, "update")
		_, err = b.UpdateMemory(t.Context(), wsA, sid, m.ID, memstore.MemoryUpdate{Content: ptr("b"), IfSHA256: sha("stale")}, actorKey)
		wantArchived(t, err, sid, "update with a stale hash")
		_, err = b.UpdateMemory(t.Context(), wsA, sid, "mem_01jzzzzzzzzzzzzzzzzzzzzzzz", memstore.MemoryUpdate{Content: ptr("b")}, actorKey)
		wantCode(t, err, memstore.ENotFound, "update of an unknown memory")
		checkMemory(t, mustMemory(t, b, wsA, sid, m.ID), "/a.md", "a", true, "memory after refused updates")
	})

	// Deletes are writes too, refused as on the hosted API.
	t.Run("DeleteRefused", func(t *testing.T) {
		err := b.DeleteMemory(t.Context(), wsA, sid, m.ID, "", actorKey)
		wantArchived(t, err, sid, "delete")
		err = b.DeleteMemory(t.Context(), wsA, sid, m.ID, sha("a"), actorKey)
		wantArchived(t, err, sid, "delete with a matching hash")
		err = b.DeleteMemory(t.Context(), wsA, sid, m.ID, sha("stale"), actorKey)
		wantArchived(t, err, sid, "delete with a stale hash")
		err = b.DeleteMemory(t.Context(), wsA, sid, "mem_01jzzzzzzzzzzzzzzzzzzzzzzz", "", actorKey)
		wantCode(t, err, memstore.ENotFound, "delete of an unknown memory")
		checkMemory(t, mustMemory(t, b, wsA, sid, m.ID), "/a.md", "a", true, "memory after refused deletes")
	})

	t.Run("ReadsAllowed", func(t *testing.T) {
		items, _ := allItems(t, b, wsA, sid, memstore.MemoryFilter{})
		if len(items) == 0 {
			t.Error("archived store lists no memories")
		}
		vs, _ := allVersions(t, b, wsA, sid, memstore.VersionFilter{MemoryID: m.ID})
		if len(vs) != 1 {
			t.Errorf("%d versions, want 1", len(vs))
		}
	})

	t.Run("RedactAllowed", func(t *testing.T) {
		v, err := b.RedactVersion(t.Context(), wsA, sid, m.VersionID, actorUser)
		if err != nil {
			t.Fatalf("RedactVersion in an archived store: %v", err)
		}
		if v.RedactedAt == nil {
			t.Error("not redacted")
		}
	})
}

// wantArchived checks that err is the refusal of a write to archived
// store storeID: the hosted API's 400, whose message begins "cannot
// modify archived resource", never a conflict.
func wantArchived(t *testing.T, err error, storeID, what string) {
	t.Helper()
	if !wantCode(t, err, memstore.EInvalid, what) {
		return
	}
	if want := "cannot modify archived resource: memory store " + storeID + " is archived"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("%s: error %q, want it to begin %q", what, err, want)
	}
}

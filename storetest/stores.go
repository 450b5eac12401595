package storetest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore"
)

func testStores(t *testing.T, open func(*testing.T) backend) {
	t.Run("CreateDefaults", func(t *testing.T) {
		b := open(t)
		s, err := b.CreateStore(t.Context(), wsA, memstore.StoreCreate{Name: "User Preferences"})
		if err != nil {
			t.Fatal(err)
		}
		wantPrefix(t, s.ID, "memstore_", "store")
		if s.WorkspaceID != wsA || s.Name != "User Preferences" || s.Description != "" {
			t.Errorf("store = (%q, %q, %q), want (%q, %q, \"\")", s.WorkspaceID, s.Name, s.Description, wsA, "User Preferences")
		}
		if s.Metadata == nil || len(s.Metadata) != 0 {
			t.Errorf("Metadata = %#v, want a non-nil empty map", s.Metadata)
		}
		if s.ArchivedAt != nil {
			t.Errorf("ArchivedAt = %v, want nil", s.ArchivedAt)
		}
		if s.CreatedAt.IsZero() {
			t.Error("CreatedAt is zero")
		}
		wantTime(t, s.UpdatedAt, s.CreatedAt, "UpdatedAt")
		got := mustStore(t, b, wsA, s.ID)
		checkStoreEqual(t, got, s, "Store()")
		if got.Metadata == nil {
			t.Error("Store(): Metadata is nil, want an empty map")
		}
	})

	t.Run("CreateWithFields", func(t *testing.T) {
		b := open(t)
		name := strings.Repeat("é", memstore.MaxStoreName) // characters, not bytes
		desc := strings.Repeat("d", memstore.MaxStoreDescription)
		md := map[string]string{strings.Repeat("k", memstore.MaxMetadataKey): strings.Repeat("v", memstore.MaxMetadataValue)}
		for i := range memstore.MaxMetadataPairs - 1 {
			md[fmt.Sprintf("key%d", i)] = fmt.Sprintf("value %d", i)
		}
		s, err := b.CreateStore(t.Context(), wsA, memstore.StoreCreate{Name: name, Description: desc, Metadata: md})
		if err != nil {
			t.Fatal(err)
		}
		if s.Name != name || s.Description != desc || !maps.Equal(s.Metadata, md) {
			t.Errorf("created store has name %q, description %q, metadata %v", s.Name, s.Description, s.Metadata)
		}
		checkStoreEqual(t, mustStore(t, b, wsA, s.ID), s, "Store()")
	})

	t.Run("CreateInvalid", func(t *testing.T) {
		b := open(t)
		tooMany := map[string]string{}
		for i := range memstore.MaxMetadataPairs + 1 {
			tooMany[fmt.Sprintf("k%d", i)] = "v"
		}
		for _, c := range []struct {
			name string
			c    memstore.StoreCreate
		}{
			{"EmptyName", memstore.StoreCreate{Name: ""}},
			{"NameTooLong", memstore.StoreCreate{Name: strings.Repeat("n", memstore.MaxStoreName+1)}},
			{"NameNewline", memstore.StoreCreate{Name: "two\nlines"}},
			{"NameNUL", memstore.StoreCreate{Name: "a\x00b"}},
			{"NameDEL", memstore.StoreCreate{Name: "a\x7fb"}},
			{"DescriptionTooLong", memstore.StoreCreate{Name: "n", Description: strings.Repeat("d", memstore.MaxStoreDescription+1)}},
			{"MetadataTooManyPairs", memstore.StoreCreate{Name: "n", Metadata: tooMany}},
			{"MetadataEmptyKey", memstore.StoreCreate{Name: "n", Metadata: map[string]string{"": "v"}}},
			{"MetadataKeyTooLong", memstore.StoreCreate{Name: "n", Metadata: map[string]string{strings.Repeat("k", memstore.MaxMetadataKey+1): "v"}}},
			{"MetadataValueTooLong", memstore.StoreCreate{Name: "n", Metadata: map[string]string{"k": strings.Repeat("v", memstore.MaxMetadataValue+1)}}},
		} {
			_, err := b.CreateStore(t.Context(), wsA, c.c)
			wantCode(t, err, memstore.EInvalid, c.name)
		}
		all, _ := allStores(t, b, wsA, memstore.StoreFilter{IncludeArchived: true})
		if len(all) != 0 {
			t.Errorf("invalid creates left %d stores", len(all))
		}
	})

	t.Run("GetUnknown", func(t *testing.T) {
		b := open(t)
		mustCreateStore(t, b, wsA, "other")
		_, err := b.Store(t.Context(), wsA, "memstore_01jzzzzzzzzzzzzzzzzzzzzzzz")
		wantCode(t, err, memstore.ENotFound, "Store(unknown)")
		_, err = b.Store(t.Context(), wsA, "")
		wantCode(t, err, memstore.ENotFound, "Store(\"\")")
	})

	t.Run("ListNewestFirstPaging", func(t *testing.T) {
		b := open(t)
		var created []string
		for i := range 25 {
			created = append(created, mustCreateStore(t, b, wsA, fmt.Sprintf("store %d", i)).ID)
		}
		slices.Reverse(created)
		all, sizes := allStores(t, b, wsA, memstore.StoreFilter{Limit: 10})
		if !slices.Equal(sizes, []int{10, 10, 5}) {
			t.Errorf("page sizes %v, want [10 10 5]", sizes)
		}
		if got := storeIDs(all); !slices.Equal(got, created) {
			t.Errorf("stores in order\n%v\nwant newest first\n%v", got, created)
		}
		for i := 1; i < len(all); i++ {
			if all[i].CreatedAt.After(all[i-1].CreatedAt) {
				t.Errorf("store %d created at %v, after the one before it (%v)", i, all[i].CreatedAt, all[i-1].CreatedAt)
			}
		}
		// Limit 0 is the default of 20.
		p, err := b.Stores(t.Context(), wsA, memstore.StoreFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != 20 || p.Next == "" {
			t.Errorf("default page: %d items, Next %q; want 20 and a cursor", len(p.Items), p.Next)
		}
		p, err = b.Stores(t.Context(), wsA, memstore.StoreFilter{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != 25 || p.Next != "" {
			t.Errorf("Limit 100: %d items, Next %q; want 25 and no cursor", len(p.Items), p.Next)
		}
	})

	t.Run("ListInvalid", func(t *testing.T) {
		b := open(t)
		mustCreateStore(t, b, wsA, "s")
		_, err := b.Stores(t.Context(), wsA, memstore.StoreFilter{Limit: 101})
		wantCode(t, err, memstore.EInvalid, "Limit 101")
		_, err = b.Stores(t.Context(), wsA, memstore.StoreFilter{Limit: -1})
		wantCode(t, err, memstore.EInvalid, "Limit -1")
		_, err = b.Stores(t.Context(), wsA, memstore.StoreFilter{Page: "garbage"})
		wantCode(t, err, memstore.EInvalid, "garbage cursor")
		_, err = b.Stores(t.Context(), wsA, memstore.StoreFilter{Page: "page_!!!not-base64!!!"})
		wantCode(t, err, memstore.EInvalid, "garbled page_ cursor")
	})

	t.Run("ListIncludeArchived", func(t *testing.T) {
		b := open(t)
		s1 := mustCreateStore(t, b, wsA, "one")
		s2 := mustCreateStore(t, b, wsA, "two")
		s3 := mustCreateStore(t, b, wsA, "three")
		mustArchiveStore(t, b, wsA, s2.ID)
		live, _ := allStores(t, b, wsA, memstore.StoreFilter{})
		if got, want := storeIDs(live), []string{s3.ID, s1.ID}; !slices.Equal(got, want) {
			t.Errorf("without archived: %v, want %v", got, want)
		}
		all, _ := allStores(t, b, wsA, memstore.StoreFilter{IncludeArchived: true})
		if got, want := storeIDs(all), []string{s3.ID, s2.ID, s1.ID}; !slices.Equal(got, want) {
			t.Errorf("with archived: %v, want %v", got, want)
		}
		if all[1].ArchivedAt == nil {
			t.Error("archived store listed with ArchivedAt nil")
		}
	})

	t.Run("ListCreatedAtRange", func(t *testing.T) {
		b := open(t)
		var ss []*memstore.Store
		for i := range 5 {
			ss = append(ss, mustCreateStore(t, b, wsA, fmt.Sprintf("s%d", i)))
			tick()
		}
		all, _ := allStores(t, b, wsA, memstore.StoreFilter{Limit: 100})
		// within lists, in list order, the stores created in [gte, lte].
		within := func(gte, lte *time.Time) []string {
			var ids []string
			for _, s := range all {
				if (gte == nil || !s.CreatedAt.Before(*gte)) && (lte == nil || !s.CreatedAt.After(*lte)) {
					ids = append(ids, s.ID)
				}
			}
			return ids
		}
		// Another zone for the same instants: bounds are instants, not strings.
		zone := time.FixedZone("UTC+7", 7*3600)
		for _, c := range append([]timeRange{
			{"Both", &ss[1].CreatedAt, &ss[3].CreatedAt, []string{ss[1].ID, ss[2].ID, ss[3].ID}},
			{"BothOtherZone", ptr(ss[1].CreatedAt.In(zone)), ptr(ss[3].CreatedAt.In(zone)), []string{ss[1].ID, ss[2].ID, ss[3].ID}},
			{"GTEOnly", &ss[4].CreatedAt, nil, []string{ss[4].ID}},
			{"LTEOnly", nil, &ss[0].CreatedAt, []string{ss[0].ID}},
			{"Exact", &ss[2].CreatedAt, &ss[2].CreatedAt, []string{ss[2].ID}},
			{"Empty", ptr(ss[4].CreatedAt.Add(time.Hour)), nil, nil},
		}, farBounds(ss[0].ID, ss[4].ID)...) {
			got, _ := allStores(t, b, wsA, memstore.StoreFilter{CreatedAtGTE: c.gte, CreatedAtLTE: c.lte, Limit: 2})
			ids := storeIDs(got)
			if want := within(c.gte, c.lte); !slices.Equal(ids, want) {
				t.Errorf("%s: stores %v, want %v", c.name, ids, want)
			}
			for _, id := range c.must {
				if !slices.Contains(ids, id) {
					t.Errorf("%s: store %s missing (bounds are inclusive)", c.name, id)
				}
			}
		}
	})

	t.Run("Update", func(t *testing.T) {
		b := open(t)
		s, err := b.CreateStore(t.Context(), wsA, memstore.StoreCreate{Name: "old", Description: "old desc", Metadata: map[string]string{"a": "1"}})
		if err != nil {
			t.Fatal(err)
		}
		tick()
		u, err := b.UpdateStore(t.Context(), wsA, s.ID, memstore.StoreUpdate{Name: ptr("new")})
		if err != nil {
			t.Fatal(err)
		}
		if u.Name != "new" || u.Description != "old desc" || !maps.Equal(u.Metadata, map[string]string{"a": "1"}) {
			t.Errorf("after name update: (%q, %q, %v)", u.Name, u.Description, u.Metadata)
		}
		wantTime(t, u.CreatedAt, s.CreatedAt, "CreatedAt")
		if u.UpdatedAt.Before(s.UpdatedAt) {
			t.Errorf("UpdatedAt went back from %v to %v", s.UpdatedAt, u.UpdatedAt)
		}
		u2, err := b.UpdateStore(t.Context(), wsA, s.ID, memstore.StoreUpdate{Description: ptr("")})
		if err != nil {
			t.Fatal(err)
		}
		if u2.Name != "new" || u2.Description != "" {
			t.Errorf("after clearing the description: (%q, %q)", u2.Name, u2.Description)
		}
		checkStoreEqual(t, mustStore(t, b, wsA, s.ID), u2, "Store() after updates")

		_, err = b.UpdateStore(t.Context(), wsA, "memstore_01jzzzzzzzzzzzzzzzzzzzzzzz", memstore.StoreUpdate{Name: ptr("x")})
		wantCode(t, err, memstore.ENotFound, "update of an unknown store")
	})

	t.Run("UpdateMetadataMerge", func(t *testing.T) {
		b := open(t)
		s, err := b.CreateStore(t.Context(), wsA, memstore.StoreCreate{Name: "n", Metadata: map[string]string{"keep": "k", "replace": "old", "remove": "r"}})
		if err != nil {
			t.Fatal(err)
		}
		u, err := b.UpdateStore(t.Context(), wsA, s.ID, memstore.StoreUpdate{Metadata: map[string]*string{
			"replace": ptr("new"), "remove": nil, "add": ptr("a"), "absent": nil,
		}})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"keep": "k", "replace": "new", "add": "a"}
		if !maps.Equal(u.Metadata, want) {
			t.Errorf("merged metadata %v, want %v", u.Metadata, want)
		}
		if got := mustStore(t, b, wsA, s.ID).Metadata; !maps.Equal(got, want) {
			t.Errorf("stored metadata %v, want %v", got, want)
		}

		// 3 keys now; adding 14 makes 17 → EInvalid, nothing changes.
		patch := map[string]*string{}
		for i := range 14 {
			patch[fmt.Sprintf("n%d", i)] = ptr("v")
		}
		_, err = b.UpdateStore(t.Context(), wsA, s.ID, memstore.StoreUpdate{Metadata: patch, Name: ptr("renamed")})
		wantCode(t, err, memstore.EInvalid, "17 pairs after merge")
		after := mustStore(t, b, wsA, s.ID)
		if !maps.Equal(after.Metadata, want) || after.Name != "n" {
			t.Errorf("a refused update changed the store: %q %v", after.Name, after.Metadata)
		}
		// Removing one in the same patch makes 16: allowed.
		patch["keep"] = nil
		u, err = b.UpdateStore(t.Context(), wsA, s.ID, memstore.StoreUpdate{Metadata: patch})
		if err != nil {
			t.Fatalf("16 pairs after merge: %v", err)
		}
		if len(u.Metadata) != 16 {
			t.Errorf("%d pairs after merge, want 16", len(u.Metadata))
		}
		if _, ok := u.Metadata["keep"]; ok {
			t.Error("key removed with nil is still there")
		}
	})

	t.Run("UpdateInvalid", func(t *testing.T) {
		b := open(t)
		s := mustCreateStore(t, b, wsA, "name")
		for _, c := range []struct {
			name string
			u    memstore.StoreUpdate
		}{
			{"EmptyName", memstore.StoreUpdate{Name: ptr("")}},
			{"NameTooLong", memstore.StoreUpdate{Name: ptr(strings.Repeat("n", memstore.MaxStoreName+1))}},
			{"NameControl", memstore.StoreUpdate{Name: ptr("tab\there")}},
			{"DescriptionTooLong", memstore.StoreUpdate{Description: ptr(strings.Repeat("d", memstore.MaxStoreDescription+1))}},
			{"MetadataEmptyKey", memstore.StoreUpdate{Metadata: map[string]*string{"": ptr("v")}}},
			{"MetadataValueTooLong", memstore.StoreUpdate{Metadata: map[string]*string{"k": ptr(strings.Repeat("v", memstore.MaxMetadataValue+1))}}},
		} {
			_, err := b.UpdateStore(t.Context(), wsA, s.ID, c.u)
			wantCode(t, err, memstore.EInvalid, c.name)
		}
		checkStoreEqual(t, mustStore(t, b, wsA, s.ID), s, "store after refused updates")
	})

	t.Run("UpdateNoOp", func(t *testing.T) {
		b := open(t)
		s, err := b.CreateStore(t.Context(), wsA, memstore.StoreCreate{Name: "n", Description: "d", Metadata: map[string]string{"a": "1"}})
		if err != nil {
			t.Fatal(err)
		}
		tick()
		for _, c := range []struct {
			name string
			u    memstore.StoreUpdate
		}{
			{"Nothing", memstore.StoreUpdate{}},
			{"SameValues", memstore.StoreUpdate{Name: ptr("n"), Description: ptr("d"), Metadata: map[string]*string{"a": ptr("1")}}},
			{"RemoveAbsentKey", memstore.StoreUpdate{Metadata: map[string]*string{"zzz": nil}}},
		} {
			u, err := b.UpdateStore(t.Context(), wsA, s.ID, c.u)
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			checkStoreEqual(t, u, s, c.name)
		}
		checkStoreEqual(t, mustStore(t, b, wsA, s.ID), s, "store after no-op updates")
	})

	t.Run("UpdateArchived", func(t *testing.T) {
		b := open(t)
		s := mustCreateStore(t, b, wsA, "n")
		a := mustArchiveStore(t, b, wsA, s.ID)
		_, err := b.UpdateStore(t.Context(), wsA, s.ID, memstore.StoreUpdate{Name: ptr("other")})
		wantArchived(t, err, s.ID, "update of an archived store")
		checkStoreEqual(t, mustStore(t, b, wsA, s.ID), a, "archived store after a refused update")
	})

	t.Run("Archive", func(t *testing.T) {
		b := open(t)
		s := mustCreateStore(t, b, wsA, "n")
		tick()
		a := mustArchiveStore(t, b, wsA, s.ID)
		if a.ArchivedAt == nil {
			t.Fatal("ArchivedAt is nil after archive")
		}
		if a.ArchivedAt.Before(s.CreatedAt) || a.UpdatedAt.Before(s.UpdatedAt) {
			t.Errorf("ArchivedAt %v / UpdatedAt %v before the store's creation %v", a.ArchivedAt, a.UpdatedAt, s.CreatedAt)
		}
		if a.ID != s.ID || a.Name != s.Name {
			t.Errorf("archive changed the store: %+v", a)
		}
		tick()
		again := mustArchiveStore(t, b, wsA, s.ID)
		checkStoreEqual(t, again, a, "second archive")
		checkStoreEqual(t, mustStore(t, b, wsA, s.ID), a, "Store() after archive")
		_, err := b.ArchiveStore(t.Context(), wsA, "memstore_01jzzzzzzzzzzzzzzzzzzzzzzz", reader)
		wantCode(t, err, memstore.ENotFound, "archive of an unknown store")
	})

	t.Run("Delete", func(t *testing.T) {
		b := open(t)
		keep := mustCreateStore(t, b, wsA, "keep")
		kept := mustCreateMemory(t, b, wsA, keep.ID, "/kept.md", "kept")
		s := mustCreateStore(t, b, wsA, "doomed")
		m := mustCreateMemory(t, b, wsA, s.ID, "/a.md", "a")
		m2 := mustUpdateMemory(t, b, wsA, s.ID, m.ID, memstore.MemoryUpdate{Content: ptr("b")}, actorKey)
		if err := b.DeleteStore(t.Context(), wsA, s.ID); err != nil {
			t.Fatal(err)
		}
		checkStoreGone(t, b, wsA, s.ID, m.ID, m2.VersionID, "deleted store")
		if err := b.DeleteStore(t.Context(), wsA, s.ID); memstore.ErrorCode(err) != memstore.ENotFound {
			t.Errorf("second DeleteStore: %v, want %s", err, memstore.ENotFound)
		}
		all, _ := allStores(t, b, wsA, memstore.StoreFilter{IncludeArchived: true})
		if got := storeIDs(all); !slices.Equal(got, []string{keep.ID}) {
			t.Errorf("stores after delete: %v, want [%s]", got, keep.ID)
		}
		checkMemory(t, mustMemory(t, b, wsA, keep.ID, kept.ID), "/kept.md", "kept", true, "memory of another store")
		// The path of the deleted store's memory is free in a new store,
		// and an archived store can be deleted.
		s2 := mustCreateStore(t, b, wsA, "archived")
		mustCreateMemory(t, b, wsA, s2.ID, "/a.md", "a")
		mustArchiveStore(t, b, wsA, s2.ID)
		if err := b.DeleteStore(t.Context(), wsA, s2.ID); err != nil {
			t.Errorf("DeleteStore(archived): %v", err)
		}
	})
}

// checkStoreEqual compares two stores field by field.
func checkStoreEqual(t *testing.T, got, want *memstore.Store, what string) {
	t.Helper()
	if got.ID != want.ID || got.WorkspaceID != want.WorkspaceID || got.Name != want.Name || got.Description != want.Description {
		t.Errorf("%s: (ID, WorkspaceID, Name, Description) = (%q, %q, %q, %q), want (%q, %q, %q, %q)", what,
			got.ID, got.WorkspaceID, got.Name, got.Description, want.ID, want.WorkspaceID, want.Name, want.Description)
	}
	if !maps.Equal(got.Metadata, want.Metadata) {
		t.Errorf("%s: Metadata = %v, want %v", what, got.Metadata, want.Metadata)
	}
	wantTime(t, got.CreatedAt, want.CreatedAt, what+": CreatedAt")
	wantTime(t, got.UpdatedAt, want.UpdatedAt, what+": UpdatedAt")
	wantTimeOrNil(t, got.ArchivedAt, want.ArchivedAt, what+": ArchivedAt")
}

// checkStoreGone checks that every method answers ENotFound for a store
// (and its memory and version) as seen from workspace ws.
func checkStoreGone(t *testing.T, b backend, ws, storeID, memoryID, versionID, what string) {
	t.Helper()
	ctx := t.Context()
	for _, c := range []struct {
		name string
		err  func() error
	}{
		{"Store", func() error { _, err := b.Store(ctx, ws, storeID); return err }},
		{"UpdateStore", func() error {
			_, err := b.UpdateStore(ctx, ws, storeID, memstore.StoreUpdate{Name: ptr("x")})
			return err
		}},
		{"ArchiveStore", func() error { _, err := b.ArchiveStore(ctx, ws, storeID, reader); return err }},
		{"CreateMemory", func() error {
			_, err := b.CreateMemory(ctx, ws, storeID, memstore.MemoryCreate{Path: "/new.md", Content: "x"}, actorKey)
			return err
		}},
		{"Memory", func() error { _, err := b.Memory(ctx, ws, storeID, memoryID); return err }},
		{"Memories", func() error { _, err := b.Memories(ctx, ws, storeID, memstore.MemoryFilter{}); return err }},
		{"UpdateMemory", func() error {
			_, err := b.UpdateMemory(ctx, ws, storeID, memoryID, memstore.MemoryUpdate{Content: ptr("changed")}, actorKey)
			return err
		}},
		{"Versions", func() error { _, err := b.Versions(ctx, ws, storeID, memstore.VersionFilter{}); return err }},
		{"VersionsOfMemory", func() error {
			_, err := b.Versions(ctx, ws, storeID, memstore.VersionFilter{MemoryID: memoryID})
			return err
		}},
		{"Version", func() error { _, err := b.Version(ctx, ws, storeID, versionID); return err }},
		{"RedactVersion", func() error { _, err := b.RedactVersion(ctx, ws, storeID, versionID, actorUser); return err }},
		{"DeleteMemory", func() error { return b.DeleteMemory(ctx, ws, storeID, memoryID, "", actorKey) }},
		// Last: it must not delete a store of another workspace either.
		{"DeleteStore", func() error { return b.DeleteStore(ctx, ws, storeID) }},
	} {
		wantCode(t, c.err(), memstore.ENotFound, what+": "+c.name)
	}
}

func testIsolation(t *testing.T, open func(*testing.T) backend) {
	t.Run("Workspaces", func(t *testing.T) {
		b := open(t)
		s := mustCreateStore(t, b, wsA, "private")
		m := mustCreateMemory(t, b, wsA, s.ID, "/secret.md", "secret")
		mustCreateStore(t, b, wsB, "b's own")
		checkStoreGone(t, b, wsB, s.ID, m.ID, m.VersionID, "from workspace B")
		bs, _ := allStores(t, b, wsB, memstore.StoreFilter{IncludeArchived: true})
		if len(bs) != 1 || bs[0].ID == s.ID {
			t.Errorf("workspace B lists %v, want only its own store", storeIDs(bs))
		}
		// Nothing was changed from B.
		got := mustStore(t, b, wsA, s.ID)
		checkStoreEqual(t, got, s, "store seen from A")
		checkMemory(t, mustMemory(t, b, wsA, s.ID, m.ID), "/secret.md", "secret", true, "memory seen from A")
		if vs := memoryVersions(t, b, wsA, s.ID, m.ID); len(vs) != 1 {
			t.Errorf("memory has %d versions after B's attempts, want 1", len(vs))
		}
	})

	t.Run("Stores", func(t *testing.T) {
		b := open(t)
		s1 := mustCreateStore(t, b, wsA, "one")
		s2 := mustCreateStore(t, b, wsA, "two")
		m := mustCreateMemory(t, b, wsA, s1.ID, "/only-in-one.md", "x")
		// s1's memory and version don't exist in s2.
		_, err := b.Memory(t.Context(), wsA, s2.ID, m.ID)
		wantCode(t, err, memstore.ENotFound, "Memory via another store")
		_, err = b.UpdateMemory(t.Context(), wsA, s2.ID, m.ID, memstore.MemoryUpdate{Content: ptr("y")}, actorKey)
		wantCode(t, err, memstore.ENotFound, "UpdateMemory via another store")
		err = b.DeleteMemory(t.Context(), wsA, s2.ID, m.ID, "", actorKey)
		wantCode(t, err, memstore.ENotFound, "DeleteMemory via another store")
		_, err = b.Version(t.Context(), wsA, s2.ID, m.VersionID)
		wantCode(t, err, memstore.ENotFound, "Version via another store")
		_, err = b.RedactVersion(t.Context(), wsA, s2.ID, m.VersionID, actorUser)
		wantCode(t, err, memstore.ENotFound, "RedactVersion via another store")
		items, _ := allItems(t, b, wsA, s2.ID, memstore.MemoryFilter{})
		if len(items) != 0 {
			t.Errorf("other store lists %v", itemKeys(items))
		}
		vs, _ := allVersions(t, b, wsA, s2.ID, memstore.VersionFilter{})
		if len(vs) != 0 {
			t.Errorf("other store lists versions %v", versionIDs(vs))
		}
		vs, _ = allVersions(t, b, wsA, s2.ID, memstore.VersionFilter{MemoryID: m.ID})
		if len(vs) != 0 {
			t.Errorf("other store lists versions %v of a foreign memory", versionIDs(vs))
		}
		// Same path in both stores: no conflict across stores.
		mustCreateMemory(t, b, wsA, s2.ID, "/only-in-one.md", "y")
		checkMemory(t, mustMemory(t, b, wsA, s1.ID, m.ID), "/only-in-one.md", "x", true, "memory after the attempts")
	})
}

package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/memstore/memstore"
)

// runIsolation checks that a session's caller stays inside its session,
// whatever it asks: a store not attached to it, in its workspace or not,
// existing or not, is out of reach of every memory, version and search
// call; a store attached read-only takes no change; and nothing that
// manages stores, sessions or versions is open to it. Each refusal is
// EPermission, the API's 403, and changes nothing. open returns a fresh,
// empty services for each subtest.
func runIsolation(t *testing.T, open func(t *testing.T) Services) {
	t.Run("UnattachedStores", func(t *testing.T) { testUnattachedStores(t, newIsolationEnv(t, open)) })
	t.Run("ReadOnly", func(t *testing.T) { testReadOnlyAttachment(t, newIsolationEnv(t, open)) })
	t.Run("ReadWrite", func(t *testing.T) { testReadWriteAttachment(t, newIsolationEnv(t, open)) })
	t.Run("NoAdministration", func(t *testing.T) { testNoAdministration(t, newIsolationEnv(t, open)) })
}

// isolationEnv is a workspace with three stores, each holding /note.md,
// and a session of it with store rw attached read-write and store ro
// read-only; store other is not attached, and store elsewhere is of
// another workspace.
type isolationEnv struct {
	b                        Services
	admin, adminB, session   *memstore.Caller
	sessionID, tokenID       string
	otherSession             string
	rw, ro, other, elsewhere string
	notes                    map[string]*memstore.Memory // by store
}

func newIsolationEnv(t *testing.T, open func(t *testing.T) Services) *isolationEnv {
	t.Helper()
	ctx := t.Context()
	e := &isolationEnv{b: open(t), admin: keyCaller(wsA, actorKey), adminB: keyCaller(wsB, actorKey), notes: map[string]*memstore.Memory{}}
	for _, s := range []struct {
		id    *string
		admin *memstore.Caller
		name  string
	}{{&e.rw, e.admin, "rw"}, {&e.ro, e.admin, "ro"}, {&e.other, e.admin, "other"}, {&e.elsewhere, e.adminB, "elsewhere"}} {
		st, err := e.b.CreateStore(ctx, s.admin, memstore.StoreCreate{Name: s.name})
		if err != nil {
			t.Fatal(err)
		}
		*s.id = st.ID
		m, err := e.b.CreateMemory(ctx, s.admin, st.ID, memstore.MemoryCreate{Path: "/note.md", Content: "isolation note of " + s.name})
		if err != nil {
			t.Fatal(err)
		}
		e.notes[st.ID] = m
	}
	s, tok, secret, err := e.b.CreateSession(ctx, e.admin, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{
		{StoreID: e.rw}, {StoreID: e.ro, Access: memstore.AccessReadOnly},
	}})
	if err != nil {
		t.Fatal(err)
	}
	e.sessionID, e.tokenID = s.ID, tok.ID
	if e.session, err = e.b.AuthenticateSession(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if e.session.Session == nil || e.session.Session.ID != s.ID || e.session.WorkspaceID != wsA {
		t.Fatalf("AuthenticateSession = %+v, want the caller of session %s", e.session, s.ID)
	}
	o, _, _, err := e.b.CreateSession(ctx, e.admin, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: e.other}}})
	if err != nil {
		t.Fatal(err)
	}
	e.otherSession = o.ID
	return e
}

// isolationCall is one call as the session's caller.
type isolationCall struct {
	name string
	call func(ctx context.Context, b Services, c *memstore.Caller) error
}

func errorOf[T any](_ T, err error) error { return err }

// reads are every call that reads the memories of storeID: memoryID is
// one of them, versionID one of its versions.
func reads(storeID, memoryID, versionID string) []isolationCall {
	calls := []isolationCall{
		{"Memory", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.Memory(ctx, c, storeID, memoryID))
		}},
		{"Memories", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.Memories(ctx, c, storeID, memstore.MemoryFilter{}))
		}},
		{"ExportMemories", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return b.ExportMemories(ctx, c, storeID, true, &exportTaken{})
		}},
		{"FindMemory", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(memstore.FindMemory(ctx, b, c, storeID, "/note.md"))
		}},
		{"Versions", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.Versions(ctx, c, storeID, memstore.VersionFilter{}))
		}},
		{"Version", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.Version(ctx, c, storeID, versionID))
		}},
		{"Events", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.Events(ctx, c, storeID, memstore.EventFilter{}))
		}},
		{"SearchMemories", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.SearchMemories(ctx, c, []string{storeID}, memstore.SearchQuery{Text: "isolation"}))
		}},
		{"MemoryUnlessAt", func(ctx context.Context, b Services, c *memstore.Caller) error {
			rv, ok := b.(memstore.MemoryRevalidator)
			if !ok {
				return errorOf(b.Memory(ctx, c, storeID, memoryID))
			}
			return errorOf(rv.MemoryUnlessAt(ctx, c, storeID, memoryID, ""))
		}},
	}
	return calls
}

// writes are every call that changes the memories of storeID.
func writes(storeID, memoryID string) []isolationCall {
	content, path := "changed", "/moved.md"
	return []isolationCall{
		{"CreateMemory", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.CreateMemory(ctx, c, storeID, memstore.MemoryCreate{Path: "/new.md", Content: "new"}))
		}},
		{"UpdateMemory content", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.UpdateMemory(ctx, c, storeID, memoryID, memstore.MemoryUpdate{Content: &content}))
		}},
		{"UpdateMemory path", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.UpdateMemory(ctx, c, storeID, memoryID, memstore.MemoryUpdate{Path: &path}))
		}},
		{"DeleteMemory", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return b.DeleteMemory(ctx, c, storeID, memoryID, "")
		}},
	}
}

// storeAdministration is every call that manages store storeID, or
// redacts version versionID of memories in it.
func storeAdministration(storeID, versionID string) []isolationCall {
	name := "renamed"
	return []isolationCall{
		{"CreateStore", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.CreateStore(ctx, c, memstore.StoreCreate{Name: "made by a session"}))
		}},
		{"Store", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.Store(ctx, c, storeID))
		}},
		{"Stores", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.Stores(ctx, c, memstore.StoreFilter{}))
		}},
		{"UpdateStore", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.UpdateStore(ctx, c, storeID, memstore.StoreUpdate{Name: &name}))
		}},
		{"ArchiveStore", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.ArchiveStore(ctx, c, storeID))
		}},
		{"DeleteStore", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return b.DeleteStore(ctx, c, storeID)
		}},
		{"RedactVersion", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.RedactVersion(ctx, c, storeID, versionID))
		}},
	}
}

// refusedAll checks that every call fails with EPermission.
func (e *isolationEnv) refusedAll(t *testing.T, what string, calls []isolationCall) {
	t.Helper()
	for _, c := range calls {
		if err := c.call(t.Context(), e.b, e.session); memstore.ErrorCode(err) != memstore.EPermission {
			t.Errorf("%s: %s: error %v (%q), want %s", what, c.name, err, memstore.ErrorCode(err), memstore.EPermission)
		}
	}
}

// unchanged checks, as an API key, that the note of each store is as it
// was made, and no other memory is there.
func (e *isolationEnv) unchanged(t *testing.T, storeIDs ...string) {
	t.Helper()
	for _, id := range storeIDs {
		admin := e.admin
		if id == e.elsewhere {
			admin = e.adminB
		}
		page, err := e.b.Memories(t.Context(), admin, id, memstore.MemoryFilter{Full: true})
		want := e.notes[id]
		if err != nil || len(page.Items) != 1 || page.Items[0].Memory == nil ||
			page.Items[0].Memory.VersionID != want.VersionID || page.Items[0].Memory.Content != want.Content {
			t.Errorf("store %s after the refusals: %+v, %v; want only %s as made", id, page.Items, err, want.Path)
		}
	}
}

func testUnattachedStores(t *testing.T, e *isolationEnv) {
	for _, s := range []struct{ what, id string }{
		{"a store of the workspace not attached", e.other},
		{"a store of another workspace", e.elsewhere},
	} {
		m := e.notes[s.id]
		e.refusedAll(t, s.what, slices.Concat(reads(s.id, m.ID, m.VersionID), writes(s.id, m.ID), storeAdministration(s.id, m.VersionID)))
	}
	// A store that does not exist is refused alike: the session learns
	// nothing of which stores exist.
	e.refusedAll(t, "no such store", slices.Concat(reads("memstore_nosuchstore", "mem_nosuch", "memver_nosuch"), writes("memstore_nosuchstore", "mem_nosuch")))
	// A search of its own stores and another's is refused whole.
	_, err := e.b.SearchMemories(t.Context(), e.session, []string{e.rw, e.ro, e.other}, memstore.SearchQuery{Text: "isolation"})
	wantCode(t, err, memstore.EPermission, "a search of the session's stores and another")
	e.unchanged(t, e.other, e.elsewhere)
}

func testReadOnlyAttachment(t *testing.T, e *isolationEnv) {
	m := e.notes[e.ro]
	e.refusedAll(t, "a store attached read-only", writes(e.ro, m.ID))
	for _, c := range reads(e.ro, m.ID, m.VersionID) {
		if err := c.call(t.Context(), e.b, e.session); err != nil {
			t.Errorf("a store attached read-only: %s: %v, want it read", c.name, err)
		}
	}
	page, err := e.b.SearchMemories(t.Context(), e.session, []string{e.rw, e.ro}, memstore.SearchQuery{Text: "isolation"})
	if err != nil || len(page.Items) != 2 {
		t.Errorf("a search of the session's two stores: %+v, %v; want both notes", page.Items, err)
	}
	e.unchanged(t, e.ro)
}

func testReadWriteAttachment(t *testing.T, e *isolationEnv) {
	ctx := t.Context()
	m := e.notes[e.rw]
	e.refusedAll(t, "a store attached read-write", storeAdministration(e.rw, m.VersionID))
	content := "changed by the session"
	u, err := e.b.UpdateMemory(ctx, e.session, e.rw, m.ID, memstore.MemoryUpdate{Content: &content})
	if err != nil {
		t.Fatalf("a change to a store attached read-write: %v", err)
	}
	v, err := e.b.Version(ctx, e.admin, e.rw, u.VersionID)
	if err != nil || v.CreatedBy != e.session.Actor {
		t.Errorf("the version of the session's change: %+v, %v; want one by %+v", v, err, e.session.Actor)
	}
	if v, err := e.b.Version(ctx, e.admin, e.rw, m.VersionID); err != nil || v.Redacted() {
		t.Errorf("the version a session may not redact: %+v, %v", v, err)
	}
}

func testNoAdministration(t *testing.T, e *isolationEnv) {
	ctx := t.Context()
	e.refusedAll(t, "sessions", []isolationCall{
		{"CreateSession", func(ctx context.Context, b Services, c *memstore.Caller) error {
			_, _, _, err := b.CreateSession(ctx, c, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: e.other}}})
			return err
		}},
		{"ArchiveSession", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.ArchiveSession(ctx, c, e.sessionID))
		}},
		{"UpdateSession", func(ctx context.Context, b Services, c *memstore.Caller) error {
			title := "mine now"
			return errorOf(b.UpdateSession(ctx, c, e.sessionID, memstore.SessionUpdate{Title: &title}))
		}},
		{"DeleteSession", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return b.DeleteSession(ctx, c, e.sessionID)
		}},
		{"AttachStore", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.AttachStore(ctx, c, e.sessionID, memstore.AttachmentCreate{StoreID: e.other}))
		}},
		{"UpdateAttachment", func(ctx context.Context, b Services, c *memstore.Caller) error {
			rw := memstore.AccessReadWrite
			return errorOf(b.UpdateAttachment(ctx, c, e.sessionID, e.ro, memstore.AttachmentUpdate{Access: &rw}))
		}},
		{"DetachStore", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.DetachStore(ctx, c, e.sessionID, e.rw))
		}},
		{"CreateSessionToken", func(ctx context.Context, b Services, c *memstore.Caller) error {
			_, _, err := b.CreateSessionToken(ctx, c, e.sessionID, 0)
			return err
		}},
		{"SessionTokens", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.SessionTokens(ctx, c, e.sessionID, memstore.SessionTokenFilter{}))
		}},
		{"SessionToken", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.SessionToken(ctx, c, e.tokenID))
		}},
		{"RevokeSessionToken", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.RevokeSessionToken(ctx, c, e.tokenID))
		}},
		{"Session of another session", func(ctx context.Context, b Services, c *memstore.Caller) error {
			return errorOf(b.Session(ctx, c, e.otherSession))
		}},
	})
	if s, err := e.b.Session(ctx, e.session, e.sessionID); err != nil || s.ID != e.sessionID {
		t.Errorf("the session's own: %+v, %v", s, err)
	}
	page, err := e.b.Sessions(ctx, e.session, memstore.SessionFilter{})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != e.sessionID {
		t.Errorf("the sessions a session lists: %+v, %v; want its own alone", page.Items, err)
	}
	page, err = e.b.Sessions(ctx, e.session, memstore.SessionFilter{StoreID: e.other})
	if err != nil || len(page.Items) != 0 {
		t.Errorf("the sessions a session lists with a store it lacks: %+v, %v; want none", page.Items, err)
	}
	// Nothing was made, archived or revoked.
	all, err := e.b.Sessions(ctx, e.admin, memstore.SessionFilter{IncludeArchived: true})
	if err != nil || len(all.Items) != 2 {
		t.Errorf("sessions after the refusals: %+v, %v; want the two made", all.Items, err)
	}
	for _, s := range all.Items {
		if s.ArchivedAt != nil {
			t.Errorf("session %s was archived", s.ID)
		}
	}
	tok, err := e.b.SessionToken(ctx, e.admin, e.tokenID)
	if err != nil || tok.RevokedAt != nil {
		t.Errorf("the session's token after the refusals: %+v, %v; want it live", tok, err)
	}
	toks, err := e.b.SessionTokens(ctx, e.admin, e.sessionID, memstore.SessionTokenFilter{})
	if err != nil || len(toks.Items) != 1 {
		t.Errorf("the session's tokens after the refusals: %+v, %v; want its first alone", toks.Items, err)
	}
	stores, err := e.b.Stores(ctx, e.admin, memstore.StoreFilter{})
	if err != nil || len(stores.Items) != 3 {
		t.Errorf("stores after the refusals: %+v, %v; want the three made", stores.Items, err)
	}
	e.unchanged(t, e.rw, e.ro, e.other)
}

package memstore_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

// recording is a memstore.Backend that records the name of every method
// called on it before passing the call on to a real database. Each method
// is written out rather than embedded, so that a method added to Backend
// does not compile here until it is recorded too.
type recording struct {
	db    *sqlite.DB
	mu    sync.Mutex
	calls []string
}

func (r *recording) record(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, name)
}

// take returns the calls recorded since the last take, and forgets them.
func (r *recording) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls := r.calls
	r.calls = nil
	return calls
}

func (r *recording) CreateStore(ctx context.Context, ws string, sc memstore.StoreCreate, q memstore.Quota) (*memstore.Store, error) {
	r.record("CreateStore")
	return r.db.CreateStore(ctx, ws, sc, q)
}

func (r *recording) Store(ctx context.Context, ws, id string) (*memstore.Store, error) {
	r.record("Store")
	return r.db.Store(ctx, ws, id)
}

func (r *recording) Stores(ctx context.Context, ws string, f memstore.StoreFilter) (memstore.Page[memstore.Store], error) {
	r.record("Stores")
	return r.db.Stores(ctx, ws, f)
}

func (r *recording) WriteStore(ctx context.Context, ws, id string, fn func(memstore.StoreTx) error) error {
	r.record("WriteStore")
	return r.db.WriteStore(ctx, ws, id, fn)
}

func (r *recording) ChangeCounts(ctx context.Context, ws string, storeIDs []string, since time.Time, hours int) ([]memstore.ChangeCount, error) {
	r.record("ChangeCounts")
	return r.db.ChangeCounts(ctx, ws, storeIDs, since, hours)
}

func (r *recording) LiveSessions(ctx context.Context, ws string) (int64, error) {
	r.record("LiveSessions")
	return r.db.LiveSessions(ctx, ws)
}

func (r *recording) Events(ctx context.Context, ws, storeID string, f memstore.EventFilter) (memstore.EventPage, error) {
	r.record("Events")
	return r.db.Events(ctx, ws, storeID, f)
}

func (r *recording) DeleteStore(ctx context.Context, ws, id string) error {
	r.record("DeleteStore")
	return r.db.DeleteStore(ctx, ws, id)
}

func (r *recording) WriteMemory(ctx context.Context, ws, storeID string, fn func(memstore.MemoryTx) error) error {
	r.record("WriteMemory")
	return r.db.WriteMemory(ctx, ws, storeID, fn)
}

func (r *recording) Memory(ctx context.Context, ws, storeID, id string) (*memstore.Memory, error) {
	r.record("Memory")
	return r.db.Memory(ctx, ws, storeID, id)
}

func (r *recording) MemoryUnlessAt(ctx context.Context, ws, storeID, id, version string) (*memstore.Memory, error) {
	r.record("MemoryUnlessAt")
	return r.db.MemoryUnlessAt(ctx, ws, storeID, id, version)
}

func (r *recording) Memories(ctx context.Context, ws, storeID string, f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
	r.record("Memories")
	return r.db.Memories(ctx, ws, storeID, f)
}

func (r *recording) Versions(ctx context.Context, ws, storeID string, f memstore.VersionFilter) (memstore.Page[memstore.Version], error) {
	r.record("Versions")
	return r.db.Versions(ctx, ws, storeID, f)
}

func (r *recording) Version(ctx context.Context, ws, storeID, id string) (*memstore.Version, error) {
	r.record("Version")
	return r.db.Version(ctx, ws, storeID, id)
}

func (r *recording) RedactVersion(ctx context.Context, ws, storeID, id string, by memstore.Actor) (*memstore.Version, error) {
	r.record("RedactVersion")
	return r.db.RedactVersion(ctx, ws, storeID, id, by)
}

func (r *recording) Dream(ctx context.Context, ws, id string) (*memstore.Dream, error) {
	r.record("Dream")
	return r.db.Dream(ctx, ws, id)
}

func (r *recording) DreamByID(ctx context.Context, id string) (*memstore.Dream, error) {
	r.record("DreamByID")
	return r.db.DreamByID(ctx, id)
}

func (r *recording) Dreams(ctx context.Context, ws string, f memstore.DreamFilter) (memstore.Page[memstore.Dream], error) {
	r.record("Dreams")
	return r.db.Dreams(ctx, ws, f)
}

func (r *recording) WriteDreams(ctx context.Context, ws string, fn func(memstore.DreamTx) error) error {
	r.record("WriteDreams")
	return r.db.WriteDreams(ctx, ws, fn)
}

func (r *recording) ClaimDream(ctx context.Context, owner string, now, until time.Time) (*memstore.Dream, error) {
	r.record("ClaimDream")
	return r.db.ClaimDream(ctx, owner, now, until)
}

func (r *recording) Session(ctx context.Context, ws, id string) (*memstore.Session, error) {
	r.record("Session")
	return r.db.Session(ctx, ws, id)
}

func (r *recording) SessionEvents(ctx context.Context, ws, id string, f memstore.SessionEventFilter) (memstore.Page[memstore.SessionEvent], error) {
	r.record("SessionEvents")
	return r.db.SessionEvents(ctx, ws, id, f)
}

func (r *recording) Sessions(ctx context.Context, ws string, f memstore.SessionFilter) (memstore.Page[memstore.Session], error) {
	r.record("Sessions")
	return r.db.Sessions(ctx, ws, f)
}

func (r *recording) WriteSessions(ctx context.Context, ws string, fn func(memstore.SessionTx) error) error {
	r.record("WriteSessions")
	return r.db.WriteSessions(ctx, ws, fn)
}

func (r *recording) SessionTokens(ctx context.Context, ws, sessionID string, f memstore.SessionTokenFilter) (memstore.Page[memstore.SessionToken], error) {
	r.record("SessionTokens")
	return r.db.SessionTokens(ctx, ws, sessionID, f)
}

func (r *recording) SessionToken(ctx context.Context, ws, id string) (*memstore.SessionToken, error) {
	r.record("SessionToken")
	return r.db.SessionToken(ctx, ws, id)
}

func (r *recording) SessionTokenBySecret(ctx context.Context, secretHash string) (*memstore.SessionToken, *memstore.Session, error) {
	r.record("SessionTokenBySecret")
	return r.db.SessionTokenBySecret(ctx, secretHash)
}

func (r *recording) Now() time.Time {
	r.record("Now")
	return r.db.Now()
}

func (r *recording) CreateWorkspace(ctx context.Context, name string) (*memstore.Workspace, error) {
	r.record("CreateWorkspace")
	return r.db.CreateWorkspace(ctx, name)
}

func (r *recording) Workspace(ctx context.Context, idOrName string) (*memstore.Workspace, error) {
	r.record("Workspace")
	return r.db.Workspace(ctx, idOrName)
}

func (r *recording) Workspaces(ctx context.Context) ([]memstore.Workspace, error) {
	r.record("Workspaces")
	return r.db.Workspaces(ctx)
}

func (r *recording) CreateAPIKey(ctx context.Context, k memstore.APIKey, secretHash string, q memstore.Quota) (*memstore.APIKey, error) {
	r.record("CreateAPIKey")
	return r.db.CreateAPIKey(ctx, k, secretHash, q)
}

func (r *recording) APIKeys(ctx context.Context, ws, after string, n int) ([]memstore.APIKey, error) {
	r.record("APIKeys")
	return r.db.APIKeys(ctx, ws, after, n)
}

func (r *recording) APIKey(ctx context.Context, id string) (*memstore.APIKey, error) {
	r.record("APIKey")
	return r.db.APIKey(ctx, id)
}

func (r *recording) APIKeyBySecret(ctx context.Context, secretHash string) (*memstore.APIKey, error) {
	r.record("APIKeyBySecret")
	return r.db.APIKeyBySecret(ctx, secretHash)
}

func (r *recording) RevokeAPIKey(ctx context.Context, id string, at time.Time, rv memstore.Revocation) (*memstore.APIKey, error) {
	r.record("RevokeAPIKey")
	return r.db.RevokeAPIKey(ctx, id, at, rv)
}

func (r *recording) TouchAPIKey(ctx context.Context, id string, at time.Time) error {
	r.record("TouchAPIKey")
	return r.db.TouchAPIKey(ctx, id, at)
}

func (r *recording) SearchMemories(ctx context.Context, ws string, storeIDs []string, q memstore.SearchQuery) (memstore.Page[memstore.SearchResult], error) {
	r.record("SearchMemories")
	return r.db.SearchMemories(ctx, ws, storeIDs, q)
}

func (r *recording) RankMemories(ctx context.Context, ws string, storeIDs []string, q memstore.SearchQuery) ([]memstore.SearchResult, error) {
	r.record("RankMemories")
	return r.db.RankMemories(ctx, ws, storeIDs, q)
}

func (r *recording) ReadResults(ctx context.Context, ws string, q memstore.SearchQuery, rs []memstore.SearchResult, snippet []bool) ([]memstore.SearchResult, error) {
	r.record("ReadResults")
	return r.db.ReadResults(ctx, ws, q, rs, snippet)
}

// openWorkspace opens a database over a fresh SQLite file, closed with
// the test, and makes a workspace called name in it.
func openWorkspace(t *testing.T, name string) (*sqlite.DB, *memstore.Workspace) {
	t.Helper()
	db := sqlitetest.Open(t, sqlite.Options{})
	return db, sqlitetest.Workspace(t, db, name)
}

// coreFixture is a real database behind a recording backend behind a
// Core, with a session that has store rw attached read-write and store ro
// read-only, beside store other, which is not attached.
type coreFixture struct {
	rec              *recording
	core             *memstore.Core
	admin, session   *memstore.Caller
	sessionID, token string // the session, and its first token's ID
	otherSession     string // another session of the workspace
	rw, ro, other    string // store IDs
	mems             map[string]*memstore.Memory
}

func newCoreFixture(t *testing.T) *coreFixture {
	t.Helper()
	ctx := t.Context()
	db, ws := openWorkspace(t, "core")
	key, _ := sqlitetest.APIKey(t, db, ws.ID, "core")
	admin := memstore.Actor{Type: memstore.ActorAPIKey, ID: key.ID}
	f := &coreFixture{
		rec:   &recording{db: db},
		admin: &memstore.Caller{WorkspaceID: ws.ID, Actor: admin},
		mems:  map[string]*memstore.Memory{},
	}
	f.core = memstore.NewCore(f.rec)
	for _, name := range []string{"rw", "ro", "other"} {
		s := sqlitetest.Store(t, db, ws.ID, memstore.StoreCreate{Name: name})
		f.mems[s.ID] = sqlitetest.Create(t, db, ws.ID, s.ID, "/note.md", "alpha in "+name, admin)
		switch name {
		case "rw":
			f.rw = s.ID
		case "ro":
			f.ro = s.ID
		default:
			f.other = s.ID
		}
	}
	s, tok, secret, err := f.core.CreateSession(ctx, f.admin, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{
		{StoreID: f.rw}, {StoreID: f.ro, Access: memstore.AccessReadOnly},
	}})
	if err != nil {
		t.Fatal(err)
	}
	f.sessionID, f.token = s.ID, tok.ID
	if f.session, err = f.core.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	o, _, _, err := f.core.CreateSession(ctx, f.admin, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: f.other}}})
	if err != nil {
		t.Fatal(err)
	}
	f.otherSession = o.ID
	return f
}

// coreCall is one call of a caller-facing service, as a surface makes it.
type coreCall struct {
	name string
	call func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error
}

func errOf[T any](_ T, err error) error { return err }

// memoryCalls are every call of MemoryService, VersionService and
// SearchService on the memory /note.md of store storeID.
func (f *coreFixture) memoryCalls(storeID string) (reads, writes, admin []coreCall) {
	m := f.mems[storeID]
	return f.memoryCallsOf(storeID, m.ID, m.VersionID)
}

// memoryCallsOf are memoryCalls on the memory id of store storeID and its
// version versionID, whichever they are.
func (f *coreFixture) memoryCallsOf(storeID, id, versionID string) (reads, writes, admin []coreCall) {
	m := &memstore.Memory{ID: id, VersionID: versionID}
	content := "changed"
	reads = []coreCall{
		{"Memory", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.Memory(ctx, c, storeID, m.ID))
		}},
		{"MemoryUnlessAt", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.MemoryUnlessAt(ctx, c, storeID, m.ID, ""))
		}},
		{"Memories", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.Memories(ctx, c, storeID, memstore.MemoryFilter{}))
		}},
		{"ExportMemories", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return co.ExportMemories(ctx, c, storeID, true, discardExport{})
		}},
		{"Versions", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.Versions(ctx, c, storeID, memstore.VersionFilter{}))
		}},
		{"Version", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.Version(ctx, c, storeID, m.VersionID))
		}},
		{"Events", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.Events(ctx, c, storeID, memstore.EventFilter{}))
		}},
		{"SearchMemories", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.SearchMemories(ctx, c, []string{storeID}, memstore.SearchQuery{Text: "alpha"}))
		}},
		{"SearchMemories with an attached store first", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.SearchMemories(ctx, c, []string{f.rw, storeID}, memstore.SearchQuery{Text: "alpha"}))
		}},
	}
	writes = []coreCall{
		{"CreateMemory", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.CreateMemory(ctx, c, storeID, memstore.MemoryCreate{Path: "/new.md", Content: "x"}))
		}},
		{"UpdateMemory", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.UpdateMemory(ctx, c, storeID, m.ID, memstore.MemoryUpdate{Content: &content}))
		}},
		{"DeleteMemory", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return co.DeleteMemory(ctx, c, storeID, m.ID, "")
		}},
	}
	admin = []coreCall{
		{"RedactVersion", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.RedactVersion(ctx, c, storeID, m.VersionID))
		}},
	}
	return reads, writes, admin
}

// adminCalls are every call of StoreService and SessionService that
// needs an API key, on store storeID and session sessionID.
func (f *coreFixture) adminCalls(storeID, sessionID string) []coreCall {
	name := "renamed"
	return []coreCall{
		{"CreateStore", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.CreateStore(ctx, c, memstore.StoreCreate{Name: "new"}))
		}},
		{"Store", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.Store(ctx, c, storeID))
		}},
		{"Stores", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.Stores(ctx, c, memstore.StoreFilter{}))
		}},
		{"UpdateStore", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.UpdateStore(ctx, c, storeID, memstore.StoreUpdate{Name: &name}))
		}},
		{"ArchiveStore", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.ArchiveStore(ctx, c, storeID))
		}},
		{"DeleteStore", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return co.DeleteStore(ctx, c, storeID)
		}},
		{"CreateSession", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			_, _, _, err := co.CreateSession(ctx, c, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: storeID}}})
			return err
		}},
		{"ArchiveSession", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.ArchiveSession(ctx, c, sessionID))
		}},
		{"UpdateSession", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.UpdateSession(ctx, c, sessionID, memstore.SessionUpdate{Title: &name}))
		}},
		{"DeleteSession", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return co.DeleteSession(ctx, c, sessionID)
		}},
		{"AttachStore", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.AttachStore(ctx, c, sessionID, memstore.AttachmentCreate{StoreID: f.other}))
		}},
		{"UpdateAttachment", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			ro := memstore.AccessReadOnly
			return errOf(co.UpdateAttachment(ctx, c, sessionID, storeID, memstore.AttachmentUpdate{Access: &ro}))
		}},
		{"DetachStore", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.DetachStore(ctx, c, sessionID, storeID))
		}},
		{"CreateSessionToken", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			_, _, err := co.CreateSessionToken(ctx, c, sessionID, 0)
			return err
		}},
		{"SessionTokens", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.SessionTokens(ctx, c, sessionID, memstore.SessionTokenFilter{}))
		}},
		{"SessionToken", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.SessionToken(ctx, c, f.token))
		}},
		{"RevokeSessionToken", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.RevokeSessionToken(ctx, c, f.token))
		}},
	}
}

// refused checks that each call fails with code and reaches no method of
// the backend.
func (f *coreFixture) refused(t *testing.T, c *memstore.Caller, code, what string, calls ...coreCall) {
	t.Helper()
	f.rec.take()
	for _, cc := range calls {
		err := cc.call(t.Context(), f.core, c)
		if got := memstore.ErrorCode(err); got != code {
			t.Errorf("%s %s: error %q (%v), want %q", what, cc.name, got, err, code)
		}
		if got := f.rec.take(); len(got) > 0 {
			t.Errorf("%s %s: refused after the backend was called: %v", what, cc.name, got)
		}
	}
}

// TestCoreRefusesBeforeTheBackend: every call the core refuses, for want
// of a caller, of access or of valid input, fails before any backend
// method is called.
func TestCoreRefusesBeforeTheBackend(t *testing.T) {
	f := newCoreFixture(t)
	var every []coreCall
	for _, s := range []string{f.rw, f.ro, f.other} {
		reads, writes, admin := f.memoryCalls(s)
		every = slices.Concat(every, reads, writes, admin)
	}
	every = append(every, f.adminCalls(f.rw, f.sessionID)...)
	every = append(every,
		coreCall{"Session", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.Session(ctx, c, f.sessionID))
		}},
		coreCall{"Sessions", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.Sessions(ctx, c, memstore.SessionFilter{}))
		}},
		coreCall{"SearchMemories of no store", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.SearchMemories(ctx, c, nil, memstore.SearchQuery{Text: "alpha"}))
		}})
	f.refused(t, nil, memstore.EUnauthenticated, "no caller", every...)

	// A session caller: nothing of a store not attached, no change to a
	// store attached read-only, no administration, no other session.
	reads, writes, admin := f.memoryCalls(f.other)
	f.refused(t, f.session, memstore.EPermission, "unattached store", slices.Concat(reads, writes, admin)...)
	_, writes, admin = f.memoryCalls(f.ro)
	f.refused(t, f.session, memstore.EPermission, "read-only store", slices.Concat(writes, admin)...)
	_, _, admin = f.memoryCalls(f.rw)
	f.refused(t, f.session, memstore.EPermission, "read-write store", admin...)
	f.refused(t, f.session, memstore.EPermission, "administration", f.adminCalls(f.rw, f.sessionID)...)
	f.refused(t, f.session, memstore.EPermission, "another session", coreCall{"Session", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
		return errOf(co.Session(ctx, c, f.otherSession))
	}})

	// Bad input, from a caller who may do the rest.
	long := strings.Repeat("x", memstore.MaxContentBytes+1)
	badName := ""
	m := f.mems[f.rw]
	f.refused(t, f.admin, memstore.EInvalid, "invalid input",
		coreCall{"CreateStore without a name", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.CreateStore(ctx, c, memstore.StoreCreate{}))
		}},
		coreCall{"UpdateStore to no name", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.UpdateStore(ctx, c, f.rw, memstore.StoreUpdate{Name: &badName}))
		}},
		coreCall{"UpdateStore with an overlong metadata key", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.UpdateStore(ctx, c, f.rw, memstore.StoreUpdate{Metadata: map[string]*string{strings.Repeat("k", memstore.MaxMetadataKey+1): nil}}))
		}},
		coreCall{"CreateMemory at a bad path", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.CreateMemory(ctx, c, f.rw, memstore.MemoryCreate{Path: "no-slash"}))
		}},
		coreCall{"CreateMemory of too much content", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.CreateMemory(ctx, c, f.rw, memstore.MemoryCreate{Path: "/big.md", Content: long}))
		}},
		coreCall{"UpdateMemory to a bad path", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			bad := "/a//b"
			return errOf(co.UpdateMemory(ctx, c, f.rw, m.ID, memstore.MemoryUpdate{Path: &bad}))
		}},
		coreCall{"UpdateMemory to too much content", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.UpdateMemory(ctx, c, f.rw, m.ID, memstore.MemoryUpdate{Content: &long}))
		}},
		coreCall{"Events of too large a page", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.Events(ctx, c, f.rw, memstore.EventFilter{Limit: memstore.MaxPageSize + 1}))
		}},
		coreCall{"Memories under a bad prefix", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.Memories(ctx, c, f.rw, memstore.MemoryFilter{PathPrefix: "notes/"}))
		}},
		coreCall{"CreateSession of too many stores", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			sc := memstore.SessionCreate{}
			for i := range memstore.MaxSessionStores + 1 {
				sc.Stores = append(sc.Stores, memstore.AttachmentCreate{StoreID: f.rw + strings.Repeat("x", i)})
			}
			_, _, _, err := co.CreateSession(ctx, c, sc)
			return err
		}},
		coreCall{"UpdateSession with an overlong title", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			long := strings.Repeat("t", memstore.MaxStoreName+1)
			return errOf(co.UpdateSession(ctx, c, f.sessionID, memstore.SessionUpdate{Title: &long}))
		}},
		coreCall{"UpdateSession with a field not JSON", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.UpdateSession(ctx, c, f.sessionID, memstore.SessionUpdate{Fields: map[string]json.RawMessage{"agent": json.RawMessage(`{`)}}))
		}},
		coreCall{"AttachStore without a store", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.AttachStore(ctx, c, f.sessionID, memstore.AttachmentCreate{}))
		}},
		coreCall{"AttachStore with a bad access", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.AttachStore(ctx, c, f.sessionID, memstore.AttachmentCreate{StoreID: f.other, Access: "write_only"}))
		}},
		coreCall{"UpdateAttachment with overlong instructions", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			long := strings.Repeat("i", memstore.MaxInstructions+1)
			return errOf(co.UpdateAttachment(ctx, c, f.sessionID, f.rw, memstore.AttachmentUpdate{Instructions: &long}))
		}},
		coreCall{"Sessions of an unknown status", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.Sessions(ctx, c, memstore.SessionFilter{Statuses: []memstore.SessionStatus{"archived"}}))
		}},
		coreCall{"SearchMemories for nothing", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.SearchMemories(ctx, c, []string{f.rw}, memstore.SearchQuery{Text: "  "}))
		}},
		coreCall{"SearchMemories of no store for nothing", func(ctx context.Context, co *memstore.Core, c *memstore.Caller) error {
			return errOf(co.SearchMemories(ctx, c, nil, memstore.SearchQuery{}))
		}})

	// Nothing was changed.
	for id, m := range f.mems {
		got, err := f.rec.db.Memory(t.Context(), f.admin.WorkspaceID, id, m.ID)
		if err != nil || got.Content != m.Content || got.VersionID != m.VersionID {
			t.Errorf("memory %s of store %s: %+v, %v; want it unchanged", m.ID, id, got, err)
		}
	}
	if s, err := f.rec.db.Session(t.Context(), f.admin.WorkspaceID, f.sessionID); err != nil || s.ArchivedAt != nil {
		t.Errorf("session %s: %+v, %v; want it live", f.sessionID, s, err)
	}
}

// TestCoreLetsThrough: what a caller may do reaches the backend in the
// caller's workspace, recorded as the caller's actor, and a session
// caller sees its own session alone.
func TestCoreLetsThrough(t *testing.T) {
	f := newCoreFixture(t)
	ctx := t.Context()
	reads, _, _ := f.memoryCalls(f.ro)
	for _, cc := range reads {
		if err := cc.call(ctx, f.core, f.session); err != nil {
			t.Errorf("session reads the read-only store: %s: %v", cc.name, err)
		}
	}
	m, err := f.core.CreateMemory(ctx, f.session, f.rw, memstore.MemoryCreate{Path: "/by-session.md", Content: "s"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.core.Version(ctx, f.admin, f.rw, m.VersionID)
	if err != nil || v.CreatedBy != f.session.Actor {
		t.Errorf("version of a session's create: %+v, %v; want one by %+v", v, err, f.session.Actor)
	}
	if got := f.rec.take(); !slices.Contains(got, "WriteMemory") {
		t.Errorf("backend calls %v, want a WriteMemory", got)
	}

	page, err := f.core.Sessions(ctx, f.session, memstore.SessionFilter{})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != f.sessionID || page.Next != "" {
		t.Errorf("a session's list: %+v, %v; want its own session alone", page, err)
	}
	page, err = f.core.Sessions(ctx, f.session, memstore.SessionFilter{StoreID: f.other})
	if err != nil || len(page.Items) != 0 {
		t.Errorf("a session's list by a store it lacks: %+v, %v; want none", page, err)
	}
	page, err = f.core.Sessions(ctx, f.admin, memstore.SessionFilter{})
	if err != nil || len(page.Items) != 2 {
		t.Errorf("an API key's list: %+v, %v; want both sessions", page, err)
	}
	if _, err := f.core.Session(ctx, f.session, f.sessionID); err != nil {
		t.Errorf("a session reads itself: %v", err)
	}
}

// TestCoreAtTheEdge: a surface that passes whatever a request names
// straight to the core, checking nothing itself, still cannot take a
// session caller out of its session.
func TestCoreAtTheEdge(t *testing.T) {
	f := newCoreFixture(t)
	// edge is the whole of such a surface: it reads or writes a memory of
	// any store the request names.
	edge := func(ms memstore.MemoryService, c *memstore.Caller, storeID, memoryID string, write bool) (string, error) {
		if write {
			content := "overwritten"
			_, err := ms.UpdateMemory(context.Background(), c, storeID, memoryID, memstore.MemoryUpdate{Content: &content})
			return "", err
		}
		m, err := ms.Memory(context.Background(), c, storeID, memoryID)
		if err != nil {
			return "", err
		}
		return m.Content, nil
	}
	other := f.mems[f.other]
	if got, err := edge(f.core, f.session, f.other, other.ID, false); memstore.ErrorCode(err) != memstore.EPermission || got != "" {
		t.Errorf("read of an unattached store through the edge: %q, %v; want nothing and %s", got, err, memstore.EPermission)
	}
	ro := f.mems[f.ro]
	if _, err := edge(f.core, f.session, f.ro, ro.ID, true); memstore.ErrorCode(err) != memstore.EPermission {
		t.Errorf("write of a read-only store through the edge: %v; want %s", err, memstore.EPermission)
	}
	if got, err := edge(f.core, f.session, f.ro, ro.ID, false); err != nil || got != ro.Content {
		t.Errorf("read of the read-only store through the edge: %q, %v", got, err)
	}
	if got, err := edge(f.core, f.admin, f.other, other.ID, false); err != nil || got != other.Content {
		t.Errorf("an API key through the edge: %q, %v", got, err)
	}
}

// TestCheckCallerKey: an API key's caller is read again too, where the
// backend keeps keys: refused once the key is revoked, or when it is not
// there or not of the caller's workspace.
func TestCheckCallerKey(t *testing.T) {
	ctx := t.Context()
	db, ws := openWorkspace(t, "keys")
	other := sqlitetest.Workspace(t, db, "other")
	co := memstore.NewCore(db)
	k, _, err := co.CreateAPIKey(ctx, ws.ID, "stream")
	if err != nil {
		t.Fatal(err)
	}
	caller := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: k.ID}}
	if err := co.CheckCaller(ctx, caller); err != nil {
		t.Errorf("a valid key: %v", err)
	}
	for what, c := range map[string]*memstore.Caller{
		"not there":            {WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_gone"}},
		"of another workspace": {WorkspaceID: other.ID, Actor: caller.Actor},
	} {
		if err := co.CheckCaller(ctx, c); memstore.ErrorCode(err) != memstore.EUnauthenticated {
			t.Errorf("%s: %v, want unauthenticated", what, err)
		}
	}
	if _, err := co.RevokeAPIKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if err := co.CheckCaller(ctx, caller); memstore.ErrorCode(err) != memstore.EUnauthenticated {
		t.Errorf("a revoked key: %v, want unauthenticated", err)
	}
}

// TestCheckCaller: a session caller's credential is read again, and
// refused once its token is revoked, its session archived or deleted; an
// API key's caller stands while its key does (TestCheckCallerKey).
func TestCheckCaller(t *testing.T) {
	f := newCoreFixture(t)
	ctx := t.Context()
	if err := f.core.CheckCaller(ctx, f.session); err != nil {
		t.Errorf("a valid token: %v", err)
	}
	if err := f.core.CheckCaller(ctx, f.admin); err != nil {
		t.Errorf("an API key: %v", err)
	}
	caller := func(t *testing.T) *memstore.Caller {
		t.Helper()
		_, _, secret, err := f.core.CreateSession(ctx, f.admin, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: f.rw}}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := f.core.AuthenticateSession(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for what, stop := range map[string]func(c *memstore.Caller) error{
		"revoked": func(c *memstore.Caller) error {
			_, err := f.core.RevokeSessionToken(ctx, f.admin, c.TokenID)
			return err
		},
		"archived": func(c *memstore.Caller) error {
			_, err := f.core.ArchiveSession(ctx, f.admin, c.Session.ID)
			return err
		},
		"deleted": func(c *memstore.Caller) error { return f.core.DeleteSession(ctx, f.admin, c.Session.ID) },
	} {
		c := caller(t)
		if err := stop(c); err != nil {
			t.Fatal(err)
		}
		if err := f.core.CheckCaller(ctx, c); memstore.ErrorCode(err) != memstore.EUnauthenticated {
			t.Errorf("%s: %v, want unauthenticated", what, err)
		}
	}
}

package memstore

import (
	"context"
	"slices"
	"time"
)

// Backend is what a Core keeps its data in: storage, transactions and
// queries. Its methods trust their callers (see Core).
type Backend interface {
	KeyStorage
	StoreStorage
	MemoryStorage
	ExportStorage
	VersionStorage
	SessionStorage
	SearchStorage
	EventStorage
	SessionEventStorage
	OverviewStorage
	DreamStorage
}

// Core is memstore's one domain core: the StoreService, MemoryService,
// VersionService, SessionService and SearchService that every surface
// calls, over a Backend. Each method, in this order, refuses a nil caller
// (EUnauthenticated), checks that the caller may do what it asks
// (EPermission: see Caller.CanRead, CanWrite, CanReadSession and
// CanAdminister), validates the input (EInvalid), and only then calls the
// backend, in the caller's workspace and as the caller's actor. A refused
// call never reaches the backend, and the core adds no round trip to it.
//
// A Core is safe for concurrent use when its backend is.
type Core struct {
	b        Backend
	rv       MemoryRevalidatorStorage // b's own, nil when it has none
	limits   Limits                   // the quotas of workspaces, stores, sessions and credentials
	rules    ContentRules             // the hosted API's rules on content; the zero value applies both
	searches *rateLimiter             // the shares of searches; nil without WithLimits
	now      func() time.Time         // the clock of the search shares
	exports  exportPlaces             // the exports in progress
	semantic places                   // each workspace's semantic searches in progress
	dreams   bool                     // dreams run: the server has a model (WithDreams)
	embedder Embedder                 // embeds the queries of semantic and hybrid search; nil when they are off
	// semanticWeight is the semantic ranking's weight in hybrid search.
	semanticWeight float64
}

var (
	_ StoreService       = (*Core)(nil)
	_ MemoryService      = (*Core)(nil)
	_ MemoryRevalidator  = (*Core)(nil)
	_ ExportService      = (*Core)(nil)
	_ VersionService     = (*Core)(nil)
	_ SessionService     = (*Core)(nil)
	_ KeyService         = (*Core)(nil)
	_ SearchService      = (*Core)(nil)
	_ RevocationNotifier = (*Core)(nil)
	_ FeedService        = (*Core)(nil)
	_ EventNotifier      = (*Core)(nil)
	_ DreamService       = (*Core)(nil)
	_ EventService       = (*Core)(nil)
)

// NewCore returns the core over b, with no limit on the memories of a
// store nor any quota unless an option sets one.
func NewCore(b Backend, opts ...CoreOption) *Core {
	rv, _ := b.(MemoryRevalidatorStorage)
	co := &Core{b: b, rv: rv, now: time.Now,
		exports:        exportPlaces{places: places{max: MaxExportsAtOnce, perWorkspace: MaxExportsPerWorkspace}, hold: ExportHold, wait: ExportWait},
		semantic:       places{perWorkspace: MaxSemanticSearchesPerWorkspace},
		semanticWeight: DefaultSemanticWeight}
	for _, o := range opts {
		o(co)
	}
	return co
}

// A CoreOption configures a Core.
type CoreOption func(*Core)

// CoreClock sets the clock by which the core refills the shares of
// searches (WithLimits), for tests.
func CoreClock(now func() time.Time) CoreOption {
	return func(co *Core) { co.now = now }
}

// CreateStore implements StoreService.
func (co *Core) CreateStore(ctx context.Context, c *Caller, sc StoreCreate) (*Store, error) {
	if err := c.CanManageStores(true); err != nil {
		return nil, err
	}
	if err := validateStore(&sc.Name, &sc.Description, sc.Metadata); err != nil {
		return nil, err
	}
	return co.b.CreateStore(ctx, c.WorkspaceID, sc, storeQuota(c.WorkspaceID, co.limits.StoresPerWorkspace))
}

// Store implements StoreService.
func (co *Core) Store(ctx context.Context, c *Caller, id string) (*Store, error) {
	if err := c.CanManageStores(false); err != nil {
		return nil, err
	}
	if err := ValidateID("memory_store_id", id); err != nil {
		return nil, err
	}
	return co.b.Store(ctx, c.WorkspaceID, id)
}

// Stores implements StoreService.
func (co *Core) Stores(ctx context.Context, c *Caller, f StoreFilter) (Page[Store], error) {
	if err := c.CanManageStores(false); err != nil {
		return Page[Store]{}, err
	}
	if _, err := PageSize(f.Limit, false); err != nil {
		return Page[Store]{}, err
	}
	return co.b.Stores(ctx, c.WorkspaceID, f)
}

// UpdateStore implements StoreService. Each pair of the metadata patch is
// checked here; the metadata it makes, which depends on what is kept, is
// checked by StoreUpdate.Apply on the store as the backend's transaction
// read it.
func (co *Core) UpdateStore(ctx context.Context, c *Caller, id string, u StoreUpdate) (*Store, error) {
	if err := c.CanManageStores(true); err != nil {
		return nil, err
	}
	if err := ValidateID("memory_store_id", id); err != nil {
		return nil, err
	}
	if err := validateStore(u.Name, u.Description, nil); err != nil {
		return nil, err
	}
	if err := validateMetadataPatch(u.Metadata); err != nil {
		return nil, err
	}
	var s *Store
	err := co.b.WriteStore(ctx, c.WorkspaceID, id, func(tx StoreTx) error {
		s = tx.Store()
		if changed, err := u.Apply(s); err != nil || !changed {
			return err
		}
		return tx.Update(s)
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ArchiveStore implements StoreService.
func (co *Core) ArchiveStore(ctx context.Context, c *Caller, id string) (*Store, error) {
	if err := c.CanManageStores(true); err != nil {
		return nil, err
	}
	if err := ValidateID("memory_store_id", id); err != nil {
		return nil, err
	}
	var s *Store
	err := co.b.WriteStore(ctx, c.WorkspaceID, id, func(tx StoreTx) error {
		// Archiving again changes nothing.
		if s = tx.Store(); s.ArchivedAt != nil {
			return nil
		}
		return tx.Archive(s, c.Actor)
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// DeleteStore implements StoreService.
func (co *Core) DeleteStore(ctx context.Context, c *Caller, id string) error {
	if err := c.CanManageStores(true); err != nil {
		return err
	}
	if err := ValidateID("memory_store_id", id); err != nil {
		return err
	}
	return co.b.DeleteStore(ctx, c.WorkspaceID, id)
}

// validateStore checks the fields of a store create or update that are
// given (nil ones are not).
func validateStore(name, description *string, metadata map[string]string) error {
	if name != nil {
		if err := ValidateStoreName(*name); err != nil {
			return err
		}
	}
	if description != nil {
		if err := ValidateStoreDescription(*description); err != nil {
			return err
		}
	}
	return ValidateMetadata(metadata)
}

// CreateMemory implements MemoryService, by createMemory's rule.
func (co *Core) CreateMemory(ctx context.Context, c *Caller, storeID string, mc MemoryCreate) (*Memory, error) {
	if err := c.CanWrite(storeID); err != nil {
		return nil, err
	}
	if err := ValidateID("memory_store_id", storeID); err != nil {
		return nil, err
	}
	if err := ValidatePath(mc.Path); err != nil {
		return nil, err
	}
	if err := ValidateContent(mc.Content); err != nil {
		return nil, err
	}
	if err := co.checkContent(mc.Path, mc.Content); err != nil {
		return nil, err
	}
	// Hashed before the transaction: a backend's writer may be the one
	// thread every write waits for.
	sum := ContentSHA256(mc.Content)
	var m *Memory
	err := co.b.WriteMemory(ctx, c.WorkspaceID, storeID, func(tx MemoryTx) (err error) {
		m, err = createMemory(tx, storeID, mc, sum, c.Actor, memoryQuota(storeID, co.limits.MemoriesPerStore))
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Memory implements MemoryService.
func (co *Core) Memory(ctx context.Context, c *Caller, storeID, id string) (*Memory, error) {
	if err := c.CanRead(storeID); err != nil {
		return nil, err
	}
	if err := validateIDs("memory_store_id", storeID, "memory_id", id); err != nil {
		return nil, err
	}
	return co.b.Memory(ctx, c.WorkspaceID, storeID, id)
}

// MemoryUnlessAt implements MemoryRevalidator: cheaply when the backend
// revalidates, otherwise as Memory.
func (co *Core) MemoryUnlessAt(ctx context.Context, c *Caller, storeID, id, version string) (*Memory, error) {
	if err := c.CanRead(storeID); err != nil {
		return nil, err
	}
	if err := validateIDs("memory_store_id", storeID, "memory_id", id, "memory_version_id", version); err != nil {
		return nil, err
	}
	if co.rv == nil {
		return co.b.Memory(ctx, c.WorkspaceID, storeID, id)
	}
	return co.rv.MemoryUnlessAt(ctx, c.WorkspaceID, storeID, id, version)
}

// Memories implements MemoryService.
func (co *Core) Memories(ctx context.Context, c *Caller, storeID string, f MemoryFilter) (Page[ListItem], error) {
	if err := c.CanRead(storeID); err != nil {
		return Page[ListItem]{}, err
	}
	if err := ValidateID("memory_store_id", storeID); err != nil {
		return Page[ListItem]{}, err
	}
	if err := ValidateMemoryFilter(f); err != nil {
		return Page[ListItem]{}, err
	}
	return co.b.Memories(ctx, c.WorkspaceID, storeID, f)
}

// UpdateMemory implements MemoryService, by updateMemory's rule.
func (co *Core) UpdateMemory(ctx context.Context, c *Caller, storeID, id string, u MemoryUpdate) (*Memory, error) {
	if err := c.CanWrite(storeID); err != nil {
		return nil, err
	}
	if err := validateIDs("memory_store_id", storeID, "memory_id", id); err != nil {
		return nil, err
	}
	if u.Path != nil {
		if err := ValidatePath(*u.Path); err != nil {
			return nil, err
		}
	}
	var sum string
	if u.Content != nil {
		if err := ValidateContent(*u.Content); err != nil {
			return nil, err
		}
		if err := co.rules.checkCredentials(*u.Content); err != nil {
			return nil, err
		}
		sum = ContentSHA256(*u.Content)
	}
	var m *Memory
	err := co.b.WriteMemory(ctx, c.WorkspaceID, storeID, func(tx MemoryTx) (err error) {
		m, err = updateMemory(tx, storeID, id, u, sum, c.Actor, co.rules)
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// DeleteMemory implements MemoryService, by deleteMemory's rule.
func (co *Core) DeleteMemory(ctx context.Context, c *Caller, storeID, id, ifSHA256 string) error {
	if err := c.CanWrite(storeID); err != nil {
		return err
	}
	if err := validateIDs("memory_store_id", storeID, "memory_id", id); err != nil {
		return err
	}
	return co.b.WriteMemory(ctx, c.WorkspaceID, storeID, func(tx MemoryTx) error {
		return deleteMemory(tx, storeID, id, ifSHA256, c.Actor)
	})
}

// Versions implements VersionService.
func (co *Core) Versions(ctx context.Context, c *Caller, storeID string, f VersionFilter) (Page[Version], error) {
	if err := c.CanRead(storeID); err != nil {
		return Page[Version]{}, err
	}
	if err := ValidateID("memory_store_id", storeID); err != nil {
		return Page[Version]{}, err
	}
	if err := ValidateVersionFilter(f); err != nil {
		return Page[Version]{}, err
	}
	return co.b.Versions(ctx, c.WorkspaceID, storeID, f)
}

// Version implements VersionService.
func (co *Core) Version(ctx context.Context, c *Caller, storeID, id string) (*Version, error) {
	if err := c.CanRead(storeID); err != nil {
		return nil, err
	}
	if err := validateIDs("memory_store_id", storeID, "memory_version_id", id); err != nil {
		return nil, err
	}
	return co.b.Version(ctx, c.WorkspaceID, storeID, id)
}

// RedactVersion implements VersionService.
func (co *Core) RedactVersion(ctx context.Context, c *Caller, storeID, id string) (*Version, error) {
	if err := c.CanAdminister(RedactVersions); err != nil {
		return nil, err
	}
	if err := validateIDs("memory_store_id", storeID, "memory_version_id", id); err != nil {
		return nil, err
	}
	return co.b.RedactVersion(ctx, c.WorkspaceID, storeID, id, c.Actor)
}

// CreateSession implements SessionService.
func (co *Core) CreateSession(ctx context.Context, c *Caller, sc SessionCreate) (*Session, *SessionToken, string, error) {
	if err := c.CanAdminister(ManageSessions); err != nil {
		return nil, nil, "", err
	}
	if err := ValidateSessionCreate(sc); err != nil {
		return nil, nil, "", err
	}
	q := sessionQuota(c.WorkspaceID, co.limits.SessionsPerWorkspace)
	var (
		s      *Session
		t      *SessionToken
		secret string
	)
	err := co.b.WriteSessions(ctx, c.WorkspaceID, func(tx SessionTx) (err error) {
		s, t, secret, err = createSession(tx, c.WorkspaceID, sc, q, co.b.Now())
		return err
	})
	if err != nil {
		return nil, nil, "", err
	}
	return s, t, secret, nil
}

// Session implements SessionService.
func (co *Core) Session(ctx context.Context, c *Caller, id string) (*Session, error) {
	if err := c.CanReadSession(id); err != nil {
		return nil, err
	}
	if err := ValidateID("session_id", id); err != nil {
		return nil, err
	}
	return co.b.Session(ctx, c.WorkspaceID, id)
}

// Sessions implements SessionService. A session caller's list is read
// afresh, as its own session, so that it shows the session as it is now;
// its filter's paging does not apply to a list of at most one.
func (co *Core) Sessions(ctx context.Context, c *Caller, f SessionFilter) (Page[Session], error) {
	if c == nil {
		return Page[Session]{}, errNoCaller()
	}
	if c.Session == nil {
		if err := c.CanReadAdmin(ManageSessions); err != nil {
			return Page[Session]{}, err
		}
	}
	if _, err := PageSize(f.Limit, false); err != nil {
		return Page[Session]{}, err
	}
	if err := validateIDs("memory_store_id", f.StoreID, "agent_id", f.AgentID); err != nil {
		return Page[Session]{}, err
	}
	none, err := f.resolveStatuses()
	if err != nil {
		return Page[Session]{}, err
	}
	page := Page[Session]{Items: []Session{}}
	if none {
		return page, nil
	}
	if c.Session == nil {
		return co.b.Sessions(ctx, c.WorkspaceID, f)
	}
	s, err := co.b.Session(ctx, c.WorkspaceID, c.Session.ID)
	if err != nil {
		return Page[Session]{}, err
	}
	if f.matches(s) {
		page.Items = append(page.Items, *s)
	}
	return page, nil
}

// UpdateSession implements SessionService, by SessionUpdate.Apply's rule.
func (co *Core) UpdateSession(ctx context.Context, c *Caller, id string, u SessionUpdate) (*Session, error) {
	if err := c.CanAdminister(ManageSessions); err != nil {
		return nil, err
	}
	if err := ValidateID("session_id", id); err != nil {
		return nil, err
	}
	if err := ValidateSessionUpdate(u); err != nil {
		return nil, err
	}
	return co.runChange(ctx, c.WorkspaceID, id, func(s *Session, _ func(string) (*Store, error)) (bool, error) {
		return u.Apply(s)
	})
}

// runChange runs change on a session of a workspace, by changeSession's
// rule.
func (co *Core) runChange(ctx context.Context, workspaceID, id string, change sessionChange) (*Session, error) {
	var s *Session
	err := co.b.WriteSessions(ctx, workspaceID, func(tx SessionTx) (err error) {
		s, err = changeSession(tx, id, co.b.Now(), change)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// DeleteSession implements SessionService.
func (co *Core) DeleteSession(ctx context.Context, c *Caller, id string) error {
	if err := c.CanAdminister(ManageSessions); err != nil {
		return err
	}
	if err := ValidateID("session_id", id); err != nil {
		return err
	}
	return co.b.WriteSessions(ctx, c.WorkspaceID, func(tx SessionTx) error {
		return deleteSession(tx, id)
	})
}

// AttachStore implements SessionService, by attachStore's rule.
func (co *Core) AttachStore(ctx context.Context, c *Caller, sessionID string, a AttachmentCreate) (*Session, error) {
	if err := c.CanAdminister(ManageSessions); err != nil {
		return nil, err
	}
	if a.StoreID == "" {
		return nil, Errorf(EInvalid, "memory_store_id is required")
	}
	if err := validateIDs("session_id", sessionID, "memory_store_id", a.StoreID); err != nil {
		return nil, err
	}
	if err := validateAttachment("resource", &a.Access, &a.Instructions); err != nil {
		return nil, err
	}
	return co.runChange(ctx, c.WorkspaceID, sessionID, func(s *Session, store func(string) (*Store, error)) (bool, error) {
		return true, attachStore(s, a, store)
	})
}

// UpdateAttachment implements SessionService, by updateAttachment's rule.
func (co *Core) UpdateAttachment(ctx context.Context, c *Caller, sessionID, storeID string, u AttachmentUpdate) (*Session, error) {
	if err := c.CanAdminister(ManageSessions); err != nil {
		return nil, err
	}
	if err := validateIDs("session_id", sessionID, "memory_store_id", storeID); err != nil {
		return nil, err
	}
	if err := validateAttachment("resource", u.Access, u.Instructions); err != nil {
		return nil, err
	}
	return co.runChange(ctx, c.WorkspaceID, sessionID, func(s *Session, _ func(string) (*Store, error)) (bool, error) {
		return updateAttachment(s, storeID, u)
	})
}

// DetachStore implements SessionService, by detachStore's rule.
func (co *Core) DetachStore(ctx context.Context, c *Caller, sessionID, storeID string) (*Session, error) {
	if err := c.CanAdminister(ManageSessions); err != nil {
		return nil, err
	}
	if err := validateIDs("session_id", sessionID, "memory_store_id", storeID); err != nil {
		return nil, err
	}
	return co.runChange(ctx, c.WorkspaceID, sessionID, func(s *Session, _ func(string) (*Store, error)) (bool, error) {
		return true, detachStore(s, storeID)
	})
}

// ArchiveSession implements SessionService.
func (co *Core) ArchiveSession(ctx context.Context, c *Caller, id string) (*Session, error) {
	if err := c.CanAdminister(ManageSessions); err != nil {
		return nil, err
	}
	if err := ValidateID("session_id", id); err != nil {
		return nil, err
	}
	var s *Session
	err := co.b.WriteSessions(ctx, c.WorkspaceID, func(tx SessionTx) (err error) {
		s, err = archiveSession(tx, id, co.b.Now())
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// CreateSessionToken implements SessionService.
func (co *Core) CreateSessionToken(ctx context.Context, c *Caller, sessionID string, ttl time.Duration) (*SessionToken, string, error) {
	if err := c.CanAdminister(ManageSessions); err != nil {
		return nil, "", err
	}
	if err := ValidateID("session_id", sessionID); err != nil {
		return nil, "", err
	}
	q := tokenQuota(sessionID, co.limits.TokensPerSession)
	var (
		t      *SessionToken
		secret string
	)
	err := co.b.WriteSessions(ctx, c.WorkspaceID, func(tx SessionTx) (err error) {
		t, secret, err = createSessionToken(tx, sessionID, ttl, q, co.b.Now())
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return t, secret, nil
}

// SessionTokens implements SessionService.
func (co *Core) SessionTokens(ctx context.Context, c *Caller, sessionID string, f SessionTokenFilter) (Page[SessionToken], error) {
	if err := c.CanReadAdmin(ManageSessions); err != nil {
		return Page[SessionToken]{}, err
	}
	if _, err := PageSize(f.Limit, false); err != nil {
		return Page[SessionToken]{}, err
	}
	if err := ValidateID("session_id", sessionID); err != nil {
		return Page[SessionToken]{}, err
	}
	return co.b.SessionTokens(ctx, c.WorkspaceID, sessionID, f)
}

// SessionToken implements SessionService.
func (co *Core) SessionToken(ctx context.Context, c *Caller, id string) (*SessionToken, error) {
	if err := c.CanReadAdmin(ManageSessions); err != nil {
		return nil, err
	}
	if err := ValidateID("token_id", id); err != nil {
		return nil, err
	}
	return co.b.SessionToken(ctx, c.WorkspaceID, id)
}

// RevokeSessionToken implements SessionService.
func (co *Core) RevokeSessionToken(ctx context.Context, c *Caller, id string) (*SessionToken, error) {
	if err := c.CanAdminister(ManageSessions); err != nil {
		return nil, err
	}
	if err := ValidateID("token_id", id); err != nil {
		return nil, err
	}
	var t *SessionToken
	err := co.b.WriteSessions(ctx, c.WorkspaceID, func(tx SessionTx) (err error) {
		t, err = revokeSessionToken(tx, id, co.b.Now())
		return err
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// AuthenticateSession implements SessionService: Authenticate, for
// session tokens alone.
func (co *Core) AuthenticateSession(ctx context.Context, secret string) (*Caller, error) {
	if CredentialOf(secret) != SessionTokenCredential {
		return nil, errInvalidToken()
	}
	return co.authenticateToken(ctx, secret)
}

// CheckCaller implements CallerChecker: a session caller's token and
// session are read again, and must still authenticate by checkToken's
// rule (EUnauthenticated, as when the token or the session is gone); an
// API key's caller, its key, by checkKey's.
func (co *Core) CheckCaller(ctx context.Context, c *Caller) error {
	if c == nil {
		return nil
	}
	if c.Session == nil {
		if c.Actor.Type != ActorAPIKey {
			return nil
		}
		k, err := co.b.APIKey(ctx, c.Actor.ID)
		if err != nil && ErrorCode(err) != ENotFound {
			return err
		}
		return checkKey(k, c)
	}
	t, err := co.b.SessionToken(ctx, c.WorkspaceID, c.TokenID)
	var s *Session
	if err == nil {
		s, err = co.b.Session(ctx, c.WorkspaceID, t.SessionID)
	}
	if ErrorCode(err) == ENotFound {
		return Errorf(EUnauthenticated, "session token %s no longer works: it or its session was deleted", c.TokenID)
	}
	if err != nil {
		return err
	}
	return checkToken(t, s, co.b.Now())
}

// SearchMemories implements SearchService, in the query's mode (see
// searchMode and searchIn). With no store the query is still checked, and
// nothing is found without asking the backend. A search beyond the
// caller's shares (Limits) is refused (ERateLimited).
func (co *Core) SearchMemories(ctx context.Context, c *Caller, storeIDs []string, q SearchQuery) (Page[SearchResult], error) {
	var none Page[SearchResult]
	if c == nil {
		return none, errNoCaller()
	}
	for _, id := range storeIDs {
		if err := c.CanRead(id); err != nil {
			return none, err
		}
		if err := ValidateID("memory_store_id", id); err != nil {
			return none, err
		}
	}
	if err := ValidateSearchQuery(q); err != nil {
		return none, err
	}
	mode, err := co.searchMode(q)
	if err != nil {
		return none, err
	}
	if len(storeIDs) == 0 {
		return none, nil
	}
	// Only a search that reaches the backend takes from the caller's
	// shares: a refused one costs nothing.
	if err := co.allowSearch(c); err != nil {
		return none, err
	}
	// A store named twice is searched once.
	storeIDs = slices.Compact(slices.Sorted(slices.Values(storeIDs)))
	// Conversation context is the lexical ranking's: a semantic search
	// reads no store for it.
	if mode != ModeSemantic {
		if err := co.conversationStores(ctx, c, storeIDs, &q); err != nil {
			return none, err
		}
	}
	return co.searchIn(ctx, c, storeIDs, q, mode)
}

// NotifyRevocations implements RevocationNotifier: the core tells of the
// revocations its backend tells of, which are all those made through the
// core; with a backend that tells of none, f is never called.
func (co *Core) NotifyRevocations(f func(Revocation)) (stop func()) {
	if n, ok := co.b.(RevocationNotifier); ok {
		return n.NotifyRevocations(f)
	}
	return func() {}
}

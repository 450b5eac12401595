package storetest

import (
	"context"
	"time"

	"github.com/memstore/memstore"
)

// The suite speaks of workspaces and actors, as a backend's storage
// does; it makes each call through the caller-facing services, as the
// API key of that workspace and actor (reader when the call records
// none). The backends treat both as opaque.

// reader is the actor of the calls that record none: reads, and changes
// to stores and sessions.
var reader = memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_storetestreader"}

// keyCaller is the caller of an API key of workspace ws with actor by.
func keyCaller(ws string, by memstore.Actor) *memstore.Caller {
	return &memstore.Caller{WorkspaceID: ws, Actor: by}
}

// The views of the suite.
type (
	backend interface {
		storeView
		memoryView
		memstore.VersionStorage
	}
	// storeView is memstore.StoreService spoken of in workspaces, like
	// the storage interfaces.
	storeView interface {
		CreateStore(ctx context.Context, ws string, sc memstore.StoreCreate) (*memstore.Store, error)
		Store(ctx context.Context, ws, id string) (*memstore.Store, error)
		Stores(ctx context.Context, ws string, f memstore.StoreFilter) (memstore.Page[memstore.Store], error)
		UpdateStore(ctx context.Context, ws, id string, u memstore.StoreUpdate) (*memstore.Store, error)
		ArchiveStore(ctx context.Context, ws, id string, by memstore.Actor) (*memstore.Store, error)
		DeleteStore(ctx context.Context, ws, id string) error
	}
	// memoryView is memstore.MemoryService spoken of in workspaces and
	// actors, like the storage interfaces.
	memoryView interface {
		CreateMemory(ctx context.Context, ws, storeID string, mc memstore.MemoryCreate, by memstore.Actor) (*memstore.Memory, error)
		Memory(ctx context.Context, ws, storeID, id string) (*memstore.Memory, error)
		Memories(ctx context.Context, ws, storeID string, f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error)
		UpdateMemory(ctx context.Context, ws, storeID, id string, u memstore.MemoryUpdate, by memstore.Actor) (*memstore.Memory, error)
		DeleteMemory(ctx context.Context, ws, storeID, id, ifSHA256 string, by memstore.Actor) error
	}
	searchBackend interface {
		backend
		SearchMemories(ctx context.Context, workspaceID string, storeIDs []string, q memstore.SearchQuery) (memstore.Page[memstore.SearchResult], error)
	}
	sessionBackend interface {
		storeView
		memstore.KeyService
		sessionView
	}
	// sessionView is memstore.SessionService spoken of in workspaces,
	// like the storage interfaces.
	sessionView interface {
		CreateSession(ctx context.Context, ws string, sc memstore.SessionCreate) (*memstore.Session, *memstore.SessionToken, string, error)
		Session(ctx context.Context, ws, id string) (*memstore.Session, error)
		Sessions(ctx context.Context, ws string, f memstore.SessionFilter) (memstore.Page[memstore.Session], error)
		ArchiveSession(ctx context.Context, ws, id string) (*memstore.Session, error)
		UpdateSession(ctx context.Context, ws, id string, u memstore.SessionUpdate) (*memstore.Session, error)
		DeleteSession(ctx context.Context, ws, id string) error
		AttachStore(ctx context.Context, ws, sessionID string, a memstore.AttachmentCreate) (*memstore.Session, error)
		UpdateAttachment(ctx context.Context, ws, sessionID, storeID string, u memstore.AttachmentUpdate) (*memstore.Session, error)
		DetachStore(ctx context.Context, ws, sessionID, storeID string) (*memstore.Session, error)
		CreateSessionToken(ctx context.Context, ws, sessionID string, ttl time.Duration) (*memstore.SessionToken, string, error)
		SessionTokens(ctx context.Context, ws, sessionID string, f memstore.SessionTokenFilter) (memstore.Page[memstore.SessionToken], error)
		SessionToken(ctx context.Context, ws, id string) (*memstore.SessionToken, error)
		RevokeSessionToken(ctx context.Context, ws, id string) (*memstore.SessionToken, error)
		AuthenticateSession(ctx context.Context, secret string) (*memstore.Caller, error)
	}
)

// asKeys is the suite's view of caller-facing services: each method
// calls the service of the same name as keyCaller. Only the services
// given are set.
type asKeys struct {
	stores   memstore.StoreService
	memories memstore.MemoryService
	versions memstore.VersionService
	sessions memstore.SessionService
	search   memstore.SearchService
	feed     memstore.FeedService
	memstore.KeyService
	// mode is the mode of the searches that name none: set on services
	// whose core has an embedding model, where the default is hybrid.
	mode string
}

func viewOf(b memstore.Services) *asKeys { return &asKeys{stores: b, memories: b, versions: b} }

func (a *asKeys) CreateStore(ctx context.Context, ws string, sc memstore.StoreCreate) (*memstore.Store, error) {
	return a.stores.CreateStore(ctx, keyCaller(ws, reader), sc)
}

func (a *asKeys) Store(ctx context.Context, ws, id string) (*memstore.Store, error) {
	return a.stores.Store(ctx, keyCaller(ws, reader), id)
}

func (a *asKeys) Stores(ctx context.Context, ws string, f memstore.StoreFilter) (memstore.Page[memstore.Store], error) {
	return a.stores.Stores(ctx, keyCaller(ws, reader), f)
}

func (a *asKeys) UpdateStore(ctx context.Context, ws, id string, u memstore.StoreUpdate) (*memstore.Store, error) {
	return a.stores.UpdateStore(ctx, keyCaller(ws, reader), id, u)
}

func (a *asKeys) ArchiveStore(ctx context.Context, ws, id string, by memstore.Actor) (*memstore.Store, error) {
	return a.stores.ArchiveStore(ctx, keyCaller(ws, by), id)
}

func (a *asKeys) DeleteStore(ctx context.Context, ws, id string) error {
	return a.stores.DeleteStore(ctx, keyCaller(ws, reader), id)
}

func (a *asKeys) CreateMemory(ctx context.Context, ws, storeID string, mc memstore.MemoryCreate, by memstore.Actor) (*memstore.Memory, error) {
	return a.memories.CreateMemory(ctx, keyCaller(ws, by), storeID, mc)
}

func (a *asKeys) Memory(ctx context.Context, ws, storeID, id string) (*memstore.Memory, error) {
	return a.memories.Memory(ctx, keyCaller(ws, reader), storeID, id)
}

func (a *asKeys) Memories(ctx context.Context, ws, storeID string, f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
	return a.memories.Memories(ctx, keyCaller(ws, reader), storeID, f)
}

func (a *asKeys) UpdateMemory(ctx context.Context, ws, storeID, id string, u memstore.MemoryUpdate, by memstore.Actor) (*memstore.Memory, error) {
	return a.memories.UpdateMemory(ctx, keyCaller(ws, by), storeID, id, u)
}

func (a *asKeys) DeleteMemory(ctx context.Context, ws, storeID, id, ifSHA256 string, by memstore.Actor) error {
	return a.memories.DeleteMemory(ctx, keyCaller(ws, by), storeID, id, ifSHA256)
}

func (a *asKeys) Versions(ctx context.Context, ws, storeID string, f memstore.VersionFilter) (memstore.Page[memstore.Version], error) {
	return a.versions.Versions(ctx, keyCaller(ws, reader), storeID, f)
}

func (a *asKeys) Version(ctx context.Context, ws, storeID, id string) (*memstore.Version, error) {
	return a.versions.Version(ctx, keyCaller(ws, reader), storeID, id)
}

func (a *asKeys) RedactVersion(ctx context.Context, ws, storeID, id string, by memstore.Actor) (*memstore.Version, error) {
	return a.versions.RedactVersion(ctx, keyCaller(ws, by), storeID, id)
}

func (a *asKeys) Events(ctx context.Context, ws, storeID string, f memstore.EventFilter) (memstore.EventPage, error) {
	return a.feed.Events(ctx, keyCaller(ws, reader), storeID, f)
}

func (a *asKeys) SearchMemories(ctx context.Context, ws string, storeIDs []string, q memstore.SearchQuery) (memstore.Page[memstore.SearchResult], error) {
	if q.Mode == "" {
		q.Mode = a.mode
	}
	return a.search.SearchMemories(ctx, keyCaller(ws, reader), storeIDs, q)
}

func (a *asKeys) CreateSession(ctx context.Context, ws string, sc memstore.SessionCreate) (*memstore.Session, *memstore.SessionToken, string, error) {
	return a.sessions.CreateSession(ctx, keyCaller(ws, reader), sc)
}

func (a *asKeys) Session(ctx context.Context, ws, id string) (*memstore.Session, error) {
	return a.sessions.Session(ctx, keyCaller(ws, reader), id)
}

func (a *asKeys) Sessions(ctx context.Context, ws string, f memstore.SessionFilter) (memstore.Page[memstore.Session], error) {
	return a.sessions.Sessions(ctx, keyCaller(ws, reader), f)
}

func (a *asKeys) ArchiveSession(ctx context.Context, ws, id string) (*memstore.Session, error) {
	return a.sessions.ArchiveSession(ctx, keyCaller(ws, reader), id)
}

func (a *asKeys) UpdateSession(ctx context.Context, ws, id string, u memstore.SessionUpdate) (*memstore.Session, error) {
	return a.sessions.UpdateSession(ctx, keyCaller(ws, reader), id, u)
}

func (a *asKeys) DeleteSession(ctx context.Context, ws, id string) error {
	return a.sessions.DeleteSession(ctx, keyCaller(ws, reader), id)
}

func (a *asKeys) AttachStore(ctx context.Context, ws, sessionID string, at memstore.AttachmentCreate) (*memstore.Session, error) {
	return a.sessions.AttachStore(ctx, keyCaller(ws, reader), sessionID, at)
}

func (a *asKeys) UpdateAttachment(ctx context.Context, ws, sessionID, storeID string, u memstore.AttachmentUpdate) (*memstore.Session, error) {
	return a.sessions.UpdateAttachment(ctx, keyCaller(ws, reader), sessionID, storeID, u)
}

func (a *asKeys) DetachStore(ctx context.Context, ws, sessionID, storeID string) (*memstore.Session, error) {
	return a.sessions.DetachStore(ctx, keyCaller(ws, reader), sessionID, storeID)
}

func (a *asKeys) CreateSessionToken(ctx context.Context, ws, sessionID string, ttl time.Duration) (*memstore.SessionToken, string, error) {
	return a.sessions.CreateSessionToken(ctx, keyCaller(ws, reader), sessionID, ttl)
}

func (a *asKeys) SessionTokens(ctx context.Context, ws, sessionID string, f memstore.SessionTokenFilter) (memstore.Page[memstore.SessionToken], error) {
	return a.sessions.SessionTokens(ctx, keyCaller(ws, reader), sessionID, f)
}

func (a *asKeys) SessionToken(ctx context.Context, ws, id string) (*memstore.SessionToken, error) {
	return a.sessions.SessionToken(ctx, keyCaller(ws, reader), id)
}

func (a *asKeys) RevokeSessionToken(ctx context.Context, ws, id string) (*memstore.SessionToken, error) {
	return a.sessions.RevokeSessionToken(ctx, keyCaller(ws, reader), id)
}

func (a *asKeys) AuthenticateSession(ctx context.Context, secret string) (*memstore.Caller, error) {
	return a.sessions.AuthenticateSession(ctx, secret)
}

// findMemory is memstore.FindMemory on the memories of b, as an API key
// of workspace ws.
func findMemory(ctx context.Context, b backend, ws, storeID, path string) (*memstore.Memory, error) {
	return memstore.FindMemory(ctx, b.(*asKeys).memories, keyCaller(ws, reader), storeID, path)
}

// revalidator is the suite's view of b's MemoryUnlessAt, when its
// memories are a memstore.MemoryRevalidator.
func revalidator(b backend) (memstore.MemoryRevalidatorStorage, bool) {
	rv, ok := b.(*asKeys).memories.(memstore.MemoryRevalidator)
	return revalidatorView{rv}, ok
}

type revalidatorView struct{ rv memstore.MemoryRevalidator }

func (v revalidatorView) MemoryUnlessAt(ctx context.Context, ws, storeID, id, version string) (*memstore.Memory, error) {
	return v.rv.MemoryUnlessAt(ctx, keyCaller(ws, reader), storeID, id, version)
}

// Package sqlitetest gives tests a fresh SQLite database and the
// workspaces, keys, stores and memories they start from. Each function
// fails the test at once when the database refuses.
package sqlitetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/testdb"
	"github.com/memstore/memstore/sqlite"
)

// Open opens a database in a fresh file of tb.TempDir(), closed when the
// test ends.
func Open(tb testing.TB, opts sqlite.Options) *sqlite.DB {
	tb.Helper()
	return OpenAt(tb, filepath.Join(tb.TempDir(), "memstore.db"), opts)
}

// OpenAt opens (creating if need be) the database at path, closed when
// the test ends.
func OpenAt(tb testing.TB, path string, opts sqlite.Options) *sqlite.DB {
	tb.Helper()
	return testdb.Open(tb, func(ctx context.Context) (*sqlite.DB, error) { return sqlite.Open(ctx, path, opts) })
}

// Workspace makes a workspace called name.
func Workspace(tb testing.TB, db *sqlite.DB, name string) *memstore.Workspace {
	tb.Helper()
	ws, err := db.CreateWorkspace(context.Background(), name)
	if err != nil {
		tb.Fatal(err)
	}
	return ws
}

// APIKey makes a key called name in a workspace, through a core over
// db, and returns it with its secret.
func APIKey(tb testing.TB, db *sqlite.DB, workspaceID, name string) (*memstore.APIKey, string) {
	tb.Helper()
	key, secret, err := memstore.NewCore(db).CreateAPIKey(context.Background(), workspaceID, name)
	if err != nil {
		tb.Fatal(err)
	}
	return key, secret
}

// Store creates a store in a workspace.
func Store(tb testing.TB, db *sqlite.DB, workspaceID string, c memstore.StoreCreate) *memstore.Store {
	tb.Helper()
	s, err := db.CreateStore(context.Background(), workspaceID, c, memstore.Quota{})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// Create creates a memory at path in a store, with by as its author.
func Create(tb testing.TB, db *sqlite.DB, workspaceID, storeID, path, content string, by memstore.Actor) *memstore.Memory {
	tb.Helper()
	m, err := Writer(db).CreateMemory(context.Background(), workspaceID, storeID, memstore.MemoryCreate{Path: path, Content: content}, by)
	if err != nil {
		tb.Fatalf("create %s: %v", path, err)
	}
	return m
}

// Writes makes the memory and store writes of a core over a database, spoken of in
// workspaces and actors as the database's own methods are: each call is
// made as an API key's caller of workspace ws, recorded as made by by. It
// lets a test of the database write through the core's rules.
type Writes struct{ core *memstore.Core }

// Writer returns the writes of a core over db, made with opts.
func Writer(db *sqlite.DB, opts ...memstore.CoreOption) Writes {
	return Writes{memstore.NewCore(db, opts...)}
}

func caller(ws string, by memstore.Actor) *memstore.Caller {
	return &memstore.Caller{WorkspaceID: ws, Actor: by}
}

// CreateMemory is memstore.Core's.
func (w Writes) CreateMemory(ctx context.Context, ws, storeID string, mc memstore.MemoryCreate, by memstore.Actor) (*memstore.Memory, error) {
	return w.core.CreateMemory(ctx, caller(ws, by), storeID, mc)
}

// UpdateMemory is memstore.Core's.
func (w Writes) UpdateMemory(ctx context.Context, ws, storeID, id string, u memstore.MemoryUpdate, by memstore.Actor) (*memstore.Memory, error) {
	return w.core.UpdateMemory(ctx, caller(ws, by), storeID, id, u)
}

// DeleteMemory is memstore.Core's.
func (w Writes) DeleteMemory(ctx context.Context, ws, storeID, id, ifSHA256 string, by memstore.Actor) error {
	return w.core.DeleteMemory(ctx, caller(ws, by), storeID, id, ifSHA256)
}

// UpdateStore is memstore.Core's, as an API key of ws.
func (w Writes) UpdateStore(ctx context.Context, ws, id string, u memstore.StoreUpdate) (*memstore.Store, error) {
	return w.core.UpdateStore(ctx, caller(ws, memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_sqlitetest"}), id, u)
}

// ArchiveStore is memstore.Core's.
func (w Writes) ArchiveStore(ctx context.Context, ws, id string, by memstore.Actor) (*memstore.Store, error) {
	return w.core.ArchiveStore(ctx, caller(ws, by), id)
}

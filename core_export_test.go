package memstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

func (r *recording) ExportMemories(ctx context.Context, ws, storeID string, content bool, sink memstore.ExportSink) error {
	r.record("ExportMemories")
	return r.db.ExportMemories(ctx, ws, storeID, content, sink)
}

// discardExport takes an export and keeps nothing of it.
type discardExport struct{}

func (discardExport) Store(*memstore.Store) error   { return nil }
func (discardExport) Memory(*memstore.Memory) error { return nil }

// exportBlocked is a sink that, at its first memory, says so and waits
// until let go.
type exportBlocked struct {
	started, release chan struct{}
	once             sync.Once
}

func newExportBlocked() *exportBlocked {
	return &exportBlocked{started: make(chan struct{}), release: make(chan struct{})}
}

func (*exportBlocked) Store(*memstore.Store) error { return nil }
func (x *exportBlocked) Memory(*memstore.Memory) error {
	x.once.Do(func() {
		close(x.started)
		<-x.release
	})
	return nil
}

// exportEnv is a core over SQLite with a store holding two memories in
// each of three workspaces, and their API keys' callers.
func exportEnv(t *testing.T) (*memstore.Core, []*memstore.Caller, []string) {
	t.Helper()
	db := sqlitetest.Open(t, sqlite.Options{})
	co := memstore.NewCore(db)
	var callers []*memstore.Caller
	var stores []string
	for _, name := range []string{"a", "b", "c"} {
		ws := sqlitetest.Workspace(t, db, "export-"+name)
		key, _ := sqlitetest.APIKey(t, db, ws.ID, name)
		c := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: key.ID}}
		s := sqlitetest.Store(t, db, ws.ID, memstore.StoreCreate{Name: name})
		sqlitetest.Create(t, db, ws.ID, s.ID, "/one.md", "one", c.Actor)
		sqlitetest.Create(t, db, ws.ID, s.ID, "/two.md", "two", c.Actor)
		callers, stores = append(callers, c), append(stores, s.ID)
	}
	return co, callers, stores
}

// TestExportPlaces: a workspace runs one export at a time and the
// server MaxExportsAtOnce: another workspace's export goes on while one
// is held, a second one of the same workspace waits for the first and
// is refused (rate_limit_error, with a wait) when that takes too long,
// as is a third workspace's while two are held; once one ends, a
// waiting export goes on.
func TestExportPlaces(t *testing.T) {
	ctx := t.Context()
	co, callers, stores := exportEnv(t)
	memstore.SetExportBounds(co, memstore.ExportHold, 300*time.Millisecond)
	held := newExportBlocked()
	first := make(chan error, 1)
	go func() { first <- co.ExportMemories(ctx, callers[0], stores[0], true, held) }()
	<-held.started

	// Another workspace: at once.
	if err := co.ExportMemories(ctx, callers[1], stores[1], true, discardExport{}); err != nil {
		t.Fatalf("workspace b's export while a's is held: %v", err)
	}
	// The same workspace: refused once it waited too long.
	err := co.ExportMemories(ctx, callers[0], stores[0], true, discardExport{})
	var e *memstore.Error
	if memstore.ErrorCode(err) != memstore.ERateLimited || !errors.As(err, &e) || e.RetryAfter <= 0 || !strings.Contains(e.Message, "exports in progress") {
		t.Errorf("workspace a's second export: %v, want rate_limit_error with a wait", err)
	}
	// A third workspace while a and b both hold one: refused.
	held2 := newExportBlocked()
	second := make(chan error, 1)
	go func() { second <- co.ExportMemories(ctx, callers[1], stores[1], true, held2) }()
	<-held2.started
	if err := co.ExportMemories(ctx, callers[2], stores[2], true, discardExport{}); memstore.ErrorCode(err) != memstore.ERateLimited {
		t.Errorf("workspace c's export with every place held: %v, want rate_limit_error", err)
	}

	// Waiting long enough, it goes on once a place frees.
	memstore.SetExportBounds(co, memstore.ExportHold, time.Minute)
	waiting := make(chan error, 1)
	go func() { waiting <- co.ExportMemories(ctx, callers[2], stores[2], true, discardExport{}) }()
	close(held.release)
	if err := <-first; err != nil {
		t.Errorf("workspace a's held export: %v", err)
	}
	if err := <-waiting; err != nil {
		t.Errorf("workspace c's export, waiting for a place: %v", err)
	}
	close(held2.release)
	if err := <-second; err != nil {
		t.Errorf("workspace b's held export: %v", err)
	}
}

// TestExportHold: an export whose reader is slower than the hold ends
// with the context's deadline, its snapshot let go, and the next export
// runs.
func TestExportHold(t *testing.T) {
	ctx := t.Context()
	co, callers, stores := exportEnv(t)
	memstore.SetExportBounds(co, 200*time.Millisecond, time.Minute)
	slow := memstore.ExportFunc(func(*memstore.Memory) error {
		time.Sleep(400 * time.Millisecond)
		return nil
	})
	if err := co.ExportMemories(ctx, callers[0], stores[0], true, slow); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a slow reader's export: %v, want the deadline", err)
	}
	memstore.SetExportBounds(co, memstore.ExportHold, time.Minute)
	if err := co.ExportMemories(ctx, callers[0], stores[0], true, discardExport{}); err != nil {
		t.Errorf("the next export: %v", err)
	}
}

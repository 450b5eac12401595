package agenttool_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/agenttool"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const ws = "wrkspc_test"

// sqliteOptions are those of the tests' databases.
var sqliteOptions = sqlite.Options{}

var (
	// admin writes the fixtures; the tools write as the session.
	admin   = memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_admin"}
	session = memstore.Actor{Type: memstore.ActorSession, ID: "sesn_test"}
)

// content returns the content of the memory at path, "" and false when
// there is none.
func content(tb testing.TB, db *sqlite.DB, storeID, path string) (string, bool) {
	tb.Helper()
	m, err := memstore.FindMemory(context.Background(), memstore.NewCore(db), adminCaller, storeID, path)
	if memstore.ErrorCode(err) == memstore.ENotFound {
		return "", false
	}
	if err != nil {
		tb.Fatal(err)
	}
	full, err := db.Memory(context.Background(), ws, storeID, m.ID)
	if err != nil {
		tb.Fatal(err)
	}
	return full.Content, true
}

func wantContent(tb testing.TB, db *sqlite.DB, storeID, path, want string) {
	tb.Helper()
	got, ok := content(tb, db, storeID, path)
	if !ok {
		tb.Fatalf("%s: no memory, want %q", path, want)
	}
	if got != want {
		tb.Fatalf("%s: content %q, want %q", path, got, want)
	}
}

func wantAbsent(tb testing.TB, db *sqlite.DB, storeID, path string) {
	tb.Helper()
	if got, ok := content(tb, db, storeID, path); ok {
		tb.Fatalf("%s: exists with %q, want no memory", path, got)
	}
}

// newStore makes a store called name in db's workspace, holding files
// (a path, then its content, in turn) written by admin.
func newStore(tb testing.TB, db *sqlite.DB, name string, files ...string) *memstore.Store {
	tb.Helper()
	s := sqlitetest.Store(tb, db, ws, memstore.StoreCreate{Name: name})
	for i := 0; i+1 < len(files); i += 2 {
		sqlitetest.Create(tb, db, ws, s.ID, files[i], files[i+1], admin)
	}
	return s
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// attach describes one attachment of a test session.
type attach struct {
	store    *memstore.Store
	readOnly bool
	instr    string
}

// newSession builds a session as a backend would at creation: snapshots of
// the stores' names and descriptions, mount paths assigned once.
func newSession(atts ...attach) *memstore.Session {
	s := &memstore.Session{ID: session.ID, WorkspaceID: ws, Metadata: map[string]string{}, Fields: map[string]json.RawMessage{}}
	for _, a := range atts {
		access := memstore.AccessReadWrite
		if a.readOnly {
			access = memstore.AccessReadOnly
		}
		s.Attachments = append(s.Attachments, memstore.Attachment{
			StoreID: a.store.ID, Access: access, Instructions: a.instr,
			Name: a.store.Name, Description: a.store.Description,
		})
	}
	memstore.AssignMountPaths(s.Attachments)
	return s
}

// adminCaller is an API key's caller, that of the fixtures.
var adminCaller = &memstore.Caller{WorkspaceID: ws, Actor: admin}

func caller(s *memstore.Session) *memstore.Caller {
	return &memstore.Caller{WorkspaceID: ws, Actor: session, Session: s}
}

// services returns the tools' services: the core over db.
func services(db *sqlite.DB, opts ...memstore.CoreOption) agenttool.Services {
	core := memstore.NewCore(db, opts...)
	return agenttool.Services{Memories: core, Search: core}
}

func newToolset(tb testing.TB, svc agenttool.Services, s *memstore.Session) *agenttool.Toolset {
	tb.Helper()
	ts, err := agenttool.New(svc, caller(s))
	if err != nil {
		tb.Fatal(err)
	}
	return ts
}

// call runs a tool with args marshalled to JSON (a string is sent as it
// is, for malformed input).
func call(tb testing.TB, ts *agenttool.Toolset, name string, args any) agenttool.Result {
	tb.Helper()
	var raw []byte
	switch a := args.(type) {
	case string:
		raw = []byte(a)
	case nil:
	default:
		var err error
		if raw, err = json.Marshal(a); err != nil {
			tb.Fatal(err)
		}
	}
	return ts.Call(context.Background(), name, raw)
}

// ok runs a tool that must succeed and returns its text.
func ok(tb testing.TB, ts *agenttool.Toolset, name string, args any) string {
	tb.Helper()
	r := call(tb, ts, name, args)
	if r.IsError {
		tb.Fatalf("%s %v: unexpected error: %s", name, args, r.Text)
	}
	if strings.HasPrefix(r.Text, "Error:") {
		tb.Fatalf("%s %v: success text starts with Error: %s", name, args, r.Text)
	}
	return r.Text
}

// fails runs a tool that must fail and returns its text, which starts with
// "Error: ".
func fails(tb testing.TB, ts *agenttool.Toolset, name string, args any) string {
	tb.Helper()
	r := call(tb, ts, name, args)
	if !r.IsError {
		tb.Fatalf("%s %v: succeeded, want an error: %s", name, args, r.Text)
	}
	if !strings.HasPrefix(r.Text, "Error: ") {
		tb.Fatalf("%s %v: error text does not start with Error: %s", name, args, r.Text)
	}
	return r.Text
}

// wantContains fails unless text contains every one of parts.
func wantContains(tb testing.TB, text string, parts ...string) {
	tb.Helper()
	for _, p := range parts {
		if !strings.Contains(text, p) {
			tb.Errorf("text does not contain %q:\n%s", p, text)
		}
	}
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(tb testing.TB, name, got string) {
	tb.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run the test with -update to create it)", err)
	}
	if got != string(want) {
		tb.Errorf("%s differs from the golden file (run with -update if the change is intended):\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

// hooked is a backend over a database that, before each call about
// memories, counts it and runs before, whose error, if any, is returned
// instead of the call's.
type hooked struct {
	*sqlite.DB
	calls  map[string]int
	before func(method string) error
}

func hook(db *sqlite.DB, before func(method string) error) *hooked {
	return &hooked{DB: db, calls: map[string]int{}, before: before}
}

func (h *hooked) enter(method string) error {
	h.calls[method]++
	if h.before != nil {
		return h.before(method)
	}
	return nil
}

func (h *hooked) WriteMemory(ctx context.Context, workspaceID, storeID string, fn func(memstore.MemoryTx) error) error {
	if err := h.enter("WriteMemory"); err != nil {
		return err
	}
	return h.DB.WriteMemory(ctx, workspaceID, storeID, fn)
}

func (h *hooked) Memory(ctx context.Context, workspaceID, storeID, id string) (*memstore.Memory, error) {
	if err := h.enter("Memory"); err != nil {
		return nil, err
	}
	return h.DB.Memory(ctx, workspaceID, storeID, id)
}

func (h *hooked) Memories(ctx context.Context, workspaceID, storeID string, f memstore.MemoryFilter) (memstore.Page[memstore.ListItem], error) {
	if err := h.enter("Memories"); err != nil {
		return memstore.Page[memstore.ListItem]{}, err
	}
	return h.DB.Memories(ctx, workspaceID, storeID, f)
}

// recorded is a MemoryService that notes each change it is asked for,
// with the code of its error ("UpdateMemory permission_error"), so that a
// test tells a refusal of the services from one made before asking them.
type recorded struct {
	memstore.MemoryService
	changes []string
}

func (r *recorded) note(method string, err error) {
	r.changes = append(r.changes, strings.TrimSpace(method+" "+memstore.ErrorCode(err)))
}

func (r *recorded) CreateMemory(ctx context.Context, c *memstore.Caller, storeID string, mc memstore.MemoryCreate) (*memstore.Memory, error) {
	m, err := r.MemoryService.CreateMemory(ctx, c, storeID, mc)
	r.note("CreateMemory", err)
	return m, err
}

func (r *recorded) UpdateMemory(ctx context.Context, c *memstore.Caller, storeID, id string, u memstore.MemoryUpdate) (*memstore.Memory, error) {
	m, err := r.MemoryService.UpdateMemory(ctx, c, storeID, id, u)
	r.note("UpdateMemory", err)
	return m, err
}

func (r *recorded) DeleteMemory(ctx context.Context, c *memstore.Caller, storeID, id, ifSHA256 string) error {
	err := r.MemoryService.DeleteMemory(ctx, c, storeID, id, ifSHA256)
	r.note("DeleteMemory", err)
	return err
}

// failingSearch is a SearchService that fails with err.
type failingSearch struct{ err error }

func (f failingSearch) SearchMemories(context.Context, *memstore.Caller, []string, memstore.SearchQuery) (memstore.Page[memstore.SearchResult], error) {
	return memstore.Page[memstore.SearchResult]{}, f.err
}

// agenttoolServices returns the services of the core over ms, a wrapper
// of db, and whose search is db's.
func agenttoolServices(ms *hooked, db *sqlite.DB) agenttool.Services {
	return agenttool.Services{Memories: memstore.NewCore(ms), Search: memstore.NewCore(db)}
}

package dream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/dream"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/internal/agentloop"
	"github.com/memstore/memstore/internal/pgtest"
	sm "github.com/memstore/memstore/internal/scriptedmodel"
	"github.com/memstore/memstore/sqlite"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// env is a real server over a database, with a workspace, an API key, an
// SDK client holding it, and a scripted model for the workers.
type env struct {
	db    memstore.Database
	core  *memstore.Core
	url   string
	sdk   anthropic.Client
	ws    string
	admin *memstore.Caller // an API key's caller, for the test's own reads
	model *sm.Server
}

// sqliteDB opens a SQLite file of the test's.
func sqliteDB(t *testing.T) (memstore.Database, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memstore.db")
	db, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func newEnv(t *testing.T, db memstore.Database, script sm.Script) *env {
	t.Helper()
	ctx := t.Context()
	core := memstore.NewCore(db, memstore.WithDreams(true))
	api := httpapi.New(httpapi.Config{
		Stores: core, Memories: core, Versions: core, Keys: core, Sessions: core, Search: core, Feed: core,
		Dreams:  core,
		APIKeys: memstore.NewKeys(core), Users: memstore.NewUsers(db),
		Webhooks: memstore.NewWebhooks(db, memstore.WebhooksAllowPrivate(true)),
	})
	srv := httptest.NewServer(api)
	t.Cleanup(func() { srv.Close(); api.Close() })
	ws, err := db.CreateWorkspace(ctx, "dreams")
	if err != nil {
		t.Fatal(err)
	}
	key, secret, err := core.CreateAPIKey(ctx, ws.ID, "test")
	if err != nil {
		t.Fatal(err)
	}
	return &env{
		db: db, core: core, url: srv.URL, ws: ws.ID,
		sdk: anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(srv.URL),
			option.WithAPIKey(secret), option.WithHTTPClient(srv.Client())),
		admin: &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorAPIKey, ID: key.ID}},
		model: sm.New(t, script),
	}
}

// fast are caps that a test's scripted model never reaches unless it
// means to.
var fast = agentloop.Limits{MaxSteps: 20, MaxTokens: 1_000_000, MaxWrites: 20, MaxTime: time.Minute}

// worker returns a worker of e's core calling e's model.
func (e *env) worker(o dream.Options) *dream.Worker {
	o.Model.BaseURL = e.model.URL
	if o.Model.APIKey == "" {
		o.Model.APIKey = "sk-scripted"
	}
	if o.Limits == (agentloop.Limits{}) {
		o.Limits = fast
	}
	return dream.New(e.core, o)
}

// runOne runs the next dream with w, failing when there is none.
func (e *env) runOne(t *testing.T, w *dream.Worker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	ok, err := w.RunOne(ctx)
	if err != nil || !ok {
		t.Fatalf("RunOne: %v, %v", ok, err)
	}
}

// store makes a store holding files (a path, then its content, in turn).
func (e *env) store(t *testing.T, name string, files ...string) *anthropic.BetaManagedAgentsMemoryStore {
	t.Helper()
	s, err := e.sdk.Beta.MemoryStores.New(t.Context(), anthropic.BetaMemoryStoreNewParams{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(files); i += 2 {
		if _, err := e.sdk.Beta.MemoryStores.Memories.New(t.Context(), s.ID, anthropic.BetaMemoryStoreMemoryNewParams{
			Path: files[i], Content: anthropic.String(files[i+1])}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// session makes a session whose transcript holds a user message and an
// assistant's answer for each pair of texts.
func (e *env) session(t *testing.T, texts ...string) string {
	t.Helper()
	s, _, _, err := e.core.CreateSession(t.Context(), e.admin, memstore.SessionCreate{Title: "work"})
	if err != nil {
		t.Fatal(err)
	}
	var turn memstore.Turn
	for i, text := range texts {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		content, _ := json.Marshal(text)
		turn.Messages = append(turn.Messages, memstore.TurnMessage{Role: role, Content: content})
	}
	if _, err := e.core.AppendSessionTurn(t.Context(), e.admin, s.ID, turn); err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// newDream creates a dream through the SDK: create_new, or
// update_existing when update.
func (e *env) newDream(t *testing.T, storeID string, sessions []string, update bool) *anthropic.BetaDream {
	t.Helper()
	p := anthropic.BetaDreamNewParams{
		Inputs: []anthropic.BetaDreamInputUnionParam{
			anthropic.BetaDreamInputParamOfMemoryStore(storeID),
			anthropic.BetaDreamInputParamOfSessions(sessions),
		},
		Model:        anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("scripted-model")},
		Instructions: anthropic.String("Keep editor preferences current."),
	}
	if update {
		p.OutputBehavior = anthropic.BetaOutputBehaviorParamOfUpdateExisting(storeID)
	}
	d, err := e.sdk.Beta.Dreams.New(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (e *env) get(t *testing.T, id string) *anthropic.BetaDream {
	t.Helper()
	d, err := e.sdk.Beta.Dreams.Get(t.Context(), id, anthropic.BetaDreamGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// memories returns a store's memories, path to content.
func (e *env) memories(t *testing.T, storeID string) map[string]string {
	t.Helper()
	out := map[string]string{}
	f := memstore.MemoryFilter{Full: true, Limit: 20}
	for {
		page, err := e.core.Memories(t.Context(), e.admin, storeID, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			if it.Memory != nil {
				out[it.Memory.Path] = it.Memory.Content
			}
		}
		if page.Next == "" {
			return out
		}
		f.Page = page.Next
	}
}

// versions returns a store's versions, newest first.
func (e *env) versions(t *testing.T, storeID string) []memstore.Version {
	t.Helper()
	page, err := e.core.Versions(t.Context(), e.admin, storeID, memstore.VersionFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return page.Items
}

// event is one event of a session's transcript, as the SDK reads it.
type event struct{ Type, Raw string }

// events lists a session's transcript through the official SDK.
func (e *env) events(t *testing.T, sessionID string) []event {
	t.Helper()
	var out []event
	it := e.sdk.Beta.Sessions.Events.ListAutoPaging(t.Context(), sessionID, anthropic.BetaSessionEventListParams{})
	for it.Next() {
		out = append(out, event{Type: it.Current().Type, Raw: it.Current().RawJSON()})
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var mountRE = regexp.MustCompile(`mounted at (/mnt/memory/[^;\s]+);`)

// mount is the output store's mount path, as the system prompt gives it.
func mount(r *sm.Request) string {
	m := mountRE.FindStringSubmatch(r.System)
	if m == nil {
		panic(fmt.Sprintf("no mount path in the system prompt %q", r.System))
	}
	return m[1]
}

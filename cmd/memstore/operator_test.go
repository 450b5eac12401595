package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
	"github.com/memstore/memstore/sqlite"
)

// TestOperatorActor checks that what the command line changes on a
// database file is recorded as the operator, a user actor with the
// reserved ID user_operator, whoever runs it; that the command line shows
// it as "operator"; and that the official SDK reads it, and a version
// recorded as a local user before (user_root), as user actors.
func TestOperatorActor(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	db := notesDatabase(t)
	cli := func(stdin string, args ...string) string {
		t.Helper()
		return mustRun(t, stdin, append(args, "--db", db)...)
	}
	cli("one\n", "put", "/a.md")
	cli("two\n", "put", "/a.md")
	var versions []httpapi.VersionJSON
	if err := json.Unmarshal([]byte(cli("", "log", "/a.md", "--json")), &versions); err != nil || len(versions) != 2 {
		t.Fatalf("log: %v %v", versions, err)
	}
	cli("", "redact", "--yes", versions[1].ID)

	// Before the operator, the command line recorded the local user by
	// name: such a version stays as it was.
	sdb, err := sqlite.Open(ctx, db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	core := memstore.NewCore(sdb)
	ws, err := core.Workspace(ctx, memstore.DefaultWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	store := storeIDOf(t, cli("", "stores", "ls", "--json"))
	root := &memstore.Caller{WorkspaceID: ws.ID, Actor: memstore.Actor{Type: memstore.ActorUser, ID: "user_root"}}
	if _, err := core.CreateMemory(ctx, root, store, memstore.MemoryCreate{Path: "/old.md", Content: "old"}); err != nil {
		t.Fatal(err)
	}

	out := cli("", "log", "--json")
	for _, want := range []string{
		`"created_by":{"type":"user_actor","user_id":"user_operator"}`,
		`"redacted_by":{"type":"user_actor","user_id":"user_operator"}`,
		`"created_by":{"type":"user_actor","user_id":"user_root"}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log --json lacks %s:\n%s", want, out)
		}
	}
	text := cli("", "log")
	if strings.Count(text, " operator ") != 2 || !strings.Contains(text, "user_actor:user_root") || strings.Contains(text, "user_operator") {
		t.Errorf("log shows the operator as %q; want \"operator\", and user_root as it was:\n%s", "operator", text)
	}
	if out := cli("", "show", versions[1].ID); !regexp.MustCompile(`created_by: +operator\n`).MatchString(out) || !regexp.MustCompile(`redacted_by: +operator\n`).MatchString(out) {
		t.Errorf("show:\n%s", out)
	}

	// The official SDK reads every one of them as a user actor.
	key := lastKey(cli("", "keys", "create"))
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Stores: core, Memories: core, Versions: core, Keys: core}))
	defer srv.Close()
	sdk := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(srv.URL), option.WithAPIKey(key))
	page, err := sdk.Beta.MemoryStores.MemoryVersions.List(ctx, store, anthropic.BetaMemoryStoreMemoryVersionListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, v := range page.Data {
		u, ok := v.CreatedBy.AsAny().(anthropic.BetaManagedAgentsUserActor)
		if !ok {
			t.Errorf("version %s: created_by %s is not a user actor to the SDK", v.ID, v.CreatedBy.RawJSON())
		}
		users = append(users, u.UserID)
		if v.ID == versions[1].ID {
			if r, ok := v.RedactedBy.AsAny().(anthropic.BetaManagedAgentsUserActor); !ok || r.UserID != "user_operator" {
				t.Errorf("redacted_by %s; want the operator", v.RedactedBy.RawJSON())
			}
		}
	}
	slices.Sort(users)
	if want := []string{"user_operator", "user_operator", "user_root"}; !slices.Equal(users, want) {
		t.Errorf("the SDK read the actors %v; want %v", users, want)
	}
}

// storeIDOf is the ID of the only store of a stores ls --json.
func storeIDOf(t *testing.T, out string) string {
	t.Helper()
	var stores []httpapi.StoreJSON
	if err := json.Unmarshal([]byte(out), &stores); err != nil || len(stores) != 1 {
		t.Fatalf("stores ls: %s %v", out, err)
	}
	return stores[0].ID
}

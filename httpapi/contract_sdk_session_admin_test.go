package httpapi_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/respjson"

	"github.com/memstore/memstore/httpapi"
)

// TestSDKSessionAdmin calls every method of the Go SDK's Beta.Sessions and
// Beta.Sessions.Resources, and asserts each outcome: updates, deletion,
// the list's filters and a live session's memory stores work; threads
// are a 404 saying that memstore runs no agent. A memory_store
// resource is added and changed with the SDK's own methods, whose typed
// parameters name file resources and token rotation only, by setting the
// body's fields (option.WithJSONSet).
func TestSDKSessionAdmin(t *testing.T) { onEachSDKEnv(t, testSDKSessionAdmin) }

func testSDKSessionAdmin(t *testing.T, e *sdkEnv) {
	ctx := t.Context()
	notes := e.newStore(t, "Notes")
	prefs := e.newStore(t, "Prefs")
	sessions := &e.sdk.Beta.Sessions

	sess, err := sessions.New(ctx, anthropic.BetaSessionNewParams{
		Agent:         anthropic.BetaSessionNewParamsAgentUnion{OfString: anthropic.String("agent_01")},
		EnvironmentID: "env_01", Title: anthropic.String("first"), Metadata: map[string]string{"keep": "1", "drop": "2"},
		Resources: []anthropic.BetaSessionNewParamsResourceUnion{{OfMemoryStore: &anthropic.BetaManagedAgentsMemoryStoreResourceParam{MemoryStoreID: notes.ID}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every field the SDK requires is there, with honest empty values.
	for _, f := range []string{"agent", "archived_at", "budget", "created_at", "environment_id", "metadata", "outcome_evaluations",
		"resources", "stats", "status", "title", "type", "updated_at", "usage", "vault_ids"} {
		if !sess.JSON.ExtraFields[f].Valid() && !fieldPresent(sess, f) {
			t.Errorf("the session lacks %s: %s", f, sess.RawJSON())
		}
	}
	if sess.Agent.ID != "agent_01" || sess.Agent.Type != "agent" || sess.Status != "idle" || len(sess.VaultIDs) != 0 {
		t.Errorf("agent %+v, status %q, vault_ids %v", sess.Agent.RawJSON(), sess.Status, sess.VaultIDs)
	}
	token := sessionToken(t, sess)
	agent := e.client("", option.WithAuthToken(token), option.WithAPIKey(""))

	// Get and Update: title, a metadata key removed (null), a kept field.
	got, err := sessions.Get(ctx, sess.ID, anthropic.BetaSessionGetParams{})
	if err != nil || got.ID != sess.ID {
		t.Fatalf("Get: %v %v", got, err)
	}
	up, err := sessions.Update(ctx, sess.ID, anthropic.BetaSessionUpdateParams{Title: anthropic.String("second")},
		option.WithJSONSet("metadata", map[string]any{"drop": nil, "new": "3"}), option.WithJSONSet("environment_id", "env_02"))
	if err != nil {
		t.Fatal(err)
	}
	if up.Title != "second" || len(up.Metadata) != 2 || up.Metadata["keep"] != "1" || up.Metadata["new"] != "3" || up.EnvironmentID != "env_02" {
		t.Errorf("Update: %s", up.RawJSON())
	}
	_, err = sessions.Update(ctx, sess.ID, anthropic.BetaSessionUpdateParams{Title: anthropic.String("mine")}, option.WithAuthToken(token), option.WithAPIKey(""))
	sdkError(t, err, 403, "permission_error", "Update with the session's token")

	// Resources: List, Get, Add (a memory store), Update (its access),
	// Delete; the token follows each change on its next request.
	rl, err := sessions.Resources.List(ctx, sess.ID, anthropic.BetaSessionResourceListParams{})
	if err != nil || len(rl.Data) != 1 || rl.Data[0].ID != notes.ID || rl.Data[0].MountPath != "/mnt/memory/notes" {
		t.Fatalf("Resources.List: %v %v", rl, err)
	}
	r, err := sessions.Resources.Get(ctx, notes.ID, anthropic.BetaSessionResourceGetParams{SessionID: sess.ID})
	if err != nil || r.AsMemoryStore().MemoryStoreID != notes.ID || r.AsMemoryStore().Access != "read_write" {
		t.Fatalf("Resources.Get: %v %v", r, err)
	}
	_, err = sessions.Resources.Add(ctx, sess.ID, anthropic.BetaSessionResourceAddParams{
		BetaManagedAgentsFileResourceParams: anthropic.BetaManagedAgentsFileResourceParams{FileID: "file_01"}})
	sdkError(t, err, 400, "invalid_request_error", "Resources.Add of a file")
	write := func(storeID, path string) error {
		_, err := agent.Beta.MemoryStores.Memories.New(ctx, storeID, anthropic.BetaMemoryStoreMemoryNewParams{Path: path, Content: anthropic.String("x")})
		return err
	}
	sdkError(t, write(prefs.ID, "/before.md"), 403, "permission_error", "write to a store not attached yet")
	added, err := sessions.Resources.Add(ctx, sess.ID, anthropic.BetaSessionResourceAddParams{},
		option.WithJSONSet("type", "memory_store"), option.WithJSONSet("memory_store_id", prefs.ID), option.WithJSONSet("instructions", "The user's style."))
	if err != nil || added.ID != prefs.ID || added.MountPath != "/mnt/memory/prefs" {
		t.Fatalf("Resources.Add of a memory store: %v %v", added, err)
	}
	if err := write(prefs.ID, "/added.md"); err != nil {
		t.Errorf("write to the store just attached: %v", err)
	}
	_, err = sessions.Resources.Add(ctx, sess.ID, anthropic.BetaSessionResourceAddParams{},
		option.WithJSONSet("type", "memory_store"), option.WithJSONSet("memory_store_id", prefs.ID))
	sdkError(t, err, 409, "conflict_error", "Resources.Add of a store attached already")
	ur, err := sessions.Resources.Update(ctx, prefs.ID, anthropic.BetaSessionResourceUpdateParams{SessionID: sess.ID},
		option.WithJSONSet("access", "read_only"))
	if err != nil || ur.AsMemoryStore().Access != "read_only" || ur.AsMemoryStore().Instructions != "The user's style." {
		t.Fatalf("Resources.Update: %v %v", ur, err)
	}
	sdkError(t, write(prefs.ID, "/read-only.md"), 403, "permission_error", "write to a store made read-only")
	_, err = sessions.Resources.Update(ctx, prefs.ID, anthropic.BetaSessionResourceUpdateParams{SessionID: sess.ID, AuthorizationToken: "ghp_x"})
	sdkError(t, err, 400, "invalid_request_error", "Resources.Update with an authorization_token")
	auto := sessions.Resources.ListAutoPaging(ctx, sess.ID, anthropic.BetaSessionResourceListParams{Limit: anthropic.Int(1)})
	var ids []string
	for auto.Next() {
		ids = append(ids, auto.Current().ID)
	}
	if auto.Err() != nil || len(ids) != 2 || ids[0] != notes.ID || ids[1] != prefs.ID {
		t.Errorf("Resources.ListAutoPaging by one: %v %v", ids, auto.Err())
	}
	del, err := sessions.Resources.Delete(ctx, notes.ID, anthropic.BetaSessionResourceDeleteParams{SessionID: sess.ID})
	if err != nil || del.ID != notes.ID || del.Type != "session_resource_deleted" {
		t.Fatalf("Resources.Delete: %v %v", del, err)
	}
	sdkError(t, write(notes.ID, "/detached.md"), 403, "permission_error", "write to a store detached")
	_, err = sessions.Resources.Get(ctx, notes.ID, anthropic.BetaSessionResourceGetParams{SessionID: sess.ID})
	sdkError(t, err, 404, "not_found_error", "Resources.Get of a detached store")

	// List: filters honoured, others named in a 400.
	older, err := sessions.New(ctx, anthropic.BetaSessionNewParams{Agent: anthropic.BetaSessionNewParamsAgentUnion{
		OfBetaManagedAgentsAgents: &anthropic.BetaManagedAgentsAgentParams{ID: "agent_02", Version: anthropic.Int(2)}}, EnvironmentID: "env_01"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sessions.Archive(ctx, older.ID, anthropic.BetaSessionArchiveParams{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what string
		p    anthropic.BetaSessionListParams
		want []string
	}{
		{"default", anthropic.BetaSessionListParams{}, []string{sess.ID}},
		{"terminated", anthropic.BetaSessionListParams{Statuses: []string{"terminated"}}, []string{older.ID}},
		{"oldest first", anthropic.BetaSessionListParams{Order: "asc", IncludeArchived: anthropic.Bool(true)}, []string{sess.ID, older.ID}},
		{"agent_02", anthropic.BetaSessionListParams{AgentID: anthropic.String("agent_02"), IncludeArchived: anthropic.Bool(true)}, []string{older.ID}},
		{"created after the first", anthropic.BetaSessionListParams{CreatedAtGt: anthropic.Time(sess.CreatedAt), IncludeArchived: anthropic.Bool(true)}, []string{older.ID}},
		{"created up to the first", anthropic.BetaSessionListParams{CreatedAtLte: anthropic.Time(sess.CreatedAt), CreatedAtGte: anthropic.Time(sess.CreatedAt.Add(-time.Hour))}, []string{sess.ID}},
		{"with prefs", anthropic.BetaSessionListParams{MemoryStoreID: anthropic.String(prefs.ID)}, []string{sess.ID}},
	} {
		page, err := sessions.List(ctx, tc.p)
		var got []string
		if err == nil {
			for _, s := range page.Data {
				got = append(got, s.ID)
			}
		}
		if err != nil || len(got) != len(tc.want) || (len(got) > 0 && (got[0] != tc.want[0] || got[len(got)-1] != tc.want[len(tc.want)-1])) {
			t.Errorf("List %s: %v %v, want %v", tc.what, got, err, tc.want)
		}
	}
	all := sessions.ListAutoPaging(ctx, anthropic.BetaSessionListParams{Limit: anthropic.Int(1), IncludeArchived: anthropic.Bool(true)})
	n := 0
	for all.Next() {
		n++
	}
	if all.Err() != nil || n != 2 {
		t.Errorf("ListAutoPaging: %d sessions, %v", n, all.Err())
	}
	for _, p := range []anthropic.BetaSessionListParams{{DeploymentID: anthropic.String("dep_1")}, {AgentID: anthropic.String("agent_02"), AgentVersion: anthropic.Int(2)}} {
		_, err := sessions.List(ctx, p)
		sdkError(t, err, 400, "invalid_request_error", "List by a filter memstore cannot honour")
	}

	// Threads: memstore runs no agent. (Events: TestSDKSessionEvents.)
	_, err = sessions.Threads.List(ctx, sess.ID, anthropic.BetaSessionThreadListParams{})
	sdkError(t, err, 404, "not_found_error", "Threads.List")
	_, err = sessions.Threads.Get(ctx, "thr_1", anthropic.BetaSessionThreadGetParams{SessionID: sess.ID})
	sdkError(t, err, 404, "not_found_error", "Threads.Get")
	_, err = sessions.Threads.Archive(ctx, "thr_1", anthropic.BetaSessionThreadArchiveParams{SessionID: sess.ID})
	sdkError(t, err, 404, "not_found_error", "Threads.Archive")
	_, err = sessions.Threads.Events.List(ctx, "thr_1", anthropic.BetaSessionThreadEventListParams{SessionID: sess.ID})
	sdkError(t, err, 404, "not_found_error", "Threads.Events.List")
	ts := sessions.Threads.Events.StreamEvents(ctx, "thr_1", anthropic.BetaSessionThreadEventStreamParams{SessionID: sess.ID})
	if ts.Next() {
		t.Error("Threads.Events.StreamEvents gave an event")
	}
	sdkError(t, ts.Err(), 404, "not_found_error", "Threads.Events.StreamEvents")

	// Archive sets the status; Delete stops the token at once.
	a, err := sessions.Archive(ctx, older.ID, anthropic.BetaSessionArchiveParams{})
	if err != nil || a.Status != "terminated" {
		t.Errorf("archived: %v %v", a, err)
	}
	if err := write(prefs.ID, "/before-delete.md"); err == nil {
		t.Error("write to a read-only store succeeded")
	}
	gone, err := sessions.Delete(ctx, sess.ID, anthropic.BetaSessionDeleteParams{})
	if err != nil || gone.ID != sess.ID || gone.Type != "session_deleted" {
		t.Fatalf("Delete: %v %v", gone, err)
	}
	_, err = agent.Beta.Sessions.Get(ctx, sess.ID, anthropic.BetaSessionGetParams{})
	sdkError(t, err, 401, "authentication_error", "the token of a deleted session")
	_, err = sessions.Get(ctx, sess.ID, anthropic.BetaSessionGetParams{})
	sdkError(t, err, 404, "not_found_error", "Get of a deleted session")
	_, err = sessions.Delete(ctx, sess.ID, anthropic.BetaSessionDeleteParams{})
	sdkError(t, err, 404, "not_found_error", "Delete again")
}

// fieldPresent reports whether the SDK decoded field f of s.
func fieldPresent(s *anthropic.BetaManagedAgentsSession, f string) bool {
	j := s.JSON
	for name, field := range map[string]respjson.Field{
		"agent": j.Agent, "archived_at": j.ArchivedAt, "budget": j.Budget, "created_at": j.CreatedAt, "environment_id": j.EnvironmentID,
		"metadata": j.Metadata, "outcome_evaluations": j.OutcomeEvaluations, "resources": j.Resources, "stats": j.Stats,
		"status": j.Status, "title": j.Title, "type": j.Type, "updated_at": j.UpdatedAt, "usage": j.Usage, "vault_ids": j.VaultIDs,
	} {
		if name == f {
			return field.Valid() || field.Raw() == "null"
		}
	}
	return false
}

// TestAttachmentChangesReachEveryReplica: two servers on one PostgreSQL
// database, each keeping authentications for an hour. A change to a live
// session's stores made through one is followed by the session's token on
// its next request there, and on the other within moments (the notice of
// the change, heard over LISTEN/NOTIFY), whatever either cached.
func TestAttachmentChangesReachEveryReplica(t *testing.T) {
	hs := postgresReplicas(t, 2, harnessOptions{configure: withAuthCacheTTL(time.Hour)})
	here, there := &sdkEnv{h: hs[0]}, &sdkEnv{h: hs[1]}
	_, _, secret := here.h.newKey(t, "replicas")
	here.sdk = here.client(secret)
	ctx := t.Context()
	notes := mustStore(t, here.sdk, "Notes")
	prefs := mustStore(t, here.sdk, "Prefs")
	sess, err := here.sdk.Beta.Sessions.New(ctx, anthropic.BetaSessionNewParams{EnvironmentID: "env",
		Resources: []anthropic.BetaSessionNewParamsResourceUnion{{OfMemoryStore: &anthropic.BetaManagedAgentsMemoryStoreResourceParam{MemoryStoreID: notes.ID}}}})
	if err != nil {
		t.Fatal(err)
	}
	token := sessionToken(t, sess)
	n := 0
	write := func(e *sdkEnv, storeID string) error {
		n++
		c := e.client("", option.WithAuthToken(token), option.WithAPIKey(""))
		_, err := c.Beta.MemoryStores.Memories.New(ctx, storeID,
			anthropic.BetaMemoryStoreMemoryNewParams{Path: "/m" + time.Now().Format("150405.000000000") + ".md", Content: anthropic.String("x")})
		return err
	}
	// Each replica authenticates the token, and keeps it.
	for _, e := range []*sdkEnv{here, there} {
		if err := write(e, notes.ID); err != nil {
			t.Fatal(err)
		}
		sdkError(t, write(e, prefs.ID), 403, "permission_error", "a store not attached")
	}
	follows := func(what string, ok bool, storeID string) {
		t.Helper()
		check := func(e *sdkEnv) bool {
			err := write(e, storeID)
			return ok == (err == nil)
		}
		if !check(here) {
			t.Errorf("%s: not followed on the next request to the replica that made it", what)
		}
		deadline := time.Now().Add(2 * time.Second)
		for !check(there) {
			if time.Now().After(deadline) {
				t.Errorf("%s: not followed by the other replica within 2 seconds", what)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	resources := &here.sdk.Beta.Sessions.Resources
	if _, err := resources.Add(ctx, sess.ID, anthropic.BetaSessionResourceAddParams{},
		option.WithJSONSet("type", "memory_store"), option.WithJSONSet("memory_store_id", prefs.ID)); err != nil {
		t.Fatal(err)
	}
	follows("a store attached", true, prefs.ID)
	if _, err := resources.Update(ctx, prefs.ID, anthropic.BetaSessionResourceUpdateParams{SessionID: sess.ID}, option.WithJSONSet("access", "read_only")); err != nil {
		t.Fatal(err)
	}
	follows("a store made read-only", false, prefs.ID)
	if _, err := resources.Delete(ctx, notes.ID, anthropic.BetaSessionResourceDeleteParams{SessionID: sess.ID}); err != nil {
		t.Fatal(err)
	}
	follows("a store detached", false, notes.ID)
	if _, err := here.sdk.Beta.Sessions.Delete(ctx, sess.ID, anthropic.BetaSessionDeleteParams{}); err != nil {
		t.Fatal(err)
	}
	for _, e := range []*sdkEnv{here, there} {
		deadline := time.Now().Add(2 * time.Second)
		for write(e, prefs.ID) == nil || !isStatus(write(e, prefs.ID), 401) {
			if time.Now().After(deadline) {
				t.Fatalf("the token of a deleted session still works on a replica after 2 seconds")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// sessionToken is the secret of a new session's first token.
func sessionToken(t *testing.T, s *anthropic.BetaManagedAgentsSession) string {
	t.Helper()
	token, err := strconv.Unquote(s.JSON.ExtraFields["token"].Raw())
	if err != nil || token == "" {
		t.Fatalf("the create's token field: %q (%v)", s.JSON.ExtraFields["token"].Raw(), err)
	}
	return token
}

// withAuthCacheTTL sets the server's authentication cache.
func withAuthCacheTTL(ttl time.Duration) func(*httpapi.Config) {
	return func(c *httpapi.Config) { c.AuthCacheTTL = ttl }
}

// mustStore makes a store with the SDK.
func mustStore(t *testing.T, c anthropic.Client, name string) *anthropic.BetaManagedAgentsMemoryStore {
	t.Helper()
	s, err := c.Beta.MemoryStores.New(t.Context(), anthropic.BetaMemoryStoreNewParams{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// isStatus reports whether err is an API error of that status.
func isStatus(err error, status int) bool {
	var ae *anthropic.Error
	return errors.As(err, &ae) && ae.StatusCode == status
}

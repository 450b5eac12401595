package httpapi_test

import (
	"strconv"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// TestSDKSessions drives sessions with the official Go SDK: an API key
// creates a session with two stores attached, and a client holding only the
// session's token, sent as the SDK's environment worker sends it
// (Authorization: Bearer), reads its session, reads both stores, writes the
// read-write one as the session, and is refused everything else.
func TestSDKSessions(t *testing.T) { onEachSDKEnv(t, testSDKSessions) }

func testSDKSessions(t *testing.T, e *sdkEnv) {
	ctx := t.Context()
	prefs := e.newStore(t, "User Preferences")
	notes := e.newStore(t, "Notes")
	style := e.newMemory(t, prefs.ID, "/style.md", "Tabs, not spaces.")

	sess, err := e.sdk.Beta.Sessions.New(ctx, anthropic.BetaSessionNewParams{
		Agent:         anthropic.BetaSessionNewParamsAgentUnion{OfString: anthropic.String("agent_01")},
		EnvironmentID: "env_01",
		Title:         anthropic.String("refactor"),
		Resources: []anthropic.BetaSessionNewParamsResourceUnion{
			{OfMemoryStore: &anthropic.BetaManagedAgentsMemoryStoreResourceParam{
				MemoryStoreID: prefs.ID, Access: "read_only", Instructions: anthropic.String("Check before starting."),
			}},
			{OfMemoryStore: &anthropic.BetaManagedAgentsMemoryStoreResourceParam{MemoryStoreID: notes.ID}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	token, err := strconv.Unquote(sess.JSON.ExtraFields["token"].Raw())
	if err != nil || token == "" {
		t.Fatalf("the create's token field: %q (%v)", sess.JSON.ExtraFields["token"].Raw(), err)
	}
	if sess.EnvironmentID != "env_01" || sess.Title != "refactor" || len(sess.Resources) != 2 {
		t.Fatalf("session %s", sess.RawJSON())
	}
	r0, r1 := sess.Resources[0].AsMemoryStore(), sess.Resources[1].AsMemoryStore()
	if r0.MemoryStoreID != prefs.ID || r0.Access != "read_only" || r0.MountPath != "/mnt/memory/user-preferences" ||
		r0.Name != "User Preferences" || r0.Instructions != "Check before starting." {
		t.Errorf("resource 0: %s", sess.Resources[0].RawJSON())
	}
	if r1.Access != "read_write" || r1.MountPath != "/mnt/memory/notes" {
		t.Errorf("resource 1: %s", sess.Resources[1].RawJSON())
	}

	// The list by store, with the key.
	page, err := e.sdk.Beta.Sessions.List(ctx, anthropic.BetaSessionListParams{MemoryStoreID: anthropic.String(notes.ID)})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != sess.ID {
		t.Fatalf("sessions with %s: %v %v", notes.ID, page, err)
	}

	agent := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(e.h.URL),
		option.WithAuthToken(token), option.WithHTTPClient(e.h.srv.Client()))
	got, err := agent.Beta.Sessions.Get(ctx, sess.ID, anthropic.BetaSessionGetParams{})
	if err != nil || got.ID != sess.ID || got.Resources[0].AsMemoryStore().MountPath != r0.MountPath {
		t.Fatalf("the session with its token: %v %v", got, err)
	}
	if _, ok := got.JSON.ExtraFields["token"]; ok {
		t.Error("GET shows the token")
	}
	m, err := agent.Beta.MemoryStores.Memories.Get(ctx, style.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: prefs.ID})
	if err != nil || m.Content != "Tabs, not spaces." {
		t.Fatalf("read with the token: %v %v", m, err)
	}
	_, err = agent.Beta.MemoryStores.Memories.Update(ctx, style.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{
		MemoryStoreID: prefs.ID, Content: anthropic.String("Spaces."),
	})
	sdkError(t, err, 403, "permission_error", "update in a read-only store")

	w, err := agent.Beta.MemoryStores.Memories.New(ctx, notes.ID, anthropic.BetaMemoryStoreMemoryNewParams{
		Path: "/progress.md", Content: anthropic.String("Step 1 done."),
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.svc.MemoryVersions.Get(ctx, w.MemoryVersionID, anthropic.BetaMemoryStoreMemoryVersionGetParams{MemoryStoreID: notes.ID})
	if err != nil {
		t.Fatal(err)
	}
	if by := v.CreatedBy.AsSessionActor(); v.CreatedBy.Type != "session_actor" || by.SessionID != sess.ID {
		t.Errorf("created_by %s, want the session", v.CreatedBy.RawJSON())
	}
	vs, err := e.svc.MemoryVersions.List(ctx, notes.ID, anthropic.BetaMemoryStoreMemoryVersionListParams{SessionID: anthropic.String(sess.ID)})
	if err != nil || len(vs.Data) != 1 || vs.Data[0].ID != w.MemoryVersionID {
		t.Errorf("versions by session: %v %v", vs, err)
	}

	other := e.newStore(t, "Other")
	_, err = agent.Beta.MemoryStores.Memories.List(ctx, other.ID, anthropic.BetaMemoryStoreMemoryListParams{})
	sdkError(t, err, 403, "permission_error", "list an unattached store")
	_, err = agent.Beta.MemoryStores.List(ctx, anthropic.BetaMemoryStoreListParams{})
	sdkError(t, err, 403, "permission_error", "list stores")
	_, err = agent.Beta.MemoryStores.MemoryVersions.Redact(ctx, w.MemoryVersionID, anthropic.BetaMemoryStoreMemoryVersionRedactParams{MemoryStoreID: notes.ID})
	sdkError(t, err, 403, "permission_error", "redact")

	// Archived, the session leaves the default list.
	if a, err := e.sdk.Beta.Sessions.Archive(ctx, sess.ID, anthropic.BetaSessionArchiveParams{}); err != nil || a.ArchivedAt.IsZero() {
		t.Fatalf("archive: %v %v", a, err)
	}
	for _, all := range []bool{false, true} {
		page, err := e.sdk.Beta.Sessions.List(ctx, anthropic.BetaSessionListParams{IncludeArchived: anthropic.Bool(all)})
		if err != nil || len(page.Data) != map[bool]int{false: 0, true: 1}[all] {
			t.Errorf("list, include_archived %v: %v %v", all, page, err)
		}
	}
}

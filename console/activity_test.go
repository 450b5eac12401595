package console_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

// TestActivityPage: what an agent's session wrote shows in the activity,
// with the session's title, filtered to the session or not; a filter the
// core refuses is shown with its reason.
func TestActivityPage(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "x")
	ses, _, secret, err := f.core.CreateSession(ctx, f.op, memstore.SessionCreate{Title: "Night agent",
		Stores: []memstore.AttachmentCreate{{StoreID: f.storeID}}})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := f.core.AuthenticateSession(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.core.CreateMemory(ctx, agent, f.storeID, memstore.MemoryCreate{Path: "/agent/today.md", Content: "wrote this"}); err != nil {
		t.Fatal(err)
	}
	member := f.signIn(t, "member")
	all := mustGet(t, f, member, "/console/activity")
	if !strings.Contains(all, "/agent/today.md") || !strings.Contains(all, "/prefs/style.md") {
		t.Errorf("the activity lacks a change: %s", all)
	}
	admin := f.signIn(t, "admin")
	mine := mustGet(t, f, admin, "/console/activity?actor_type=session_actor&actor="+ses.ID+"&store="+f.storeID)
	if !strings.Contains(mine, "/agent/today.md") || !strings.Contains(mine, "Night agent") || strings.Contains(mine, "/prefs/style.md") {
		t.Errorf("the session's activity: %s", mine)
	}
	if del := mustGet(t, f, admin, "/console/activity?op=deleted"); strings.Contains(del, "/agent/today.md") {
		t.Error("the deleted filter shows a creation")
	}
	resp, body := f.get(t, admin, "/console/activity?op=exploded")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "exploded") {
		t.Errorf("a bad operation: %d %s", resp.StatusCode, body)
	}
}

// TestActorAPIKeyName: a change made with an API key shows the key's
// name beside its ID, escaped, to those who may read keys; a member sees
// the ID only.
func TestActorAPIKeyName(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "content")
	k, secret, err := f.db.CreateAPIKey(ctx, f.op.WorkspaceID, `<b>deploy</b> bot`)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := f.db.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	m, err := f.core.CreateMemory(ctx, agent, f.storeID, memstore.MemoryCreate{Path: "/by-key.md", Content: "from a script"})
	if err != nil {
		t.Fatal(err)
	}
	page := "/console/stores/" + f.storeID + "/memories/" + m.ID
	escaped := "api_actor " + k.ID + " (&lt;b&gt;deploy&lt;/b&gt; bot)"
	for _, path := range []string{page, "/console/activity", page + "/history"} {
		if body := mustGet(t, f, f.signIn(t, "auditor"), path); !strings.Contains(body, escaped) || strings.Contains(body, "<b>deploy") {
			t.Errorf("%s, as an auditor: the key is not shown as %q:\n%s", path, escaped, body)
		}
	}
	if body := mustGet(t, f, f.signIn(t, "member"), page); !strings.Contains(body, "api_actor "+k.ID) || strings.Contains(body, "deploy") {
		t.Errorf("as a member: the key's name is shown, or not its ID:\n%s", body)
	}
}

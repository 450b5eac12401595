package httpapi_test

import (
	"net/url"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/storetest"
)

// TestSessionConversationReachesTokensAtOnce: a session's change of
// memstore.ConversationKey reaches its token's next search, though the
// server remembers the token's authentication for an hour.
func TestSessionConversationReachesTokensAtOnce(t *testing.T) {
	clock := storetest.NewClock(time.Now())
	e, store, sid, token := newRevocationEnv(t, filepath.Join(t.TempDir(), "m.db"), clock, time.Hour)
	for _, m := range [][2]string{
		{"/chats/c1/0001.md", "Ana: we adopted a rescue dog from the shelter, finally a dog of our own"},
		{"/chats/c1/0002.md", "Ben: a dog! what breed is the dog?"},
		{"/chats/c1/0003.md", "Ana: a beagle called Biscuit, who sleeps all day long on the sofa"},
		{"/chats/c2/0001.md", "Cem: beagle"},
	} {
		e.ok(t, "POST", "/v1/memory_stores/"+store+"/memories", jsonOf(t, map[string]any{"path": m[0], "content": m[1]}))
	}
	answerFirst := func() bool {
		t.Helper()
		page := e.ok(t, "GET", "/v1/sessions/"+sid+"/memories/search?limit=100&q="+url.QueryEscape("dog beagle"), "", as(token))
		var got []string
		for _, r := range page["data"].([]any) {
			got = append(got, r.(map[string]any)["memory"].(map[string]any)["path"].(string))
		}
		i, j := slices.Index(got, "/chats/c1/0003.md"), slices.Index(got, "/chats/c2/0001.md")
		if i < 0 || j < 0 {
			t.Fatalf("search: %q; want both beagles", got)
		}
		return i < j
	}
	if answerFirst() {
		t.Fatal("a session and a store without the key: searched with context")
	}
	e.ok(t, "POST", "/v1/sessions/"+sid, jsonOf(t, map[string]any{"metadata": map[string]any{memstore.ConversationKey: "true"}}))
	if !answerFirst() {
		t.Error(`the session updated to "true": its token's next search without context`)
	}
	e.ok(t, "POST", "/v1/sessions/"+sid, jsonOf(t, map[string]any{"metadata": map[string]any{memstore.ConversationKey: nil}}))
	if answerFirst() {
		t.Error("the session's key removed: its token's next search still with context")
	}
}

package httpapi_test

import (
	"net/url"
	"slices"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/memstore/memstore"
)

// TestSDKConversationStore: the official Go SDK, unchanged, makes a store
// of conversations by its metadata (memstore.ConversationKey), which the
// server's search then ranks with context; a value other than "true" or
// "false" is refused as invalid, with what to send.
func TestSDKConversationStore(t *testing.T) {
	onEachSDKEnv(t, func(t *testing.T, e *sdkEnv) {
		ctx := t.Context()
		s, err := e.svc.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "chats", Metadata: map[string]string{memstore.ConversationKey: "true"}})
		if err != nil {
			t.Fatal(err)
		}
		if s.Metadata[memstore.ConversationKey] != "true" {
			t.Errorf("the store's metadata: %v", s.Metadata)
		}
		for _, m := range [][2]string{
			{"/chats/c1/0001.md", "Ana: we adopted a rescue dog from the shelter, finally a dog of our own"},
			{"/chats/c1/0002.md", "Ben: a dog! what breed is the dog?"},
			{"/chats/c1/0003.md", "Ana: a beagle called Biscuit, who sleeps all day long on the sofa"},
			{"/chats/c2/0001.md", "Cem: beagle"},
		} {
			e.newMemory(t, s.ID, m[0], m[1])
		}
		// answerFirst: the answer beside the dog ranks above the lone
		// beagle, as only context ranks it.
		answerFirst := func(extra string) bool {
			t.Helper()
			var page struct {
				Data []struct {
					Memory struct {
						Path string `json:"path"`
					} `json:"memory"`
				} `json:"data"`
			}
			path := "v1/memory_stores/" + s.ID + "/memories/search?q=" + url.QueryEscape("dog beagle") + "&limit=100" + extra
			if err := e.sdk.Get(ctx, path, nil, &page); err != nil {
				t.Fatalf("search%s: %v", extra, err)
			}
			var got []string
			for _, r := range page.Data {
				got = append(got, r.Memory.Path)
			}
			i, j := slices.Index(got, "/chats/c1/0003.md"), slices.Index(got, "/chats/c2/0001.md")
			if i < 0 || j < 0 {
				t.Fatalf("search%s: %q; want both beagles", extra, got)
			}
			return i < j
		}
		if !answerFirst("") || answerFirst("&conversation=false") {
			t.Error("a store made by the SDK with the conversation key: want context by default, none with conversation=false")
		}
		_, err = e.svc.Update(ctx, s.ID, anthropic.BetaMemoryStoreUpdateParams{Metadata: map[string]string{memstore.ConversationKey: "yes"}})
		sdkError(t, err, 400, "invalid_request_error", "an update with the conversation key yes")
	})
}

package sqlite_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/sqlite"
)

// BenchmarkSearchConversationOption measures what a search pays for
// letting the store say whether its memories are turns of conversations
// (memstore.ConversationKey): "request" says it in the query, which reads
// no store; "store" leaves it to the store's metadata, which the core
// reads first. Both search the same store of conversations, with context.
func BenchmarkSearchConversationOption(b *testing.B) {
	ctx := context.Background()
	db := mustOpenAt(b, b.TempDir()+"/conv.db", sqlite.Options{})
	co := memstore.NewCore(db)
	c := &memstore.Caller{WorkspaceID: ws, Actor: alice}
	s, err := co.CreateStore(ctx, c, memstore.StoreCreate{Name: "chats", Metadata: map[string]string{memstore.ConversationKey: "true"}})
	if err != nil {
		b.Fatal(err)
	}
	words := []string{"dog", "beagle", "shelter", "breed", "sofa", "walk", "park", "vet", "ball", "leash"}
	for i := range 40 {
		content := fmt.Sprintf("turn %d: the %s and the %s, then %s", i, words[i%10], words[(i/10)%10], words[(i/100)%10])
		if _, err := co.CreateMemory(ctx, c, s.ID, memstore.MemoryCreate{Path: fmt.Sprintf("/chats/c%d/%04d.md", i/20, i%20), Content: content}); err != nil {
			b.Fatal(err)
		}
	}
	for _, name := range []string{"request", "store"} {
		b.Run(name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				q := memstore.SearchQuery{Text: words[i%10] + " " + words[(i+3)%10]}
				if name == "request" {
					q.Conversation = new(true)
				}
				if _, err := co.SearchMemories(ctx, c, []string{s.ID}, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

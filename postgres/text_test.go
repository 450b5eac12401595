package postgres_test

import (
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/postgres"
)

// TestNULText proves that text PostgreSQL's text type cannot hold, with
// NUL characters, which the API accepts in content, descriptions,
// titles and instructions, is kept byte for byte, and that such a
// memory is still searched.
func TestNULText(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, postgres.Options{})
	core := memstore.NewCore(db)
	const nul = "a\x00b"
	s, err := core.CreateStore(ctx, alice, memstore.StoreCreate{Name: "notes", Description: nul})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := core.Store(ctx, alice, s.ID); err != nil || got.Description != nul {
		t.Fatalf("Store: description %q, %v; want %q", got.Description, err, nul)
	}
	m, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: "/n.md", Content: "cormorant\x00" + nul})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := core.Memory(ctx, alice, s.ID, m.ID); err != nil || got.Content != m.Content {
		t.Fatalf("Memory: content %q, %v; want %q", got.Content, err, m.Content)
	}
	if v, err := core.Version(ctx, alice, s.ID, m.VersionID); err != nil || v.Content != m.Content {
		t.Fatalf("Version: content %q, %v; want %q", v.Content, err, m.Content)
	}
	p, err := core.SearchMemories(ctx, alice, []string{s.ID}, memstore.SearchQuery{Text: "cormorant"})
	if err != nil || len(p.Items) != 1 {
		t.Fatalf("search: %d results, %v; want the memory", len(p.Items), err)
	}
	sess, _, _, err := core.CreateSession(ctx, alice, memstore.SessionCreate{Title: nul,
		Stores: []memstore.AttachmentCreate{{StoreID: s.ID, Instructions: nul}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := core.Session(ctx, alice, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != nul || got.Attachments[0].Instructions != nul || got.Attachments[0].Description != nul {
		t.Errorf("session: title %q, instructions %q, description %q; want %q", got.Title, got.Attachments[0].Instructions, got.Attachments[0].Description, nul)
	}
}

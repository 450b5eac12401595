package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/embed/embedtest"
	"github.com/memstore/memstore/embedindex"
)

// modesDims is the length of the vectors of the modes' tests: enough that
// the word-hash vectors of unrelated texts are nearly orthogonal.
const modesDims = 256

// semanticBackend is a search backend whose core embeds queries, and
// index, which embeds every memory written so far.
type semanticBackend struct {
	searchBackend
	index func(t *testing.T)
}

// runSearchModes runs the conformance tests of SearchQuery.Mode's
// semantic and hybrid search. open returns fresh, empty services whose
// core embeds queries with e, and the storage of their vectors.
func runSearchModes(t *testing.T, open func(t *testing.T, e memstore.Embedder) (Services, memstore.VectorStorage)) {
	o := func(t *testing.T) semanticBackend {
		e := embedtest.New(t, modesDims).Embedder(t, "word-hash")
		s, vs := open(t, e)
		v := viewOf(s)
		v.search, v.sessions = s, s
		w := embedindex.New(embedindex.Config{Storage: vs, Embedder: e})
		return semanticBackend{searchBackend: v, index: func(t *testing.T) {
			t.Helper()
			if err := w.Drain(t.Context()); err != nil {
				t.Fatalf("embed the memories: %v", err)
			}
		}}
	}
	// Lexical search on a server with a model: the cases of lexical
	// search, each asking for it.
	t.Run("Lexical", func(t *testing.T) {
		runSearchCases(t, func(t *testing.T) searchBackend {
			b := o(t).searchBackend.(*asKeys)
			b.mode = memstore.ModeLexical
			return b
		})
	})
	t.Run("Default", func(t *testing.T) { testModeDefault(t, o) })
	t.Run("Semantic", func(t *testing.T) { testModeSemantic(t, o) })
	t.Run("Hybrid", func(t *testing.T) { testModeHybrid(t, o) })
	t.Run("Results", func(t *testing.T) { testModeResults(t, o) })
	t.Run("NotYetEmbedded", func(t *testing.T) { testModeNotYetEmbedded(t, o) })
	t.Run("OnePage", func(t *testing.T) { testModeOnePage(t, o) })
	t.Run("PathPrefix", func(t *testing.T) { testModePathPrefix(t, o) })
	t.Run("Erasure", func(t *testing.T) { testModeErasure(t, o) })
}

// modeStore is a store of memories about pets and about deploys, every
// one embedded.
func modeStore(t *testing.T, open func(*testing.T) semanticBackend) (b semanticBackend, sid string) {
	b, sid, _, _ = modeStoreIDs(t, open)
	return b, sid
}

// modeStoreIDs is modeStore, with the IDs of the dog and the cat.
func modeStoreIDs(t *testing.T, open func(*testing.T) semanticBackend) (b semanticBackend, sid, dog, cat string) {
	b = open(t)
	sid = mustCreateStore(t, b, wsA, "modes").ID
	dog = mustCreateMemory(t, b, wsA, sid, "/pets/dog.md", "our dog is a beagle called biscuit").ID
	cat = mustCreateMemory(t, b, wsA, sid, "/pets/cat.md", "the cat sleeps on the warm windowsill").ID
	mustCreateMemory(t, b, wsA, sid, "/work/deploy.md", "deploy on fridays only after the freeze")
	mustCreateMemory(t, b, wsA, sid, "/work/oncall.md", "oncall rotation changes every monday")
	b.index(t)
	return b, sid, dog, cat
}

func modeSearch(t *testing.T, b semanticBackend, sid string, q memstore.SearchQuery) []string {
	t.Helper()
	p := search(t, b, []string{sid}, q)
	if p.Next != "" {
		t.Errorf("%s search %q: a next page %q; semantic and hybrid search answer one page", q.Mode, q.Text, p.Next)
	}
	return resultPaths(p.Items)
}

// On a server with an embedding model the default is hybrid: it finds
// what hybrid finds, memories without the query's words too, and lexical
// search stays a choice that finds only the words.
func testModeDefault(t *testing.T, open func(*testing.T) semanticBackend) {
	b, sid := modeStore(t, open)
	q := memstore.SearchQuery{Text: "beagle biscuit", Limit: memstore.MaxSearchLimit}
	def := modeSearch(t, b, sid, q)
	q.Mode = memstore.ModeHybrid
	if hybrid := modeSearch(t, b, sid, q); !slices.Equal(def, hybrid) {
		t.Errorf("default search found %q, hybrid %q: want the same", def, hybrid)
	}
	if len(def) != 4 || def[0] != "/pets/dog.md" {
		t.Errorf("default search found %q: want every memory, the beagle first", def)
	}
	q.Mode = memstore.ModeLexical
	if got := resultPaths(search(t, b, []string{sid}, q).Items); !slices.Equal(got, []string{"/pets/dog.md"}) {
		t.Errorf("lexical search found %q, want only the beagle", got)
	}
}

// Semantic search ranks every embedded memory by the nearness of its
// vector to the query's, the limit nearest, without snippets.
func testModeSemantic(t *testing.T, open func(*testing.T) semanticBackend) {
	b, sid := modeStore(t, open)
	p := search(t, b, []string{sid}, memstore.SearchQuery{Text: "the warm cat", Mode: memstore.ModeSemantic, Limit: 2})
	if got := resultPaths(p.Items); len(got) != 2 || got[0] != "/pets/cat.md" {
		t.Fatalf("semantic search found %q: want two, the cat first", got)
	}
	if p.Items[0].Score <= 0 || p.Items[0].Score > 1.0001 || p.Items[0].Memory.StoreID != sid || p.Items[0].Memory.ID == "" {
		t.Errorf("semantic result %+v: want a cosine score in (0, 1] and the memory's fields", p.Items[0])
	}
	// A store named twice is searched once.
	twice, err := b.SearchMemories(t.Context(), wsA, []string{sid, sid}, memstore.SearchQuery{Text: "the warm cat", Mode: memstore.ModeSemantic})
	if _, one := b.searchBackend.(*asKeys).search.(KeySearchesOneStore); !one {
		if err != nil {
			t.Fatal(err)
		}
		if got := resultPaths(twice.Items); len(got) != 4 {
			t.Errorf("semantic search of one store named twice found %q, want its four memories once each", got)
		}
	}
	// A word the memory has only inflected is no match for word-hash
	// vectors: semantic search does not stem, lexical search does.
	got := modeSearch(t, b, sid, memstore.SearchQuery{Text: "deploys", Mode: memstore.ModeSemantic})
	if len(got) != 4 {
		t.Errorf("semantic search found %q: want every embedded memory, up to the limit", got)
	}
}

// Hybrid search puts first what both rankings put high, and finds what
// either finds.
func testModeHybrid(t *testing.T, open func(*testing.T) semanticBackend) {
	b, sid := modeStore(t, open)
	got := modeSearch(t, b, sid, memstore.SearchQuery{Text: "deploy fridays", Mode: memstore.ModeHybrid, Limit: 3})
	if len(got) != 3 || got[0] != "/work/deploy.md" {
		t.Errorf("hybrid search found %q: want three, the deploy first", got)
	}
	// "deploys" is found by words (stemmed) and not by the word-hash
	// vectors: hybrid keeps the lexical match first.
	got = modeSearch(t, b, sid, memstore.SearchQuery{Text: "deploys", Mode: memstore.ModeHybrid})
	if len(got) == 0 || got[0] != "/work/deploy.md" {
		t.Errorf("hybrid search for deploys found %q: want the deploy first", got)
	}
	// Several stores at once, as a session's search.
	other := mustCreateStore(t, b, wsA, "modes two").ID
	mustCreateMemory(t, b, wsA, other, "/pets/parrot.md", "a parrot called biscuit")
	b.index(t)
	v := b.searchBackend.(*asKeys)
	_, _, secret, err := v.CreateSession(t.Context(), wsA, memstore.SessionCreate{Stores: []memstore.AttachmentCreate{{StoreID: sid}, {StoreID: other}}})
	if err != nil {
		t.Fatal(err)
	}
	session, err := v.AuthenticateSession(t.Context(), secret)
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.search.SearchMemories(t.Context(), session, []string{sid, other}, memstore.SearchQuery{Text: "biscuit", Mode: memstore.ModeHybrid})
	if err != nil {
		t.Fatalf("a session's hybrid search: %v", err)
	}
	if got := resultPaths(p.Items); len(got) < 2 || !sameSet(got[:2], []string{"/pets/dog.md", "/pets/parrot.md"}) {
		t.Errorf("hybrid search of two stores found %q: want both biscuits first", got)
	}
}

// Semantic and hybrid search's results are the memories as lexical search
// gives them, without content; a hybrid result found by the words has
// the snippet lexical search gives it, one found by meaning alone none.
func testModeResults(t *testing.T, open func(*testing.T) semanticBackend) {
	b, sid := modeStore(t, open)
	// Each memory as lexical search gives it, found by a word of its own.
	memories := map[string]memstore.Memory{}
	for _, w := range []string{"beagle", "windowsill", "fridays", "rotation"} {
		p := search(t, b, []string{sid}, memstore.SearchQuery{Text: w, Mode: memstore.ModeLexical, Limit: 1})
		if len(p.Items) != 1 {
			t.Fatalf("lexical search for %s found %d memories, want 1", w, len(p.Items))
		}
		memories[p.Items[0].Memory.Path] = p.Items[0].Memory
	}
	q := memstore.SearchQuery{Text: "beagle biscuit freeze", Limit: memstore.MaxSearchLimit}
	q.Mode = memstore.ModeLexical
	snippets := map[string]string{}
	for _, r := range search(t, b, []string{sid}, q).Items {
		snippets[r.Memory.Path] = r.Snippet
	}
	if len(snippets) != 2 {
		t.Fatalf("lexical search for %q found %q, want the dog and the deploy", q.Text, snippets)
	}
	for _, mode := range []string{memstore.ModeHybrid, memstore.ModeSemantic} {
		q.Mode = mode
		got := search(t, b, []string{sid}, q).Items
		if len(got) != len(memories) {
			t.Errorf("%s search found %q, want every memory", mode, resultPaths(got))
		}
		for _, r := range got {
			if want := memories[r.Memory.Path]; !sameMemory(r.Memory, want) {
				t.Errorf("%s search's %s is %+v, want %+v as lexical search gives it", mode, r.Memory.Path, r.Memory, want)
			}
			if want := snippets[r.Memory.Path]; mode == memstore.ModeSemantic && r.Snippet != "" || mode == memstore.ModeHybrid && r.Snippet != want {
				t.Errorf("%s search's %s has snippet %q, want %q", mode, r.Memory.Path, r.Snippet, want)
			}
		}
	}
}

// sameMemory says whether a and b are the same memory at the same version.
func sameMemory(a, b memstore.Memory) bool {
	return a.ID == b.ID && a.StoreID == b.StoreID && a.Path == b.Path && a.Content == b.Content &&
		a.ContentSHA256 == b.ContentSHA256 && a.ContentSize == b.ContentSize && a.VersionID == b.VersionID &&
		a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt)
}

// A memory written since the last embedding is found by hybrid search, by
// its words, and not yet by semantic search.
func testModeNotYetEmbedded(t *testing.T, open func(*testing.T) semanticBackend) {
	b, sid := modeStore(t, open)
	mustCreateMemory(t, b, wsA, sid, "/pets/hamster.md", "the hamster is named pepper")
	got := modeSearch(t, b, sid, memstore.SearchQuery{Text: "hamster pepper", Mode: memstore.ModeHybrid})
	if len(got) == 0 || got[0] != "/pets/hamster.md" {
		t.Errorf("hybrid search found %q: want the memory not yet embedded first", got)
	}
	if got := modeSearch(t, b, sid, memstore.SearchQuery{Text: "hamster pepper", Mode: memstore.ModeSemantic}); slices.Contains(got, "/pets/hamster.md") {
		t.Errorf("semantic search found %q: the hamster has no vector yet", got)
	}
	b.index(t)
	if got := modeSearch(t, b, sid, memstore.SearchQuery{Text: "hamster pepper", Mode: memstore.ModeSemantic}); len(got) == 0 || got[0] != "/pets/hamster.md" {
		t.Errorf("semantic search found %q once embedded: want the hamster first", got)
	}
}

// Semantic and hybrid search answer one page: a cursor is refused, the
// default's too, and lexical search still pages.
func testModeOnePage(t *testing.T, open func(*testing.T) semanticBackend) {
	b, sid := modeStore(t, open)
	lexical := search(t, b, []string{sid}, memstore.SearchQuery{Text: "the", Mode: memstore.ModeLexical, Limit: 1})
	if lexical.Next == "" {
		t.Fatal("lexical search of a common word answered no next page")
	}
	for _, mode := range []string{memstore.ModeSemantic, memstore.ModeHybrid, ""} {
		_, err := b.SearchMemories(t.Context(), wsA, []string{sid}, memstore.SearchQuery{Text: "the", Mode: mode, Limit: 1, Page: lexical.Next})
		if wantCode(t, err, memstore.EInvalid, "a page of a search in mode "+mode) && !strings.Contains(err.Error(), "one page") {
			t.Errorf("mode %q with a page: %v, want it to say the search answers one page", mode, err)
		}
	}
	_, err := b.SearchMemories(t.Context(), wsA, []string{sid}, memstore.SearchQuery{Text: "the", Mode: "fuzzy"})
	if wantCode(t, err, memstore.EInvalid, "mode fuzzy") && !strings.Contains(err.Error(), "lexical, semantic or hybrid") {
		t.Errorf("an unknown mode: %v, want the three modes named", err)
	}
}

// A path prefix limits semantic and hybrid search as it does lexical.
func testModePathPrefix(t *testing.T, open func(*testing.T) semanticBackend) {
	b, sid := modeStore(t, open)
	for _, mode := range []string{memstore.ModeSemantic, memstore.ModeHybrid} {
		got := modeSearch(t, b, sid, memstore.SearchQuery{Text: "beagle deploy", Mode: mode, PathPrefix: "/work/"})
		if len(got) != 2 || !slices.Contains(got, "/work/deploy.md") || !slices.Contains(got, "/work/oncall.md") {
			t.Errorf("%s search below /work/ found %q, want the two memories there", mode, got)
		}
	}
}

// A changed or deleted memory is never found by its old content's vector.
func testModeErasure(t *testing.T, open func(*testing.T) semanticBackend) {
	b, sid, dog, cat := modeStoreIDs(t, open)
	ctx := context.Background()
	c := "a goldfish in a bowl"
	if _, err := b.UpdateMemory(ctx, wsA, sid, dog, memstore.MemoryUpdate{Content: &c}, actorKey); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteMemory(ctx, wsA, sid, cat, "", actorKey); err != nil {
		t.Fatal(err)
	}
	got := modeSearch(t, b, sid, memstore.SearchQuery{Text: "beagle biscuit cat windowsill", Mode: memstore.ModeSemantic})
	if slices.Contains(got, "/pets/dog.md") || slices.Contains(got, "/pets/cat.md") {
		t.Errorf("semantic search found %q: the changed and the deleted memory have no vector", got)
	}
}

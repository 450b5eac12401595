package memstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/embed/embedtest"
	"github.com/memstore/memstore/embedindex"
	"github.com/memstore/memstore/sqlite"
	"github.com/memstore/memstore/sqlite/sqlitetest"
)

func result(store, path string, relevance, score float64, snippet string) memstore.SearchResult {
	return memstore.SearchResult{Memory: memstore.Memory{ID: store + ":" + path, StoreID: store, Path: path}, Relevance: relevance, Score: score, Snippet: snippet}
}

func fusedPaths(rs []memstore.SearchResult) string {
	var ps []string
	for _, r := range rs {
		ps = append(ps, r.Memory.Path)
	}
	return strings.Join(ps, " ")
}

// Fuse: normalised scores, weighted; a memory in both lists adds both;
// the weight's ends give each ranking alone.
func TestFuse(t *testing.T) {
	lexical := []memstore.SearchResult{
		result("s", "/a", 4, 1.8, "alpha"),
		result("s", "/b", 2, 1.6, "beta"),
		result("s", "/c", 1, 1.5, "gamma"),
	}
	semantic := []memstore.SearchResult{
		result("s", "/d", 0, 0.9, ""),
		result("s", "/c", 0, 0.7, ""),
		result("s", "/e", 0, 0.5, ""),
	}
	if got := fusedPaths(memstore.Fuse(lexical, semantic, 0, 10)); got != "/a /b /c /d /e" {
		t.Errorf("weight 0: %s, want the lexical ranking, then the rest", got)
	}
	if got := fusedPaths(memstore.Fuse(lexical, semantic, 1, 10)); got != "/d /c /a /b /e" {
		t.Errorf("weight 1: %s, want the semantic ranking first", got)
	}
	got := memstore.Fuse(lexical, semantic, 0.5, 10)
	// Lexical: 4/4, 2/4, 1/4 (from 0). Semantic: (s-0.5)/0.4: 1, 0.5, 0.
	want := map[string]float64{"/a": 0.5, "/b": 0.25, "/c": 0.5*0.25 + 0.5*0.5, "/d": 0.5, "/e": 0}
	for _, r := range got {
		if math.Abs(r.Score-want[r.Memory.Path]) > 1e-9 {
			t.Errorf("%s: fused score %v, want %v", r.Memory.Path, r.Score, want[r.Memory.Path])
		}
	}
	// Ties keep the lexical order, then the semantic one's.
	if p := fusedPaths(got); p != "/a /d /c /b /e" {
		t.Errorf("weight 0.5: %s", p)
	}
	c := got[slices.IndexFunc(got, func(r memstore.SearchResult) bool { return r.Memory.Path == "/c" })]
	d := got[slices.IndexFunc(got, func(r memstore.SearchResult) bool { return r.Memory.Path == "/d" })]
	if c.Snippet != "gamma" || c.Relevance != 1 || d.Snippet != "" || d.Relevance != 0 {
		t.Errorf("fused results %+v, %+v: want the lexical result's snippet and relevance, none for a semantic one", c, d)
	}
	if got := memstore.Fuse(lexical, semantic, 0.5, 2); len(got) != 2 {
		t.Errorf("limit 2: %d results", len(got))
	}
	// One memory is one ID: the same path in another store is another
	// memory.
	if got := memstore.Fuse(lexical[:1], []memstore.SearchResult{result("t", "/a", 0, 0.9, "")}, 0.5, 10); len(got) != 2 {
		t.Errorf("the same path in two stores: %d results, want 2", len(got))
	}
	// A memory twice in a list counts once, at its first place there.
	dup := memstore.Fuse(append(slices.Clone(lexical), result("s", "/a", 1, 1.5, "again")),
		append(slices.Clone(semantic), result("s", "/c", 0, 0.5, "")), 0.5, 10)
	if p := fusedPaths(dup); p != "/a /d /c /b /e" {
		t.Errorf("with repeats: %s", p)
	}
	for _, r := range dup {
		if math.Abs(r.Score-want[r.Memory.Path]) > 1e-9 || r.Memory.Path == "/a" && r.Snippet != "alpha" {
			t.Errorf("with repeats, %s: score %v, snippet %q; want %v, the first's", r.Memory.Path, r.Score, r.Snippet, want[r.Memory.Path])
		}
	}
	// One list alone, or one result, is fused without a division by 0.
	if got := memstore.Fuse(nil, semantic[:1], 0.5, 10); len(got) != 1 || got[0].Score != 0.5 {
		t.Errorf("one semantic result: %+v", got)
	}
	if got := memstore.Fuse(lexical[:1], nil, 0.2, 10); len(got) != 1 || math.Abs(got[0].Score-0.8) > 1e-9 {
		t.Errorf("one lexical result: %+v", got)
	}
}

func TestValidateSemanticWeight(t *testing.T) {
	for _, w := range []float64{0, 0.2, 1} {
		if err := memstore.ValidateSemanticWeight(w); err != nil {
			t.Errorf("%v: %v", w, err)
		}
	}
	for _, w := range []float64{-0.1, 1.5, math.NaN()} {
		if err := memstore.ValidateSemanticWeight(w); memstore.ErrorCode(err) != memstore.EInvalid || !strings.Contains(err.Error(), "--search-semantic-weight") {
			t.Errorf("%v: %v, want EInvalid naming the flag", w, err)
		}
	}
}

// When the model fails to embed a query, a search that asked for
// semantic or hybrid search fails (EOverloaded, saying to try again or
// ask for lexical search), and one that left the mode to the server's
// default answers with its lexical ranking.
func TestHybridWhenTheModelFails(t *testing.T) {
	db := sqlitetest.Open(t, sqlite.Options{})
	ws := sqlitetest.Workspace(t, db, "w")
	st := sqlitetest.Store(t, db, ws.ID, memstore.StoreCreate{Name: "notes"})
	by := memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_test"}
	sqlitetest.Create(t, db, ws.ID, st.ID, "/dog.md", "a beagle called biscuit", by)
	sqlitetest.Create(t, db, ws.ID, st.ID, "/cat.md", "a cat on the windowsill", by)
	srv := embedtest.New(t, 32)
	e := srv.Embedder(t, "word-hash")
	if err := embedindex.New(embedindex.Config{Storage: db, Embedder: e}).Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	core := memstore.NewCore(db, memstore.WithEmbedder(e))
	c := &memstore.Caller{WorkspaceID: ws.ID, Actor: by}
	if p, err := core.SearchMemories(t.Context(), c, []string{st.ID}, memstore.SearchQuery{Text: "beagle"}); err != nil || len(p.Items) != 2 {
		t.Fatalf("hybrid search with the model up: %+v, %v; want both memories", p.Items, err)
	}
	// A model that hangs: each search waits QueryEmbeddingTimeout for it,
	// not the model client's minute.
	hang := make(chan struct{})
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-hang:
		}
	})
	start := time.Now()
	p, err := core.SearchMemories(t.Context(), c, []string{st.ID}, memstore.SearchQuery{Text: "beagle"})
	if err != nil || fusedPaths(p.Items) != "/dog.md" || time.Since(start) > 30*time.Second {
		t.Errorf("default search with the model hanging: %q, %v after %v; want the lexical match within 30s", fusedPaths(p.Items), err, time.Since(start))
	}
	close(hang)
	srv.Close()
	p, err = core.SearchMemories(t.Context(), c, []string{st.ID}, memstore.SearchQuery{Text: "beagle"})
	if err != nil || fusedPaths(p.Items) != "/dog.md" {
		t.Errorf("default search with the model down: %q, %v; want the lexical match", fusedPaths(p.Items), err)
	}
	for _, mode := range []string{memstore.ModeSemantic, memstore.ModeHybrid} {
		_, err := core.SearchMemories(t.Context(), c, []string{st.ID}, memstore.SearchQuery{Text: "beagle", Mode: mode})
		if memstore.ErrorCode(err) != memstore.EOverloaded || !strings.Contains(err.Error(), "ask for mode lexical") {
			t.Errorf("%s search with the model down: %v, want EOverloaded that offers lexical search", mode, err)
		}
	}
}

// semanticFixture is a database of two workspaces, "busy" and "quiet",
// each with a store of two memories embedded by embedtest's server, and
// a core whose model is that server.
func semanticFixture(t *testing.T) (srv *embedtest.Server, core *memstore.Core, busy, quiet *memstore.Caller, stores []string) {
	db := sqlitetest.Open(t, sqlite.Options{})
	by := memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_test"}
	var callers []*memstore.Caller
	for _, name := range []string{"busy", "quiet"} {
		ws := sqlitetest.Workspace(t, db, name)
		st := sqlitetest.Store(t, db, ws.ID, memstore.StoreCreate{Name: "notes"})
		sqlitetest.Create(t, db, ws.ID, st.ID, "/dog.md", "a beagle called biscuit, flood", by)
		sqlitetest.Create(t, db, ws.ID, st.ID, "/cat.md", "a cat on the windowsill", by)
		callers = append(callers, &memstore.Caller{WorkspaceID: ws.ID, Actor: by})
		stores = append(stores, st.ID)
	}
	srv = embedtest.New(t, 32)
	e := srv.Embedder(t, "word-hash")
	if err := embedindex.New(embedindex.Config{Storage: db, Embedder: e}).Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	return srv, memstore.NewCore(db, memstore.WithEmbedder(e)), callers[0], callers[1], stores
}

// wantBeagle checks that a search found /dog.md first.
func wantBeagle(t *testing.T, what string, p memstore.Page[memstore.SearchResult], err error) {
	t.Helper()
	if err != nil || len(p.Items) == 0 || p.Items[0].Memory.Path != "/dog.md" {
		t.Errorf("%s: %+v, %v; want /dog.md first", what, p.Items, err)
	}
}

// A workspace's flood of semantic searches cannot take the model from
// another: with a model that answers three requests at once, a workspace
// whose searches hang in it has at most MaxSemanticSearchesPerWorkspace
// of them there at a time, the others waiting their turn, and another
// workspace's semantic search succeeds meanwhile. Each of the flood's
// searches fails, offering lexical search: in the model past
// QueryEmbeddingTimeout, or refused having waited as long for its turn.
func TestSemanticSearchShareOfTheModel(t *testing.T) {
	srv, core, busy, quiet, stores := semanticFixture(t)
	// The model answers three requests at once; a query of "flood" holds
	// its place until release.
	slots, release := make(chan struct{}, 3), make(chan struct{})
	var mu sync.Mutex
	flooding, most := 0, 0 // queries of "flood" in the model, now and at most at once
	model := embedtest.Handler(32)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case slots <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		defer func() { <-slots }()
		if strings.Contains(string(body), "flood") {
			mu.Lock()
			flooding++
			most = max(most, flooding)
			mu.Unlock()
			select {
			case <-release:
			case <-r.Context().Done():
			}
			mu.Lock()
			flooding--
			mu.Unlock()
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		model.ServeHTTP(w, r)
	})
	defer close(release)
	const flood = 6
	var wg sync.WaitGroup
	var returned []error
	for range flood {
		wg.Go(func() {
			_, err := core.SearchMemories(context.Background(), busy, stores[:1], memstore.SearchQuery{Text: "flood", Mode: memstore.ModeSemantic})
			mu.Lock()
			returned = append(returned, err)
			mu.Unlock()
		})
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := flooding
		mu.Unlock()
		if n >= memstore.MaxSemanticSearchesPerWorkspace {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the busy workspace's searches did not reach the model within 30s")
		}
	}
	// Before the first of them gives up on the model (5 s), no more of
	// them reach it: the others wait their turn.
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	if most > memstore.MaxSemanticSearchesPerWorkspace {
		t.Errorf("the busy workspace had %d searches in the model at once, want at most %d", most, memstore.MaxSemanticSearchesPerWorkspace)
	}
	mu.Unlock()
	for _, mode := range []string{memstore.ModeSemantic, memstore.ModeHybrid} {
		p, err := core.SearchMemories(t.Context(), quiet, stores[1:], memstore.SearchQuery{Text: "beagle", Mode: mode})
		wantBeagle(t, "the quiet workspace's "+mode+" search while the busy one floods the model", p, err)
	}
	// The busy workspace's default search answers, lexically or, once
	// its turn came, hybrid.
	p, err := core.SearchMemories(t.Context(), busy, stores[:1], memstore.SearchQuery{Text: "beagle"})
	wantBeagle(t, "the busy workspace's default search while it floods the model", p, err)
	wg.Wait()
	for _, err := range returned {
		if code := memstore.ErrorCode(err); code != memstore.ERateLimited && code != memstore.EOverloaded || !strings.Contains(err.Error(), "ask for mode lexical") {
			t.Errorf("a semantic search of a flood in a model that hangs: %v, want it refused, offering lexical search", err)
		}
	}
}

// A workspace with MaxSemanticSearchesPerWorkspace semantic searches in
// progress: its next one waits its turn and runs once one ends, or, when
// none ends within QueryEmbeddingTimeout, is refused (ERateLimited, with
// a retry-after, naming the limit and offering lexical search), and
// answers lexically in the default mode; another workspace's runs at
// once.
func TestSemanticSearchPastTheShare(t *testing.T) {
	_, core, busy, quiet, stores := semanticFixture(t)
	free := memstore.TakeSemanticPlaces(core, busy.WorkspaceID, memstore.MaxSemanticSearchesPerWorkspace)
	defer free()
	for _, mode := range []string{memstore.ModeSemantic, memstore.ModeHybrid} {
		p, err := core.SearchMemories(t.Context(), quiet, stores[1:], memstore.SearchQuery{Text: "beagle", Mode: mode})
		wantBeagle(t, "the quiet workspace's "+mode+" search", p, err)
		_, err = core.SearchMemories(t.Context(), busy, stores[:1], memstore.SearchQuery{Text: "beagle", Mode: mode})
		var e *memstore.Error
		if !errors.As(err, &e) || e.Code != memstore.ERateLimited || e.RetryAfter <= 0 || !e.Retry ||
			!strings.Contains(e.Message, "MaxSemanticSearchesPerWorkspace") || !strings.Contains(e.Message, "ask for mode lexical") {
			t.Errorf("the busy workspace's %s search past its share: %v, want ERateLimited with a retry-after, naming the limit and offering lexical search", mode, err)
		}
	}
	p, err := core.SearchMemories(t.Context(), busy, stores[:1], memstore.SearchQuery{Text: "beagle"})
	if err != nil || fusedPaths(p.Items) != "/dog.md" {
		t.Errorf("the busy workspace's default search past its share: %q, %v; want the lexical match", fusedPaths(p.Items), err)
	}
	waited := make(chan error, 1)
	go func() {
		p, err := core.SearchMemories(t.Context(), busy, stores[:1], memstore.SearchQuery{Text: "beagle", Mode: memstore.ModeSemantic})
		if err == nil && (len(p.Items) == 0 || p.Items[0].Memory.Path != "/dog.md") {
			err = fmt.Errorf("found %+v, want /dog.md first", p.Items)
		}
		waited <- err
	}()
	time.Sleep(100 * time.Millisecond)
	free()
	if err := <-waited; err != nil {
		t.Errorf("a semantic search waiting for the workspace's turn: %v", err)
	}
}

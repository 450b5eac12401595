package memdir_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/embed"
	"github.com/memstore/memstore/embed/embedtest"
	"github.com/memstore/memstore/internal/vector"
	"github.com/memstore/memstore/memdir"
)

func hitFiles(hits []memdir.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.File)
	}
	return out
}

func testEmbedder(t *testing.T, srv *embedtest.Server, model string) *embed.OpenAI {
	t.Helper()
	e, err := embed.NewOpenAI(embed.OpenAIConfig{URL: srv.BaseURL(), Model: model})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestRecallModes: semantic recall finds a file by words of its body
// that lexical recall (names and descriptions) misses; hybrid finds both
// kinds; a mode without a model, or an unknown one, is an error.
func TestRecallModes(t *testing.T) {
	dir := recallDir(t)
	srv := embedtest.New(t, 64)
	e := testEmbedder(t, srv, "words")
	recall := func(query, mode string) []string {
		t.Helper()
		hits, err := memdir.Recall(t.Context(), dir, query, memdir.RecallOptions{Limit: 3, Mode: mode, Embedder: e})
		if err != nil {
			t.Fatalf("%s recall of %q: %v", mode, query, err)
		}
		return hitFiles(hits)
	}
	// "kestrel" is in notes.md's body alone.
	if got := recall("kestrel staging cluster", memstore.ModeLexical); len(got) != 0 {
		t.Errorf("lexical: %q; want nothing (the words are in a body)", got)
	}
	if got := recall("kestrel staging cluster", memstore.ModeSemantic); len(got) == 0 || got[0] != "notes.md" {
		t.Errorf("semantic: %q; want notes.md first", got)
	}
	// Semantic scores are the cosines of the file's text, as a server
	// embeds a memory's, and the query's.
	hits, err := memdir.Recall(t.Context(), dir, "kestrel staging cluster", memdir.RecallOptions{Limit: 10, Mode: memstore.ModeSemantic, Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	q := vector.Encode(embedtest.Vector("kestrel staging cluster", 64))
	for _, h := range hits {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(h.File)))
		if err != nil {
			t.Fatal(err)
		}
		want := vector.Dot(q, vector.Encode(embedtest.Vector(memstore.EmbeddingText("/"+h.File, string(b)), 64)))
		if math.Abs(h.Score-want) > 0.001 {
			t.Errorf("semantic: %s scores %v; want its cosine %v", h.File, h.Score, want)
		}
	}
	if got := recall("kestrel staging cluster", memstore.ModeHybrid); !slices.Contains(got, "notes.md") {
		t.Errorf("hybrid: %q; want notes.md among them", got)
	}
	if got := recall("grafana latency", memstore.ModeHybrid); len(got) == 0 || got[0] != "dashboards.md" {
		t.Errorf("hybrid: %q; want dashboards.md first", got)
	}
	// The weight: 0 ranks the files by words first, 1 by meaning.
	weighted := func(w float64) []string {
		t.Helper()
		hits, err := memdir.Recall(t.Context(), dir, "grafana kestrel", memdir.RecallOptions{Limit: 3, Mode: memstore.ModeHybrid, Embedder: e, SemanticWeight: &w})
		if err != nil {
			t.Fatal(err)
		}
		return hitFiles(hits)
	}
	if got := weighted(0); len(got) == 0 || got[0] != "dashboards.md" {
		t.Errorf("hybrid at weight 0: %q; want the match by words, dashboards.md, first", got)
	}
	if got, want := weighted(1), recall("grafana kestrel", memstore.ModeSemantic); !slices.Equal(got[:2], want[:2]) {
		t.Errorf("hybrid at weight 1: %q; want semantic recall's order %q", got, want)
	}
	if _, err := memdir.Recall(t.Context(), dir, "kestrel", memdir.RecallOptions{Mode: memstore.ModeHybrid, Embedder: e, SemanticWeight: new(1.5)}); err == nil {
		t.Error("a weight of 1.5: no error")
	}
	if _, err := memdir.Recall(t.Context(), dir, "kestrel", memdir.RecallOptions{Mode: memstore.ModeSemantic}); !errors.Is(err, memdir.ErrNoEmbedder) {
		t.Errorf("semantic without a model: %v; want ErrNoEmbedder", err)
	}
	if _, err := memdir.Recall(t.Context(), dir, "kestrel", memdir.RecallOptions{Mode: "fuzzy", Embedder: e}); err == nil || err.Error() != memstore.ErrorMessage(memstore.ValidateSearchMode("fuzzy")) {
		t.Errorf("an unknown mode: %v; want the search's message", err)
	}
}

// TestRecallVectorCache: the vectors of the files are kept in the
// directory, so that a second recall embeds the query alone, and a
// changed file alone with it; removed files leave the cache; another
// model embeds every file again.
func TestRecallVectorCache(t *testing.T) {
	dir := recallDir(t)
	srv := embedtest.New(t, 32)
	e := testEmbedder(t, srv, "words")
	files, err := memdir.ListTopics(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	recall := func(e memstore.Embedder) int {
		t.Helper()
		before := srv.Texts()
		if _, err := memdir.Recall(t.Context(), dir, "deploy", memdir.RecallOptions{Mode: memstore.ModeHybrid, Embedder: e}); err != nil {
			t.Fatal(err)
		}
		return srv.Texts() - before
	}
	cached := func() map[string][]byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, memdir.VectorCacheName))
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Model   string            `json:"model"`
			Vectors map[string][]byte `json:"vectors"`
		}
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		return c.Vectors
	}
	if n := recall(e); n != len(files)+1 {
		t.Errorf("first recall embedded %d texts; want the %d files and the query", n, len(files))
	}
	if n := len(cached()); n != len(files) {
		t.Errorf("the cache holds %d vectors; want %d", n, len(files))
	}
	if n := recall(e); n != 1 {
		t.Errorf("second recall embedded %d texts; want the query alone", n)
	}
	writeFiles(t, dir, map[string]string{"dashboards.md": topic("Grafana", "latency dashboards moved to the new cluster", "reference")})
	if err := os.Remove(filepath.Join(dir, "pastry.md")); err != nil {
		t.Fatal(err)
	}
	if n := recall(e); n != 2 {
		t.Errorf("after a change, recall embedded %d texts; want the changed file and the query", n)
	}
	if n := len(cached()); n != len(files)-1 {
		t.Errorf("after a removal the cache holds %d vectors; want %d", n, len(files)-1)
	}
	if n := recall(testEmbedder(t, srv, "other-words")); n != len(files) {
		t.Errorf("another model embedded %d texts; want every file and the query, %d", n, len(files))
	}
	// The cache is one file in the directory, never taken for a memory.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if n := en.Name(); n != memdir.VectorCacheName && filepath.Ext(n) != ".md" && en.Type().IsRegular() {
			t.Errorf("left in the directory: %s", n)
		}
	}
	after, err := memdir.ListTopics(dir, false)
	if err != nil || len(after) != len(files)-1 {
		t.Errorf("topics after recall: %d, %v; want %d", len(after), err, len(files)-1)
	}
}

// BenchmarkRecallModes measures recall by words and hybrid recall side by
// side over BenchmarkRecall's 2,000 topic files (the newest 200
// searched), with a model2vec model of 256 dimensions read in the
// process and the files' vectors already in the directory's cache: what
// hybrid recall adds is the cache's read, the query's embedding, the scan
// and the fusion.
func BenchmarkRecallModes(b *testing.B) {
	dir := benchTopics(b)
	const dims = 256
	vocab := append([]string{"[UNK]", "[PAD]"}, append(slices.Clone(benchWords), "some", "body", "text", "about", "and", "more", "how", "the", "team", "handles", "when", "meets")...)
	var rows []float32
	for _, w := range vocab {
		rows = append(rows, embedtest.Vector(w, dims)...)
	}
	model := filepath.Join(b.TempDir(), "model")
	embedtest.WriteModel2Vec(b, model, vocab, true, map[string]embedtest.Tensor{"embeddings": {Dtype: "F32", Shape: []int{len(vocab), dims}, Data: embedtest.F32(rows...)}})
	e, err := embed.LoadModel2Vec(model)
	if err != nil {
		b.Fatal(err)
	}
	const query = "how do we handle a database migration incident?"
	if _, err := memdir.Recall(b.Context(), dir, query, memdir.RecallOptions{Mode: memstore.ModeHybrid, Embedder: e}); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{memstore.ModeLexical, memstore.ModeHybrid} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				hits, err := memdir.Recall(b.Context(), dir, query, memdir.RecallOptions{Mode: mode, Embedder: e})
				if err != nil || len(hits) == 0 {
					b.Fatal(len(hits), err)
				}
			}
		})
	}
}

// A file that looks like it holds a credential is never sent to the
// model (it is found by its words only); a recall by words prunes the
// cache of the vectors of files since removed; and a cache that is not a
// regular file is neither read nor followed.
func TestRecallVectorCacheHygiene(t *testing.T) {
	dir := recallDir(t)
	writeFiles(t, dir, map[string]string{"key.md": topic("Deploy key", "the deploy token", "reference") + "token ghp_" + strings.Repeat("a", 36) + "\n"})
	// The endpoint's protocol, with every text it was sent kept.
	var mu sync.Mutex
	var sent []byte
	inner := embedtest.Handler(32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		sent = append(sent, body...)
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		inner.ServeHTTP(w, r)
	}))
	defer srv.Close()
	e, err := embed.NewOpenAI(embed.OpenAIConfig{URL: srv.URL + "/v1", Model: "words"})
	if err != nil {
		t.Fatal(err)
	}
	hybrid := memdir.RecallOptions{Mode: memstore.ModeHybrid, Embedder: e}
	hits, err := memdir.Recall(t.Context(), dir, "deploy token", hybrid)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(hits, func(h memdir.Hit) bool { return h.File == "key.md" }) {
		t.Errorf("the file with a credential is not found by its words: %v", hits)
	}
	mu.Lock()
	if !bytes.Contains(sent, []byte("pastry")) || bytes.Contains(sent, []byte("ghp_")) {
		t.Errorf("the model was sent %s; want the files but the one with a credential", sent)
	}
	mu.Unlock()
	vectors := func() int {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, memdir.VectorCacheName))
		if err != nil {
			t.Fatal(err)
		}
		var c struct{ Vectors map[string][]byte }
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		return len(c.Vectors)
	}
	n := vectors()
	if err := os.Remove(filepath.Join(dir, "pastry.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := memdir.Recall(t.Context(), dir, "deploy", memdir.RecallOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := vectors(); got != n-1 {
		t.Errorf("after a file's removal and a recall by words, the cache holds %d vectors; want %d", got, n-1)
	}
	// A link in the cache's place is not followed: the file it names
	// stays as it was, and recall still works.
	elsewhere := filepath.Join(t.TempDir(), "elsewhere.json")
	if err := os.WriteFile(elsewhere, []byte(`{"model":"words","dimensions":32,"vectors":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, memdir.VectorCacheName)
	if err := os.Remove(cache); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, cache); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if _, err := memdir.Recall(t.Context(), dir, "deploy", hybrid); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(elsewhere); string(b) != `{"model":"words","dimensions":32,"vectors":{}}` {
		t.Errorf("recall wrote through a link in the cache's place: %s", b)
	}
}

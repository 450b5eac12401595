// Package embedtest serves an OpenAI-compatible /v1/embeddings endpoint for
// tests, with deterministic vectors built from the hashes of a text's
// words: texts that share words have near vectors, so semantic search can
// be tested without a model.
package embedtest

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/memstore/memstore/embed"
)

// Vector is the endpoint's vector of text: the normalised sum of one
// pseudo-random vector per distinct lowercase word.
func Vector(text string, dims int) []float32 {
	v := make([]float32, dims)
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if seen[w] {
			continue
		}
		seen[w] = true
		h := fnv.New64a()
		h.Write([]byte(w))
		x := h.Sum64()
		for i := range v {
			x ^= x << 13 // xorshift: a stream of numbers from the word's hash
			x ^= x >> 7
			x ^= x << 17
			v[i] += float32(int64(x>>11)%2001-1000) / 1000
		}
	}
	embed.Normalize(v)
	return v
}

// Server is a test embeddings endpoint. Its fields may be set before the
// first request; Requests and Texts count what it received.
type Server struct {
	*httptest.Server
	Dims int
	Key  string // when set, requests must carry it as a bearer token

	mu       sync.Mutex
	requests int
	texts    int
}

// New starts a server answering vectors of dims numbers; it stops with t.
func New(t testing.TB, dims int) *Server {
	s := &Server{Dims: dims}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Handler answers as a Server of dims numbers does, for a server of the
// caller's own, such as one in another process.
func Handler(dims int) http.Handler {
	s := &Server{Dims: dims}
	return http.HandlerFunc(s.serve)
}

// BaseURL is the base URL to configure, ending in /v1.
func (s *Server) BaseURL() string { return s.Server.URL + "/v1" }

// Embedder is a client of s, as memstore serve makes one with
// --embed-url, whose vectors are named model.
func (s *Server) Embedder(tb testing.TB, model string) *embed.OpenAI {
	tb.Helper()
	e, err := embed.NewOpenAI(embed.OpenAIConfig{URL: s.BaseURL(), Model: model, Dimensions: s.Dims})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// Requests is how many embedding requests were answered.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Texts is how many texts were embedded.
func (s *Server) Texts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.texts
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	if s.Key != "" && r.Header.Get("Authorization") != "Bearer "+s.Key {
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": "Incorrect API key provided: " + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")}})
		return
	}
	var req struct {
		Model      string   `json:"model"`
		Input      []string `json:"input"`
		Dimensions int      `json:"dimensions"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&req); err != nil || req.Model == "" {
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": "bad request"}})
		return
	}
	dims := s.Dims
	if req.Dimensions > 0 {
		dims = req.Dimensions
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]item, len(req.Input))
	for i, text := range req.Input {
		data[i] = item{Object: "embedding", Index: i, Embedding: Vector(text, dims)}
	}
	s.mu.Lock()
	s.requests++
	s.texts += len(req.Input)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model, "usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
}

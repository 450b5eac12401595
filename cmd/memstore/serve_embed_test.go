package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/memstore/memstore/embed/embedtest"
)

// serve embeds written memories in the background with the endpoint of
// --embed-url and the key of --embed-api-key-file, which it never prints,
// and reports the progress in /metrics.
func TestServeEmbedsMemories(t *testing.T) {
	emb := embedtest.New(t, 32)
	emb.Key = "sk-embed-secret"
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "embed.key")
	if err := os.WriteFile(keyFile, []byte(emb.Key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "--db", filepath.Join(dir, "m.db"), "--embed-url", emb.BaseURL(), "--embed-model", "hash-32",
		"--embed-api-key-file", keyFile, "--embed-dimensions", "32")
	waitUntil(t, "serve to say search is hybrid", func() bool {
		return strings.Contains(s.stderr.String(), "memstore: search is hybrid by default: memories are embedded in the background with hash-32 (32 dimensions)")
	})
	c := dreamClient(s)
	st, err := c.Beta.MemoryStores.New(t.Context(), anthropic.BetaMemoryStoreNewParams{Name: "Notes"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/a.md", "/b.md", "/c.md"} {
		if _, err := c.Beta.MemoryStores.Memories.New(t.Context(), st.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: p, Content: anthropic.String("text of " + p)}); err != nil {
			t.Fatal(err)
		}
	}
	computed := regexp.MustCompile(`(?m)^memstore_embeddings_computed_total 3$`)
	queued := regexp.MustCompile(`(?m)^memstore_embeddings_queued 0$`)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		m := metrics(t, s)
		if computed.MatchString(m) && queued.MatchString(m) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the memories were not embedded within a minute; metrics:\n%s", grepLines(m, "memstore_embedding"))
		}
	}
	if emb.Texts() < 3 {
		t.Errorf("the endpoint embedded %d texts, want 3 or more", emb.Texts())
	}
	// The server's search is hybrid by default, and semantic on request:
	// every embedded memory is found, the nearest first.
	for _, args := range [][]string{{"--mode", "semantic"}, nil} {
		code, stdout, stderr := run(t, "", append([]string{"grep", "--url", s.url, "--api-key", s.key, "--store", st.ID, "text of /b.md"}, args...)...)
		if code != 0 || strings.Count(stdout, ".md  (") != 3 || !strings.HasPrefix(stdout, "/b.md  (") {
			t.Errorf("grep %v: exit %d, stdout %q, stderr %q; want the three memories, /b.md first", args, code, stdout, stderr)
		}
	}
	code, stdout, _ := run(t, "", "grep", "--url", s.url, "--api-key", s.key, "--store", st.ID, "--mode", "lexical", "b")
	if code != 0 || strings.Count(stdout, ".md  (") != 1 {
		t.Errorf("grep --mode lexical: exit %d, stdout %q; want the one memory with the word", code, stdout)
	}
	if out := s.stdout.String() + s.stderr.String(); strings.Contains(out, emb.Key) {
		t.Errorf("the server printed the embedding key")
	}
}

func metrics(t *testing.T, s *testServer) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, s.url+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+s.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Flags that name two models, or half of one, are refused before anything
// starts, saying what to give.
func TestServeRefusesBadEmbedFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--embed-url", "http://127.0.0.1:1/v1", "--embed-model", "m", "--embed-model-file", dir}, "give one"},
		{[]string{"--embed-url", "http://127.0.0.1:1/v1"}, "no embedding model named"},
		{[]string{"--embed-model", "m"}, "need --embed-url"},
		{[]string{"--embed-url", "ftp://x", "--embed-model", "m"}, "not an http or https URL"},
		{[]string{"--embed-url", "http://127.0.0.1:1/v1", "--embed-model", "m", "--embed-dimensions", "5000"}, "out of range"},
		{[]string{"--embed-model-file", filepath.Join(dir, "none")}, "cannot load the embedding model"},
		{[]string{"--search-semantic-weight", "1.5"}, "between 0 and 1 (--search-semantic-weight)"},
		{[]string{"--search-semantic-weight", "-0.1"}, "between 0 and 1 (--search-semantic-weight)"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "m.db")}, tc.args...)
		code := Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want a refusal saying %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// serve embeds memories with a model2vec model directory, in the process.
func TestServeEmbedsWithModelFile(t *testing.T) {
	dir := t.TempDir()
	vocab := []string{"[UNK]", "text", "of", "a", "b", "c", ".", "/", "md"}
	vectors := make([]float32, 0, len(vocab)*4)
	for i := range vocab {
		vectors = append(vectors, float32(i), 1, 0, -float32(i))
	}
	model := filepath.Join(dir, "tiny-model")
	embedtest.WriteModel2Vec(t, model, vocab, true, map[string]embedtest.Tensor{
		"embeddings": {Dtype: "F32", Shape: []int{len(vocab), 4}, Data: embedtest.F32(vectors...)},
	})
	s := startServer(t, "--db", filepath.Join(dir, "m.db"), "--embed-model-file", model)
	c := dreamClient(s)
	st, err := c.Beta.MemoryStores.New(t.Context(), anthropic.BetaMemoryStoreNewParams{Name: "Notes"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Beta.MemoryStores.Memories.New(t.Context(), st.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/a.md", Content: anthropic.String("text of a")}); err != nil {
		t.Fatal(err)
	}
	computed := regexp.MustCompile(`(?m)^memstore_embeddings_computed_total 1$`)
	for deadline := time.Now().Add(time.Minute); !computed.MatchString(metrics(t, s)); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the memory was not embedded within a minute; metrics:\n%s", grepLines(metrics(t, s), "memstore_embedding"))
		}
	}
}

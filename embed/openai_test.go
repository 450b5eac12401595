package embed_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memstore/memstore/embed"
	"github.com/memstore/memstore/embed/embedtest"
)

func TestOpenAIEmbedsInBatches(t *testing.T) {
	srv := embedtest.New(t, 48)
	srv.Key = "sk-test-secret"
	c, err := embed.NewOpenAI(embed.OpenAIConfig{URL: srv.BaseURL(), Model: "hash-48", APIKey: srv.Key})
	if err != nil {
		t.Fatal(err)
	}
	if c.Dimensions() != 0 {
		t.Fatalf("dimensions before any answer = %d, want 0", c.Dimensions())
	}
	texts := make([]string, embed.MaxBatch*2+5)
	for i := range texts {
		texts[i] = fmt.Sprintf("memory number %d about deploys", i)
	}
	vs, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests(); got != 3 {
		t.Errorf("requests = %d, want 3 batches", got)
	}
	if len(vs) != len(texts) || c.Dimensions() != 48 {
		t.Fatalf("got %d vectors of %d dimensions", len(vs), c.Dimensions())
	}
	for i, text := range texts {
		want := embedtest.Vector(text, 48)
		for j := range want {
			if vs[i][j] != want[j] {
				t.Fatalf("vector %d differs from the endpoint's at %d: order lost across batches", i, j)
			}
		}
	}
	if c.Model() != "hash-48" {
		t.Errorf("Model() = %q", c.Model())
	}
}

func TestOpenAIAsksForDimensions(t *testing.T) {
	srv := embedtest.New(t, 48)
	c, err := embed.NewOpenAI(embed.OpenAIConfig{URL: srv.BaseURL() + "/", Model: "m", Dimensions: 16})
	if err != nil {
		t.Fatal(err)
	}
	if c.Dimensions() != 16 {
		t.Fatalf("Dimensions() = %d, want 16", c.Dimensions())
	}
	vs, err := c.Embed(context.Background(), []string{"a b"})
	if err != nil || len(vs[0]) != 16 {
		t.Fatalf("vectors %v, err %v: want 16 dimensions, sent in the request", vs, err)
	}
}

// A wrong key is refused with the endpoint's message, and the key itself,
// which some servers echo, is not in the error.
func TestOpenAIErrorHidesKey(t *testing.T) {
	srv := embedtest.New(t, 8)
	srv.Key = "right-key"
	c, _ := embed.NewOpenAI(embed.OpenAIConfig{URL: srv.BaseURL(), Model: "m", APIKey: "sk-wrong-key-12345"})
	_, err := c.Embed(context.Background(), []string{"x"})
	if err == nil {
		t.Fatal("a wrong key was accepted")
	}
	var se *embed.StatusError
	if !errors.As(err, &se) || se.Status != http.StatusUnauthorized || se.Refused() {
		t.Errorf("error %v: want a 401 StatusError, not retryable", err)
	}
	if strings.Contains(err.Error(), "sk-wrong-key-12345") {
		t.Errorf("error shows the key: %v", err)
	}
	if !strings.Contains(err.Error(), "Incorrect API key") {
		t.Errorf("error %q does not quote the endpoint's message", err)
	}
}

// A redirect is not followed: the key and the texts never reach the host
// it names.
func TestOpenAIRefusesRedirects(t *testing.T) {
	var reached atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/embeddings", http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	c, _ := embed.NewOpenAI(embed.OpenAIConfig{URL: redirect.URL + "/v1", Model: "m", APIKey: "sk-secret"})
	_, err := c.Embed(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "redirect") {
		t.Fatalf("err = %v, want a refused redirect", err)
	}
	if reached.Load() != 0 {
		t.Fatal("the redirect's target received the request")
	}
}

func TestOpenAIRefusesBadAnswers(t *testing.T) {
	cases := map[string]struct {
		body string
		want string
	}{
		"too few":        {`{"data":[]}`, "returned 0 vectors for 1 texts"},
		"wrong length":   {`{"data":[{"index":0,"embedding":[1,2,3]}]}`, "3 dimensions, expected 4"},
		"bad index":      {`{"data":[{"index":5,"embedding":[1,2,3,4]}]}`, "index 5"},
		"not json":       {`<html>`, "not an embeddings answer"},
		"too large":      {`{"data":[{"index":0,"embedding":[` + strings.Repeat("0,", embed.MaxResponseBytes/2) + `0]}]}`, "over"},
		"too many dims":  {`{"data":[{"index":0,"embedding":[` + strings.Repeat("0,", embed.MaxDimensions) + `0]}]}`, "memstore keeps 1 to"},
		"empty embedded": {`{"data":[{"index":0,"embedding":[]}]}`, "memstore keeps 1 to"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(tc.body)) }))
			defer srv.Close()
			dims := 0
			if name == "wrong length" || name == "bad index" || name == "too few" {
				dims = 4
			}
			c, _ := embed.NewOpenAI(embed.OpenAIConfig{URL: srv.URL, Model: "m", Dimensions: dims})
			_, err := c.Embed(context.Background(), []string{"x"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestOpenAITimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c, _ := embed.NewOpenAI(embed.OpenAIConfig{URL: srv.URL, Model: "m", Timeout: 100 * time.Millisecond})
	if _, err := c.Embed(context.Background(), []string{"x"}); err == nil {
		t.Fatal("a request with no answer did not time out")
	}
}

func TestNewOpenAIRefusesBadConfig(t *testing.T) {
	for _, cfg := range []embed.OpenAIConfig{
		{URL: "ftp://x", Model: "m"},
		{URL: "http://user:pw@x", Model: "m"},
		{URL: "http://x"},
		{URL: "http://x", Model: "m", Dimensions: embed.MaxDimensions + 1},
		{URL: "http://x", Model: "m", APIKey: "a\nb"},
		{URL: "https://x/v1?api-key=sk-secret", Model: "m"},
		{URL: "https://x/v1?", Model: "m"},
		{URL: "https://x/v1#frag", Model: "m"},
	} {
		if _, err := embed.NewOpenAI(cfg); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
}

// An endpoint's error may echo the texts it was sent, which are memories,
// and the error reaches logs: a body that is not a JSON error is never
// quoted, and a JSON error's message is quoted only when it repeats none
// of the texts.
func TestOpenAIErrorQuotesNoInput(t *testing.T) {
	const memory = "the launch code of project falcon is 7741-alpha, keep it private"
	cases := map[string]struct {
		status int
		body   string
		want   string // in the error
	}{
		"plain text echo":     {400, "bad input: " + memory, "400 Bad Request"},
		"html echo":           {500, "<html><pre>" + memory + "</pre></html>", "500 Internal Server Error"},
		"json message echo":   {400, `{"error":{"message":"cannot embed 'the launch code of project falcon is 7741-al...'"}}`, "withheld"},
		"json string echo":    {413, `{"error":"input ` + memory + ` is too long"}`, "withheld"},
		"json other field":    {400, `{"error":{"message":"bad request","param":"` + memory + `"}}`, "bad request"},
		"ollama style string": {404, `{"error":"model \"nomic\" not found, try pulling it first"}`, `model "nomic" not found`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c, _ := embed.NewOpenAI(embed.OpenAIConfig{URL: srv.URL, Model: "m"})
			_, err := c.Embed(context.Background(), []string{"notes/falcon.md\n" + memory})
			if err == nil {
				t.Fatal("an error answer was accepted")
			}
			for _, part := range []string{"falcon", "7741", "launch code"} {
				if strings.Contains(err.Error(), part) {
					t.Errorf("error quotes the input (%q): %v", part, err)
				}
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

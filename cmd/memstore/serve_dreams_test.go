package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/memstore/memstore/agenttool"
	"github.com/memstore/memstore/dream"
	sm "github.com/memstore/memstore/internal/scriptedmodel"
)

// dreamClient is an SDK client of s with its first key.
func dreamClient(s *testServer) anthropic.Client {
	return anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(s.url), option.WithAPIKey(s.key))
}

// startDream makes a store, a session with a transcript and a dream of
// them through s's API.
func startDream(t *testing.T, s *testServer) string {
	t.Helper()
	ctx := t.Context()
	c := dreamClient(s)
	st, err := c.Beta.MemoryStores.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "Notes"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Beta.MemoryStores.Memories.New(ctx, st.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/a.md", Content: anthropic.String("a\n")}); err != nil {
		t.Fatal(err)
	}
	ses, err := c.Beta.Sessions.New(ctx, anthropic.BetaSessionNewParams{
		Agent: anthropic.BetaSessionNewParamsAgentUnion{OfString: anthropic.String("agent_01")}, EnvironmentID: "env_01"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Beta.Dreams.New(ctx, anthropic.BetaDreamNewParams{
		Inputs: []anthropic.BetaDreamInputUnionParam{anthropic.BetaDreamInputParamOfMemoryStore(st.ID), anthropic.BetaDreamInputParamOfSessions([]string{ses.ID})},
		Model:  anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("scripted-model")},
	})
	if err != nil {
		t.Fatal(err)
	}
	return d.ID
}

// waitDream waits until dream id is final, and returns it.
func waitDream(t *testing.T, s *testServer, id string) *anthropic.BetaDream {
	t.Helper()
	c := dreamClient(s)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		d, err := c.Beta.Dreams.Get(t.Context(), id, anthropic.BetaDreamGetParams{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Status == "completed" || d.Status == "failed" || d.Status == "canceled" {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("dream %s is still %s after a minute", id, d.Status)
		}
	}
}

// serve runs dreams with the model of --model-base-url and the key of
// --model-api-key-file, which it never prints.
func TestServeRunsDreams(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-env")
	model := sm.New(t, func(r *sm.Request) sm.Response {
		if r.N == 1 {
			return sm.Answer(sm.Usage{InputTokens: 100, OutputTokens: 10}, sm.ToolUse("tu_1", agenttool.ToolList, map[string]string{}))
		}
		return sm.Answer(sm.Usage{InputTokens: 150, OutputTokens: 5}, sm.Text("nothing to consolidate"))
	})
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "model.key")
	if err := os.WriteFile(keyFile, []byte("sk-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "--db", filepath.Join(dir, "m.db"), "--model-base-url", model.URL, "--model-api-key-file", keyFile, "--dream-max-steps", "5")
	d := waitDream(t, s, startDream(t, s))
	if d.Status != "completed" || d.Usage.InputTokens != 250 || d.Usage.OutputTokens != 15 || len(d.Outputs) != 1 || d.SessionID == "" {
		t.Fatalf("dream: %s", d.RawJSON())
	}
	for _, r := range model.Requests() {
		if r.Header.Get("X-Api-Key") != "sk-from-file" || r.Model != "scripted-model" {
			t.Errorf("request %d: key %q, model %q", r.N, r.Header.Get("X-Api-Key"), r.Model)
		}
	}
	if out := s.stdout.String() + s.stderr.String(); strings.Contains(out, "sk-from-file") || strings.Contains(out, "sk-from-env") {
		t.Errorf("the server printed the model's key")
	}
}

// Without a model endpoint, serve says dreams are off, and a dream is
// refused saying how to turn them on.
func TestServeWithoutModelRefusesDreams(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_BASE_URL", "")
	s := startServer(t, "--db", filepath.Join(t.TempDir(), "m.db"))
	// Said beside the first lines, which a ready server need not have
	// finished writing.
	waitUntil(t, "serve to say dreams are off", func() bool {
		return strings.Contains(s.stderr.String(), "dreams are off")
	})
	waitUntil(t, "serve to say search is lexical", func() bool {
		return strings.Contains(s.stderr.String(), "memstore: search is lexical: no embedding model (--embed-url and --embed-model, or --embed-model-file")
	})
	c := dreamClient(s)
	_, err := c.Beta.Dreams.New(t.Context(), anthropic.BetaDreamNewParams{
		Inputs: []anthropic.BetaDreamInputUnionParam{anthropic.BetaDreamInputParamOfMemoryStore("memstore_x"), anthropic.BetaDreamInputParamOfSessions([]string{"sesn_x"})},
		Model:  anthropic.BetaDreamNewParamsModelUnion{OfString: anthropic.String("m")},
	})
	var ae *anthropic.Error
	if !errors.As(err, &ae) || ae.StatusCode != 400 || !strings.Contains(ae.RawJSON(), "ANTHROPIC_API_KEY") {
		t.Fatalf("create without a model: %v", err)
	}
}

// A server that stops lets its dream go: a server started again on the
// database resumes it at once, long before the lease would expire.
func TestServeStopResumesDream(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	release := make(chan struct{})
	var once sync.Once
	reached := make(chan struct{})
	model := sm.New(t, func(r *sm.Request) sm.Response {
		if strings.Contains(r.Messages[0].Content[0].Text, "interrupted and is resumed") {
			return sm.Answer(sm.Usage{InputTokens: 1}, sm.Text("resumed and done"))
		}
		if r.N == 1 {
			return sm.Answer(sm.Usage{InputTokens: 1}, sm.ToolUse("tu_1", agenttool.ToolList, map[string]string{}))
		}
		once.Do(func() { close(reached) })
		select { // the first server's answer never comes
		case <-release:
		case <-time.After(time.Minute):
		}
		return sm.Error(500, "api_error", "too late")
	})
	t.Cleanup(func() { close(release) })
	db := filepath.Join(t.TempDir(), "m.db")
	args := []string{"--db", db, "--model-base-url", model.URL}
	a := startServer(t, args...)
	id := startDream(t, a)
	select {
	case <-reached:
	case <-time.After(time.Minute):
		t.Fatal("the dream never reached its second step")
	}
	if code := a.wait(t); code != 0 {
		t.Fatalf("exit status %d:\n%s", code, a.stderr)
	}
	start := time.Now()
	b := startServer(t, args...)
	b.key = a.key
	d := waitDream(t, b, id)
	if d.Status != "completed" {
		t.Fatalf("dream: %s", d.RawJSON())
	}
	if took := time.Since(start); took >= dream.DefaultLease {
		t.Errorf("the dream resumed after %s: its lease was not let go", took)
	}
}

func TestServeDreamFlags(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.key")
	os.WriteFile(empty, []byte("\n"), 0o600)
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string // in the error; "" for none
	}{
		{args: []string{"--model-base-url", "ftp://example.com"}, want: "must be an http or https URL"},
		{args: []string{"--model-base-url", "https://user:pw@example.com"}, want: "must not hold credentials"},
		{env: map[string]string{"ANTHROPIC_BASE_URL": "nonsense"}, want: "ANTHROPIC_BASE_URL"},
		{args: []string{"--model-api-key-file", filepath.Join(dir, "missing")}, want: "--model-api-key-file"},
		{args: []string{"--model-api-key-file", empty}, want: "is empty"},
		{args: []string{"--dream-max-steps", "-1"}, want: "-dream-max-steps: must be a whole number"},
		{args: []string{"--dream-max-time", "0s"}, want: "dream-max-time"},
		{args: []string{"--model-base-url", "http://127.0.0.1:9", "--dream-max-steps", "7", "--dream-max-time", "1m"}},
	} {
		var stderr bytes.Buffer
		e := env{stdout: io.Discard, stderr: &stderr, getenv: func(k string) string { return tc.env[k] }}
		c, err := parseServeConfig(e, tc.args)
		if err != nil {
			err = fmt.Errorf("%w: %s", err, stderr.String())
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.want == "":
			if !c.dreams.enabled() || c.dreams.maxSteps != 7 || c.dreams.maxTokens != dream.DefaultMaxTokens || time.Duration(c.dreams.maxTime) != time.Minute {
				t.Errorf("%q: %+v", tc.args, c.dreams)
			}
		case err == nil || !strings.Contains(err.Error(), tc.want):
			t.Errorf("%q %v: %v, want an error saying %q", tc.args, tc.env, err, tc.want)
		}
	}
	// A key alone turns dreams on, against Anthropic's API.
	e := env{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return map[string]string{"ANTHROPIC_API_KEY": "sk-x"}[k] }}
	c, err := parseServeConfig(e, nil)
	if err != nil || !c.dreams.enabled() || c.dreams.key != "sk-x" || c.dreams.baseURL != "" {
		t.Errorf("with ANTHROPIC_API_KEY: %v %+v", err, c.dreams)
	}
}

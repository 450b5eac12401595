package agentloop_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memstore/memstore/internal/agentloop"
	sm "github.com/memstore/memstore/internal/scriptedmodel"
)

// An endpoint that redirects is not followed: the key and the prompt (with
// the memories in it) go to the base URL the operator chose and nowhere
// else, whatever the redirect's status.
func TestRedirectsAreNotFollowed(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		var elsewhere atomic.Int32
		var sawKey atomic.Bool
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			elsewhere.Add(1)
			if r.Header.Get("X-Api-Key") != "" {
				sawKey.Store(true)
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"m","type":"message","role":"assistant","model":"x","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
		}))
		t.Cleanup(other.Close)
		// Another host name for the same loopback address: a cross-host
		// redirect, as a gateway pointing elsewhere would send.
		target := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
		redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Should-Retry", "false")
			http.Redirect(w, r, target+r.URL.Path, status)
		}))
		t.Cleanup(redirector.Close)
		c := agentloop.Config{BaseURL: redirector.URL, APIKey: "sk-secret-key", Model: "m"}
		_, err := agentloop.Do(context.Background(), c, agentloop.Run{Prompt: "private memories", Tools: &notes{}, Limits: roomy})
		var me *agentloop.ModelError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), "redirect") {
			t.Errorf("%d: err = %v, want a refused redirect", status, err)
		}
		if n := elsewhere.Load(); n != 0 || sawKey.Load() {
			t.Errorf("%d: the redirect's target got %d requests (key sent: %v)", status, n, sawKey.Load())
		}
		if err != nil && strings.Contains(err.Error(), "sk-secret-key") {
			t.Errorf("%d: error %q holds the key", status, err)
		}
	}
}

// A configured HTTP client is used, but its redirects are refused too.
func TestRedirectsAreNotFollowedWithAClientOfTheCaller(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	t.Cleanup(other.Close)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	hc := &http.Client{}
	c := agentloop.Config{BaseURL: redirector.URL, APIKey: "sk-secret-key", Model: "m", HTTPClient: hc}
	if _, err := agentloop.Do(context.Background(), c, agentloop.Run{Prompt: "go", Tools: &notes{}, Limits: roomy}); err == nil {
		t.Fatal("a redirect was followed")
	}
	if elsewhere.Load() != 0 {
		t.Error("the redirect's target was called")
	}
	if hc.CheckRedirect != nil {
		t.Error("the caller's client was changed")
	}
}

// An answer larger than MaxAnswerBytes fails the run, read no further.
func TestAnOverlongAnswerFailsTheRun(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("x", agentloop.MaxAnswerBytes+1)
	s := sm.New(t, func(r *sm.Request) sm.Response {
		resp := sm.Answer(sm.Usage{}, sm.Text(huge))
		resp.Header = http.Header{"X-Should-Retry": {"false"}}
		return resp
	})
	n := &notes{}
	_, err := agentloop.Do(context.Background(), cfg(s), agentloop.Run{Prompt: "go", Tools: n, Limits: roomy})
	var me *agentloop.ModelError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), fmt.Sprint(agentloop.MaxAnswerBytes)) {
		t.Fatalf("err = %v, want an answer over its size limit", err)
	}
	// An error answer of the same size is cut too.
	s2 := sm.New(t, func(*sm.Request) sm.Response { return sm.Error(400, "invalid_request_error", huge) })
	if _, err := agentloop.Do(context.Background(), cfg(s2), agentloop.Run{Prompt: "go", Tools: n, Limits: roomy}); !errors.As(err, &me) || !strings.Contains(err.Error(), fmt.Sprint(agentloop.MaxAnswerBytes)) {
		t.Fatalf("error answer: err = %v", err)
	}
}

// An answer asking for more tool calls than MaxToolCallsPerAnswer runs
// the first ones; the others go back as errors the model can act on.
func TestToolCallsPerAnswerAreBounded(t *testing.T) {
	t.Parallel()
	var blocks []sm.Block
	for i := range agentloop.MaxToolCallsPerAnswer + 5 {
		blocks = append(blocks, sm.ToolUse(fmt.Sprintf("tu_%d", i), "read", map[string]string{"path": "/a"}))
	}
	s := sm.New(t, sm.Seq(sm.Answer(sm.Usage{}, blocks...), sm.Answer(sm.Usage{}, sm.Text("done"))))
	n := &notes{files: map[string]string{"/a": "x"}}
	if _, err := agentloop.Do(context.Background(), cfg(s), agentloop.Run{Prompt: "go", Tools: n, Limits: roomy}); err != nil {
		t.Fatal(err)
	}
	if len(n.calls) != agentloop.MaxToolCallsPerAnswer {
		t.Errorf("%d tools ran, want %d", len(n.calls), agentloop.MaxToolCallsPerAnswer)
	}
	results := s.Requests()[1].ToolResults()
	if len(results) != agentloop.MaxToolCallsPerAnswer+5 {
		t.Fatalf("%d results, want one per call", len(results))
	}
	last := results[len(results)-1]
	if !last.IsError || !strings.Contains(last.ResultText(), fmt.Sprint(agentloop.MaxToolCallsPerAnswer)) {
		t.Errorf("the call over the bound got %+v", last)
	}
}

// Token counts an endpoint reports below zero count as zero: they cannot
// undo the tokens cap.
func TestNegativeUsageIsNotCounted(t *testing.T) {
	t.Parallel()
	s := sm.New(t, forever("read", sm.Usage{InputTokens: 600, OutputTokens: -1000}))
	lim := roomy
	lim.MaxTokens = 1000
	res, err := agentloop.Do(context.Background(), cfg(s), agentloop.Run{Prompt: "go", Tools: &notes{files: map[string]string{"/a": "x"}}, Limits: lim})
	var ce *agentloop.CapError
	if !errors.As(err, &ce) || ce.Cap != agentloop.CapTokens {
		t.Fatalf("err = %v, want the tokens cap", err)
	}
	if res.Steps != 2 || res.Usage.OutputTokens != 0 {
		t.Errorf("result %+v", res)
	}
	// Counts so large that their sum would wrap around stop the run too.
	huge := int64(1) << 62
	s2 := sm.New(t, forever("read", sm.Usage{InputTokens: huge, OutputTokens: huge, CacheReadInputTokens: huge}))
	res, err = agentloop.Do(context.Background(), cfg(s2), agentloop.Run{Prompt: "go", Tools: &notes{files: map[string]string{"/a": "x"}}, Limits: lim})
	if !errors.As(err, &ce) || ce.Cap != agentloop.CapTokens || res.Steps != 1 || res.Usage.Total() < 0 {
		t.Fatalf("huge counts: err = %v, result %+v", err, res)
	}
}

// An endpoint that echoes the key in its error (a gateway's "invalid key
// sk-...") does not put it in the run's error, which a dream records for
// its workspace to read.
func TestTheKeyIsNotEchoedInErrors(t *testing.T) {
	t.Parallel()
	s := sm.New(t, sm.Seq(sm.Error(401, "authentication_error sk-test", "invalid x-api-key sk-test; try again")))
	_, err := agentloop.Do(context.Background(), cfg(s), agentloop.Run{Prompt: "go", Tools: &notes{}, Limits: roomy})
	var me *agentloop.ModelError
	if !errors.As(err, &me) || me.StatusCode != 401 {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "sk-test") || strings.Contains(me.Type, "sk-test") {
		t.Errorf("error %q (type %q) holds the key", err, me.Type)
	}
}

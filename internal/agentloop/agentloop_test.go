package agentloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memstore/memstore/internal/agentloop"
	sm "github.com/memstore/memstore/internal/scriptedmodel"
)

// notes is a small toolset over a map: "read" (read-only) and "write".
type notes struct {
	mu    sync.Mutex
	files map[string]string
	calls []string
}

func (n *notes) Tools() []agentloop.Tool {
	return []agentloop.Tool{
		{Name: "read", Description: "Read a note.", ReadOnly: true,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
		{Name: "write", Description: "Write a note.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"text":{"type":"string"}},"required":["path","text"]}`)},
	}
}

func (n *notes) Call(_ context.Context, name string, input json.RawMessage) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls = append(n.calls, name)
	var in struct{ Path, Text string }
	if err := json.Unmarshal(input, &in); err != nil {
		return "bad input: " + err.Error(), true
	}
	switch name {
	case "read":
		t, ok := n.files[in.Path]
		if !ok {
			return "no note at " + in.Path, true
		}
		return t, false
	case "write":
		if n.files == nil {
			n.files = map[string]string{}
		}
		n.files[in.Path] = in.Text
		return "written", false
	}
	return "no tool " + name, true
}

func cfg(s *sm.Server) agentloop.Config {
	return agentloop.Config{BaseURL: s.URL, APIKey: "sk-test", Model: "test-model"}
}

var roomy = agentloop.Limits{MaxSteps: 50, MaxTokens: 1_000_000, MaxWrites: 50, MaxTime: time.Minute}

// forever answers every request with one tool call, as a model that never
// stops would.
func forever(tool string, usage sm.Usage) sm.Script {
	return func(r *sm.Request) sm.Response {
		return sm.Answer(usage, sm.ToolUse(fmt.Sprintf("tu_%d", r.N), tool, map[string]string{"path": "/a", "text": "x"}))
	}
}

func TestCapsStopAModelThatNeverStops(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		tool     string
		limits   agentloop.Limits
		delay    time.Duration
		requests int // the requests the model gets; -1: any number
		calls    int // the tool calls made; -1: any number
	}{
		{name: agentloop.CapSteps, tool: "read", limits: agentloop.Limits{MaxSteps: 3, MaxTokens: 1e6, MaxWrites: 50, MaxTime: time.Minute}, requests: 3, calls: 2},
		{name: agentloop.CapTokens, tool: "read", limits: agentloop.Limits{MaxSteps: 50, MaxTokens: 250, MaxWrites: 50, MaxTime: time.Minute}, requests: 3, calls: 2},
		{name: agentloop.CapWrites, tool: "write", limits: agentloop.Limits{MaxSteps: 50, MaxTokens: 1e6, MaxWrites: 2, MaxTime: time.Minute}, requests: 3, calls: 2},
		{name: agentloop.CapTime, tool: "read", limits: agentloop.Limits{MaxSteps: 1e6, MaxTokens: 1e9, MaxWrites: 50, MaxTime: 500 * time.Millisecond}, delay: 20 * time.Millisecond, requests: -1, calls: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script := forever(tc.tool, sm.Usage{InputTokens: 60, OutputTokens: 40})
			s := sm.New(t, func(r *sm.Request) sm.Response {
				time.Sleep(tc.delay)
				return script(r)
			})
			n := &notes{files: map[string]string{"/a": "x"}}
			start := time.Now()
			res, err := agentloop.Do(context.Background(), cfg(s), agentloop.Run{Prompt: "go", Tools: n, Limits: tc.limits})
			var ce *agentloop.CapError
			if !errors.As(err, &ce) || ce.Cap != tc.name {
				t.Fatalf("err = %v, want the %s cap", err, tc.name)
			}
			if !strings.Contains(err.Error(), tc.name+" cap") {
				t.Errorf("error %q does not name the cap", err)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("the run took %s", d)
			}
			if got := len(s.Requests()); tc.requests >= 0 && got != tc.requests {
				t.Errorf("requests = %d, want %d", got, tc.requests)
			}
			if tc.calls >= 0 && len(n.calls) != tc.calls {
				t.Errorf("tool calls = %v, want %d", n.calls, tc.calls)
			}
			if res.Steps != len(s.Requests()) && tc.name != agentloop.CapTime {
				t.Errorf("Result.Steps = %d, requests %d", res.Steps, len(s.Requests()))
			}
			if tc.name == agentloop.CapWrites && res.Writes != 2 {
				t.Errorf("Result.Writes = %d, want 2", res.Writes)
			}
		})
	}
}

func TestOverloadedIsRetried(t *testing.T) {
	t.Parallel()
	s := sm.New(t, sm.Seq(sm.Overloaded(), sm.Answer(sm.Usage{InputTokens: 5, OutputTokens: 2}, sm.Text("done"))))
	res, err := agentloop.Do(context.Background(), cfg(s), agentloop.Run{Prompt: "go", Tools: &notes{}, Limits: roomy})
	if err != nil {
		t.Fatal(err)
	}
	if res.Final != "done" || res.StopReason != "end_turn" || res.Steps != 1 {
		t.Errorf("result = %+v", res)
	}
	if n := len(s.Requests()); n != 2 {
		t.Errorf("requests = %d, want 2 (a 529, then the retry)", n)
	}
}

func TestRetriesAreBounded(t *testing.T) {
	t.Parallel()
	s := sm.New(t, func(*sm.Request) sm.Response { return sm.Overloaded() })
	_, err := agentloop.Do(context.Background(), cfg(s), agentloop.Run{Prompt: "go", Tools: &notes{}, Limits: roomy})
	var me *agentloop.ModelError
	if !errors.As(err, &me) || me.StatusCode != 529 || me.Type != "overloaded_error" {
		t.Fatalf("err = %v, want the 529", err)
	}
	if n := len(s.Requests()); n != agentloop.MaxRetries+1 {
		t.Errorf("requests = %d, want %d", n, agentloop.MaxRetries+1)
	}
}

func TestBadRequestFailsAtOnce(t *testing.T) {
	t.Parallel()
	s := sm.New(t, sm.Seq(sm.Error(400, "invalid_request_error", "max_tokens: too large")))
	_, err := agentloop.Do(context.Background(), cfg(s), agentloop.Run{Prompt: "go", Tools: &notes{}, Limits: roomy})
	var me *agentloop.ModelError
	if !errors.As(err, &me) || me.StatusCode != 400 {
		t.Fatalf("err = %v, want the 400", err)
	}
	if want := "the model endpoint answered 400 invalid_request_error: max_tokens: too large"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("requests = %d, want 1: a 400 is not retried", n)
	}
}

func TestUsageIsSummedAndStepsReported(t *testing.T) {
	t.Parallel()
	s := sm.New(t, sm.Seq(
		sm.Answer(sm.Usage{InputTokens: 10, OutputTokens: 1, CacheCreationInputTokens: 100}, sm.ToolUse("tu_1", "write", map[string]string{"path": "/a", "text": "one"})),
		sm.Answer(sm.Usage{InputTokens: 20, OutputTokens: 2, CacheReadInputTokens: 100}, sm.ToolUse("tu_2", "read", map[string]string{"path": "/a"})),
		sm.Answer(sm.Usage{InputTokens: 30, OutputTokens: 3, CacheReadInputTokens: 50}, sm.Text("all done")),
	))
	var steps []agentloop.StepInfo
	res, err := agentloop.Do(context.Background(), cfg(s), agentloop.Run{
		System: "be brief", Prompt: "start", Tools: &notes{}, Limits: roomy,
		Step: func(si agentloop.StepInfo) error { steps = append(steps, si); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := agentloop.Usage{InputTokens: 60, OutputTokens: 6, CacheCreationInputTokens: 100, CacheReadInputTokens: 150}
	if res.Usage != want || res.Steps != 3 || res.Writes != 1 || res.Final != "all done" {
		t.Errorf("result = %+v, want usage %+v, 3 steps, 1 write", res, want)
	}
	if len(steps) != 3 || steps[0].Usage.InputTokens != 10 || steps[1].Usage.InputTokens != 30 || steps[2].Usage != want {
		t.Fatalf("steps = %+v", steps)
	}
	// The messages reported are the whole conversation, each once.
	var roles []string
	for _, st := range steps {
		for _, m := range st.Messages {
			roles = append(roles, m.Role)
		}
	}
	if got := strings.Join(roles, ","); got != "user,assistant,user,assistant,user,assistant" {
		t.Errorf("roles = %s", got)
	}
	if !strings.Contains(string(steps[0].Messages[0].Content), "start") || !strings.Contains(string(steps[1].Messages[0].Content), `"tool_result"`) {
		t.Errorf("messages = %s / %s", steps[0].Messages[0].Content, steps[1].Messages[0].Content)
	}
	reqs := s.Requests()
	if r := reqs[0]; r.System != "be brief" || r.Model != "test-model" || r.MaxTokens != agentloop.DefaultMaxTokensPerAnswer || len(r.Tools) != 2 || r.Header.Get("X-Api-Key") != "sk-test" {
		t.Errorf("first request = %+v", r)
	}
	var schema map[string]any
	if err := json.Unmarshal(reqs[0].Tools[0].InputSchema, &schema); err != nil || schema["type"] != "object" || schema["additionalProperties"] != false || schema["required"] == nil {
		t.Errorf("schema sent = %s", reqs[0].Tools[0].InputSchema)
	}
	if len(reqs[2].Messages) != 5 {
		t.Errorf("third request has %d messages, want 5", len(reqs[2].Messages))
	}
}

func TestToolErrorsGoBackAsErrorResults(t *testing.T) {
	t.Parallel()
	s := sm.New(t, sm.Seq(
		sm.Answer(sm.Usage{}, sm.ToolUse("tu_1", "read", map[string]string{"path": "/missing"}), sm.ToolUse("tu_2", "write", map[string]string{"path": "/b", "text": "t"})),
		sm.Answer(sm.Usage{}, sm.Text("ok")),
	))
	if _, err := agentloop.Do(context.Background(), cfg(s), agentloop.Run{Prompt: "go", Tools: &notes{}, Limits: roomy}); err != nil {
		t.Fatal(err)
	}
	results := s.Requests()[1].ToolResults()
	if len(results) != 2 {
		t.Fatalf("tool results = %+v", results)
	}
	if r := results[0]; r.ToolUseID != "tu_1" || !r.IsError || r.ResultText() != "no note at /missing" {
		t.Errorf("first result = %+v (%q)", r, r.ResultText())
	}
	if r := results[1]; r.ToolUseID != "tu_2" || r.IsError || r.ResultText() != "written" {
		t.Errorf("second result = %+v", r)
	}
}

func TestStepErrorStopsBeforeTools(t *testing.T) {
	t.Parallel()
	s := sm.New(t, forever("write", sm.Usage{InputTokens: 1}))
	n := &notes{}
	stop := errors.New("canceled")
	res, err := agentloop.Do(context.Background(), cfg(s), agentloop.Run{Prompt: "go", Tools: n, Limits: roomy,
		Step: func(si agentloop.StepInfo) error {
			if si.Step == 2 {
				return stop
			}
			return nil
		}})
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v", err)
	}
	if len(n.calls) != 1 || res.Steps != 2 || res.Usage.InputTokens != 2 {
		t.Errorf("calls %v, result %+v: want one write (step 1's), 2 steps", n.calls, res)
	}
}

// The client takes its endpoint and key from Config alone: the
// environment's key is never sent to a configured endpoint.
func TestConfigAloneConfiguresTheClient(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	s := sm.New(t, sm.Seq(sm.Answer(sm.Usage{}, sm.Text("hi"))))
	c := cfg(s)
	c.APIKey = ""
	c.MaxTokensPerAnswer = 123
	c.HTTPClient = &http.Client{Timeout: time.Minute}
	if _, err := agentloop.Do(context.Background(), c, agentloop.Run{Prompt: "go", Tools: &notes{}, Limits: roomy}); err != nil {
		t.Fatal(err)
	}
	r := s.Requests()[0]
	if r.Header.Get("X-Api-Key") != "" || r.Header.Get("Authorization") != "" || r.MaxTokens != 123 {
		t.Errorf("request headers %v, max_tokens %d", r.Header, r.MaxTokens)
	}
}

func TestBadLimitsAreRefused(t *testing.T) {
	t.Parallel()
	_, err := agentloop.Do(context.Background(), agentloop.Config{Model: "m"}, agentloop.Run{Tools: &notes{}, Limits: agentloop.Limits{MaxSteps: 1}})
	if err == nil || !strings.Contains(err.Error(), "every limit must be positive") {
		t.Fatalf("err = %v", err)
	}
}

func TestCancelOfTheCallerEndsTheRun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	s := sm.New(t, func(r *sm.Request) sm.Response {
		if r.N == 2 {
			cancel()
		}
		return forever("read", sm.Usage{})(r)
	})
	_, err := agentloop.Do(ctx, cfg(s), agentloop.Run{Prompt: "go", Tools: &notes{files: map[string]string{"/a": "x"}}, Limits: roomy})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// An endpoint that cannot be reached fails the run, after the retries,
// with an error that does not repeat its address.
func TestUnreachableEndpoint(t *testing.T) {
	t.Parallel()
	s := sm.New(t, sm.Seq())
	url := s.URL
	s.Close()
	c := agentloop.Config{BaseURL: url, Model: "m"}
	_, err := agentloop.Do(context.Background(), c, agentloop.Run{Prompt: "go", Tools: &notes{}, Limits: roomy})
	var me *agentloop.ModelError
	if !errors.As(err, &me) || me.StatusCode != 0 || me.Err == nil {
		t.Fatalf("err = %v, want an unreachable endpoint", err)
	}
	if strings.Contains(err.Error(), url) {
		t.Errorf("error %q names the endpoint", err)
	}
}

// An answer cut at max_tokens (or at the context window) stops the run:
// its tool calls may be incomplete, so none is run.
func TestCutAnswerStopsTheRun(t *testing.T) {
	t.Parallel()
	for _, reason := range []string{"max_tokens", "model_context_window_exceeded"} {
		s := sm.New(t, sm.Seq(sm.AnswerStop(reason, sm.Usage{OutputTokens: 4096}, sm.ToolUse("tu_1", "write", map[string]string{"path": "/a"}))))
		n := &notes{}
		res, err := agentloop.Do(context.Background(), cfg(s), agentloop.Run{Prompt: "go", Tools: n, Limits: roomy})
		var ce *agentloop.CutError
		if !errors.As(err, &ce) || ce.Reason != reason || ce.MaxTokens != agentloop.DefaultMaxTokensPerAnswer {
			t.Fatalf("%s: err = %v", reason, err)
		}
		if len(n.calls) != 0 || res.Usage.OutputTokens != 4096 || res.StopReason != reason {
			t.Errorf("%s: calls %v, result %+v", reason, n.calls, res)
		}
	}
}

// Package agentloop runs a bounded tool loop against an
// Anthropic-compatible Messages endpoint: it sends a prompt, runs the tools
// the model asks for, sends their results back, and repeats until the
// model stops asking or a cap is reached.
//
// The client is the official Go SDK, configured only from Config (never
// from the environment), so a server decides which endpoint and key a run
// uses. Every run is capped in steps (model answers), tokens (summed over
// every answer), writes (calls of tools that are not read-only) and wall
// time; reaching a cap stops the run with a *CapError naming it. An
// overloaded or failing endpoint (429, 529, 5xx, a dropped connection) is
// retried MaxRetries times by the SDK; any other error answer fails the
// run at once.
package agentloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// MaxRetries is how many times one model request is retried after a 429,
// 529, 5xx or connection failure, with the SDK's backoff (or the
// endpoint's retry-after), before the run fails.
const MaxRetries = 3

// DefaultMaxTokensPerAnswer is the max_tokens of each request when Config
// leaves it zero.
const DefaultMaxTokensPerAnswer = 4096

// MaxAnswerBytes bounds the body of one answer of the endpoint (a
// message or an error): a longer one fails the run, read no further. An
// answer of DefaultMaxTokensPerAnswer tokens is a few tens of kilobytes.
const MaxAnswerBytes = 4 << 20

// MaxToolCallsPerAnswer bounds the tool calls run for one answer; the
// calls beyond it are not run and go back to the model as errors.
const MaxToolCallsPerAnswer = 32

// maxErrorText bounds the endpoint's error message kept in a run's error.
const maxErrorText = 500

// A Tool describes one tool to the model.
type Tool struct {
	Name, Description string
	// InputSchema is the tool's JSON Schema, an object schema.
	InputSchema json.RawMessage
	// ReadOnly tools do not count against Limits.MaxWrites.
	ReadOnly bool
}

// A Toolset runs the tools a model asks for.
type Toolset interface {
	Tools() []Tool
	// Call runs one tool; isError marks a result the model should act on
	// (it goes back as a tool_result with is_error).
	Call(ctx context.Context, name string, input json.RawMessage) (text string, isError bool)
}

// Limits caps a run. Every field must be positive.
type Limits struct {
	MaxSteps  int           // model answers
	MaxTokens int           // input, output and cache tokens summed over every answer
	MaxWrites int           // calls of tools that are not read-only
	MaxTime   time.Duration // wall time of the whole run
}

// Config says which endpoint and model a run calls.
type Config struct {
	// BaseURL is the endpoint (without /v1); "" is Anthropic's API.
	BaseURL string
	// APIKey is sent as x-api-key; "" sends none (a local server).
	APIKey string
	// Model is the model ID sent with every request.
	Model string
	// MaxTokensPerAnswer is each request's max_tokens;
	// 0 is DefaultMaxTokensPerAnswer.
	MaxTokensPerAnswer int
	// HTTPClient, when set, sends the requests.
	HTTPClient *http.Client
}

// Run is one task for the model.
type Run struct {
	System, Prompt string
	Tools          Toolset
	Limits         Limits
	// Step, when set, is called after each answer, before its tools run;
	// a non-nil error stops the run with that error (a cancel).
	Step func(StepInfo) error
}

// Usage is the tokens the model reported, summed over a run's answers.
type Usage struct {
	InputTokens, OutputTokens                      int64
	CacheCreationInputTokens, CacheReadInputTokens int64
}

// Total is every token counted against Limits.MaxTokens.
func (u Usage) Total() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// maxAnswerTokens bounds each count of one answer's usage, far above
// any model's, so that sums cannot wrap around.
const maxAnswerTokens = 1 << 40

// add sums an answer's counts, each taken between 0 and maxAnswerTokens:
// an endpoint's count below zero or beyond (its bug, or its lie) cannot
// undo the tokens cap.
func (u *Usage) add(v anthropic.Usage) {
	u.InputTokens += min(max(v.InputTokens, 0), maxAnswerTokens)
	u.OutputTokens += min(max(v.OutputTokens, 0), maxAnswerTokens)
	u.CacheCreationInputTokens += min(max(v.CacheCreationInputTokens, 0), maxAnswerTokens)
	u.CacheReadInputTokens += min(max(v.CacheReadInputTokens, 0), maxAnswerTokens)
}

// A Message is one message of the conversation in the Messages API's
// shape: {"role": ..., "content": [blocks]}.
type Message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// StepInfo is what Run.Step learns after each answer.
type StepInfo struct {
	Step   int   // 1 for the first answer
	Usage  Usage // summed so far
	Writes int   // tool calls that were writes so far
	// Messages are the conversation's messages added since the previous
	// step: the prompt (first step) or the previous step's tool results,
	// then this answer.
	Messages []Message
}

// Result is what a run did, also when it failed.
type Result struct {
	Usage      Usage
	Steps      int
	Writes     int
	StopReason string // the last answer's stop_reason
	Final      string // the text of the last answer
}

// The caps' names, as CapError.Cap reports them.
const (
	CapSteps  = "steps"
	CapTokens = "tokens"
	CapWrites = "writes"
	CapTime   = "time"
)

// CapError is a run stopped by one of its Limits.
type CapError struct {
	Cap   string // CapSteps, CapTokens, CapWrites or CapTime
	Limit string // the cap's value, as written in Limits
}

func (e *CapError) Error() string {
	return fmt.Sprintf("the run reached its %s cap (%s)", e.Cap, e.Limit)
}

// CutError is an answer the model could not finish: cut at its
// max_tokens (Config.MaxTokensPerAnswer), or at the model's context
// window. Its tool calls, if any, may be incomplete, so none is run.
type CutError struct {
	Reason    string // the stop_reason: max_tokens or model_context_window_exceeded
	MaxTokens int    // the answer's max_tokens
}

func (e *CutError) Error() string {
	if e.Reason == string(anthropic.StopReasonMaxTokens) {
		return fmt.Sprintf("the model's answer was cut at its limit of %d tokens", e.MaxTokens)
	}
	return "the model's answer was cut: the conversation fills the model's context window"
}

// ModelError is an error answer of the model's endpoint (after retries),
// or its failure to answer at all.
type ModelError struct {
	StatusCode int    // 0 when the endpoint could not be reached
	Type       string // the error's type in the body, when it has one
	Message    string // the error's message in the body, cut to a few hundred bytes
	// Err is the client's error when the endpoint could not be reached:
	// for logs, as it names the endpoint's address.
	Err error
}

func (e *ModelError) Unwrap() error { return e.Err }

func (e *ModelError) Error() string {
	if e.StatusCode == 0 && e.Message != "" {
		return "the model endpoint " + e.Message
	}
	if e.StatusCode == 0 {
		return "the model endpoint could not be reached; check the model's base URL, and that it is up"
	}
	msg := fmt.Sprintf("the model endpoint answered %d", e.StatusCode)
	if e.Type != "" {
		msg += " " + e.Type
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// Do runs r until the model stops asking for tools, a cap is reached, Step
// returns an error, the endpoint fails or ctx ends. The Result says what
// was done (usage included) in every case.
func Do(ctx context.Context, cfg Config, r Run) (Result, error) {
	var res Result
	if err := r.Limits.check(); err != nil {
		return res, err
	}
	if cfg.Model == "" {
		return res, errors.New("agentloop: no model configured")
	}
	if r.Tools == nil {
		return res, errors.New("agentloop: no toolset")
	}
	ctx, cancel := context.WithTimeoutCause(ctx, r.Limits.MaxTime, &CapError{Cap: CapTime, Limit: r.Limits.MaxTime.String()})
	defer cancel()

	client := anthropic.NewClient(clientOptions(cfg)...)
	tools, readOnly := toolParams(r.Tools.Tools())
	maxTokens := cfg.MaxTokensPerAnswer
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokensPerAnswer
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(cfg.Model),
		MaxTokens: int64(maxTokens),
		Tools:     tools,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(r.Prompt))},
	}
	if r.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: r.System}}
	}
	pending := 1 // messages not yet reported to Step

	for {
		msg, err := client.Messages.New(ctx, params)
		if err != nil {
			return res, modelError(ctx, err, cfg.APIKey)
		}
		res.Steps++
		res.Usage.add(msg.Usage)
		res.StopReason = string(msg.StopReason)
		res.Final = finalText(msg)
		params.Messages = append(params.Messages, msg.ToParam())

		if r.Step != nil {
			info := StepInfo{Step: res.Steps, Usage: res.Usage, Writes: res.Writes}
			for _, m := range params.Messages[len(params.Messages)-1-pending:] {
				info.Messages = append(info.Messages, toMessage(m))
			}
			if err := r.Step(info); err != nil {
				return res, err
			}
		}
		pending = 0

		switch msg.StopReason {
		case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
			return res, &CutError{Reason: string(msg.StopReason), MaxTokens: maxTokens}
		}
		calls := toolUses(msg)
		if msg.StopReason != anthropic.StopReasonToolUse || len(calls) == 0 {
			return res, nil
		}
		// The answer wants more; its tools run only if their results can
		// be sent back.
		if res.Steps >= r.Limits.MaxSteps {
			return res, &CapError{Cap: CapSteps, Limit: fmt.Sprint(r.Limits.MaxSteps)}
		}
		if res.Usage.Total() >= int64(r.Limits.MaxTokens) {
			return res, &CapError{Cap: CapTokens, Limit: fmt.Sprint(r.Limits.MaxTokens)}
		}
		var results []anthropic.ContentBlockParamUnion
		for i, c := range calls {
			if i >= MaxToolCallsPerAnswer {
				results = append(results, anthropic.NewToolResultBlock(c.ID, fmt.Sprintf("not run: one answer runs at most %d tool calls; ask for this one again in the next answer", MaxToolCallsPerAnswer), true))
				continue
			}
			if !readOnly[c.Name] {
				if res.Writes >= r.Limits.MaxWrites {
					return res, &CapError{Cap: CapWrites, Limit: fmt.Sprint(r.Limits.MaxWrites)}
				}
				res.Writes++
			}
			text, isErr := r.Tools.Call(ctx, c.Name, c.Input)
			if err := context.Cause(ctx); err != nil {
				return res, err
			}
			results = append(results, anthropic.NewToolResultBlock(c.ID, text, isErr))
		}
		params.Messages = append(params.Messages, anthropic.NewUserMessage(results...))
		pending = 1
	}
}

func (l Limits) check() error {
	if l.MaxSteps <= 0 || l.MaxTokens <= 0 || l.MaxWrites <= 0 || l.MaxTime <= 0 {
		return fmt.Errorf("agentloop: every limit must be positive (steps %d, tokens %d, writes %d, time %s)", l.MaxSteps, l.MaxTokens, l.MaxWrites, l.MaxTime)
	}
	return nil
}

// clientOptions configures the SDK from cfg alone: no environment variable,
// profile file or other credential source is read.
func clientOptions(cfg Config) []option.RequestOption {
	opts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithMaxRetries(MaxRetries)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return append(opts, option.WithHTTPClient(httpClient(cfg.HTTPClient)))
}

// httpClient is a copy of hc (or of a default client) that follows no
// redirect, so that the key and the prompt (memories and transcripts) go
// only to the base URL the operator chose: Go's client would send the
// x-api-key header, and on a 307 or 308 the body, to any host a redirect
// names. Each answer's body is bounded by MaxAnswerBytes.
func httpClient(hc *http.Client) *http.Client {
	c := &http.Client{}
	if hc != nil {
		*c = *hc
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return errRedirect }
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = boundedTransport{next}
	return c
}

var (
	errRedirect    = errors.New("answered with a redirect, which is not followed; set the model's base URL to the address that answers")
	errAnswerLarge = fmt.Errorf("sent an answer over %d bytes, which is not read; check the model's base URL", MaxAnswerBytes)
)

// boundedTransport cuts every response body at MaxAnswerBytes.
type boundedTransport struct{ next http.RoundTripper }

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.next.RoundTrip(req)
	if err == nil && res.Body != nil {
		res.Body = &boundedBody{rc: res.Body, left: MaxAnswerBytes}
	}
	return res, err
}

type boundedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells an answer of exactly the bound from a
		// longer one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, errAnswerLarge
		}
		return b.rc.Read(p)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }

// toolParams converts the toolset's descriptions, and notes which tools
// are read-only.
func toolParams(ts []Tool) ([]anthropic.ToolUnionParam, map[string]bool) {
	out := make([]anthropic.ToolUnionParam, 0, len(ts))
	readOnly := make(map[string]bool, len(ts))
	for _, t := range ts {
		var schema map[string]any
		_ = json.Unmarshal(t.InputSchema, &schema) // a bad schema is sent as an empty object schema
		in := anthropic.ToolInputSchemaParam{Properties: schema["properties"]}
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					in.Required = append(in.Required, s)
				}
			}
		}
		for k, v := range schema {
			if k != "properties" && k != "required" && k != "type" {
				if in.ExtraFields == nil {
					in.ExtraFields = map[string]any{}
				}
				in.ExtraFields[k] = v
			}
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name:        t.Name,
			Description: anthropic.String(t.Description),
			InputSchema: in,
		}})
		readOnly[t.Name] = t.ReadOnly
	}
	return out, readOnly
}

type toolCall struct {
	ID, Name string
	Input    json.RawMessage
}

func toolUses(m *anthropic.Message) []toolCall {
	var out []toolCall
	for _, b := range m.Content {
		if b.Type == "tool_use" {
			out = append(out, toolCall{ID: b.ID, Name: b.Name, Input: b.Input})
		}
	}
	return out
}

func finalText(m *anthropic.Message) string {
	var parts []string
	for _, b := range m.Content {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func toMessage(p anthropic.MessageParam) Message {
	content, err := json.Marshal(p.Content)
	if err != nil {
		content = []byte("[]")
	}
	return Message{Role: string(p.Role), Content: content}
}

// modelError turns a failed request into the run's error: the cap or
// cancel that ended ctx, or the endpoint's answer, with key (which an
// endpoint may echo) cut out of it.
func modelError(ctx context.Context, err error, key string) error {
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		me := &ModelError{Err: err}
		for _, known := range []error{errRedirect, errAnswerLarge} {
			if errors.Is(err, known) {
				me.Message = known.Error()
			}
		}
		return me
	}
	me := &ModelError{StatusCode: apiErr.StatusCode}
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(apiErr.RawJSON()), &body) == nil {
		me.Type = clip(withoutKey(body.Error.Type, key), 64)
		me.Message = clip(withoutKey(body.Error.Message, key), maxErrorText)
	}
	return me
}

func withoutKey(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[key]")
}

// clip cuts s to at most n bytes, dropping a rune cut in half.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

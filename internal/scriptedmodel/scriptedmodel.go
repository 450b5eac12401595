// Package scriptedmodel is a Messages API endpoint for tests: an httptest
// server answering POST /v1/messages (non-streaming JSON) as a test's
// script says, and recording every request it receives. It stands in for a
// model in the tests of everything that calls one (package agentloop and
// its users), so that they run the real SDK against a real HTTP server.
package scriptedmodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Path is the route the server answers.
const Path = "/v1/messages"

// A Block is one content block, of a request's message or of an answer.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"` // a tool_result's content: a string or blocks
	IsError   bool            `json:"is_error,omitempty"`
}

// ResultText is a tool_result block's content as text.
func (b Block) ResultText() string {
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var blocks []Block
	_ = json.Unmarshal(b.Content, &blocks)
	var parts []string
	for _, c := range blocks {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// A Message is one message of a request.
type Message struct {
	Role    string
	Content []Block
}

// A ToolDef is one tool a request offers.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Request is one request the server received, parsed.
type Request struct {
	N         int // 1 for the first request
	Header    http.Header
	Body      []byte
	Model     string
	MaxTokens int
	System    string // the system prompt's text
	Messages  []Message
	Tools     []ToolDef
}

// ToolResults are the tool_result blocks of the request's last message.
func (r *Request) ToolResults() []Block {
	if len(r.Messages) == 0 {
		return nil
	}
	var out []Block
	for _, b := range r.Messages[len(r.Messages)-1].Content {
		if b.Type == "tool_result" {
			out = append(out, b)
		}
	}
	return out
}

// Usage is an answer's token counts.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// Response is what the server answers to one request.
type Response struct {
	Status int // 0 is 200
	Header http.Header
	Body   []byte
}

// Text is a text block.
func Text(s string) Block { return Block{Type: "text", Text: s} }

// ToolUse is a tool_use block; input is marshalled to JSON.
func ToolUse(id, name string, input any) Block {
	raw, err := json.Marshal(input)
	if err != nil {
		panic(err)
	}
	return Block{Type: "tool_use", ID: id, Name: name, Input: raw}
}

// Answer is a 200 with a message: stop_reason "tool_use" when blocks hold
// a tool_use, "end_turn" otherwise.
func Answer(usage Usage, blocks ...Block) Response {
	stop := "end_turn"
	for _, b := range blocks {
		if b.Type == "tool_use" {
			stop = "tool_use"
		}
	}
	return AnswerStop(stop, usage, blocks...)
}

// AnswerStop is a 200 with a message and the given stop_reason.
func AnswerStop(stop string, usage Usage, blocks ...Block) Response {
	if blocks == nil {
		blocks = []Block{}
	}
	body, err := json.Marshal(map[string]any{
		"id": "msg_scripted", "type": "message", "role": "assistant", "model": "scripted",
		"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
	})
	if err != nil {
		panic(err)
	}
	return Response{Body: body}
}

// Error is an error answer in the API's shape. It asks the client to retry
// after 1 ms, so that tests of retries do not wait for the SDK's backoff.
func Error(status int, typ, message string) Response {
	body, _ := json.Marshal(map[string]any{
		"type": "error", "error": map[string]string{"type": typ, "message": message},
	})
	return Response{Status: status, Header: http.Header{"Retry-After-Ms": {"1"}}, Body: body}
}

// Overloaded is the API's 529.
func Overloaded() Response { return Error(529, "overloaded_error", "Overloaded") }

// A Script answers one request.
type Script func(req *Request) Response

// Seq answers the n-th request with rs[n-1], and any request beyond them
// with a 500 that says the script is exhausted and asks for no retry.
func Seq(rs ...Response) Script {
	return func(req *Request) Response {
		if req.N <= len(rs) {
			return rs[req.N-1]
		}
		r := Error(http.StatusInternalServerError, "api_error", fmt.Sprintf("scripted model: no answer scripted for request %d", req.N))
		r.Header.Set("X-Should-Retry", "false")
		return r
	}
}

// Server is a running scripted endpoint.
type Server struct {
	URL string // the base URL to give a client (without /v1)

	srv    *httptest.Server
	script Script
	mu     sync.Mutex
	reqs   []Request
}

// New starts a server answering with script; it is closed when the test
// ends.
func New(t testing.TB, script Script) *Server {
	s := &Server{script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Close stops the server at once (it is also closed when the test ends).
func (s *Server) Close() { s.srv.Close() }

// SetScript replaces the script for the requests to come.
func (s *Server) SetScript(script Script) {
	s.mu.Lock()
	s.script = script
	s.mu.Unlock()
}

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != Path {
		write(w, Error(http.StatusNotFound, "not_found_error", "scripted model: only POST "+Path))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 32<<20))
	if err != nil {
		write(w, Error(http.StatusBadRequest, "invalid_request_error", "scripted model: "+err.Error()))
		return
	}
	req, err := parse(body)
	if err != nil {
		write(w, Error(http.StatusBadRequest, "invalid_request_error", "scripted model: "+err.Error()))
		return
	}
	req.Header = r.Header.Clone()
	s.mu.Lock()
	req.N = len(s.reqs) + 1
	s.reqs = append(s.reqs, req)
	script := s.script
	s.mu.Unlock()
	write(w, script(&req))
}

func parse(body []byte) (Request, error) {
	var raw struct {
		Model     string          `json:"model"`
		MaxTokens int             `json:"max_tokens"`
		System    json.RawMessage `json:"system"`
		Messages  []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []ToolDef `json:"tools"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return Request{}, err
	}
	req := Request{Body: body, Model: raw.Model, MaxTokens: raw.MaxTokens, Tools: raw.Tools}
	req.System = textOf(raw.System)
	for _, m := range raw.Messages {
		msg := Message{Role: m.Role}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			msg.Content = []Block{Text(s)}
		} else if err := json.Unmarshal(m.Content, &msg.Content); err != nil {
			return Request{}, fmt.Errorf("message content: %w", err)
		}
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

// textOf reads a system prompt: a string or text blocks.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []Block
	_ = json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

func write(w http.ResponseWriter, r Response) {
	for k, v := range r.Header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	w.WriteHeader(r.Status)
	_, _ = w.Write(r.Body)
}

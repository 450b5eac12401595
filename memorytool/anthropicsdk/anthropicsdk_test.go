package anthropicsdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/google/go-cmp/cmp"
	"github.com/memstore/memstore/memorytool"
	"github.com/memstore/memstore/memorytool/anthropicsdk"
)

// result is a tool_result as the fake server received it.
type result struct {
	Content string
	IsError bool
}

// exchange is one round trip with the fake Messages endpoint: the tool
// results the request must carry (by tool_use_id) and the reply.
type exchange struct {
	want  map[string]result
	reply map[string]any
}

func toolUse(id string, input map[string]any) map[string]any {
	return map[string]any{"type": "tool_use", "id": id, "name": "memory", "input": input}
}

func reply(stopReason string, content ...map[string]any) map[string]any {
	return map[string]any{
		"id":            "msg_test",
		"type":          "message",
		"role":          "assistant",
		"model":         "claude-test",
		"stop_reason":   stopReason,
		"stop_sequence": nil,
		"content":       content,
		"usage":         map[string]any{"input_tokens": 1, "output_tokens": 1},
	}
}

// The runner runs one turn's calls concurrently, so calls that depend on
// each other are in different turns.
var script = []exchange{
	{
		reply: reply("tool_use",
			toolUse("create", map[string]any{"command": "create", "path": "/memories/notes.md", "file_text": "# Notes\n- prefers tea\n"}),
			toolUse("outside", map[string]any{"command": "create", "path": "/etc/passwd", "file_text": "x"}),
			toolUse("malformed", map[string]any{"command": "view"}),
		),
	},
	{
		want: map[string]result{
			"create":    {Content: "File created successfully at: /memories/notes.md"},
			"outside":   {Content: "Error: Path must start with /memories, got: /etc/passwd", IsError: true},
			"malformed": {Content: "Error: Invalid input for view: path is required", IsError: true},
		},
		reply: reply("tool_use",
			toolUse("again", map[string]any{"command": "create", "path": "/memories/notes.md", "file_text": "overwritten\n"}),
			toolUse("replace", map[string]any{"command": "str_replace", "path": "/memories/notes.md", "old_str": "tea", "new_str": "coffee"}),
		),
	},
	{
		want: map[string]result{
			"again": {Content: "Error: File /memories/notes.md already exists", IsError: true},
			"replace": {Content: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
				"     1\t# Notes\n     2\t- prefers coffee\n     3\t"},
		},
		reply: reply("tool_use",
			toolUse("view", map[string]any{"command": "view", "path": "/memories/notes.md"}),
		),
	},
	{
		want: map[string]result{
			"view": {Content: "Here's the content of /memories/notes.md with line numbers:\n" +
				"     1\t# Notes\n     2\t- prefers coffee\n     3\t"},
		},
		reply: reply("end_turn", map[string]any{"type": "text", "text": "Noted: you prefer coffee."}),
	},
}

// request is the part of a Messages request the fake server checks.
type request struct {
	Tools    []map[string]any `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// toolResults returns the tool_result blocks of a message's content.
func toolResults(content json.RawMessage) (map[string]result, error) {
	var blocks []struct {
		Type      string          `json:"type"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
		IsError   bool            `json:"is_error"`
	}
	if err := json.Unmarshal(content, &blocks); err != nil {
		return nil, err
	}
	out := make(map[string]result)
	for _, b := range blocks {
		if b.Type != "tool_result" {
			return nil, fmt.Errorf("block of type %q, want tool_result", b.Type)
		}
		text, err := resultText(b.Content)
		if err != nil {
			return nil, fmt.Errorf("tool_result %s: %v", b.ToolUseID, err)
		}
		out[b.ToolUseID] = result{Content: text, IsError: b.IsError}
	}
	return out, nil
}

// resultText returns a tool_result's content, a string or text blocks.
func resultText(content json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(content, &blocks); err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, b := range blocks {
		if b.Type != "text" {
			return "", fmt.Errorf("content block of type %q, want text", b.Type)
		}
		sb.WriteString(b.Text)
	}
	return sb.String(), nil
}

// fakeMessages serves script, checking each request, and counts requests.
func fakeMessages(t *testing.T, script []exchange) (*httptest.Server, func() int) {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
			t.Errorf("request %s %s, want POST /v1/messages", r.Method, r.URL.Path)
			http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not found"}}`, http.StatusNotFound)
			return
		}
		if n >= len(script) {
			t.Errorf("request %d, but the script has %d", n+1, len(script))
			http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"unscripted"}}`, http.StatusBadRequest)
			return
		}
		ex := script[n]
		n++

		var req request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("request %d: decode: %v", n, err)
		}
		wantTools := []map[string]any{{"type": "memory_20250818", "name": "memory"}}
		if diff := cmp.Diff(wantTools, req.Tools); diff != "" {
			t.Errorf("request %d: tools (-want +got):\n%s", n, diff)
		}
		// The first user message, then an assistant turn and its results per exchange.
		if got, want := len(req.Messages), 2*n-1; got != want {
			t.Errorf("request %d: %d messages, want %d", n, got, want)
		}
		if ex.want != nil && len(req.Messages) > 0 {
			last := req.Messages[len(req.Messages)-1]
			if last.Role != "user" {
				t.Errorf("request %d: last message from %q, want user", n, last.Role)
			}
			got, err := toolResults(last.Content)
			if err != nil {
				t.Errorf("request %d: %v", n, err)
			}
			if diff := cmp.Diff(ex.want, got); diff != "" {
				t.Errorf("request %d: tool results (-want +got):\n%s", n, diff)
			}
		}

		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(ex.reply); err != nil {
			t.Errorf("request %d: encode reply: %v", n, err)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

func TestToolRunner(t *testing.T) {
	dir := t.TempDir()
	h, err := memorytool.OpenLocal(dir, memorytool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })

	srv, requests := fakeMessages(t, script)
	client := anthropic.NewClient(
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(srv.URL),
		option.WithAPIKey("test"),
		option.WithMaxRetries(0),
	)
	runner := client.Beta.Messages.NewToolRunner(
		[]anthropic.BetaTool{anthropicsdk.NewTool(h)},
		anthropic.BetaToolRunnerParams{
			BetaMessageNewParams: anthropic.BetaMessageNewParams{
				Model:     "claude-test",
				MaxTokens: 1024,
				System:    []anthropic.BetaTextBlockParam{{Text: memorytool.Prompt}},
				Messages: []anthropic.BetaMessageParam{
					anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("I prefer coffee now.")),
				},
			},
		},
	)
	if !anthropicsdk.SetDefinition(&runner.Params) {
		t.Fatal("SetDefinition found no memory tool in the runner's params")
	}

	msg, err := runner.RunToCompletion(context.Background())
	if err != nil {
		t.Fatalf("RunToCompletion: %v", err)
	}
	if got, want := requests(), len(script); got != want {
		t.Errorf("%d requests, want %d", got, want)
	}
	if msg == nil || len(msg.Content) != 1 || msg.Content[0].Text != "Noted: you prefer coffee." {
		t.Errorf("final message %+v, want the scripted end_turn text", msg)
	}

	data, err := os.ReadFile(filepath.Join(dir, "notes.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), "# Notes\n- prefers coffee\n"; got != want {
		t.Errorf("notes.md = %q, want %q", got, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("memory directory has %d entries, want only notes.md", len(entries))
	}
}

func TestSetDefinitionWithoutMemoryTool(t *testing.T) {
	params := anthropic.BetaToolRunnerParams{}
	params.Tools = []anthropic.BetaToolUnionParam{{OfTool: &anthropic.BetaToolParam{Name: "other"}}}
	if anthropicsdk.SetDefinition(&params) {
		t.Error("SetDefinition reported a memory tool among tools that have none")
	}
	if params.Tools[0].OfTool == nil || params.Tools[0].OfTool.Name != "other" {
		t.Errorf("SetDefinition changed another tool: %+v", params.Tools[0])
	}
}

// Package anthropicsdk plugs the memory tool into the tool runner of
// Anthropic's official Go SDK (github.com/anthropics/anthropic-sdk-go):
// the runner calls a memorytool.Handler for every memory tool_use block and
// sends back memorytool.Execute's result unchanged.
//
// It is a package of its own so that only programs which use the SDK import
// it; memorytool and the memstore server stay free of the SDK.
//
// The runner declares every tool it runs as a custom tool with an input
// schema, so after creating one, call SetDefinition on its Params to declare
// the memory tool as Anthropic's memory_20250818 instead:
//
//	tool := anthropicsdk.NewTool(handler)
//	runner := client.Beta.Messages.NewToolRunner([]anthropic.BetaTool{tool}, params)
//	anthropicsdk.SetDefinition(&runner.Params)
//	message, err := runner.RunToCompletion(ctx)
//
// The runner runs the tool calls of one turn concurrently and in no set
// order, so the Handler must be safe for concurrent use, as
// memorytool.Local is.
package anthropicsdk

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/memstore/memstore/memorytool"
)

// Tool is the memory tool as an anthropic.BetaTool.
type Tool struct {
	h memorytool.Handler
}

var _ anthropic.BetaTool = (*Tool)(nil)

// NewTool returns the memory tool carried out by h.
func NewTool(h memorytool.Handler) *Tool {
	return &Tool{h: h}
}

// Name returns memorytool.ToolName, the name the model calls the tool by.
func (t *Tool) Name() string { return memorytool.ToolName }

// Description describes the tool to the model. Only a runner whose Params
// did not go through SetDefinition sends it: memory_20250818 has no
// description of its own.
func (t *Tool) Description() string {
	return "View, create, edit, rename and delete files under /memories, which persist between conversations."
}

// InputSchema returns the schema of the tool's input, which the runner
// sends only when SetDefinition was not called. It matches
// memory_20250818's commands, so that the tool still works then.
func (t *Tool) InputSchema() anthropic.BetaToolInputSchemaParam {
	str := map[string]any{"type": "string"}
	integer := map[string]any{"type": "integer"}
	return anthropic.BetaToolInputSchemaParam{
		Properties: map[string]any{
			"command": map[string]any{
				"type": "string",
				"enum": []string{
					memorytool.CommandView, memorytool.CommandCreate, memorytool.CommandStrReplace,
					memorytool.CommandInsert, memorytool.CommandDelete, memorytool.CommandRename,
				},
			},
			"path":        str,
			"view_range":  map[string]any{"type": "array", "items": integer},
			"file_text":   str,
			"old_str":     str,
			"new_str":     str,
			"insert_line": integer,
			"insert_text": str,
			"old_path":    str,
			"new_path":    str,
		},
		Required: []string{"command"},
	}
}

// Execute runs one tool input through memorytool.Execute. A failure comes
// back as a Go error, because that is the only way the runner sets the
// tool_result's is_error flag; its message lacks the "Error: " prefix, which
// the runner adds, so the model reads exactly memorytool.Execute's text.
func (t *Tool) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	res := memorytool.Execute(ctx, t.h, input)
	if res.IsError {
		return nil, errors.New(strings.TrimPrefix(res.Content, "Error: "))
	}
	return []anthropic.BetaToolResultBlockParamContentUnion{
		{OfText: &anthropic.BetaTextBlockParam{Text: res.Content}},
	}, nil
}

// Definition returns the memory tool's definition,
// {"type": "memory_20250818", "name": "memory"}.
func Definition() anthropic.BetaToolUnionParam {
	return anthropic.BetaToolUnionParam{OfMemoryTool20250818: &anthropic.BetaMemoryTool20250818Param{}}
}

// SetDefinition replaces, in params.Tools, the custom-tool definition that a
// runner made for the memory tool with Definition(), and reports whether it
// found one. Call it on the runner's Params after NewToolRunner or
// NewToolRunnerStreaming, which set Tools, and before the first turn.
func SetDefinition(params *anthropic.BetaToolRunnerParams) bool {
	found := false
	for i, tool := range params.Tools {
		if tool.OfTool != nil && tool.OfTool.Name == memorytool.ToolName {
			params.Tools[i] = Definition()
			found = true
		}
	}
	return found
}

// Package mcpserver serves the agent memory tools (package agenttool) over
// the Model Context Protocol, with the official Go SDK: over stdio for one
// session (Stdio), and over streamable HTTP (Handler) where every request
// authenticates with a session token and gets the tools of that session.
//
// The server's instructions are the session's memory prompt
// (agenttool.Prompt), so that a client that shows them to its model gives
// it the same guidance as an agent built on the API.
package mcpserver

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/agenttool"
)

// Name is the server's name in the MCP handshake.
const Name = "memstore"

// New returns an MCP server with the six memory tools of ts, for the
// session ts works in. version is memstore's, reported to clients.
func New(ts *agenttool.Toolset, s *memstore.Session, version string, log *slog.Logger) *mcp.Server {
	return newServer(ts, s, version, &mcp.ServerOptions{Logger: log})
}

// newServer is New with the server's options, of which it sets the
// instructions.
func newServer(ts *agenttool.Toolset, s *memstore.Session, version string, opts *mcp.ServerOptions) *mcp.Server {
	opts.Instructions = agenttool.Prompt(s)
	srv := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "memstore memory", Version: version}, opts)
	for _, t := range ts.Tools() {
		name := t.Name
		srv.AddTool(&mcp.Tool{
			Name:        t.Name,
			Title:       t.Title,
			Description: t.Description,
			InputSchema: t.InputSchema,
			Annotations: &mcp.ToolAnnotations{
				Title:           t.Title,
				ReadOnlyHint:    t.ReadOnly,
				DestructiveHint: &t.Destructive,
				IdempotentHint:  t.Idempotent,
				OpenWorldHint:   new(bool), // memory is a closed world: the session's stores
			},
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := ts.As(requestCaller(req)).Call(ctx, name, req.Params.Arguments)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}, IsError: r.IsError}, nil
		})
	}
	return srv
}

// Package mcpserver serves the agent memory tools (package agenttool) over
// the Model Context Protocol, with the official Go SDK: over stdio for one
// session, and over streamable HTTP where every request authenticates with
// a session token and gets the tools of that session.
//
// The server's instructions are the session's memory prompt
// (agenttool.Prompt), so that a client that shows them to its model gives
// it the same guidance as an agent built on the API.
package mcpserver

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/agenttool"
)

// Name is the server's name in the MCP handshake.
const Name = "memstore"

// New returns an MCP server with the six memory tools of ts, for the
// session ts works in. version is memstore's, reported to clients.
func New(ts *agenttool.Toolset, s *memstore.Session, version string, log *slog.Logger) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "memstore memory", Version: version},
		&mcp.ServerOptions{Instructions: agenttool.Prompt(s), Logger: log})
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
			r := ts.Call(ctx, name, req.Params.Arguments)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}, IsError: r.IsError}, nil
		})
	}
	return srv
}

// HandlerConfig is what the streamable HTTP handler is made of.
type HandlerConfig struct {
	Sessions memstore.SessionService // authenticates the tokens
	Services agenttool.Services      // what the tools run on
	Version  string
	Logger   *slog.Logger // nil discards
}

// callerKey is where the verifier leaves the authenticated caller.
const callerKey = "memstore.caller"

// Handler serves the tools over streamable HTTP. Every request must carry
// a session token as "Authorization: Bearer ..." (401 otherwise, with a
// WWW-Authenticate header); the token is checked on every request, so a
// revoked token stops working at once, and an MCP session is bound to the
// memstore session that opened it: another session's token cannot use it.
func Handler(c HandlerConfig) http.Handler {
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if !strings.HasPrefix(token, memstore.SessionTokenPrefix) {
			return nil, auth.ErrInvalidToken
		}
		caller, err := c.Sessions.AuthenticateSession(ctx, token)
		if err != nil {
			if memstore.ErrorCode(err) == memstore.EUnauthenticated {
				return nil, auth.ErrInvalidToken
			}
			return nil, err
		}
		return &auth.TokenInfo{UserID: caller.Session.ID, Extra: map[string]any{callerKey: caller}}, nil
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		info := auth.TokenInfoFromContext(r.Context())
		if info == nil {
			return nil
		}
		caller, _ := info.Extra[callerKey].(*memstore.Caller)
		ts, err := agenttool.New(c.Services, caller)
		if err != nil {
			log.Error("mcp: cannot make the tools", "error", err.Error())
			return nil
		}
		return New(ts, caller.Session, c.Version, log)
	}, &mcp.StreamableHTTPOptions{Logger: log})
	h := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(mcpHandler)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(challenger{w}, r)
	})
}

// challenger adds the challenge every 401 must carry (RFC 9110 §11.6.1),
// which the SDK's middleware sends only with OAuth resource metadata.
type challenger struct{ http.ResponseWriter }

func (c challenger) WriteHeader(status int) {
	if status == http.StatusUnauthorized && c.Header().Get("WWW-Authenticate") == "" {
		c.Header().Set("WWW-Authenticate", `Bearer realm="memstore", error="invalid_token"`)
	}
	c.ResponseWriter.WriteHeader(status)
}

// Unwrap gives http.ResponseController the underlying writer, for
// streaming.
func (c challenger) Unwrap() http.ResponseWriter { return c.ResponseWriter }

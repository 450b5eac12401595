package mcpserver

import (
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// OnOpening makes h call f, before the SDK serves it, with the server h
// made for each request that may open an MCP session. Call it before h
// serves any request.
func OnOpening(h *HTTPHandler, f func(*mcp.Server)) { h.made = f }

// SDKSessions makes h note the MCP servers it makes, and returns a
// function listing the IDs of the sessions the SDK holds open on them,
// as the SDK itself counts them. Call it before h serves any request.
func SDKSessions(h *HTTPHandler) func() []string {
	var (
		mu      sync.Mutex
		servers []*mcp.Server
	)
	OnOpening(h, func(s *mcp.Server) {
		mu.Lock()
		defer mu.Unlock()
		servers = append(servers, s)
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		var ids []string
		for _, s := range servers {
			for ss := range s.Sessions() {
				ids = append(ids, ss.ID())
			}
		}
		return ids
	}
}

// Counts reports whether h counts the MCP session id as open.
func (h *HTTPHandler) Counts(id string) bool {
	h.open.mu.Lock()
	defer h.open.mu.Unlock()
	return h.open.byID[id] != nil
}

package mcpserver

import (
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SDKSessions makes h note the MCP servers it makes, and returns a
// function listing the IDs of the sessions the SDK holds open on them,
// as the SDK itself counts them. Call it before h serves any request.
func SDKSessions(h *HTTPHandler) func() []string {
	var (
		mu      sync.Mutex
		servers []*mcp.Server
	)
	h.made = func(s *mcp.Server) {
		mu.Lock()
		defer mu.Unlock()
		servers = append(servers, s)
	}
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

package httpapi

import (
	"net/http"
	"strings"
)

// bareBearer reports whether strict mode lets r through without its
// anthropic-version and anthropic-beta headers: a request to the memory
// stores' routes that sends neither and authenticates with
// Authorization: Bearer (and no x-api-key). That is Claude Code's team
// memory, a client of the hosted API that sends neither header, which a
// server in strict mode must still serve. A request that sends either
// header is held to both, so a client that gets them wrong still hears of
// it; SDK clients send both.
func bareBearer(r *http.Request) bool {
	if r.Header.Get("Anthropic-Version") != "" || len(r.Header.Values("Anthropic-Beta")) > 0 || r.Header.Get("X-Api-Key") != "" {
		return false
	}
	auth := r.Header.Get("Authorization")
	if len(auth) <= 7 || !strings.EqualFold(auth[:7], "bearer ") {
		return false
	}
	p := r.URL.Path
	return p == "/v1/memory_stores" || strings.HasPrefix(p, "/v1/memory_stores/")
}

package mcpserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/memstore/memstore/mcpserver"
)

// batch is a JSON-RPC batch of n tools/list requests.
func batch(n int) string {
	msgs := make([]string, n)
	for i := range msgs {
		msgs[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i+10)
	}
	return "[" + strings.Join(msgs, ",") + "]"
}

// TestBatchesRefused: MCP has had no JSON-RPC batches since 2025-06-18.
// A session of a current revision, such as the official client's, is
// refused every batch (400, a JSON-RPC error saying why), whether or not
// the request names its revision; so is a batch that would open a
// session. A session of an older revision, which had batches, may send
// small ones, of at most MaxBatchMessages.
func TestBatchesRefused(t *testing.T) {
	e := newEnv(t)
	h, srv := serveMCP(t, e, mcpserver.HandlerConfig{})
	refused := func(t *testing.T, what string, a answer, want string) {
		t.Helper()
		if a.status != http.StatusBadRequest {
			t.Fatalf("%s: %d %.200s; want 400", what, a.status, a.body)
		}
		if code, msg := rpcError(t, a); code != jsonrpc.CodeInvalidRequest || !strings.Contains(msg, want) {
			t.Errorf("%s: error %d %q; want %d saying %q", what, code, msg, jsonrpc.CodeInvalidRequest, want)
		}
	}

	cs, err := connectHTTP(t.Context(), srv.URL, e.secret)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	version := func(v string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Mcp-Protocol-Version", v) }
	}
	for _, edit := range []func(*http.Request){func(*http.Request) {}, version("2025-11-25"), version("2025-03-26")} {
		refused(t, "a batch in the official client's session", post(t, srv.URL, e.secret, cs.ID(), batch(2), edit), "no JSON-RPC batches")
	}
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Errorf("the official client's session after the refusals: %v", err)
	}

	before := h.OpenSessions()
	refused(t, "a batch opening a session", post(t, srv.URL, e.secret, "", "["+initialize("batch")+"]"), "alone")
	if n := h.OpenSessions(); n != before {
		t.Errorf("%d MCP sessions open after a refused batch, %d before", n, before)
	}

	// A session of 2025-03-26.
	a := post(t, srv.URL, e.secret, "", strings.Replace(initialize("old"), "2025-06-18", "2025-03-26", 1))
	if a.status != 200 || !strings.Contains(a.body, `"protocolVersion":"2025-03-26"`) {
		t.Fatalf("initialize at 2025-03-26: %d %s", a.status, a.body)
	}
	old := a.sessionID
	if a := post(t, srv.URL, e.secret, old, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); a.status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", a.status, a.body)
	}
	a = post(t, srv.URL, e.secret, old, batch(mcpserver.MaxBatchMessages))
	if n := strings.Count(a.body, `"result":{`); a.status != 200 || n != mcpserver.MaxBatchMessages {
		t.Errorf("a batch of %d in a 2025-03-26 session: %d, %d answers", mcpserver.MaxBatchMessages, a.status, n)
	}
	refused(t, "a batch too long in a 2025-03-26 session", post(t, srv.URL, e.secret, old, batch(mcpserver.MaxBatchMessages+1)),
		fmt.Sprintf("at most %d messages", mcpserver.MaxBatchMessages))
}

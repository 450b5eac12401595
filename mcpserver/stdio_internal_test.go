package mcpserver

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestStdioDuplicateID sends a request whose ID is that of one not yet
// answered: the SDK would drop it unanswered, leaving the end of input
// waiting for it, so it is refused, and the first still counts.
func TestStdioDuplicateID(t *testing.T) {
	var out, sdk bytes.Buffer
	s := &stdio{out: &out, pending: map[jsonrpc.ID]bool{}}
	s.changed = sync.NewCond(&s.mu)
	for _, line := range []string{`{"jsonrpc":"2.0","id":7,"method":"ping"}`, `{"jsonrpc":"2.0","id":7,"method":"ping"}`} {
		if err := s.pass([]byte(line), false, &sdk); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Count(sdk.String(), "\n"); got != 1 {
		t.Errorf("%d messages passed to the SDK, want 1:\n%s", got, sdk.String())
	}
	if !strings.Contains(out.String(), `"id":null,"error":{"code":-32600,"message":"request id 7 is already that of a request in progress"}`) {
		t.Errorf("answer %q", out.String())
	}
	s.Write([]byte(`{"jsonrpc":"2.0","id":7,"result":{}}` + "\n"))
	if len(s.pending) != 0 {
		t.Errorf("pending after the answer: %v", s.pending)
	}
}

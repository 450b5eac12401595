package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

// TestOperatorShown: a change made by the operator (memstore's command
// line on the database) shows as the operator in a memory's history.
func TestOperatorShown(t *testing.T) {
	f := newFixture(t, "first\n")
	operator := *f.op
	operator.Actor = memstore.OperatorActor
	second := "second\n"
	if _, err := f.core.UpdateMemory(context.Background(), &operator, f.storeID, f.memID, memstore.MemoryUpdate{Content: &second}); err != nil {
		t.Fatal(err)
	}
	c := f.signIn(t, "admin")
	resp, body := f.get(t, c, "/console/stores/"+f.storeID+"/memories/"+f.memID+"/history")
	if resp.StatusCode != 200 || !strings.Contains(body, `<span class="actor" title="user_actor user_operator"><span class="badge">user</span> <span class="name">operator</span></span>`) {
		t.Errorf("history: %d; want the operator named\n%s", resp.StatusCode, body)
	}
}

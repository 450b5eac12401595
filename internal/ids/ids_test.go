package ids_test

import (
	"strings"
	"testing"
	"time"

	"github.com/memstore/memstore/internal/ids"
)

func TestNewIsOrderedAndPrefixed(t *testing.T) {
	g := ids.NewGenerator()
	now := time.Now()
	prev := ""
	for i := range 1000 {
		id := g.New(ids.Memory, now) // same millisecond: still increasing
		if !strings.HasPrefix(id, "mem_") || len(id) != len("mem_")+26 || strings.ToLower(id) != id {
			t.Fatalf("id %q", id)
		}
		if id <= prev {
			t.Fatalf("id %d: %q not after %q", i, id, prev)
		}
		prev = id
	}
	if later := g.New(ids.Memory, now.Add(time.Second)); later <= prev {
		t.Errorf("a later time gave a smaller id: %q <= %q", later, prev)
	}
}

package ids_test

import (
	"github.com/memstore/memstore"
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
		id := g.New(memstore.MemoryIDPrefix, now) // same millisecond: still increasing
		if !strings.HasPrefix(id, "mem_") || len(id) != len("mem_")+26 || strings.ToLower(id) != id {
			t.Fatalf("id %q", id)
		}
		if id <= prev {
			t.Fatalf("id %d: %q not after %q", i, id, prev)
		}
		prev = id
	}
	if later := g.New(memstore.MemoryIDPrefix, now.Add(time.Second)); later <= prev {
		t.Errorf("a later time gave a smaller id: %q <= %q", later, prev)
	}
}

func TestNext(t *testing.T) {
	g := ids.NewGenerator()
	id := g.New(memstore.VersionIDPrefix, time.Now())
	for _, c := range []struct{ id, want string }{
		{"memver_01kjma0fm0xq70frzkgz7q6zh0", "memver_01kjma0fm0xq70frzkgz7q6zh1"},
		{"memver_01kjma0fm0xq70frzkgz7q6zh9", "memver_01kjma0fm0xq70frzkgz7q6zha"},
		{"memver_01kjma0fm0xq70frzkgz7q6zhz", "memver_01kjma0fm0xq70frzkgz7q6zj0"},
		{"memver_01kjma0fm0xq70frzkgz7q6zzz", "memver_01kjma0fm0xq70frzkgz7q7000"},
	} {
		if got := ids.Next(c.id); got != c.want {
			t.Errorf("Next(%s) = %s, want %s", c.id, got, c.want)
		}
	}
	if next := ids.Next(id); next <= id || len(next) != len(id) {
		t.Errorf("Next(%s) = %s: want a greater ID of the same form", id, next)
	}
}

func TestFloor(t *testing.T) {
	g := ids.NewGenerator()
	now := time.Now()
	floor := ids.Floor(memstore.WebhookEventIDPrefix, now)
	if len(floor) != len(memstore.WebhookEventIDPrefix)+26 || !strings.HasPrefix(floor, memstore.WebhookEventIDPrefix) {
		t.Fatalf("Floor = %q", floor)
	}
	for _, c := range []struct {
		at    time.Time
		below bool
	}{{now.Add(-time.Millisecond), true}, {now.Add(-time.Hour), true}, {now.Truncate(time.Millisecond), false}, {now.Add(time.Millisecond), false}} {
		if id := g.New(memstore.WebhookEventIDPrefix, c.at); (id < floor) != c.below {
			t.Errorf("an ID made %v from the floor's time, %s, is below %s: %v", c.at.Sub(now), id, floor, id < floor)
		}
	}
}

func TestDerived(t *testing.T) {
	at := time.Date(2026, 11, 25, 1, 2, 3, 456789, time.UTC)
	a := ids.Derived(memstore.WebhookEventIDPrefix, at, "memstore_a/7")
	if a != ids.Derived(memstore.WebhookEventIDPrefix, at, "memstore_a/7") {
		t.Fatal("the same time and key gave two IDs")
	}
	if len(a) != len(memstore.WebhookEventIDPrefix)+26 || !strings.HasPrefix(a, memstore.WebhookEventIDPrefix) || a < ids.Floor(memstore.WebhookEventIDPrefix, at) {
		t.Fatalf("Derived = %s", a)
	}
	if b := ids.Derived(memstore.WebhookEventIDPrefix, at, "memstore_a/8"); b == a {
		t.Fatal("two keys gave one ID")
	}
	for _, d := range []time.Duration{time.Nanosecond, time.Microsecond, time.Millisecond, time.Hour} {
		if later := ids.Derived(memstore.WebhookEventIDPrefix, at.Add(d), "memstore_a/1"); later <= a {
			t.Errorf("an ID %v later, %s, does not sort after %s", d, later, a)
		}
	}
}

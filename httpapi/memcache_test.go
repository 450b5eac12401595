package httpapi

// An internal test: the bound of memoryCache cannot be seen from outside.

import (
	"bytes"
	"fmt"
	"testing"
)

func TestMemoryCacheBound(t *testing.T) {
	var c memoryCache
	body := bytes.Repeat([]byte("x"), memoryCacheBytes/100)
	for i := range 1000 {
		c.put(fmt.Sprint("mem_", i), "memver_1", body)
		if c.size > memoryCacheBytes {
			t.Fatalf("after %d entries: %d bytes kept, above %d", i+1, c.size, memoryCacheBytes)
		}
	}
	// When full, new and larger versions of kept memories replace theirs,
	// making room.
	larger := bytes.Repeat([]byte("y"), memoryCacheBytes/20)
	for i := 900; i < 1000; i++ {
		c.put(fmt.Sprint("mem_", i), "memver_2", larger)
	}
	sum := 0
	for _, e := range c.entries {
		sum += len(e.body)
	}
	if sum != c.size || c.size > memoryCacheBytes || len(c.entries) < 19 {
		t.Errorf("%d entries of %d bytes, size says %d", len(c.entries), sum, c.size)
	}
	if got := c.get("mem_999"); got.version != "memver_2" {
		t.Errorf("the last entry put is not kept: %+v", got)
	}

	// A new version replaces the old; a body too large is not kept, and
	// drops what was.
	c.put("mem_999", "memver_2", []byte("small"))
	if got := c.get("mem_999"); got.version != "memver_2" || string(got.body) != "small" {
		t.Errorf("replaced entry: %+v", got)
	}
	c.put("mem_999", "memver_3", make([]byte, memoryCacheBytes/16+1))
	if got := c.get("mem_999"); got.version != "" {
		t.Errorf("a body above the bound for one entry was kept: version %q", got.version)
	}
	c.drop("mem_998")
	if got := c.get("mem_998"); got.version != "" {
		t.Errorf("dropped entry still kept")
	}
	c.clear()
	if len(c.entries) != 0 || c.size != 0 {
		t.Errorf("after clear: %d entries, %d bytes", len(c.entries), c.size)
	}
}

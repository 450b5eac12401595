package httpapi

import "sync"

// memoryCache keeps, by memory ID, the encoded answer of the memory's
// latest retrieval with the version it shows. A retrieval then asks the
// database only for the memory's current version (one indexed lookup on
// every request, so a change made by any process is seen at once), and
// while that is the version kept, sends the kept bytes: the content is
// neither read nor encoded again (docs/benchmarks-log.md: retrievals
// 1.15x).
//
// A deleted memory's answer goes when this server deletes it, when a
// retrieval finds it gone, or when its store is deleted. The bytes kept
// are bounded; past the bound, entries taken at random (Go's map order)
// make room, which costs no bookkeeping on the hot path.
type memoryCache struct {
	mu      sync.Mutex
	entries map[string]cachedMemory
	size    int // bytes of the bodies kept
}

type cachedMemory struct {
	version string
	body    []byte
}

// memoryCacheBytes bounds the bodies kept; a body above a sixteenth of it
// is not kept, so that one large memory does not empty the cache.
const memoryCacheBytes = 32 << 20

// get returns what is kept for a memory, the zero value if nothing.
func (c *memoryCache) get(id string) cachedMemory {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[id]
}

// put keeps body as the answer for a memory at version.
func (c *memoryCache) put(id, version string, body []byte) {
	if len(body) > memoryCacheBytes/16 {
		c.drop(id)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]cachedMemory{}
	}
	if old, ok := c.entries[id]; ok {
		delete(c.entries, id)
		c.size -= len(old.body)
	}
	for other, e := range c.entries { // in random order
		if c.size+len(body) <= memoryCacheBytes {
			break
		}
		delete(c.entries, other)
		c.size -= len(e.body)
	}
	c.entries[id] = cachedMemory{version: version, body: body}
	c.size += len(body)
}

// drop forgets a memory.
func (c *memoryCache) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.size -= len(c.entries[id].body)
	delete(c.entries, id)
}

// clear forgets every memory.
func (c *memoryCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.size = 0
}

package web

import "sync"

// cache keeps the pages and series of finished runs, which do not change:
// a day-long run's page takes seconds to draw, and is opened again and
// again. It holds at most max bytes, the least recently used going first.
type cache struct {
	mu    sync.Mutex
	max   int
	size  int
	order []string // least recently used first
	items map[string][]byte
}

func newCache(max int) *cache { return &cache{max: max, items: map[string][]byte{}} }

func (c *cache) get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.items[key]
	if ok {
		c.touch(key)
	}
	return b, ok
}

func (c *cache) add(key string, b []byte) {
	if len(b) > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.items[key]; ok {
		c.size -= len(old)
	} else {
		c.order = append(c.order, key)
	}
	c.items[key] = b
	c.size += len(b)
	c.touch(key)
	for c.size > c.max && len(c.order) > 0 {
		k := c.order[0]
		c.order = c.order[1:]
		c.size -= len(c.items[k])
		delete(c.items, k)
	}
}

// touch makes key the most recently used.
func (c *cache) touch(key string) {
	for i, k := range c.order {
		if k == key {
			c.order = append(append(c.order[:i:i], c.order[i+1:]...), key)
			return
		}
	}
}

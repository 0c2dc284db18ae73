package engine

import (
	"runtime"
	"sync/atomic"
)

// shardedCount is a count that many goroutines change often and few read: each
// changes its own slot (its shard), on a cache line of its own, so that
// VUs on different cores do not contend for one; a read sums the slots.
type shardedCount struct {
	slots []countSlot
}

type countSlot struct {
	n atomic.Int64
	_ [56]byte // the next slot on another cache line
}

// newShardedCount has a slot for each of twice as many CPUs as the process
// may use, as the recorder has shards.
func newShardedCount() *shardedCount {
	return &shardedCount{slots: make([]countSlot, 2*runtime.GOMAXPROCS(0))}
}

// add changes the count by d in slot shard.
func (c *shardedCount) add(shard int, d int64) { c.slots[shard%len(c.slots)].n.Add(d) }

// load is the count.
func (c *shardedCount) load() int64 {
	var n int64
	for i := range c.slots {
		n += c.slots[i].n.Load()
	}
	return n
}

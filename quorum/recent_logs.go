package quorum

import (
	"sync"

	"github.com/hashicorp/raft"
)

// Bounds of recentLogs: the newest entries raft stored, at most this many and at most
// this many bytes of data in all (one larger entry is kept alone). Replication to a member that is only a few
// entries behind and a notice's catch-up read from here; anything older comes from the
// transaction log. A count alone (raft's LogCache) held 15 MB of heap after a bulk load
// whose entries were multis of 100 creates, a fixed cost the heap-per-znode budget of a
// million-znode tree pays for nothing.
const (
	recentLogsMax      = 1024
	recentLogsMaxBytes = 2 << 20
)

// recentLogs is a raft.LogStore that keeps the newest contiguous entries it stored in
// memory, bounded by count and by bytes, and reads the rest through to the store. Any
// DeleteRange empties it, as raft deletes only a suffix it replaces or a prefix it
// compacted, both rare.
type recentLogs struct {
	raft.LogStore
	maxBytes int

	mu          sync.RWMutex
	ring        []*raft.Log // entry i at i % len(ring)
	first, last uint64      // the cached range, inclusive; first > last when empty
	bytes       int         // of the cached entries' Data and Extensions
}

func newRecentLogs(store raft.LogStore, max, maxBytes int) *recentLogs {
	return &recentLogs{LogStore: store, maxBytes: maxBytes, ring: make([]*raft.Log, max), first: 1}
}

// IsMonotonic passes the store's answer on (raft.MonotonicLogStore): raft then removes
// every older entry after installing a snapshot instead of leaving a gap.
func (c *recentLogs) IsMonotonic() bool {
	m, ok := c.LogStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

func (c *recentLogs) GetLog(index uint64, out *raft.Log) error {
	c.mu.RLock()
	if index >= c.first && index <= c.last {
		*out = *c.ring[index%uint64(len(c.ring))]
		c.mu.RUnlock()
		return nil
	}
	c.mu.RUnlock()
	return c.LogStore.GetLog(index, out)
}

func (c *recentLogs) StoreLog(e *raft.Log) error { return c.StoreLogs([]*raft.Log{e}) }

// StoreLogs stores es, and caches them once they are stored.
func (c *recentLogs) StoreLogs(es []*raft.Log) error {
	if err := c.LogStore.StoreLogs(es); err != nil {
		return err
	}
	c.cache(es)
	return nil
}

// cache keeps es, just stored (by StoreLogs, or deferred by noticedLogs), as the newest
// entries.
func (c *recentLogs) cache(es []*raft.Log) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range es {
		if c.first <= c.last && e.Index != c.last+1 {
			c.clearLocked()
		}
		if c.first > c.last {
			c.first = e.Index
		} else if e.Index-c.first >= uint64(len(c.ring)) {
			c.evictLocked() // its slot is e's
		}
		c.last = e.Index
		c.ring[e.Index%uint64(len(c.ring))] = e
		c.bytes += logBytes(e)
		for c.first < c.last && c.bytes > c.maxBytes {
			c.evictLocked()
		}
	}
}

func (c *recentLogs) DeleteRange(min, max uint64) error {
	c.mu.Lock()
	c.clearLocked()
	c.mu.Unlock()
	return c.LogStore.DeleteRange(min, max)
}

// evictLocked drops the oldest cached entry.
func (c *recentLogs) evictLocked() {
	slot := c.first % uint64(len(c.ring))
	c.bytes -= logBytes(c.ring[slot])
	c.ring[slot] = nil
	c.first++
}

func (c *recentLogs) clearLocked() {
	for c.first <= c.last {
		c.evictLocked()
	}
	c.first, c.last, c.bytes = 1, 0, 0
}

func logBytes(e *raft.Log) int { return len(e.Data) + len(e.Extensions) }

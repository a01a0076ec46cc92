package datatree

import (
	"hash/maphash"
	"unsafe"
)

// A list of indexMin to indexMax children also keeps a hash index from name to id, so
// that finding a child reads about one name from the arena instead of a binary search's
// dozen (each two cache misses: the record, then the blob). A random getData at 1M
// znodes, 1,000 under each parent, took 2.8 µs against 0.6 at 10k, two thirds of it in
// that search (BenchmarkGetRandom). Shorter lists are searched as fast without one;
// longer ones do without it, so that rebuilding one when it grows (it reads every
// child's name) stays a short pause: 2.0-2.6 ms for 4,096 children scattered in a 1M
// tree, with a cold cache (8-10 ms for 16,384, the first bound tried).
// Only lookups use it: adding and removing a child still search the chunks for its
// place in name order. A load (a snapshot, FromNodes) builds each list's index once at
// its end (Tree.loaded).
const (
	indexMin = 32
	indexMax = 1 << 12
)

// nameSeed seeds the index's hash. The index only speeds lookups: nothing that reaches
// a result, a snapshot or the digest depends on it, so each process may draw its own.
var nameSeed = maphash.MakeSeed()

// tombstone marks the slot of a removed child: a probe goes on past it.
const tombstone = ^nodeID(0)

// nameIndex is open addressing with linear probing over node ids; beside each id a
// byte of its name's hash, so a probe reads the arena only when that byte matches (one
// probe in 256 for another name). After a rebuild it is 60% full, and it is rebuilt
// once ids and tombstones fill 80% of it: about 7 bytes a child. Its table is a block
// of the tree's arena (grab: outside the Go heap in a large tree, and not counted as
// content), ids first, then tags.
type nameIndex struct {
	table blobRef
	ids   []nodeID // 0 empty, tombstone removed
	tags  []uint8
	live  int // ids held
	dead  int // tombstones
}

// nameIndexSlot is what one slot costs.
const nameIndexSlot = int(unsafe.Sizeof(nodeID(0))) + 1

// newNameIndex takes a zeroed table of slots from t's arena. (Blob offsets are
// multiples of 8 in slabs that are at least so aligned, so the ids are aligned.)
func newNameIndex(t *Tree, slots int) *nameIndex {
	n := slots * nameIndexSlot
	b, _ := t.mem.grab(n)
	raw := t.mem.bytes(b, n)
	clear(raw)
	k := slots * int(unsafe.Sizeof(nodeID(0)))
	return &nameIndex{table: b, ids: unsafe.Slice((*nodeID)(unsafe.Pointer(&raw[0])), slots), tags: raw[k:n:n]}
}

// release gives the table back to t's arena.
func (x *nameIndex) release(t *Tree) { t.mem.drop(x.table, len(x.ids)*nameIndexSlot) }

// slotOf is where a probe for hash h starts, and h's tag.
func (x *nameIndex) slotOf(h uint64) (int, uint8) {
	return int((h & 0xffffffff) * uint64(len(x.ids)) >> 32), uint8(h >> 56)
}

// get returns the id of the child called name, 0 if there is none.
func (x *nameIndex) get(t *Tree, name string) nodeID {
	i, tag := x.slotOf(maphash.String(nameSeed, name))
	for {
		switch id := x.ids[i]; {
		case id == 0:
			return 0
		case id != tombstone && x.tags[i] == tag && t.nameOf(id) == name:
			return id
		}
		if i++; i == len(x.ids) {
			i = 0
		}
	}
}

// put adds id, called name, which the index does not hold; false means the index is
// full and must be rebuilt first.
func (x *nameIndex) put(id nodeID, name string) bool {
	if 5*(x.live+x.dead+1) > 4*len(x.ids) {
		return false
	}
	i, tag := x.slotOf(maphash.String(nameSeed, name))
	for x.ids[i] != 0 && x.ids[i] != tombstone {
		if i++; i == len(x.ids) {
			i = 0
		}
	}
	if x.ids[i] == tombstone {
		x.dead--
	}
	x.ids[i], x.tags[i] = id, tag
	x.live++
	return true
}

// remove takes out id, called name.
func (x *nameIndex) remove(id nodeID, name string) {
	i, _ := x.slotOf(maphash.String(nameSeed, name))
	for x.ids[i] != id {
		if x.ids[i] == 0 {
			return // not held (cannot happen: the list and its index change together)
		}
		if i++; i == len(x.ids) {
			i = 0
		}
	}
	x.ids[i] = tombstone
	x.live--
	x.dead++
}

// buildIndex makes c's index anew from its chunks, or drops it where c's length is
// outside indexMin..indexMax. (An index keeps taking children until it is full, so a
// list may hold one up to 4/3 indexMax children, but no rebuild reads more than
// indexMax names.)
func (c *children) buildIndex(t *Tree) {
	c.dropIndex(t)
	defer c.fitKeys(t) // keys where it has no index
	if c.n < indexMin || c.n > indexMax {
		return
	}
	x := newNameIndex(t, c.n*5/3)
	for _, ch := range c.chunks {
		for _, id := range ch {
			x.put(id, t.nameOf(id))
		}
	}
	c.index = x
}

func (c *children) dropIndex(t *Tree) {
	if c.index != nil {
		c.index.release(t)
		c.index = nil
	}
}

// indexAdd records a child added to c.
func (c *children) indexAdd(t *Tree, id nodeID, name string) {
	if t.loading {
		return // built at the load's end
	}
	switch {
	case c.index != nil && c.index.put(id, name):
	case c.index != nil || c.n == indexMin: // full, or the list just reached indexMin
		c.buildIndex(t)
	}
}

// indexRemove records a child removed from c; an index left mostly empty is made anew
// (or dropped, below indexMin/2 children: a list that shrinks and grows around indexMin
// does not rebuild at every step), and a list that shrinks back to indexMax gets one.
func (c *children) indexRemove(t *Tree, id nodeID, name string) {
	x := c.index
	if x == nil {
		if c.n == indexMax {
			c.buildIndex(t) // shrunk back from a length that dropped it
		}
		return
	}
	x.remove(id, name)
	switch {
	case c.n < indexMin/2:
		c.dropIndex(t)
		c.fitKeys(t)
	case 8*x.live < len(x.ids) && c.n >= indexMin:
		c.buildIndex(t)
	}
}

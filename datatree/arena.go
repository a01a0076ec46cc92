package datatree

import (
	"math/bits"
	"sort"
	"sync/atomic"
)

// The arena holds every znode's record and bytes in memory the garbage collector does not
// scan: records in pages of pointer-free nodes, names and data in slabs of bytes. A
// million znodes are then a few hundred objects to the collector instead of millions of
// pointers, and large pages and slabs come from the operating system (slab_mmap.go), so
// they do not raise the collector's heap goal either (the Go heap stays small and its
// headroom with it).
//
// A node is named by its id, an index into the pages; a *node points into a page and
// stays valid while the id is in use (pages never move). Each node's name and data are one
// blob, name first, in a slot of the size class that fits; a slot freed by a change or a
// delete goes to its class's free list. Frees wait while a multi may still be undone
// (deferFree) and while a Frozen may still read the old bytes (Thaw releases them).

// nodeID names a node in the arena; 0 is none.
type nodeID uint32

// blobRef names a blob in 32 bits (a node record is so 80 bytes, not 88). A blob in a
// class's slab is the slab's index << offsetBits | its offset / 8 (slots are multiples
// of 8 bytes, a slab is at most slabMax); a blob in a slab of its own (one larger than
// maxClassSize, or any once classSlabLimit slabs are taken) is soloBit | its index in
// arena.solos. 0 is none (class slab 0 is unused).
type blobRef uint32

const (
	offsetBits         = 17 // slabMax / 8
	offsetMask         = 1<<offsetBits - 1
	soloBit    blobRef = 1 << 31
)

// classSlabLimit is how many class slabs refs can name (slab 0 included): 16,384 slabs of
// up to 1 MiB. A class blob past them gets a slab of its own (a test lowers it).
var classSlabLimit = 1 << (31 - offsetBits)

// Node pages grow: the first two hold 64 nodes, then each doubles up to pageMax, so a
// small tree stays small; ids from 2*pageMax on fall in pages of pageMax.
const (
	pageFirstBits = 6
	pageMaxBits   = 12
	pageMax       = 1 << pageMaxBits
	smallPages    = pageMaxBits - pageFirstBits + 2 // pages 0..7 cover ids below 2*pageMax
)

// pageOf returns the page of id and its index there.
func pageOf(id nodeID) (page, idx int) {
	i := int(id)
	if i < 2*pageMax {
		if i < 1<<pageFirstBits {
			return 0, i
		}
		p := bits.Len(uint(i)) - pageFirstBits // [64,128) -> 1, [128,256) -> 2, ...
		return p, i - 1<<(p+pageFirstBits-1)
	}
	i -= 2 * pageMax
	return smallPages + i>>pageMaxBits, i & (pageMax - 1)
}

// pageSize is the number of nodes in page p.
func pageSize(p int) int {
	switch {
	case p == 0:
		return 1 << pageFirstBits
	case p < smallPages:
		return 1 << (p + pageFirstBits - 1)
	}
	return pageMax
}

// Size classes of blobs: every 8 bytes up to 256, then 8 steps per power of two up to
// maxClassSize (at most 12.5% of a slot unused); larger blobs get a slab of their own.
const maxClassSize = 64 << 10

var classSizes = func() []int {
	var s []int
	for n := 8; n <= 256; n += 8 {
		s = append(s, n)
	}
	for p := 256; p < maxClassSize; p *= 2 {
		for k := 1; k <= 8; k++ {
			s = append(s, p+k*p/8)
		}
	}
	return s
}()

// bigClass marks a slab that holds one blob larger than maxClassSize.
const bigClass = 255

func classOf(n int) int {
	if n <= 256 {
		return (n+7)/8 - 1
	}
	return sort.SearchInts(classSizes, n)
}

// Slabs of a class start at slabFirst bytes and double up to slabMax, the most a ref's
// offset bits can reach.
const (
	slabFirst = 4 << 10
	slabMax   = (offsetMask + 1) * 8
)

type slab struct {
	mem   []byte
	class uint8
}

type classState struct {
	free []blobRef
	cur  uint32 // slab being filled; 0 before the first
	off  uint32 // next free byte in it
	next int    // size of the class's next slab
}

// arena is the tree's memory (see the top of this file).
type arena struct {
	pages    [][]node
	nextID   nodeID // next id never handed out
	freeIDs  []nodeID
	slabs    []slab // class slabs; [0] unused
	solos    []slab // slabs of one blob each
	freeSolo []uint32
	classes  []classState
	osMem    *osMemory // what came from the operating system, returned when the tree dies

	blobBytes int64 // bytes of slots in use
	heapBytes int64 // pages and slabs on the Go heap
}

func newArena() *arena {
	a := &arena{slabs: make([]slab, 1), classes: make([]classState, len(classSizes)), osMem: &osMemory{}, nextID: 1}
	return a
}

// node returns the record of id.
func (a *arena) node(id nodeID) *node {
	p, i := pageOf(id)
	return &a.pages[p][i]
}

// newNode hands out an id with a zeroed record.
func (a *arena) newNode() (nodeID, *node) {
	if n := len(a.freeIDs); n > 0 {
		id := a.freeIDs[n-1]
		a.freeIDs = a.freeIDs[:n-1]
		r := a.node(id)
		*r = node{}
		return id, r
	}
	id := a.nextID
	a.nextID++
	p, i := pageOf(id)
	for p >= len(a.pages) {
		size := pageSize(len(a.pages))
		pg, onHeap := a.osMem.nodes(size)
		if onHeap {
			a.heapBytes += int64(size) * nodeBytes
		}
		a.pages = append(a.pages, pg)
	}
	return id, &a.pages[p][i]
}

func (a *arena) freeNode(id nodeID) { a.freeIDs = append(a.freeIDs, id) }

// bytes returns the n bytes of blob b.
func (a *arena) bytes(b blobRef, n int) []byte {
	if b&soloBit != 0 {
		return a.solos[b&^soloBit].mem[:n:n]
	}
	off := uint32(b&offsetMask) << 3
	return a.slabs[b>>offsetBits].mem[off : off+uint32(n) : off+uint32(n)]
}

// alloc returns a blob of n > 0 bytes, zeroed or not.
func (a *arena) alloc(n int) blobRef {
	b, size := a.grab(n)
	a.blobBytes += size
	return b
}

// grab is alloc without counting the blob in blobBytes, and the bytes it takes. A
// children list's name index takes its table so: MemoryInUse, which reports
// blobBytes, depends on the tree's content alone, and an index's size on its history.
// A blob counts its class's size wherever it is, so where it went does not show either.
func (a *arena) grab(n int) (blobRef, int64) {
	if n > maxClassSize {
		return a.newSolo(n, bigClass), int64(n)
	}
	c := classOf(n)
	size := classSizes[c]
	cs := &a.classes[c]
	if k := len(cs.free); k > 0 {
		b := cs.free[k-1]
		cs.free = cs.free[:k-1]
		return b, int64(size)
	}
	if cs.cur == 0 || int(cs.off)+size > len(a.slabs[cs.cur].mem) {
		if len(a.slabs) >= classSlabLimit {
			return a.newSolo(size, uint8(c)), int64(size)
		}
		if cs.next == 0 {
			cs.next = max(slabFirst, size)
		}
		cs.cur, cs.off = a.newSlab(cs.next, uint8(c)), 0
		cs.next = min(cs.next*2, slabMax)
	}
	b := blobRef(cs.cur<<offsetBits | cs.off>>3)
	cs.off += uint32(size)
	return b, int64(size)
}

// free returns blob b of n bytes (as allocated) to its class, or its own slab to the
// system.
func (a *arena) free(b blobRef, n int) { a.blobBytes -= a.drop(b, n) }

// drop is free without counting (grab's), and the bytes it gave back.
func (a *arena) drop(b blobRef, n int) int64 {
	if b == 0 {
		return 0
	}
	if b&soloBit != 0 {
		i := uint32(b &^ soloBit)
		s := &a.solos[i]
		size := int64(n)
		if s.class != bigClass {
			size = int64(classSizes[s.class])
		}
		if !a.osMem.release(s.mem) {
			a.heapBytes -= int64(len(s.mem))
		}
		*s = slab{}
		a.freeSolo = append(a.freeSolo, i)
		return size
	}
	s := &a.slabs[b>>offsetBits]
	a.classes[s.class].free = append(a.classes[s.class].free, b)
	return int64(classSizes[s.class])
}

// take returns size bytes for a slab, from the system if they are many.
func (a *arena) take(size int, class uint8) slab {
	mem, onHeap := a.osMem.bytes(size)
	if onHeap {
		a.heapBytes += int64(len(mem))
	}
	return slab{mem: mem, class: class}
}

func (a *arena) newSlab(size int, class uint8) uint32 {
	a.slabs = append(a.slabs, a.take(size, class))
	return uint32(len(a.slabs) - 1)
}

// newSolo puts a blob of size bytes of class (or bigClass) in a slab of its own.
func (a *arena) newSolo(size int, class uint8) blobRef {
	s := a.take(size, class)
	if k := len(a.freeSolo); k > 0 {
		i := a.freeSolo[k-1]
		a.freeSolo = a.freeSolo[:k-1]
		a.solos[i] = s
		return soloBit | blobRef(i)
	}
	a.solos = append(a.solos, s)
	return soloBit | blobRef(len(a.solos)-1)
}

// footprint is every byte the arena holds: pages and slabs, on the heap or not.
func (a *arena) footprint() int64 { return a.heapBytes + a.osMem.mapped }

// offHeap counts the bytes every live tree holds outside the Go heap (OffHeapBytes).
var offHeap atomic.Int64

// OffHeapBytes is the memory every tree in this process holds outside the Go heap (node
// pages and blob slabs taken from the operating system). runtime/metrics does not see
// it; RSS does.
func OffHeapBytes() int64 { return offHeap.Load() }

package datatree

import (
	"runtime"
	"unsafe"
)

// mmapMin is the smallest page or slab taken from the operating system: smaller ones (a
// small tree's) live on the Go heap, so a process with thousands of small trees holds no
// mappings for them.
const mmapMin = 256 << 10

// nodeBytes is the size of one node record.
const nodeBytes = int64(unsafe.Sizeof(node{}))

// osMemory is what a tree took from the operating system. A cleanup on the tree (see
// attachCleanup) unmaps it once the tree is unreachable; nothing else may point into it
// then, which is why the tree hands out copies of names and data, never slices of them.
type osMemory struct {
	regions map[*byte][]byte
	mapped  int64
}

// bytes returns size zeroed bytes, and whether they are on the Go heap.
func (o *osMemory) bytes(size int) ([]byte, bool) {
	if size >= mmapMin {
		if b := osMap(size); b != nil {
			if o.regions == nil {
				o.regions = map[*byte][]byte{}
			}
			o.regions[&b[0]] = b
			o.mapped += int64(len(b))
			offHeap.Add(int64(len(b)))
			return b, false
		}
	}
	return make([]byte, size), true
}

// nodes returns a zeroed page of n node records, and whether it is on the Go heap.
func (o *osMemory) nodes(n int) ([]node, bool) {
	if int64(n)*nodeBytes >= mmapMin {
		if b, onHeap := o.bytes(n * int(nodeBytes)); !onHeap {
			return unsafe.Slice((*node)(unsafe.Pointer(&b[0])), n), false
		}
	}
	return make([]node, n), true
}

// release returns b to the system if it came from there, and reports whether it did.
func (o *osMemory) release(b []byte) bool {
	if len(b) == 0 || o.regions[&b[0]] == nil {
		return false
	}
	delete(o.regions, &b[0])
	o.mapped -= int64(len(b))
	offHeap.Add(-int64(len(b)))
	osUnmap(b)
	return true
}

// releaseAll unmaps everything; the tree that held it is gone.
func (o *osMemory) releaseAll() {
	for k, b := range o.regions {
		delete(o.regions, k)
		offHeap.Add(-int64(len(b)))
		osUnmap(b)
	}
	o.mapped = 0
}

// attachCleanup returns t's mapped memory to the system once t is unreachable.
func attachCleanup(t *Tree) {
	runtime.AddCleanup(t, func(o *osMemory) { o.releaseAll() }, t.mem.osMem)
}

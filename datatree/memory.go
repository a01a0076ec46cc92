package datatree

// childEntry is what a node costs its parent's child list: its id, and the slack of a
// chunk that is three quarters full on average.
const childEntry = 6

// MemoryInUse is the memory the tree's content takes: every node's record and child
// entry, and its name and data rounded up to their size class. It depends only on the
// content (two replicas agree), and it falls when nodes are deleted or data shrinks, so
// a cap on it takes writes again once room is made (freed slots are reused).
func (t *Tree) MemoryInUse() int64 {
	return int64(t.nodes)*(nodeBytes+childEntry) + t.mem.blobBytes
}

// MemoryHeld is the memory the tree holds from the heap and the system: its pages and
// slabs with their free slots (which are reused, not returned), and its child lists.
func (t *Tree) MemoryHeld() int64 {
	return t.mem.footprint() + int64(cap(t.kidTab))*int64(childrenBytes) + int64(t.nodes)*childEntry
}

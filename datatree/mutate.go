package datatree

// The only functions that change the tree's shape. Each keeps the counters and the
// ephemeral, container and TTL indexes in step, and, inside a multi, logs its inverse.

func (t *Tree) logUndo(f func()) {
	if t.undo != nil {
		t.undo = append(t.undo, f)
	}
}

func (t *Tree) index(path string, n *node) {
	switch t.kind(n) {
	case kindContainer:
		t.containers[path] = struct{}{}
	case kindTTL:
		t.ttls[path] = struct{}{}
	case kindEphemeral:
		owner := n.owner
		set := t.ephemerals[owner]
		if set == nil {
			set = map[string]struct{}{}
			t.ephemerals[owner] = set
		}
		set[path] = struct{}{}
	}
}

func (t *Tree) unindex(path string, n *node) {
	switch t.kind(n) {
	case kindContainer:
		delete(t.containers, path)
	case kindTTL:
		delete(t.ttls, path)
	case kindEphemeral:
		owner := n.owner
		if set := t.ephemerals[owner]; set != nil {
			delete(set, path)
			if len(set) == 0 {
				delete(t.ephemerals, owner)
			}
		}
	}
}

// link adds n (id, with its acl ref already acquired) under parent at path.
func (t *Tree) link(parent *node, path string, id nodeID, n *node, at childPlace) {
	t.touch(parent)
	t.addChild(parent, id, t.name(n), at)
	t.nodes++
	t.dataSize += javaLen(path) + int64(max(n.dataLen, 0))
	t.index(path, n)
	if t.undo != nil {
		t.logUndo(func() {
			t.unindex(path, n)
			t.removeChild(parent, t.name(n), childPlace{})
			t.nodes--
			t.dataSize -= javaLen(path) + int64(max(n.dataLen, 0))
			t.acls.release(n.acl)
			// Made inside the multi: no Frozen can see it, so it goes at once.
			t.mem.free(n.blob, n.size())
			t.mem.freeNode(id)
		})
	}
}

// unlink removes the childless node n at path from parent, drops its ACL use and frees
// it (when nothing can still need it: see release).
func (t *Tree) unlink(parent *node, path string, n *node, at childPlace) {
	t.touch(parent)
	t.touch(n) // an undone unlink gives it a new ACL ref
	t.unindex(path, n)
	id := t.removeChild(parent, t.name(n), at)
	t.nodes--
	t.dataSize -= javaLen(path) + int64(max(n.dataLen, 0))
	if t.undo != nil {
		acl := t.acls.get(n.acl)
		t.logUndo(func() {
			n.acl = t.acls.acquire(acl)
			t.addChild(parent, id, t.name(n), childPlace{})
			t.nodes++
			t.dataSize += javaLen(path) + int64(max(n.dataLen, 0))
			t.index(path, n)
		})
	}
	t.acls.release(n.acl)
	t.release(freed{id: id, blob: n.blob, size: n.size()})
}

// setStat replaces a node's stored stat, logging the old one.
func (t *Tree) setStat(n *node, st storedStat) {
	t.touch(n)
	if t.undo != nil {
		old := n.stat()
		t.logUndo(func() { n.setStat(old) })
	}
	n.setStat(st)
}

// setData replaces a node's data, logging the old data.
func (t *Tree) setData(n *node, data []byte) {
	diff := int64(len(data)) - int64(max(n.dataLen, 0))
	if n == t.root {
		diff *= 2 // the root is in ZooKeeper's map twice
	}
	t.replaceData(n, data)
	if t.undo != nil {
		t.logUndo(func() { t.dataSize -= diff })
	}
	t.dataSize += diff
}

// replaceData gives n new data (a new blob, or the old one rewritten when nothing can
// still read it and the size class is the same), logging the old data.
func (t *Tree) replaceData(n *node, data []byte) {
	t.touch(n)
	old := *n
	newSize := int(n.nameLen) + len(data)
	if t.undo == nil && t.frozen == nil && old.blob != 0 && sameSlot(old.size(), newSize) {
		b := t.mem.bytes(n.blob, newSize)
		copy(b[n.nameLen:], data)
		n.dataLen = dataLenOf(data)
		return
	}
	t.store(n, t.name(n), data) // the name is copied out of the old blob, still held
	if t.undo != nil {
		t.logUndo(func() {
			t.mem.free(n.blob, n.size()) // made inside the multi: goes at once
			n.blob, n.dataLen = old.blob, old.dataLen
		})
	}
	t.release(freed{blob: old.blob, size: old.size()})
}

// sameSlot reports whether blobs of a and b bytes take the same size class.
func sameSlot(a, b int) bool {
	return a > 0 && b > 0 && a <= maxClassSize && b <= maxClassSize && classOf(a) == classOf(b)
}

// freed is memory a change let go of: a node id, a blob, or both.
type freed struct {
	id   nodeID
	blob blobRef
	size int
}

// release frees f now, or once the running multi can no longer be undone, or once the
// open Frozen is thawed: until then the old bytes may still be read.
func (t *Tree) release(f freed) {
	switch {
	case t.undo != nil:
		t.multiFrees = append(t.multiFrees, f)
	case t.frozen != nil:
		t.frozenFrees = append(t.frozenFrees, f)
	default:
		t.freeNow(f)
	}
}

func (t *Tree) freeNow(f freed) {
	t.mem.free(f.blob, f.size)
	if f.id != 0 {
		t.mem.freeNode(f.id)
	}
}

// endMulti settles the frees of a multi: kept on success, forgotten when it was undone
// (the nodes and blobs are in use again).
func (t *Tree) endMulti(applied bool) {
	frees := t.multiFrees
	t.multiFrees = nil
	if !applied {
		return
	}
	for _, f := range frees {
		t.release(f)
	}
}

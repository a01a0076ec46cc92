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
		owner := n.stat.EphemeralOwner
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
		owner := n.stat.EphemeralOwner
		if set := t.ephemerals[owner]; set != nil {
			delete(set, path)
			if len(set) == 0 {
				delete(t.ephemerals, owner)
			}
		}
	}
}

// link adds n (with its acl ref already acquired) under parent at path.
func (t *Tree) link(parent *node, path string, n *node) {
	t.touch(parent)
	parent.addChild(n)
	t.nodes++
	t.dataSize += javaLen(path) + int64(len(n.data))
	t.index(path, n)
	if t.undo != nil {
		t.logUndo(func() {
			t.unindex(path, n)
			parent.removeChild(n.name)
			t.nodes--
			t.dataSize -= javaLen(path) + int64(len(n.data))
			t.acls.release(n.acl)
		})
	}
}

// unlink removes the childless node n at path from parent and drops its ACL use.
func (t *Tree) unlink(parent *node, path string, n *node) {
	t.touch(parent)
	t.touch(n) // an undone unlink gives it a new ACL ref
	t.unindex(path, n)
	parent.removeChild(n.name)
	t.nodes--
	t.dataSize -= javaLen(path) + int64(len(n.data))
	if t.undo != nil {
		acl := t.acls.get(n.acl)
		t.logUndo(func() {
			n.acl = t.acls.acquire(acl)
			parent.addChild(n)
			t.nodes++
			t.dataSize += javaLen(path) + int64(len(n.data))
			t.index(path, n)
		})
	}
	t.acls.release(n.acl)
}

// setStat replaces a node's stored stat, logging the old one.
func (t *Tree) setStat(n *node, st storedStat) {
	t.touch(n)
	if t.undo != nil {
		old := n.stat
		t.logUndo(func() { n.stat = old })
	}
	n.stat = st
}

// setData replaces a node's data, logging the old data.
func (t *Tree) setData(n *node, data []byte) {
	t.touch(n)
	diff := int64(len(data) - len(n.data))
	if n == t.root {
		diff *= 2 // the root is in ZooKeeper's map twice
	}
	if t.undo != nil {
		old := n.data
		t.logUndo(func() {
			n.data = old
			t.dataSize -= diff
		})
	}
	n.data = data
	t.dataSize += diff
}

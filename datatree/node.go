package datatree

import "unsafe"

// node is one znode's record, kept in the arena's pages. It holds no Go pointers, so the
// collector never scans it: its name and data are one blob in the arena (name first),
// its children a list of ids in the tree's child table, its ACL a ref into the ACL cache.
// It keeps its own name, not its path: paths are rebuilt on the way down.
//
// Its stat is stored field by field, not as a storedStat: that struct's size is rounded
// up to its 8-byte alignment, and the 4 bytes of padding would make a record 88 bytes
// instead of 80 (TestNodeRecordSize).
type node struct {
	czxid, mzxid, ctime, mtime, pzxid, owner int64
	version, cversion, aversion              int32

	kids    uint32 // index into Tree.kidTab; 0 while the node has no children
	acl     aclRef
	nameLen uint32
	dataLen int32 // -1 is null data (nil and empty differ, as in ZooKeeper)
	blob    blobRef
}

// stat is n's stored stat.
func (n *node) stat() storedStat {
	return storedStat{Czxid: n.czxid, Mzxid: n.mzxid, Ctime: n.ctime, Mtime: n.mtime, Pzxid: n.pzxid,
		EphemeralOwner: n.owner, Version: n.version, Cversion: n.cversion, Aversion: n.aversion}
}

// setStat replaces n's stored stat (Tree.setStat also logs the old one for a multi's undo).
func (n *node) setStat(st storedStat) {
	n.czxid, n.mzxid, n.ctime, n.mtime, n.pzxid, n.owner = st.Czxid, st.Mzxid, st.Ctime, st.Mtime, st.Pzxid, st.EphemeralOwner
	n.version, n.cversion, n.aversion = st.Version, st.Cversion, st.Aversion
}

// name is n's last path component ("" for the root). The string points into the arena:
// it is valid until n changes; clone it to keep it.
func (t *Tree) name(n *node) string {
	if n.nameLen == 0 {
		return ""
	}
	b := t.mem.bytes(n.blob, int(n.nameLen))
	return unsafe.String(&b[0], len(b))
}

// data is n's data (nil for null). The slice points into the arena: it is valid until n
// changes; copy it to keep it.
func (t *Tree) data(n *node) []byte {
	switch n.dataLen {
	case -1:
		return nil
	case 0:
		return []byte{}
	}
	return t.mem.bytes(n.blob, int(n.nameLen)+int(n.dataLen))[n.nameLen:]
}

// dataCopy is n's data in a fresh slice, which the caller may keep.
func (t *Tree) dataCopy(n *node) []byte {
	d := t.data(n)
	if d == nil {
		return nil
	}
	return append(make([]byte, 0, len(d)), d...)
}

func dataLenOf(data []byte) int32 {
	if data == nil {
		return -1
	}
	return int32(len(data))
}

func (n *node) size() int { return int(n.nameLen) + max(int(n.dataLen), 0) }

// store puts name and data into a new blob for n (whose old blob, if any, the caller
// frees).
func (t *Tree) store(n *node, name string, data []byte) {
	n.nameLen, n.dataLen, n.blob = uint32(len(name)), dataLenOf(data), 0
	if size := n.size(); size > 0 {
		n.blob = t.mem.alloc(size)
		b := t.mem.bytes(n.blob, size)
		copy(b[copy(b, name):], data)
	}
}

// newNode makes a node named name with data, acl (acquired here) and st, not yet linked.
func (t *Tree) newNode(name string, data []byte, acl aclRef, st storedStat) (nodeID, *node) {
	id, n := t.mem.newNode()
	n.acl = acl
	n.setStat(st)
	t.store(n, name, data)
	return id, n
}

func (t *Tree) kidsOf(n *node) *children {
	if n.kids == 0 {
		return nil
	}
	return &t.kidTab[n.kids]
}

func (t *Tree) numChildren(n *node) int32 { return int32(t.kidsOf(n).len()) }

// child returns the child of n called name, or nil.
func (t *Tree) child(n *node, name string) *node {
	if id := t.kidsOf(n).get(t, name); id != 0 {
		return t.mem.node(id)
	}
	return nil
}

// hasChild reports whether n has a child called name. A name that sorts after every
// child needs no search: sequential nodes come so, and a snapshot lists names in order.
func (t *Tree) hasChild(n *node, name string) bool {
	id, _ := t.childAt(n, name)
	return id != 0
}

// childAt is n's child called name (0 if none), and where a search found it is or would
// go, for removeChild or addChild with nothing changed in n's children since
// (children.locate).
func (t *Tree) childAt(n *node, name string) (nodeID, childPlace) {
	return t.kidsOf(n).locate(t, name)
}

// addChild links id (named name) under n, at at if childAt placed it with nothing
// changed in n's children since; the caller has checked the name is free.
func (t *Tree) addChild(n *node, id nodeID, name string, at childPlace) {
	if n.kids == 0 {
		if k := len(t.freeKids); k > 0 {
			n.kids = t.freeKids[k-1]
			t.freeKids = t.freeKids[:k-1]
		} else {
			t.kidTab = append(t.kidTab, children{})
			n.kids = uint32(len(t.kidTab) - 1)
		}
	}
	t.kidTab[n.kids].add(t, id, name, at)
}

// removeChild unlinks the child called name and returns its id (0 if absent).
func (t *Tree) removeChild(n *node, name string, at childPlace) nodeID {
	c := t.kidsOf(n)
	id := c.remove(t, name, at)
	if c != nil && c.len() == 0 {
		*c = children{} // a node with no children holds no list
		t.freeKids = append(t.freeKids, n.kids)
		n.kids = 0
	}
	return id
}

// eachChild calls f with every child of n in name order until f returns false.
func (t *Tree) eachChild(n *node, f func(id nodeID, c *node) bool) {
	t.kidsOf(n).each(func(id nodeID) bool { return f(id, t.mem.node(id)) })
}

// childNames returns the names of n's children in name order, sharing one fresh buffer.
func (t *Tree) childNames(n *node) []string {
	c := t.kidsOf(n)
	names := make([]string, 0, c.len())
	total := 0
	c.each(func(id nodeID) bool {
		total += int(t.mem.node(id).nameLen)
		return true
	})
	buf := make([]byte, 0, total)
	c.each(func(id nodeID) bool {
		start := len(buf)
		buf = append(buf, t.nameOf(id)...)
		if len(buf) == start {
			names = append(names, "")
		} else {
			names = append(names, unsafe.String(&buf[start], len(buf)-start))
		}
		return true
	})
	return names
}

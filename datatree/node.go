package datatree

// node is one znode. It keeps its own name, not its path: paths are rebuilt from the
// parent chain when needed, so a deep tree does not store every prefix many times.
type node struct {
	name   string // last path component; "" for the root
	parent *node
	kids   *children // nil until the node gets its first child
	data   []byte    // nil and empty are different, as in ZooKeeper (null vs byte[0])
	acl    aclRef
	stat   storedStat
}

func (n *node) numChildren() int32 { return int32(n.kids.len()) }

func (n *node) child(name string) *node {
	if n.kids == nil {
		return nil
	}
	return n.kids.get(name)
}

func (n *node) addChild(c *node) {
	if n.kids == nil {
		n.kids = &children{}
	}
	c.parent = n
	n.kids.add(c)
}

func (n *node) removeChild(name string) {
	if n.kids == nil {
		return
	}
	n.kids.remove(name)
	if n.kids.len() == 0 {
		n.kids = nil // a node with no children holds no container
	}
}

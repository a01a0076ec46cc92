package datatree

import (
	"fmt"
	"strings"

	"github.com/zkraft/zkraft/jute"
)

// StoredNode is one znode as snapshots, imports and exports carry it: its path, data
// (nil is null), ACL and stored stat (ZooKeeper's StatPersisted: Cversion counts child
// creations, EphemeralOwner also marks containers and TTL nodes).
type StoredNode struct {
	Path                                              string
	Data                                              []byte
	ACL                                               []jute.ACL
	Czxid, Mzxid, Ctime, Mtime, Pzxid, EphemeralOwner int64
	Version, Cversion, Aversion                       int32
}

// Nodes calls fn for every node in pre-order, children in name order. It only reads;
// Data is a copy, fn must not keep ACL past a change to the tree.
func (t *Tree) Nodes(fn func(StoredNode)) {
	t.walk(func(path string, n *node) {
		s := n.stat()
		fn(StoredNode{Path: path, Data: t.dataCopy(n), ACL: t.acls.get(n.acl),
			Czxid: s.Czxid, Mzxid: s.Mzxid, Ctime: s.Ctime, Mtime: s.Mtime, Pzxid: s.Pzxid,
			EphemeralOwner: s.EphemeralOwner, Version: s.Version, Cversion: s.Cversion, Aversion: s.Aversion})
	})
}

// FromNodes builds a tree from nodes in pre-order (the root first, every parent before
// its children), with the checks ReadSnapshot makes.
func FromNodes(nodes []StoredNode, opts Options) (*Tree, error) {
	t := newEmpty(opts)
	for i := range nodes {
		sn := &nodes[i]
		st := storedStat{
			Czxid: sn.Czxid, Mzxid: sn.Mzxid, Ctime: sn.Ctime, Mtime: sn.Mtime, Pzxid: sn.Pzxid,
			EphemeralOwner: sn.EphemeralOwner, Version: sn.Version, Cversion: sn.Cversion, Aversion: sn.Aversion}
		if err := t.load(sn.Path, sn.Data, t.acls.acquire(sn.ACL), st); err != nil {
			return nil, err
		}
	}
	if t.root == nil {
		return nil, fmt.Errorf("%w: no root", ErrSnapshotCorrupt)
	}
	t.loaded()
	return t, nil
}

// load adds a node that a snapshot or an import holds: the root first, then each node
// after its parent and before any later sibling. It copies data; path may be a scratch
// string that is not kept (it is cloned where an index keeps it).
func (t *Tree) load(path string, data []byte, acl aclRef, st storedStat) error {
	if t.root == nil {
		if path != "/" {
			return fmt.Errorf("%w: first node %q", ErrSnapshotCorrupt, path)
		}
		_, t.root = t.newNode("", data, acl, st)
		t.nodes = 1
		t.loading = true
		t.dataSize = 1 + 2*int64(len(data)) // "/" and its alias "", as computeDataSize counts
		return nil
	}
	parentPath, name, ok := splitParent(path)
	if !ok || !validPath(path) || path == "/" {
		return fmt.Errorf("%w: bad path %q", ErrSnapshotCorrupt, strings.Clone(path))
	}
	parent := t.loadParent(parentPath)
	if parent == nil || t.hasChild(parent, name) {
		return fmt.Errorf("%w: node %q out of order", ErrSnapshotCorrupt, strings.Clone(path))
	}
	if kindOf(st.EphemeralOwner, &t.opts) != kindVoid || strings.HasPrefix(path, quotaRoot) {
		path = strings.Clone(path) // indexes keep it
	}
	id, n := t.newNode(name, data, acl, st)
	t.link(parent, path, id, n, childPlace{}) // names come in order from a snapshot: insert appends (else it searches)
	t.indexQuota(path, 1)
	return nil
}

// loaded ends a load: the children lists get their name indexes, each built once
// (built as the lists grew, they made reading a 1M-znode snapshot take 75% longer).
func (t *Tree) loaded() {
	t.lastLoadPath, t.lastLoad = "", nil // (link counted every node's path and data)
	t.loading = false
	for i := range t.kidTab {
		if c := &t.kidTab[i]; c.n >= indexMin {
			c.buildIndex(t)
		}
	}
}

// loadParent is lookup for load: siblings come one after another, so the last parent
// found is asked for again and again.
func (t *Tree) loadParent(path string) *node {
	if t.lastLoad != nil && path == t.lastLoadPath {
		return t.lastLoad
	}
	n := t.lookup(path)
	t.lastLoadPath, t.lastLoad = strings.Clone(path), n
	return n
}

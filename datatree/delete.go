package datatree

import "github.com/zkraft/zkraft/jute"

// versionMatches is checkAndIncVersion's test: -1 matches any version.
func versionMatches(current, expected int32) bool { return expected == -1 || expected == current }

// parentForDelete is getParentPathAndValidate: no slash, a NUL or one of ZooKeeper's
// own nodes ("/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config") is
// BadArguments. The path itself is not otherwise validated: "/a/" is just absent.
func parentForDelete(path string) (string, bool) {
	parent, _, ok := splitParent(path)
	if !ok || isSpecialPath(path) {
		return "", false
	}
	return parent, true
}

// delete is the delete case of pRequest2Txn then DataTree.deleteNode. Order: path,
// parent exists, DELETE on the parent, node exists, version, no children.
func (t *Tree) delete(tx Txn, path string, version int32) (jute.Code, []Event) {
	parentPath, ok := parentForDelete(path)
	if !ok {
		return jute.ErrBadArguments, nil
	}
	parent := t.lookup(parentPath)
	if parent == nil {
		return jute.ErrNoNode, nil
	}
	if code := t.opts.checkACL(t.acls.get(parent.acl), jute.PermDelete, tx.Caller); code != jute.OK {
		return code, nil
	}
	if parentPath == "/" { // "/" is the root only as the whole path: no node's path begins "//"
		return jute.ErrNoNode, nil
	}
	id, at := t.childAt(parent, path[len(parentPath)+1:])
	if id == 0 {
		return jute.ErrNoNode, nil
	}
	n := t.mem.node(id)
	if !versionMatches(n.version, version) {
		return jute.ErrBadVersion, nil
	}
	if n.kids != 0 {
		return jute.ErrNotEmpty, nil
	}
	return jute.OK, t.removeNode(tx.Zxid, parentPath, parent, path, n, at)
}

// removeNode is DataTree.deleteNode: the parent's pzxid moves forward (never back),
// its stored cversion does not change. at is where the parent's list holds n, if a
// search found it (childAt); nothing may change that list in between.
func (t *Tree) removeNode(zxid int64, parentPath string, parent *node, path string, n *node, at childPlace) []Event {
	if zxid > parent.pzxid {
		ps := parent.stat()
		ps.Pzxid = zxid
		t.setStat(parent, ps)
	}
	acl := t.acls.get(n.acl) // before unlink releases it
	t.unlink(parent, path, n, at)
	t.quotaDeleted(path, n)
	return []Event{
		{Type: jute.EventNodeDeleted, Path: path, ACL: acl},
		{Type: jute.EventNodeChildrenChanged, Path: eventParent(parentPath), ACL: t.acls.get(parent.acl)},
	}
}

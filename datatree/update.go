package datatree

import "github.com/zkraft/zkraft/jute"

// setDataOp is the setData case of pRequest2Txn then DataTree.setData. Order: path,
// node exists, WRITE, version.
//
// /zookeeper/config is written by reconfig only (SetConfig): its data is the cluster's
// membership, which zkraft reads back from the tree (a snapshot's restore parses it), so
// a setData of it is NoAuth whatever the caller's rights. ZooKeeper refuses it to all but
// a caller with WRITE there (the super user, or anyone after a super user's setACL), and
// its own membership lives outside the tree, so there it changes nothing.
func (t *Tree) setDataOp(tx Txn, r *jute.SetDataRequest) (*jute.SetDataResponse, jute.Code, []Event) {
	if !validPath(r.Path) {
		return nil, jute.ErrBadArguments, nil
	}
	n := t.lookup(r.Path)
	if n == nil {
		return nil, jute.ErrNoNode, nil
	}
	if code := t.opts.checkACL(t.acls.get(n.acl), jute.PermWrite, tx.Caller); code != jute.OK {
		return nil, code, nil
	}
	if r.Path == ConfigPath {
		return nil, jute.ErrNoAuth, nil
	}
	diff := int64(len(r.Data)) - int64(max(n.dataLen, 0))
	if code := t.checkQuota(r.Path, diff, 0); code != jute.OK {
		return nil, code, nil
	}
	if !versionMatches(n.version, r.Version) {
		return nil, jute.ErrBadVersion, nil
	}
	st := n.stat()
	st.Version++ // wraps like Java's int
	st.Mtime = tx.Time
	st.Mzxid = tx.Zxid
	t.setStat(n, st)
	t.setData(n, r.Data)
	resp := &jute.SetDataResponse{Stat: t.clientStat(n)}
	t.updateQuotaStats(r.Path, diff, 0)
	return resp, jute.OK,
		[]Event{{Type: jute.EventNodeDataChanged, Path: r.Path, ACL: t.acls.get(n.acl)}}
}

// setACLOp is the setACL case of pRequest2Txn then DataTree.setACL. Order: path, the
// new ACL (InvalidACL comes before NoNode), node exists, ADMIN, aversion. No event.
func (t *Tree) setACLOp(tx Txn, r *jute.SetACLRequest) (*jute.SetACLResponse, jute.Code) {
	if !validPath(r.Path) {
		return nil, jute.ErrBadArguments
	}
	acl, code := t.opts.fixupACL(r.Acl, tx.Caller)
	if code != jute.OK {
		return nil, code
	}
	n := t.lookup(r.Path)
	if n == nil {
		return nil, jute.ErrNoNode
	}
	if code := t.opts.checkACL(t.acls.get(n.acl), jute.PermAdmin, tx.Caller); code != jute.OK {
		return nil, code
	}
	if !versionMatches(n.aversion, r.Version) {
		return nil, jute.ErrBadVersion
	}
	st := n.stat()
	st.Aversion++
	t.setStat(n, st)
	t.touch(n)
	old := n.acl
	n.acl = t.acls.acquire(acl)
	t.acls.release(old)
	return &jute.SetACLResponse{Stat: t.clientStat(n)}, jute.OK
}

// check is the check case of pRequest2Txn: path, node exists, READ, version. It
// changes nothing.
func (t *Tree) check(tx Txn, r *jute.CheckVersionRequest) jute.Code {
	if !validPath(r.Path) {
		return jute.ErrBadArguments
	}
	n := t.lookup(r.Path)
	if n == nil {
		return jute.ErrNoNode
	}
	if code := t.opts.checkACL(t.acls.get(n.acl), jute.PermRead, tx.Caller); code != jute.OK {
		return code
	}
	if !versionMatches(n.version, r.Version) {
		return jute.ErrBadVersion
	}
	return jute.OK
}

// ConfigPath is the node that holds the cluster's membership.
const ConfigPath = "/zookeeper/config"

// SetConfig replaces /zookeeper/config's data as a committed ZooKeeper reconfig does
// (DataTree.processTxn with version -1): mzxid and mtime are the entry's, the data
// version stays -1, and data watches on the node fire.
func (t *Tree) SetConfig(tx Txn, data []byte) (jute.Stat, []Event) {
	n := t.lookup(ConfigPath)
	st := n.stat()
	st.Version = -1
	st.Mtime = tx.Time
	st.Mzxid = tx.Zxid
	t.setStat(n, st)
	diff := int64(len(data)) - int64(max(n.dataLen, 0))
	t.setData(n, data)
	out := t.clientStat(n)
	t.updateQuotaStats(ConfigPath, diff, 0)
	return out, []Event{{Type: jute.EventNodeDataChanged, Path: ConfigPath, ACL: t.acls.get(n.acl)}}
}

package datatree

import (
	"sort"

	"github.com/zkraft/zkraft/jute"
)

// CleanupCandidates is ContainerManager.getCandidates at time now, sorted: containers
// without children that have had one (stored cversion > 0; or, with
// ContainerMaxNeverUsed set, that are older than it), and TTL nodes without children
// whose mtime + ttl < now. The leader proposes OpDeleteContainer for each.
func (t *Tree) CleanupCandidates(now int64) []string {
	var out []string
	for p := range t.containers {
		if n := t.lookup(p); n != nil && t.cleanable(n, now) {
			out = append(out, p)
		}
	}
	for p := range t.ttls {
		if n := t.lookup(p); n != nil && t.cleanable(n, now) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// cleanable is the candidate rule for one node.
func (t *Tree) cleanable(n *node, now int64) bool {
	if n.kids != 0 {
		return false
	}
	switch t.kind(n) {
	case kindContainer:
		if n.cversion > 0 {
			return true
		}
		max := t.opts.ContainerMaxNeverUsed
		return max != 0 && now-n.mtime > max
	case kindTTL:
		ttl := ttlOf(n.owner)
		return ttl != 0 && now-n.mtime > ttl
	}
	return false
}

// deleteContainer is ZooKeeper's deleteContainer (PrepRequestProcessor), made safe
// for a stale proposal by re-checking the candidate rule at tx.Time:
//
//   - BadArguments: no slash, NUL, or one of ZooKeeper's own nodes (as ZooKeeper);
//   - NoNode: already gone (as ZooKeeper);
//   - NotEmpty: it has children again (as ZooKeeper);
//   - BadVersion: an ephemeral (as ZooKeeper) or a persistent node (ZooKeeper would
//     delete a persistent node here; zkraft never proposes one, so it refuses);
//   - BadArguments: a container or TTL node that no longer qualifies at tx.Time (its
//     TTL was renewed by a setData, for instance; ZooKeeper does not re-check).
//
// No ACL is checked: the leader asks, not a client.
func (t *Tree) deleteContainer(tx Txn, path string) (jute.Code, []Event) {
	parentPath, ok := parentForDelete(path)
	if !ok {
		return jute.ErrBadArguments, nil
	}
	n := t.lookup(path)
	if n == nil {
		return jute.ErrNoNode, nil
	}
	if n.kids != 0 {
		return jute.ErrNotEmpty, nil
	}
	if k := t.kind(n); k != kindContainer && k != kindTTL {
		return jute.ErrBadVersion, nil
	}
	if !t.cleanable(n, tx.Time) {
		return jute.ErrBadArguments, nil
	}
	parent := t.lookup(parentPath)
	if parent == nil {
		return jute.ErrNoNode, nil
	}
	return jute.OK, t.removeNode(tx.Zxid, parentPath, parent, path, n, childPlace{})
}

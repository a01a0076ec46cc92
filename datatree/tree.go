package datatree

import (
	"sort"
	"strings"

	"github.com/zkraft/zkraft/jute"
)

// Txn is the context of one replicated write: all of it comes from the log entry.
type Txn struct {
	Zxid   int64
	Time   int64 // ms since the epoch, stamped by the leader; ctime, mtime and TTLs use it
	Caller Caller
}

// Options are the tree's settings; every replica must use the same ones.
type Options struct {
	// ExtendedTypes allows TTL nodes (zookeeper.extendedTypesEnabled). Without it
	// createTTL answers Unimplemented, as ZooKeeper does. zkraft's default is true.
	ExtendedTypes bool
	// Emulate353TTL, with ExtendedTypes, reads every negative ephemeralOwner but a
	// container's as a TTL node (zookeeper.emulate353TTLNodes): the layout ZooKeeper 3.5.3
	// wrote its TTL nodes in (the top bit and the TTL), which later versions otherwise
	// take for the ephemerals of a session that is gone. New TTL nodes keep the 3.5.4+
	// layout, as in ZooKeeper.
	Emulate353TTL bool
	// ContainerMaxNeverUsed, if > 0, makes a container that never had a child a cleanup
	// candidate once its mtime is that many ms old
	// (znode.container.maxNeverUsedIntervalMs; ZooKeeper's default 0 keeps it forever).
	ContainerMaxNeverUsed int64
	// X509 registers the x509 scheme (ZooKeeper's X509AuthenticationProvider), as
	// ZooKeeper does when it has a secure client port or port unification: without it
	// an x509 ACL is invalid and never matches. Every member must agree on it.
	X509 bool
	// SASL registers ZooKeeper's SASLAuthenticationProvider, as an authProvider.N key
	// naming it does. Without it, as in ZooKeeper, a sasl ACL is InvalidACL and a sasl
	// entry of an existing ACL matches nobody, whatever ids a connection holds.
	SASL bool
	// SASLAnyUser, if set, is the sasl ACL id that every SASL user matches (ZooKeeper's
	// zookeeper.letAnySaslUserDoX). Every member must agree on it.
	SASLAnyUser string
	// NoDigest unregisters the digest scheme, as ZooKeeper's
	// zookeeper.DigestAuthenticationProvider.enabled=false does: a digest ACL is
	// InvalidACL and a digest entry of an existing ACL matches nobody. Every member must
	// agree on it.
	NoDigest bool
	// OnQuota, if set, hears of every write over a quota while quotas are enforced
	// (ZooKeeper logs them). It runs inside Apply and must not touch the tree.
	OnQuota func(QuotaEvent)
}

// Event is what a change does, for the watch layer; the tree fires nothing itself.
type Event struct {
	Type int32  // jute.EventNodeCreated, EventNodeDeleted, EventNodeDataChanged, EventNodeChildrenChanged
	Path string // for EventNodeChildrenChanged, the parent
	// ACL is the ACL of the node at Path when the change happened (a deleted node's last
	// one, the parent's for EventNodeChildrenChanged): ZooKeeper 3.8.4 and 3.9.2
	// deliver an event only to watchers with READ in it (ZOOKEEPER-4799). Read-only.
	ACL []jute.ACL
}

// Tree is the znode tree. It is not safe for concurrent use: one writer, or readers
// that the caller keeps apart from the writer.
type Tree struct {
	opts       Options
	mem        *arena     // node records, names and data (arena.go)
	kidTab     []children // children lists; [0] unused (node.kids == 0: none)
	freeKids   []uint32
	loading    bool // a load is adding nodes: the name indexes wait for its end (loaded)
	root       *node
	acls       *aclCache
	nodes      int   // real nodes, root included
	dataSize   int64 // approximateDataSize, kept up to date
	ephemerals map[int64]map[string]struct{}
	containers map[string]struct{}
	ttls       map[string]struct{}
	quotas     map[string]int // quota paths (quotaKey) -> zookeeper_limits nodes naming them
	multiQuota *quotaView     // non-nil while a multi runs with quotas enforced
	// enforceQuota is zookeeper.enforceQuota as the log decided it (SetEnforceQuota): it
	// is replicated state, kept in snapshots, so every replica judges writes alike.
	enforceQuota bool
	undo         []func() // non-nil while a multi runs: how to take back each change
	frozen       *Frozen  // non-nil while a snapshot is written from the tree (frozen.go)
	// Frees that must wait: multiFrees until the multi is past undoing, frozenFrees
	// until Thaw (a Frozen may still read them).
	multiFrees, frozenFrees []freed
	// The parent load found last (nodes.go), while a snapshot or an import is read.
	lastLoadPath string
	lastLoad     *node
}

// The ACLs ZooKeeper gives its own nodes (ZooDefs.Ids).
var (
	openACL = []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "world", Id: "anyone"}}}
	readACL = []jute.ACL{{Perms: jute.PermRead, Id: jute.Id{Scheme: "world", Id: "anyone"}}}
)

func newEmpty(opts Options) *Tree {
	t := &Tree{
		opts:       opts,
		mem:        newArena(),
		kidTab:     make([]children, 1),
		acls:       newACLCache(),
		ephemerals: map[int64]map[string]struct{}{},
		containers: map[string]struct{}{},
		ttls:       map[string]struct{}{},
		quotas:     map[string]int{},
	}
	attachCleanup(t)
	return t
}

// New returns the tree a fresh ZooKeeper 3.8 standalone server has: "/", "/zookeeper",
// "/zookeeper/quota" and "/zookeeper/config", all with zero stats and empty (not null)
// data. They are added without counting creations, so clients see cversion -1 on "/"
// and -2 on "/zookeeper"; "/zookeeper/config" is world:anyone READ with aversion -1
// (DataTree.addConfigNode sets its ACL with version -1). Checked against a real 3.8.0.
func New(opts Options) *Tree {
	t := newEmpty(opts)
	_, t.root = t.newNode("", []byte{}, t.acls.acquire(openACL), storedStat{})
	t.nodes = 1
	zk := t.attach(t.root, "zookeeper", []byte{}, openACL, storedStat{})
	t.attach(zk, "quota", []byte{}, openACL, storedStat{})
	t.attach(zk, "config", []byte{}, readACL, storedStat{Aversion: -1})
	t.dataSize = t.computeDataSize()
	return t
}

func (t *Tree) attach(parent *node, name string, data []byte, acl []jute.ACL, st storedStat) *node {
	id, n := t.newNode(name, data, t.acls.acquire(acl), st)
	t.addChild(parent, id, name, childPlace{})
	t.nodes++
	return n
}

// lookup finds the node at path exactly as ZooKeeper's node map would: "" is an alias
// of the root, and a path with an empty name ("/a//b", "/a/") names nothing.
func (t *Tree) lookup(path string) *node {
	if path == "" || path == "/" {
		return t.root
	}
	if path[0] != '/' {
		return nil
	}
	n := t.root
	rest := path[1:]
	for n != nil {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			if rest == "" {
				return nil
			}
			return t.child(n, rest)
		}
		if i == 0 {
			return nil
		}
		n = t.child(n, rest[:i])
		rest = rest[i+1:]
	}
	return nil
}

// Get returns a copy of the data of path and its client stat.
func (t *Tree) Get(path string) ([]byte, jute.Stat, jute.Code) {
	n := t.lookup(path)
	if n == nil {
		return nil, jute.Stat{}, jute.ErrNoNode
	}
	return t.dataCopy(n), t.clientStat(n), jute.OK
}

// Stat returns the client stat of path.
func (t *Tree) Stat(path string) (jute.Stat, jute.Code) {
	n := t.lookup(path)
	if n == nil {
		return jute.Stat{}, jute.ErrNoNode
	}
	return t.clientStat(n), jute.OK
}

// Children returns the names of path's children, sorted, and its client stat.
// (ZooKeeper answers in hash order; sorted is one of the orders it may give.)
func (t *Tree) Children(path string) ([]string, jute.Stat, jute.Code) {
	n := t.lookup(path)
	if n == nil {
		return nil, jute.Stat{}, jute.ErrNoNode
	}
	return t.childNames(n), t.clientStat(n), jute.OK
}

// ACL returns a copy of path's ACL list and its client stat.
func (t *Tree) ACL(path string) ([]jute.ACL, jute.Stat, jute.Code) {
	n := t.lookup(path)
	if n == nil {
		return nil, jute.Stat{}, jute.ErrNoNode
	}
	return append([]jute.ACL(nil), t.acls.get(n.acl)...), t.clientStat(n), jute.OK
}

// CheckACL is ZooKeeper's permission check of perm (a mask: any bit suffices) on path
// for c. NoNode if path does not exist.
func (t *Tree) CheckACL(path string, perm int32, c Caller) jute.Code {
	n := t.lookup(path)
	if n == nil {
		return jute.ErrNoNode
	}
	return t.opts.checkACL(t.acls.get(n.acl), perm, c)
}

// CountDescendants is getAllChildrenNumber: every node below path. ZooKeeper counts
// map keys, so "/" gives all nodes but the root, and "" (the root's alias, whose
// prefix "/" every key has) gives all nodes including it.
func (t *Tree) CountDescendants(path string) (int32, jute.Code) {
	n := t.lookup(path)
	if n == nil {
		return 0, jute.ErrNoNode
	}
	if n == t.root {
		if path == "" {
			return int32(t.nodes), jute.OK
		}
		return int32(t.nodes - 1), jute.OK
	}
	return int32(t.countBelow(n)), jute.OK
}

func (t *Tree) countBelow(n *node) int {
	total := 0
	t.eachChild(n, func(_ nodeID, c *node) bool {
		total += 1 + t.countBelow(c)
		return true
	})
	return total
}

// NodeCount is DataTree.getNodeCount, ZooKeeper's zk_znode_count: the size of its node
// map, where the root is there twice ("" and "/"). A fresh tree counts 5.
func (t *Tree) NodeCount() int { return t.nodes + 1 }

// ApproximateDataSize is DataTree.approximateDataSize: over every key of ZooKeeper's
// node map (so the root twice, as "" and "/"), path length in UTF-16 units plus data
// length. A fresh tree gives 44.
func (t *Tree) ApproximateDataSize() int64 { return t.dataSize }

func (t *Tree) computeDataSize() int64 {
	size := int64(max(t.root.dataLen, 0)) // the "" alias
	t.walk(func(path string, n *node) {
		size += javaLen(path) + int64(max(n.dataLen, 0))
	})
	return size
}

// walk visits every node in pre-order, children in name order.
func (t *Tree) walk(f func(path string, n *node)) {
	var visit func(prefix string, n *node)
	visit = func(path string, n *node) {
		f(path, n)
		base := path
		if base == "/" {
			base = ""
		}
		t.eachChild(n, func(_ nodeID, c *node) bool {
			visit(base+"/"+t.name(c), c)
			return true
		})
	}
	visit("/", t.root)
}

// Ephemerals is getEphemerals for session: all its ephemeral paths, or those starting
// with prefix; a prefix that is empty, blank or "/" (after Java's trim) means all.
func (t *Tree) Ephemerals(session int64, prefix string) []string {
	all := t.ephemerals[session]
	trimmed := strings.TrimFunc(prefix, func(r rune) bool { return r <= ' ' })
	out := make([]string, 0, len(all))
	for p := range all {
		if trimmed == "" || trimmed == "/" || strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// EphemeralSessions maps every session that owns ephemerals to its paths, sorted.
func (t *Tree) EphemeralSessions() map[int64][]string {
	out := make(map[int64][]string, len(t.ephemerals))
	for s, set := range t.ephemerals {
		out[s] = sortedKeys(set)
	}
	return out
}

func sortedKeys(set map[string]struct{}) []string {
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

package persistence

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
)

// ZKNode is one znode as ZooKeeper stores it: the same fields as zkraft's stored nodes
// (ZooKeeper's StatPersisted is what datatree keeps).
type ZKNode = datatree.StoredNode

// ZKSession is one session as ZooKeeper stores it: id and negotiated timeout in ms.
type ZKSession struct {
	ID      int64
	Timeout int32
}

// ZKState is a whole ZooKeeper database: nodes in pre-order (parents before children,
// children in name order), sessions sorted by id.
type ZKState struct {
	Nodes    []ZKNode
	Sessions []ZKSession
	LastZxid int64
}

// ephemeralOwner encodings (EphemeralType.java).
const (
	zkContainerOwner int64 = math.MinInt64       // Long.MIN_VALUE
	zkExtendedMask   int64 = -0x0100000000000000 // 0xFF00000000000000: TTL when all set
)

var (
	zkOpenACL = []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "world", Id: "anyone"}}}
	zkReadACL = []jute.ACL{{Perms: jute.PermRead, Id: jute.Id{Scheme: "world", Id: "anyone"}}}
)

// zkSystemNodes are the nodes every tree has, with the values a fresh tree gives them
// (ZooKeeper's DataTree constructor and addConfigNode; zkraft's datatree.New).
func zkSystemNodes() []ZKNode {
	return []ZKNode{
		{Path: "/", Data: []byte{}, ACL: zkCloneACL(zkOpenACL)},
		{Path: "/zookeeper", Data: []byte{}, ACL: zkCloneACL(zkOpenACL)},
		{Path: "/zookeeper/quota", Data: []byte{}, ACL: zkCloneACL(zkOpenACL)},
		{Path: "/zookeeper/config", Data: []byte{}, ACL: zkCloneACL(zkReadACL), Aversion: -1},
	}
}

func zkCloneACL(acl []jute.ACL) []jute.ACL { return append([]jute.ACL{}, acl...) }

// zkIsSessionOwner reports whether owner names a session (a plain ephemeral), as
// EphemeralType.get does with extended types enabled.
func zkIsSessionOwner(owner int64) bool {
	return owner != 0 && owner != zkContainerOwner && owner&zkExtendedMask != zkExtendedMask
}

// zkTree is a mutable ZooKeeper tree, used to replay logs and to order nodes.
type zkTree struct {
	nodes      map[string]*ZKNode
	kids       map[string]map[string]struct{} // parent path -> child names
	ephemerals map[int64]map[string]struct{}
	sessions   map[int64]int32
}

func newZKTree() *zkTree {
	return &zkTree{
		nodes:      map[string]*ZKNode{},
		kids:       map[string]map[string]struct{}{},
		ephemerals: map[int64]map[string]struct{}{},
		sessions:   map[int64]int32{},
	}
}

// zkSplitPath splits "/a/b" into "/a" and "b", "/a" into "/" and "a".
func zkSplitPath(path string) (parent, name string, ok bool) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 || path == "/" || i == len(path)-1 {
		return "", "", false
	}
	if i == 0 {
		return "/", path[1:], true
	}
	return path[:i], path[i+1:], true
}

// add links n under its parent, which must be present; the root needs none.
func (t *zkTree) add(n *ZKNode) error {
	if _, dup := t.nodes[n.Path]; dup {
		return fmt.Errorf("node %q appears twice", n.Path)
	}
	if n.Path != "/" {
		parent, name, ok := zkSplitPath(n.Path)
		if !ok || !strings.HasPrefix(n.Path, "/") {
			return fmt.Errorf("bad path %q", n.Path)
		}
		if t.nodes[parent] == nil {
			return fmt.Errorf("parent %q of %q is missing", parent, n.Path)
		}
		set := t.kids[parent]
		if set == nil {
			set = map[string]struct{}{}
			t.kids[parent] = set
		}
		set[name] = struct{}{}
	}
	t.nodes[n.Path] = n
	if zkIsSessionOwner(n.EphemeralOwner) {
		set := t.ephemerals[n.EphemeralOwner]
		if set == nil {
			set = map[string]struct{}{}
			t.ephemerals[n.EphemeralOwner] = set
		}
		set[n.Path] = struct{}{}
	}
	return nil
}

// remove unlinks path and everything below it.
func (t *zkTree) remove(path string) {
	n := t.nodes[path]
	if n == nil {
		return
	}
	for name := range t.kids[path] {
		t.remove(zkChildPath(path, name))
	}
	delete(t.kids, path)
	delete(t.nodes, path)
	if parent, name, ok := zkSplitPath(path); ok {
		delete(t.kids[parent], name)
	}
	if set := t.ephemerals[n.EphemeralOwner]; set != nil {
		delete(set, path)
		if len(set) == 0 {
			delete(t.ephemerals, n.EphemeralOwner)
		}
	}
}

func zkChildPath(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}

// addSystemNodes adds whichever of the four system nodes is missing.
func (t *zkTree) addSystemNodes() {
	for _, n := range zkSystemNodes() {
		if t.nodes[n.Path] == nil {
			n := n
			t.add(&n) // parents come first in zkSystemNodes
		}
	}
}

// ordered returns the nodes in pre-order, children in name (byte) order.
func (t *zkTree) ordered() []ZKNode {
	out := make([]ZKNode, 0, len(t.nodes))
	var visit func(path string)
	visit = func(path string) {
		out = append(out, *t.nodes[path])
		names := make([]string, 0, len(t.kids[path]))
		for name := range t.kids[path] {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			visit(zkChildPath(path, name))
		}
	}
	if t.nodes["/"] != nil {
		visit("/")
	}
	return out
}

func (t *zkTree) state(lastZxid int64) *ZKState {
	st := &ZKState{Nodes: t.ordered(), LastZxid: lastZxid}
	for id, to := range t.sessions {
		st.Sessions = append(st.Sessions, ZKSession{ID: id, Timeout: to})
	}
	sort.Slice(st.Sessions, func(i, j int) bool { return st.Sessions[i].ID < st.Sessions[j].ID })
	return st
}

// normalized checks st's nodes (a root, every parent present, no duplicates), adds
// missing system nodes and returns them in pre-order.
func (st *ZKState) normalized() ([]ZKNode, error) {
	t := newZKTree()
	// Parents first whatever the input order: sort by depth, then path.
	nodes := make([]*ZKNode, len(st.Nodes))
	for i := range st.Nodes {
		nodes[i] = &st.Nodes[i]
	}
	depth := func(p string) int {
		if p == "/" {
			return 0
		}
		return strings.Count(p, "/")
	}
	sort.SliceStable(nodes, func(i, j int) bool { return depth(nodes[i].Path) < depth(nodes[j].Path) })
	if len(nodes) > 0 && nodes[0].Path == "/" {
		n := *nodes[0]
		t.add(&n)
		nodes = nodes[1:]
	} else {
		root := zkSystemNodes()[0]
		t.add(&root)
	}
	for _, n := range nodes {
		c := *n
		if err := t.add(&c); err != nil {
			return nil, err
		}
	}
	t.addSystemNodes()
	return t.ordered(), nil
}

// ReadZooKeeper reads an Apache ZooKeeper 3.x data dir (dataDir/version-2 or a dir
// that directly holds snapshot.* / log.* files): the newest snapshot whose checksum
// is valid, then every transaction in the logs with a zxid above the snapshot's,
// applied in order. Errors name the file and what is wrong.
func ReadZooKeeper(dataDir string) (*ZKState, error) {
	dir := dataDir
	if fi, err := os.Stat(filepath.Join(dataDir, "version-2")); err == nil && fi.IsDir() {
		dir = filepath.Join(dataDir, "version-2")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("persistence: reading ZooKeeper data dir: %w", err)
	}
	type numbered struct {
		name string
		zxid int64
	}
	var snaps, logs []numbered
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if z, ok := zkZxidFromName(e.Name(), "snapshot"); ok {
			snaps = append(snaps, numbered{e.Name(), z})
		} else if z, ok := zkZxidFromName(e.Name(), "log"); ok {
			logs = append(logs, numbered{e.Name(), z})
		}
	}
	if len(snaps) == 0 && len(logs) == 0 {
		return nil, fmt.Errorf("persistence: no ZooKeeper snapshot.* or log.* files in %s", dir)
	}
	sort.Slice(snaps, func(i, j int) bool { return snaps[i].zxid > snaps[j].zxid }) // newest first
	sort.Slice(logs, func(i, j int) bool { return logs[i].zxid < logs[j].zxid })

	var t *zkTree
	snapZxid := int64(0)
	var problems []string
	for _, s := range snaps {
		path := filepath.Join(dir, s.name)
		st, err := readZKSnapshotFile(path)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		t, snapZxid = st, s.zxid
		break
	}
	if t == nil {
		if len(snaps) > 0 {
			return nil, fmt.Errorf("persistence: no valid ZooKeeper snapshot in %s: %s", dir, strings.Join(problems, "; "))
		}
		// Logs without a snapshot (an upgrade from before 3.5.3): start from a fresh tree.
		t = newZKTree()
		t.addSystemNodes()
	}

	// As Util.getLogFiles: the newest log that starts at or below the snapshot's zxid
	// and every later one.
	start := 0
	for i, l := range logs {
		if l.zxid <= snapZxid {
			start = i
		}
	}
	last := snapZxid
	for _, l := range logs[start:] {
		path := filepath.Join(dir, l.name)
		err := readZKTxnLog(path, func(e *zkTxnEntry) error {
			if e.hdr.zxid <= last {
				return nil
			}
			if err := t.apply(e); err != nil {
				return fmt.Errorf("zxid 0x%x: %w", e.hdr.zxid, err)
			}
			last = e.hdr.zxid
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return t.state(last), nil
}

// zkZxidFromName is Util.getZxidFromName: prefix.<hex>[.suffix].
func zkZxidFromName(name, prefix string) (int64, bool) {
	parts := strings.Split(name, ".")
	if len(parts) < 2 || parts[0] != prefix || parts[1] == "" {
		return 0, false
	}
	var z uint64
	for _, c := range parts[1] {
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if z>>60 != 0 {
			return 0, false
		}
		z = z<<4 | d
	}
	if z > math.MaxInt64 {
		return 0, false
	}
	return int64(z), true
}

// WriteZooKeeperSnapshot writes st as a ZooKeeper snapshot file that ZooKeeper 3.8
// starts from (file name must be snapshot.<hex LastZxid>, put in version-2/ by the
// caller). Missing system nodes are added, "/zookeeper/config" included: ZooKeeper
// serializes every child of "/zookeeper" and a standalone server only re-creates the
// config node when it runs a quorum config.
func WriteZooKeeperSnapshot(w io.Writer, st *ZKState) error {
	nodes, err := st.normalized()
	if err != nil {
		return fmt.Errorf("persistence: %w", err)
	}
	return writeZKSnapshot(w, nodes, st.Sessions)
}

// SnapshotFileName is the name ZooKeeper gives a snapshot of lastZxid.
func SnapshotFileName(lastZxid int64) string { return fmt.Sprintf("snapshot.%x", lastZxid) }

// zkACLKey identifies an ACL list by content, as ZooKeeper's ACL cache does.
func zkACLKey(acl []jute.ACL) string {
	e := jute.Encoder{}
	e.Int(int32(len(acl)))
	for i := range acl {
		acl[i].Encode(&e)
	}
	return string(e.Buf)
}

// zkACLNumbering numbers the distinct ACL lists of nodes in the byte order of their
// canonical encoding (as zkraft's datatree snapshot orders its ACL table), so the
// numbering depends only on the content.
func zkACLNumbering(nodes []ZKNode) (index []int, lists [][]jute.ACL) {
	byKey := map[string][]jute.ACL{}
	keys := make([]string, len(nodes))
	for i := range nodes {
		keys[i] = zkACLKey(nodes[i].ACL)
		byKey[keys[i]] = nodes[i].ACL
	}
	sorted := make([]string, 0, len(byKey))
	for k := range byKey {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	num := make(map[string]int, len(sorted))
	for j, k := range sorted {
		num[k] = j
		lists = append(lists, byKey[k])
	}
	index = make([]int, len(nodes))
	for i, k := range keys {
		index[i] = num[k]
	}
	return index, lists
}

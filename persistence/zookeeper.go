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
	// Snapshot and LogFiles say what ReadZooKeeper read: the snapshot file's name ("" for
	// none) and how many transaction log files it found.
	Snapshot string
	LogFiles int
	// preordered: Nodes are in pre-order, every parent present, the system nodes too
	// (ReadZooKeeperSnapshot's checked parse), so ToState takes them as they are instead
	// of ordering a copy: a restore of a million nodes keeps one list, not three.
	preordered bool
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
	lastZxid   int64 // a snapshot's last-processed-zxid section (3.9), 0 without one
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
// applied in order. dataLogDir is ZooKeeper's setting of that name, the logs' own
// dir; "" when they are in dataDir. Logs that hold transactions but no snapshot are
// refused, as ZooKeeper refuses them. Errors name the file and what is wrong.
func ReadZooKeeper(dataDir, dataLogDir string) (*ZKState, error) {
	snapDir := zkVersionDir(dataDir)
	snaps, logs, err := zkFiles(snapDir)
	if err != nil {
		return nil, err
	}
	logDir := snapDir
	if dataLogDir != "" && zkVersionDir(dataLogDir) != snapDir {
		// FileTxnSnapLog's checks of two dirs (ZOOKEEPER-2967): each holds its own kind.
		logDir = zkVersionDir(dataLogDir)
		if len(logs) > 0 {
			return nil, fmt.Errorf("persistence: %s holds transaction logs (log.*), as only a data dir without a "+
				"dataLogDir does: check the ZooKeeper data dir and log dir given", snapDir)
		}
		var logSnaps []zkFile
		if logSnaps, logs, err = zkFiles(logDir); err != nil {
			return nil, err
		}
		if len(logSnaps) > 0 {
			return nil, fmt.Errorf("persistence: %s holds snapshots (snapshot.*), as a dataLogDir does not: check "+
				"the ZooKeeper data dir and log dir given", logDir)
		}
	}
	if len(snaps) == 0 && len(logs) == 0 {
		return nil, fmt.Errorf("persistence: no ZooKeeper snapshot.* or log.* files in %s", snapDir)
	}
	t, snap, err := zkNewestSnapshot(snapDir, snaps)
	if err != nil {
		return nil, err
	}
	if t == nil {
		// Logs without a snapshot: the fresh tree only stands if they hold nothing (they
		// are checked below), as FileTxnSnapLog.restore decides.
		t = newZKTree()
		t.addSystemNodes()
	}

	// As Util.getLogFiles: the newest log that starts at or below the snapshot's zxid
	// and every later one.
	start := 0
	for i, l := range logs {
		if l.zxid <= snap.zxid {
			start = i
		}
	}
	last := snap.zxid
	for _, l := range logs[start:] {
		path := filepath.Join(logDir, l.name)
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
	if len(snaps) == 0 && last > 0 {
		return nil, fmt.Errorf("persistence: %s holds transaction logs up to zxid 0x%x but no snapshot: the tree the logs "+
			"start from is unknown, and ZooKeeper 3.8 refuses to start from it too (\"No snapshot found, but there are log "+
			"entries\"). If ZooKeeper keeps its snapshots apart (its dataDir, the logs in its dataLogDir), read the two "+
			"together; a data dir of ZooKeeper 3.4 that never took a snapshot gets one when ZooKeeper 3.8 starts on it once "+
			"with -Dzookeeper.snapshot.trust.empty=true", logDir, last)
	}
	st := t.state(last)
	st.Snapshot, st.LogFiles = snap.name, len(logs)
	return st, nil
}

// zkVersionDir is dir/version-2 if there is one, else dir.
func zkVersionDir(dir string) string {
	if fi, err := os.Stat(filepath.Join(dir, "version-2")); err == nil && fi.IsDir() {
		return filepath.Join(dir, "version-2")
	}
	return dir
}

// zkFile is a snapshot or log file and the zxid its name gives.
type zkFile struct {
	name string
	zxid int64
}

// zkFiles lists dir's snapshots, newest first, and its logs, oldest first.
func zkFiles(dir string) (snaps, logs []zkFile, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("persistence: reading ZooKeeper data dir: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if z, ok := zkZxidFromName(e.Name(), "snapshot"); ok {
			snaps = append(snaps, zkFile{e.Name(), z})
		} else if z, ok := zkZxidFromName(e.Name(), "log"); ok {
			logs = append(logs, zkFile{e.Name(), z})
		}
	}
	sort.Slice(snaps, func(i, j int) bool { return snaps[i].zxid > snaps[j].zxid })
	sort.Slice(logs, func(i, j int) bool { return logs[i].zxid < logs[j].zxid })
	return snaps, logs, nil
}

// zkNewestSnapshot reads the newest of snaps whose checksums hold, as ZooKeeper picks
// one; a nil tree if there are none.
func zkNewestSnapshot(dir string, snaps []zkFile) (*zkTree, zkFile, error) {
	var problems []string
	for _, s := range snaps {
		t, err := readZKSnapshotFile(filepath.Join(dir, s.name))
		if err == nil {
			return t, s, nil
		}
		problems = append(problems, err.Error())
	}
	if len(snaps) > 0 {
		return nil, zkFile{}, fmt.Errorf("persistence: no valid ZooKeeper snapshot in %s: %s", dir, strings.Join(problems, "; "))
	}
	return nil, zkFile{}, nil
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
	return writeZKSnapshot(w, nodes, st.Sessions, st.LastZxid)
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

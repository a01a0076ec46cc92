package watch

import (
	"sort"
	"strings"
	"sync"

	"github.com/zkraft/zkraft/jute"
)

// Watcher receives notifications. Notify must not block: a connection that cannot take
// an event is closed by its owner, never waited for.
type Watcher interface {
	Notify(ev *jute.WatcherEvent, zxid int64)
}

// Kind is what a watch was set for.
type Kind uint8

// The kinds of watches. Data covers getData and exists (on a present or missing node).
const (
	Data Kind = 1 << iota
	Child
	Persistent
	PersistentRecursive
)

// dataKinds are the kinds ZooKeeper keeps in its data watch manager and childKinds those
// in its child watch manager; a persistent or recursive watch is in both
// (DataTree.addWatch). Its mntr watch count is the two managers' sizes added up, while
// wchs, wchc, wchp and the AdminServer's watch listings show the data manager only.
const (
	dataKinds  = Data | Persistent | PersistentRecursive
	childKinds = Child | Persistent | PersistentRecursive
)

// ReadCheck says whether w may read a node whose ACL is acl. An event is delivered
// only to the watchers that may read the node it is about, with the ACL the node had
// when the change happened (ZooKeeper 3.8.4 and 3.9.2, ZOOKEEPER-4799: ServerCnxn.process
// checks READ for every watch, one-shot ones included; before, 3.8.0 checked nothing).
type ReadCheck func(w Watcher, acl []jute.ACL) bool

// Registry holds every watch of one server. It has its own lock because reads register
// watches concurrently under the state machine's read lock.
type Registry struct {
	mu      sync.Mutex
	paths   map[string]map[Watcher]Kind
	byConn  map[Watcher]map[string]Kind
	nRecurs int // number of recursive watches, so triggers skip the ancestor walk when 0

	// count is ZooKeeper's watch count, kept as watches come and go because mntr
	// (polled by monitoring every few seconds) reports it; what only the wchs family
	// shows is counted when asked.
	count int
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{paths: map[string]map[Watcher]Kind{}, byConn: map[Watcher]map[string]Kind{}}
}

// Add registers a watch of kind k on path for w. Adding a watch w already has is a no-op;
// a watch of another kind is added beside the ones w has there (ZooKeeper 3.9,
// ZOOKEEPER-4466; 3.8 kept one mode per watcher and path, the last one set).
func (r *Registry) Add(w Watcher, path string, k Kind) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.paths[path][w]
	r.set(w, path, old, old|k)
}

// clear removes kinds k of w on path; the caller holds mu.
func (r *Registry) clear(w Watcher, path string, k Kind) {
	if old, ok := r.paths[path][w]; ok {
		r.set(w, path, old, old&^k)
	}
}

// set changes w's kinds on path from old to k (0: no watch left) and keeps the counts;
// the caller holds mu.
func (r *Registry) set(w Watcher, path string, old, k Kind) {
	if old == k {
		return
	}
	r.count += managers(k) - managers(old)
	switch wasRecursive, isRecursive := old&PersistentRecursive != 0, k&PersistentRecursive != 0; {
	case isRecursive && !wasRecursive:
		r.nRecurs++
	case wasRecursive && !isRecursive:
		r.nRecurs--
	}
	if k == 0 {
		delete(r.paths[path], w)
		if len(r.paths[path]) == 0 {
			delete(r.paths, path)
		}
		delete(r.byConn[w], path)
		if len(r.byConn[w]) == 0 {
			delete(r.byConn, w)
		}
		return
	}
	ws := r.paths[path]
	if ws == nil {
		ws = map[Watcher]Kind{}
		r.paths[path] = ws
	}
	ws[w] = k
	ps := r.byConn[w]
	if ps == nil {
		ps = map[string]Kind{}
		r.byConn[w] = ps
	}
	ps[path] = k
}

// managers is in how many of ZooKeeper's two watch managers a watch of kinds k is.
func managers(k Kind) int {
	n := 0
	if k&dataKinds != 0 {
		n++
	}
	if k&childKinds != 0 {
		n++
	}
	return n
}

// Trigger delivers the event evType on path, caused by the change at zxid, to every
// watcher it concerns, at most once per watcher, and removes the one-shot watches it
// used. The mapping is ZooKeeper's: created/changed fire data watches on the path;
// deleted fires data and child watches on it; children-changed (path = the parent)
// fires child watches; persistent watches on the path see all four; recursive watches
// on the path or an ancestor see all but children-changed.
//
// A watch may be of several kinds at once (ZooKeeper 3.9, ZOOKEEPER-4466): a one-shot
// and a persistent watch on one path fire one notification, and only the one-shot kind
// is used up. acl is the ACL of the node the event is about at the change (the parent's
// for children-changed); a watcher canRead refuses gets nothing, and its one-shot watch
// is used up all the same, as ZooKeeper removes it before the check.
func (r *Registry) Trigger(evType int32, path string, zxid int64, acl []jute.ACL, canRead ReadCheck) {
	var oneShot Kind
	switch evType {
	case jute.EventNodeCreated, jute.EventNodeDataChanged:
		oneShot = Data
	case jute.EventNodeDeleted:
		oneShot = Data | Child
	case jute.EventNodeChildrenChanged:
		oneShot = Child
	default:
		return
	}
	r.mu.Lock()
	var targets []Watcher
	seen := map[Watcher]bool{}
	for w, k := range r.paths[path] {
		fire := k&Persistent != 0 || (k&PersistentRecursive != 0 && evType != jute.EventNodeChildrenChanged)
		if k&oneShot != 0 {
			r.clear(w, path, oneShot)
			fire = true
		}
		if fire && !seen[w] {
			seen[w] = true
			targets = append(targets, w)
		}
	}
	if r.nRecurs > 0 && evType != jute.EventNodeChildrenChanged {
		for p := parentOf(path); p != ""; p = parentOf(p) {
			for w, k := range r.paths[p] {
				if k&PersistentRecursive != 0 && !seen[w] {
					seen[w] = true
					targets = append(targets, w)
				}
			}
		}
	}
	r.mu.Unlock()
	ev := &jute.WatcherEvent{Type: evType, State: jute.StateSyncConnected, Path: path}
	for _, w := range targets {
		if canRead == nil || canRead(w, acl) {
			w.Notify(ev, zxid)
		}
	}
}

// parentOf returns the parent of p, or "" for "/".
func parentOf(p string) string {
	if p == "/" || p == "" {
		return ""
	}
	i := strings.LastIndexByte(p, '/')
	if i == 0 {
		return "/"
	}
	return p[:i]
}

// kindsOf maps a removeWatches/checkWatches watcher type to the kinds it covers, by
// ZooKeeper 3.9's rules (ZOOKEEPER-4471, ZOOKEEPER-4472): Children and Data cover the
// one-shot watches only, Persistent and PersistentRecursive one persistent kind each,
// Any all. 0 is a type ZooKeeper does not know.
func kindsOf(wtype int32) Kind {
	switch wtype {
	case jute.WatcherChildren:
		return Child
	case jute.WatcherData:
		return Data
	case jute.WatcherAny:
		return Data | Child | Persistent | PersistentRecursive
	case jute.WatcherPersistent:
		return Persistent
	case jute.WatcherPersistentRecursive:
		return PersistentRecursive
	}
	return 0
}

// KnownType reports whether wtype is one of ZooKeeper's WatcherType values (Children 1,
// Data 2, Any 3, Persistent 4, PersistentRecursive 5). ZooKeeper answers a
// checkWatches or removeWatches of any other type with MarshallingError
// (WatcherType.fromInt throws); 3.8 knew only 1 to 3.
func KnownType(wtype int32) bool { return kindsOf(wtype) != 0 }

// Has reports whether w has a watch of watcher type wtype on path (checkWatches).
func (r *Registry) Has(w Watcher, path string, wtype int32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paths[path][w]&kindsOf(wtype) != 0
}

// Remove removes w's watches of watcher type wtype on path and reports whether there
// were any (removeWatches answers NoWatcher when there were none). The watches of other
// kinds w has on path stay.
func (r *Registry) Remove(w Watcher, path string, wtype int32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := kindsOf(wtype)
	if r.paths[path][w]&k == 0 {
		return false
	}
	r.clear(w, path, k)
	return true
}

// RemoveWatcher drops every watch of w (its connection closed).
func (r *Registry) RemoveWatcher(w Watcher) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p, k := range r.byConn[w] {
		r.clear(w, p, k)
	}
}

// Count is ZooKeeper's watch count (mntr's zk_watch_count): a data and a child watch
// of one watcher on one path are two, a persistent or recursive watch counts twice.
func (r *Registry) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// Summary is ZooKeeper's wchs, which shows its data watch manager only (data, exist,
// persistent and recursive watches; not child watches): the watchers with such a
// watch, the paths they watch, and the (path, watcher) pairs.
func (r *Registry) Summary() (watchers, paths, watches int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ps := range r.byConn {
		if n := dataWatches(ps); n > 0 {
			watchers++
			watches += n
		}
	}
	for _, ws := range r.paths {
		if dataWatches(ws) > 0 {
			paths++
		}
	}
	return watchers, paths, watches
}

// dataWatches counts the entries of m with a data-manager kind.
func dataWatches[K comparable](m map[K]Kind) int {
	n := 0
	for _, k := range m {
		if k&dataKinds != 0 {
			n++
		}
	}
	return n
}

// PathsOf returns, sorted, the paths w has a data-manager watch on (wchc).
func (r *Registry) PathsOf(w Watcher) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.byConn[w]))
	for p, k := range r.byConn[w] {
		if k&dataKinds != 0 {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Watchers returns the watchers with a data-manager watch on path (wchp); order is
// unspecified.
func (r *Registry) Watchers(path string) []Watcher {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Watcher
	for w, k := range r.paths[path] {
		if k&dataKinds != 0 {
			out = append(out, w)
		}
	}
	return out
}

// WatchedPaths returns, sorted, every path with a data-manager watch (wchp).
func (r *Registry) WatchedPaths() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for p, ws := range r.paths {
		if dataWatches(ws) > 0 {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

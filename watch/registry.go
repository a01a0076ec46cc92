package watch

import (
	"strings"
	"sync"

	"github.com/zkraft/zkraft/jute"
)

// Watcher receives notifications. Notify must not block: a connection that cannot take
// an event is closed by its owner, never waited for.
type Watcher interface {
	Notify(ev *jute.WatcherEvent, zxid int64)
}

// Mortal is a Watcher that can be gone (a closed connection). Add registers nothing for
// one whose Gone reports true, as ZooKeeper's WatchManager skips a dead watcher: a watch
// set by a read that runs while its connection closes is then never left behind. Gone
// must turn true before its owner calls RemoveWatcher, which makes the two race-free
// (both take the registry's lock).
type Mortal interface {
	Gone() bool
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
//
// Each watched path is one watched entry, indexed by byPath under the registry's one
// copy of the path; each watcher has a small integer id (ids) and a list of the
// entries it watches (lists[id]), which removal and the wchc listing walk.
type Registry struct {
	mu      sync.Mutex
	byPath  map[string]*watched
	ids     map[Watcher]int32
	lists   []watcherList // by id; a free id has a nil watcher
	free    []int32       // ids to reuse
	nRecurs int           // number of recursive watches, so triggers skip the ancestor walk when 0

	// count is ZooKeeper's watch count, kept as watches come and go because mntr
	// (polled by monitoring every few seconds) reports it; what only the wchs family
	// shows is counted when asked.
	count int

	// fired, if set, hears how many watchers each event fires (ObserveFired).
	fired func(evType int32, n int)
}

// watcherList is one watcher and the paths it watches; the slot of w in paths[i] has
// at == i.
type watcherList struct {
	w     Watcher
	paths []*watched
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{byPath: map[string]*watched{}, ids: map[Watcher]int32{}}
}

// Add registers a watch of kind k on path for w. Adding a watch w already has is a no-op;
// a watch of another kind is added beside the ones w has there (ZooKeeper 3.9,
// ZOOKEEPER-4466; 3.8 kept one mode per watcher and path, the last one set).
func (r *Registry) Add(w Watcher, path string, k Kind) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := w.(Mortal); ok && m.Gone() {
		return
	}
	e := r.byPath[path]
	id, known := r.ids[w]
	var old Kind
	if e != nil && known {
		s, _ := e.find(id)
		old = s.kind
	}
	if old|k == old {
		return
	}
	if !known {
		id = r.newID(w)
	}
	if e == nil {
		// A copy of its own, so that the registry never keeps a larger string alive
		// that path may be part of.
		e = &watched{path: strings.Clone(path)}
		r.byPath[e.path] = e
	}
	r.set(id, e, old, old|k)
}

// newID gives w an id, a free one if there is one; the caller holds mu.
func (r *Registry) newID(w Watcher) int32 {
	var id int32
	if n := len(r.free); n > 0 {
		id, r.free = r.free[n-1], r.free[:n-1]
		r.lists[id].w = w
	} else {
		id = int32(len(r.lists))
		r.lists = append(r.lists, watcherList{w: w})
	}
	r.ids[w] = id
	return id
}

// kindOf is the kinds watcher w holds on path; the caller holds mu.
func (r *Registry) kindOf(w Watcher, path string) (int32, *watched, Kind) {
	e := r.byPath[path]
	id, ok := r.ids[w]
	if e == nil || !ok {
		return 0, nil, 0
	}
	s, _ := e.find(id)
	return id, e, s.kind
}

// set changes watcher id's kinds on e from old to k (0: no watch left) and keeps the
// counts, the watcher's list and the index; the caller holds mu.
func (r *Registry) set(id int32, e *watched, old, k Kind) {
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
	switch {
	case old == 0:
		l := &r.lists[id]
		e.put(slot{id: id, at: int32(len(l.paths)), kind: k})
		l.paths = append(l.paths, e)
	case k == 0:
		s, _ := e.find(id)
		e.drop(id)
		if e.size() == 0 {
			delete(r.byPath, e.path)
		}
		r.unlist(id, s.at)
	default:
		s, _ := e.find(id)
		s.kind = k
		e.put(s)
	}
}

// unlist removes entry at of watcher id's list, moving the last one into its place, and
// frees the id when the list empties; the caller holds mu.
func (r *Registry) unlist(id int32, at int32) {
	l := &r.lists[id]
	last := int32(len(l.paths) - 1)
	if at != last {
		moved := l.paths[last]
		l.paths[at] = moved
		moved.moved(id, at)
	}
	l.paths[last] = nil
	l.paths = l.paths[:last]
	switch {
	case last == 0:
		delete(r.ids, l.w)
		*l = watcherList{}
		r.free = append(r.free, id)
	case cap(l.paths) > 64 && len(l.paths) < cap(l.paths)/4:
		// Give back most of what a watcher that once held many watches no longer needs.
		l.paths = append(make([]*watched, 0, 2*len(l.paths)), l.paths...)
	}
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
	_, _, k := r.kindOf(w, path)
	return k&kindsOf(wtype) != 0
}

// Remove removes w's watches of watcher type wtype on path and reports whether there
// were any (removeWatches answers NoWatcher when there were none). The watches of other
// kinds w has on path stay.
func (r *Registry) Remove(w Watcher, path string, wtype int32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, e, old := r.kindOf(w, path)
	k := kindsOf(wtype)
	if old&k == 0 {
		return false
	}
	r.set(id, e, old, old&^k)
	return true
}

// RemoveWatcher drops every watch of w (its connection closed).
func (r *Registry) RemoveWatcher(w Watcher) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok := r.ids[w]
	if !ok {
		return
	}
	// Dropping the last path of the list moves nothing; the id is freed, and its list
	// emptied, with the last one.
	for l := &r.lists[id]; len(l.paths) > 0; {
		e := l.paths[len(l.paths)-1]
		s, _ := e.find(id)
		r.set(id, e, s.kind, 0)
	}
}

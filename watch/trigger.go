package watch

import (
	"strings"

	"github.com/zkraft/zkraft/jute"
)

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
	var slotBuf [maxFew]slot
	var targetBuf [maxFew]Watcher
	targets := targetBuf[:0]
	// For fired: the watchers ZooKeeper's data and child managers fire, and the path's
	// watchers of a deletion that are in one manager only (a recursive watch on an
	// ancestor puts them in the other too).
	var nData, nChild int
	var lackBuf [maxFew]oneManager
	lacking := lackBuf[:0]
	r.mu.Lock()
	counting := r.fired != nil
	if e := r.byPath[path]; e != nil {
		// A copy of the slots, as using up a one-shot watch changes e (and may
		// drop it from the index).
		for _, s := range e.slots(slotBuf[:0]) {
			k := s.kind
			w := r.lists[s.id].w
			fire := k&Persistent != 0 || (k&PersistentRecursive != 0 && evType != jute.EventNodeChildrenChanged)
			if k&oneShot != 0 {
				r.set(s.id, e, k, k&^oneShot)
				fire = true
			}
			if fire {
				targets = append(targets, w) // a path has each watcher once
				inData, inChild := k&dataKinds != 0, k&childKinds != 0
				if inData {
					nData++
				}
				if inChild {
					nChild++
				}
				if counting && evType == jute.EventNodeDeleted && inData != inChild && r.nRecurs > 0 {
					lacking = append(lacking, oneManager{s.id, inData})
				}
			}
		}
	}
	if r.nRecurs > 0 && evType != jute.EventNodeChildrenChanged {
		before := len(targets)
		targets = r.recursiveAbove(path, targets)
		nData += len(targets) - before
		nChild += len(targets) - before
		for _, l := range lacking {
			if r.recursiveAboveHas(path, l.id) {
				if l.inData {
					nChild++
				} else {
					nData++
				}
			}
		}
	}
	fired := r.fired
	r.mu.Unlock()
	if len(targets) == 0 {
		return
	}
	if fired != nil {
		if evType == jute.EventNodeDeleted {
			// ZooKeeper triggers its data manager, then its child manager, each counting
			// the watchers it fires, if any.
			if nData > 0 {
				fired(evType, nData)
			}
			if nChild > 0 {
				fired(evType, nChild)
			}
		} else {
			fired(evType, len(targets)) // one manager's event
		}
	}
	ev := &jute.WatcherEvent{Type: evType, State: jute.StateSyncConnected, Path: path}
	for _, w := range targets {
		if canRead == nil || canRead(w, acl) {
			w.Notify(ev, zxid)
		}
	}
}

// ObserveFired has the registry call fired with the number of watchers an event fires,
// as ZooKeeper's WatchManager adds it to node_created_watch_count and its siblings:
// once per manager that fires any (a deletion fires the data manager's and the child
// manager's watchers apart, so it may call twice). fired runs after the registry's lock
// is let go and must not block.
func (r *Registry) ObserveFired(fired func(evType int32, n int)) {
	r.mu.Lock()
	r.fired = fired
	r.mu.Unlock()
}

// oneManager is a watcher a deletion fires from one of ZooKeeper's managers only, by its
// watches on the path: the data one (inData) or the child one.
type oneManager struct {
	id     int32
	inData bool
}

// recursiveAboveHas reports whether watcher id has a recursive watch on an ancestor of
// path; the caller holds mu.
func (r *Registry) recursiveAboveHas(path string, id int32) bool {
	for p := parentOf(path); p != ""; p = parentOf(p) {
		if e := r.byPath[p]; e != nil {
			if s, ok := e.find(id); ok && s.kind&PersistentRecursive != 0 {
				return true
			}
		}
	}
	return false
}

// recursiveAbove appends to targets the watchers with a recursive watch on an ancestor
// of path that are not in targets yet; the caller holds mu.
func (r *Registry) recursiveAbove(path string, targets []Watcher) []Watcher {
	var seen map[Watcher]bool // built once targets are too many to search
	has := func(w Watcher) bool {
		if seen != nil {
			return seen[w]
		}
		for _, t := range targets {
			if t == w {
				return true
			}
		}
		return false
	}
	for p := parentOf(path); p != ""; p = parentOf(p) {
		e := r.byPath[p]
		if e == nil {
			continue
		}
		for s := range e.all {
			if s.kind&PersistentRecursive == 0 {
				continue
			}
			if w := r.lists[s.id].w; !has(w) {
				targets = append(targets, w)
				if seen != nil {
					seen[w] = true
				} else if len(targets) > 2*maxFew {
					seen = make(map[Watcher]bool, 2*len(targets))
					for _, t := range targets {
						seen[t] = true
					}
				}
			}
		}
	}
	return targets
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

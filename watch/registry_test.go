package watch

import (
	"math/rand/v2"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

type rec struct {
	name   string
	events []string
	zxids  []int64
	ids    []jute.Id // who the watcher is, for readable
}

func (r *rec) Notify(ev *jute.WatcherEvent, zxid int64) {
	r.events = append(r.events, eventName(ev.Type)+" "+ev.Path)
	r.zxids = append(r.zxids, zxid)
}

// readable is a ReadCheck: w may read if acl is empty or grants READ to world:anyone or
// to one of w's ids (exactly, which is enough for these tests).
func readable(w Watcher, acl []jute.ACL) bool {
	if len(acl) == 0 {
		return true
	}
	for _, a := range acl {
		if a.Perms&jute.PermRead == 0 {
			continue
		}
		if a.Id == (jute.Id{Scheme: "world", Id: "anyone"}) {
			return true
		}
		for _, id := range w.(*rec).ids {
			if id == a.Id {
				return true
			}
		}
	}
	return false
}

func eventName(t int32) string {
	return map[int32]string{jute.EventNodeCreated: "created", jute.EventNodeDeleted: "deleted",
		jute.EventNodeDataChanged: "changed", jute.EventNodeChildrenChanged: "children"}[t]
}

func (r *rec) take() []string {
	e := r.events
	r.events, r.zxids = nil, nil
	return e
}

func eq(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: got %q, want %q", what, got, want)
		}
	}
}

// ZooKeeper's DataTree: create fires the data watches of the path (exists on a missing
// node registered one) and the child watches of the parent; one-shot watches go away.
func TestOneShotWatchesFireOnceWithZooKeepersMapping(t *testing.T) {
	r := New()
	a := &rec{name: "a"}
	r.Add(a, "/x", Data)
	r.Add(a, "/", Child)
	r.Trigger(jute.EventNodeCreated, "/x", 5, nil, nil)
	r.Trigger(jute.EventNodeChildrenChanged, "/", 5, nil, nil)
	eq(t, "create", a.take(), "created /x", "children /")
	r.Trigger(jute.EventNodeDataChanged, "/x", 6, nil, nil)
	eq(t, "second change after one-shot fired", a.take())

	r.Add(a, "/x", Data)
	r.Add(a, "/x", Child)
	r.Trigger(jute.EventNodeDeleted, "/x", 7, nil, nil)
	eq(t, "delete with data and child watch: one event", a.take(), "deleted /x")
	if w, p, n := r.Summary(); w != 0 || p != 0 || n != 0 || r.Count() != 0 {
		t.Fatalf("registry not empty after all fired: %d %d %d, count %d", w, p, n, r.Count())
	}
}

func TestChildWatchIgnoresDataChange(t *testing.T) {
	r := New()
	a := &rec{}
	r.Add(a, "/x", Child)
	r.Trigger(jute.EventNodeDataChanged, "/x", 1, nil, nil)
	eq(t, "data change on child watch", a.take())
	r.Trigger(jute.EventNodeChildrenChanged, "/x", 2, nil, nil)
	eq(t, "children change", a.take(), "children /x")
}

// Persistent watches stay and see all four event types of their path; recursive ones
// see the subtree but never NodeChildrenChanged (ZooKeeper's AddWatchMode docs).
func TestPersistentAndRecursive(t *testing.T) {
	r := New()
	p, rr := &rec{}, &rec{}
	r.Add(p, "/a", Persistent)
	r.Add(rr, "/a", PersistentRecursive)
	for i := 0; i < 2; i++ {
		r.Trigger(jute.EventNodeDataChanged, "/a", 1, nil, nil)
	}
	r.Trigger(jute.EventNodeCreated, "/a/b/c", 2, nil, nil)
	r.Trigger(jute.EventNodeChildrenChanged, "/a", 2, nil, nil)
	r.Trigger(jute.EventNodeDeleted, "/a", 3, nil, nil)
	eq(t, "persistent", p.take(), "changed /a", "changed /a", "children /a", "deleted /a")
	eq(t, "recursive", rr.take(), "changed /a", "changed /a", "created /a/b/c", "deleted /a")
	if !r.Has(p, "/a", jute.WatcherPersistent) || !r.Has(rr, "/a", jute.WatcherPersistentRecursive) {
		t.Fatal("persistent watches removed by triggering")
	}
}

// ZOOKEEPER-4799 (3.8.4, 3.9.2): every watch, one-shot or persistent, is delivered only
// to a watcher with READ in the ACL the node had at the change. A one-shot watch is used
// up even when its event is withheld; a persistent one stays.
func TestDeliveryNeedsReadOnTheEventsACL(t *testing.T) {
	r := New()
	bob := jute.Id{Scheme: "digest", Id: "bob:x"}
	a, b := &rec{name: "a"}, &rec{name: "b", ids: []jute.Id{bob}}
	secret := []jute.ACL{{Perms: jute.PermRead, Id: bob}, {Perms: jute.PermWrite, Id: jute.Id{Scheme: "world", Id: "anyone"}}}
	for _, w := range []*rec{a, b} {
		r.Add(w, "/", PersistentRecursive)
		r.Add(w, "/s", Data)
		r.Add(w, "/s", Persistent)
	}
	r.Trigger(jute.EventNodeDataChanged, "/s", 1, secret, readable)
	eq(t, "a without READ", a.take())
	eq(t, "b with READ: one event for the three watches", b.take(), "changed /s")
	if r.Has(a, "/s", jute.WatcherData) || !r.Has(a, "/s", jute.WatcherPersistent) {
		t.Fatal("a withheld event must use up the one-shot watch and keep the persistent one")
	}
	// The ACL is the event's, not the path's: the same path with an open ACL is delivered.
	r.Trigger(jute.EventNodeDeleted, "/s", 2, nil, readable)
	eq(t, "open ACL", a.take(), "deleted /s")
	r.Trigger(jute.EventNodeCreated, "/s/t", 3, secret, readable)
	eq(t, "recursive, child without READ", a.take())
	eq(t, "recursive, child with READ", b.take(), "deleted /s", "created /s/t")
}

// ZOOKEEPER-4655 (3.9): the notification carries the zxid of the change that fired it,
// every event of one change (a multi) the same one.
func TestNotificationCarriesTheTriggeringZxid(t *testing.T) {
	r := New()
	a := &rec{}
	r.Add(a, "/", PersistentRecursive)
	r.Add(a, "/", Child)
	r.Trigger(jute.EventNodeCreated, "/x", 41, nil, nil)
	r.Trigger(jute.EventNodeChildrenChanged, "/", 41, nil, nil)
	r.Trigger(jute.EventNodeDataChanged, "/y", 42, nil, nil)
	if got := a.zxids; len(got) != 3 || got[0] != 41 || got[1] != 41 || got[2] != 42 {
		t.Fatalf("zxids %v, want [41 41 42]", got)
	}
}

// ZOOKEEPER-4466 (3.9): one watcher may have watches of several modes on one path. They
// fire one notification together; the one-shot ones are used up, the persistent ones
// stay. (3.8 kept one mode per watcher and path: the last one set replaced the others.)
func TestModesOnOnePathCoexist(t *testing.T) {
	r := New()
	a := &rec{}
	r.Add(a, "/p", Persistent)
	r.Add(a, "/p", Data) // getData with a watch after addWatch
	r.Trigger(jute.EventNodeDataChanged, "/p", 1, nil, nil)
	eq(t, "data + persistent", a.take(), "changed /p")
	if r.Has(a, "/p", jute.WatcherData) || !r.Has(a, "/p", jute.WatcherPersistent) {
		t.Fatal("the data watch must be used up and the persistent one stay")
	}
	r.Trigger(jute.EventNodeDataChanged, "/p", 2, nil, nil)
	eq(t, "persistent alone", a.take(), "changed /p")

	r.Remove(a, "/p", jute.WatcherAny)
	r.Add(a, "/p", PersistentRecursive)
	r.Add(a, "/p", Child)
	r.Trigger(jute.EventNodeChildrenChanged, "/p", 3, nil, nil)
	eq(t, "child + recursive, children changed", a.take(), "children /p")
	r.Trigger(jute.EventNodeChildrenChanged, "/p", 4, nil, nil)
	eq(t, "recursive alone never sees children changed", a.take())
	r.Trigger(jute.EventNodeCreated, "/p/c", 5, nil, nil)
	eq(t, "recursive still there", a.take(), "created /p/c")

	r.Add(a, "/p", Persistent)
	r.Add(a, "/p", Data)
	r.Add(a, "/p", Child)
	r.Trigger(jute.EventNodeDeleted, "/p", 6, nil, nil)
	eq(t, "all four modes, deleted: one event", a.take(), "deleted /p")
	if r.Has(a, "/p", jute.WatcherData) || r.Has(a, "/p", jute.WatcherChildren) ||
		!r.Has(a, "/p", jute.WatcherPersistent) || !r.Has(a, "/p", jute.WatcherPersistentRecursive) {
		t.Fatal("after deleted: one-shot watches gone, persistent ones kept")
	}
}

// ZOOKEEPER-4471 and ZOOKEEPER-4472 (3.9): removeWatches and checkWatches name one
// mode: Data and Children the one-shot watches only (3.8 removed the watcher from the
// whole data or child manager, persistent watches included), Persistent (4) and
// PersistentRecursive (5) one persistent mode each, Any everything.
func TestRemoveOneModeOfSeveral(t *testing.T) {
	r := New()
	a := &rec{}
	r.Add(a, "/p", Persistent)
	for _, wt := range []int32{jute.WatcherData, jute.WatcherChildren, jute.WatcherPersistentRecursive} {
		if r.Has(a, "/p", wt) || r.Remove(a, "/p", wt) {
			t.Fatalf("type %d matched a persistent watch", wt)
		}
	}
	r.Trigger(jute.EventNodeChildrenChanged, "/p", 1, nil, nil)
	eq(t, "persistent keeps child events after Remove(Children)", a.take(), "children /p")

	r.Add(a, "/p", Data|Child|PersistentRecursive)
	if !r.Remove(a, "/p", jute.WatcherPersistent) || r.Remove(a, "/p", jute.WatcherPersistent) {
		t.Fatal("remove persistent once")
	}
	for _, wt := range []int32{jute.WatcherData, jute.WatcherChildren, jute.WatcherPersistentRecursive, jute.WatcherAny} {
		if !r.Has(a, "/p", wt) {
			t.Fatalf("type %d gone with the persistent watch", wt)
		}
	}
	if !r.Remove(a, "/p", jute.WatcherPersistentRecursive) || r.Has(a, "/p", jute.WatcherPersistentRecursive) {
		t.Fatal("remove recursive")
	}
	if r.nRecurs != 0 {
		t.Fatalf("recursive count %d after its removal", r.nRecurs)
	}
	r.Trigger(jute.EventNodeCreated, "/p/c", 2, nil, nil)
	eq(t, "no recursive left", a.take())
	if !r.Remove(a, "/p", jute.WatcherAny) || r.Has(a, "/p", jute.WatcherAny) || r.Count() != 0 {
		t.Fatal("remove any")
	}
}

func TestKnownWatcherTypes(t *testing.T) {
	for wt := int32(-1); wt <= 7; wt++ {
		if want := wt >= 1 && wt <= 5; KnownType(wt) != want {
			t.Errorf("KnownType(%d) = %v", wt, !want)
		}
	}
}

func TestRemoveAndCheck(t *testing.T) {
	r := New()
	a := &rec{}
	r.Add(a, "/x", Data|Child)
	if !r.Has(a, "/x", jute.WatcherData) || !r.Has(a, "/x", jute.WatcherAny) || r.Has(a, "/x", jute.WatcherPersistent) {
		t.Fatal("Has")
	}
	if !r.Remove(a, "/x", jute.WatcherChildren) || r.Remove(a, "/x", jute.WatcherChildren) {
		t.Fatal("remove children twice")
	}
	if !r.Has(a, "/x", jute.WatcherData) {
		t.Fatal("data watch removed with child watch")
	}
	r.Add(a, "/y", PersistentRecursive)
	r.RemoveWatcher(a)
	if w, p, n := r.Summary(); w != 0 || p != 0 || n != 0 || r.Count() != 0 || r.nRecurs != 0 {
		t.Fatalf("after RemoveWatcher: %d %d %d count %d recursive %d", w, p, n, r.Count(), r.nRecurs)
	}
}

// The counts are ZooKeeper's: mntr counts its data and child watch managers together
// (a persistent watch is in both), wchs and the listings show the data manager only, so
// a watcher with only child watches is not in them.
func TestCountsAndListingsAsZooKeeper(t *testing.T) {
	r := New()
	a, b := &rec{name: "a"}, &rec{name: "b"}
	r.Add(a, "/x", Data)
	r.Add(a, "/x", Child)
	r.Add(a, "/missing", Data) // exists on a missing node
	r.Add(a, "/p", Persistent)
	r.Add(a, "/r", PersistentRecursive)
	r.Add(b, "/x", Child)
	r.Add(b, "/x", Child) // again: still one
	if n := r.Count(); n != 8 {
		t.Fatalf("count %d, want 8", n)
	}
	if w, p, n := r.Summary(); w != 1 || p != 4 || n != 4 {
		t.Fatalf("summary %d %d %d, want 1 4 4", w, p, n)
	}
	eq(t, "paths of a", r.PathsOf(a), "/missing", "/p", "/r", "/x")
	eq(t, "paths of b", r.PathsOf(b))
	eq(t, "watched", r.WatchedPaths(), "/missing", "/p", "/r", "/x")
	if ws := r.Watchers("/x"); len(ws) != 1 || ws[0] != a {
		t.Fatalf("watchers of /x: %v", ws)
	}
	r.Trigger(jute.EventNodeDeleted, "/x", 1, nil, nil)
	if w, p, n := r.Summary(); r.Count() != 5 || w != 1 || p != 3 || n != 3 {
		t.Fatalf("after /x fired: count %d, summary %d %d %d", r.Count(), w, p, n)
	}
}

// The counts kept as watches come and go (Count, the recursive watches) and the wchs
// summary (counted from the per-watcher index) equal a recount over the per-path index
// after any sequence of adds, triggers and removals.
func TestCountsFollowChanges(t *testing.T) {
	r := New()
	ws := []*rec{{name: "a"}, {name: "b"}, {name: "c"}}
	paths := []string{"/", "/a", "/a/b", "/c"}
	kinds := []Kind{Data, Child, Persistent, PersistentRecursive}
	events := []int32{jute.EventNodeCreated, jute.EventNodeDeleted, jute.EventNodeDataChanged, jute.EventNodeChildrenChanged}
	wtypes := []int32{jute.WatcherChildren, jute.WatcherData, jute.WatcherAny, jute.WatcherPersistent, jute.WatcherPersistentRecursive}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		w, p := ws[rng.IntN(len(ws))], paths[rng.IntN(len(paths))]
		switch rng.IntN(10) {
		case 0, 1, 2, 3, 4:
			r.Add(w, p, kinds[rng.IntN(len(kinds))])
		case 5, 6:
			r.Trigger(events[rng.IntN(len(events))], p, int64(i), nil, nil)
		case 7, 8:
			r.Remove(w, p, wtypes[rng.IntN(len(wtypes))])
		case 9:
			r.RemoveWatcher(w)
		}
		count, watchers, watched, pairs, recursive := recount(r)
		if w, p, n := r.Summary(); r.Count() != count || w != watchers || p != watched || n != pairs || r.nRecurs != recursive {
			t.Fatalf("step %d: count %d summary %d %d %d recursive %d; recount %d %d %d %d %d",
				i, r.Count(), w, p, n, r.nRecurs, count, watchers, watched, pairs, recursive)
		}
	}
}

func recount(r *Registry) (count, watchers, watched, pairs, recursive int) {
	conns := map[Watcher]bool{}
	for _, ws := range r.paths {
		data := false
		for w, k := range ws {
			count += managers(k)
			if k&dataKinds != 0 {
				data, conns[w] = true, true
				pairs++
			}
			if k&PersistentRecursive != 0 {
				recursive++
			}
		}
		if data {
			watched++
		}
	}
	return count, len(conns), watched, pairs, recursive
}

// mortalRec is a watcher that can be gone, as a closed connection is.
type mortalRec struct {
	rec
	gone bool
}

func (m *mortalRec) Gone() bool { return m.gone }

// A watch set for a watcher that is gone is not registered (ZooKeeper's WatchManager
// skips a dead watcher): a read that runs while its connection closes leaves nothing
// behind once the connection's watches are removed.
func TestNoWatchIsAddedForAGoneWatcher(t *testing.T) {
	r := New()
	w := &mortalRec{}
	r.Add(w, "/a", Data)
	w.gone = true
	r.RemoveWatcher(w)
	for _, k := range []Kind{Data, Child, Persistent, PersistentRecursive} {
		r.Add(w, "/b", k)
	}
	if n := r.Count(); n != 0 {
		t.Fatalf("%d watches registered for a gone watcher", n)
	}
	r.Trigger(jute.EventNodeDataChanged, "/b", 1, nil, nil)
	if len(w.events) != 0 {
		t.Fatalf("a gone watcher was notified: %v", w.events)
	}
}

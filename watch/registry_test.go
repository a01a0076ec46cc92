package watch

import (
	"math/rand/v2"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

type rec struct {
	name   string
	events []string
}

func (r *rec) Notify(ev *jute.WatcherEvent, zxid int64) {
	r.events = append(r.events, eventName(ev.Type)+" "+ev.Path)
}

func eventName(t int32) string {
	return map[int32]string{jute.EventNodeCreated: "created", jute.EventNodeDeleted: "deleted",
		jute.EventNodeDataChanged: "changed", jute.EventNodeChildrenChanged: "children"}[t]
}

func (r *rec) take() []string {
	e := r.events
	r.events = nil
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
	r.Trigger(jute.EventNodeCreated, "/x", 5, nil)
	r.Trigger(jute.EventNodeChildrenChanged, "/", 5, nil)
	eq(t, "create", a.take(), "created /x", "children /")
	r.Trigger(jute.EventNodeDataChanged, "/x", 6, nil)
	eq(t, "second change after one-shot fired", a.take())

	r.Add(a, "/x", Data)
	r.Add(a, "/x", Child)
	r.Trigger(jute.EventNodeDeleted, "/x", 7, nil)
	eq(t, "delete with data and child watch: one event", a.take(), "deleted /x")
	if w, p, n := r.Summary(); w != 0 || p != 0 || n != 0 || r.Count() != 0 {
		t.Fatalf("registry not empty after all fired: %d %d %d, count %d", w, p, n, r.Count())
	}
}

func TestChildWatchIgnoresDataChange(t *testing.T) {
	r := New()
	a := &rec{}
	r.Add(a, "/x", Child)
	r.Trigger(jute.EventNodeDataChanged, "/x", 1, nil)
	eq(t, "data change on child watch", a.take())
	r.Trigger(jute.EventNodeChildrenChanged, "/x", 2, nil)
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
		r.Trigger(jute.EventNodeDataChanged, "/a", 1, nil)
	}
	r.Trigger(jute.EventNodeCreated, "/a/b/c", 2, nil)
	r.Trigger(jute.EventNodeChildrenChanged, "/a", 2, nil)
	r.Trigger(jute.EventNodeDeleted, "/a", 3, nil)
	eq(t, "persistent", p.take(), "changed /a", "changed /a", "children /a", "deleted /a")
	eq(t, "recursive", rr.take(), "changed /a", "changed /a", "created /a/b/c", "deleted /a")
	if !r.Has(p, "/a", jute.WatcherPersistent) || !r.Has(rr, "/a", jute.WatcherPersistentRecursive) {
		t.Fatal("persistent watches removed by triggering")
	}
}

func TestRecursiveDeliveryChecksRead(t *testing.T) {
	r := New()
	a := &rec{}
	r.Add(a, "/", PersistentRecursive)
	deny := func(w Watcher, path string) bool { return path != "/secret" }
	r.Trigger(jute.EventNodeDataChanged, "/secret", 1, deny)
	r.Trigger(jute.EventNodeDataChanged, "/open", 1, deny)
	eq(t, "READ checked", a.take(), "changed /open")
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
	r.Trigger(jute.EventNodeDeleted, "/x", 1, nil)
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
			r.Trigger(events[rng.IntN(len(events))], p, int64(i), nil)
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

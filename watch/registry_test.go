package watch

import (
	"sort"
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
	if w, p, n := r.Stats(); w != 0 || p != 0 || n != 0 {
		t.Fatalf("registry not empty after all fired: %d %d %d", w, p, n)
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
	if w, p, n := r.Stats(); w != 0 || p != 0 || n != 0 || r.nRecurs != 0 {
		t.Fatalf("after RemoveWatcher: %d %d %d recursive %d", w, p, n, r.nRecurs)
	}
}

func TestStatsAndListings(t *testing.T) {
	r := New()
	a, b := &rec{name: "a"}, &rec{name: "b"}
	r.Add(a, "/x", Data)
	r.Add(a, "/y", Child)
	r.Add(b, "/x", Data)
	if w, p, n := r.Stats(); w != 2 || p != 2 || n != 3 {
		t.Fatalf("stats %d %d %d", w, p, n)
	}
	eq(t, "paths of a", r.PathsOf(a), "/x", "/y")
	eq(t, "watched", r.WatchedPaths(), "/x", "/y")
	var names []string
	for _, w := range r.Watchers("/x") {
		names = append(names, w.(*rec).name)
	}
	sort.Strings(names)
	eq(t, "watchers of /x", names, "a", "b")
}

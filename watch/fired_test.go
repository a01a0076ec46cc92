package watch

import (
	"fmt"
	"slices"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// ObserveFired hears, per event, how many watchers each of ZooKeeper's two managers
// fires (WatchManager.triggerWatch adds it to node_*_watch_count when it is not zero): a
// deletion counts the data manager's and the child manager's apart, and a recursive watch
// is in both, so a watcher with a one-shot data watch on the node and a recursive one
// above counts in each.
func TestObserveFiredCountsPerManager(t *testing.T) {
	r := New()
	var got []string
	r.ObserveFired(func(ev int32, n int) { got = append(got, fmt.Sprintf("%s %d", eventName(ev), n)) })
	a, b, c := &rec{name: "a"}, &rec{name: "b"}, &rec{name: "c"}
	expect := func(what string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Fatalf("%s: fired %q, want %q", what, got, want)
		}
		got = nil
	}
	r.Trigger(jute.EventNodeCreated, "/x", 1, nil, nil)
	expect("no watchers")

	r.Add(a, "/a/b", Data)
	r.Add(a, "/a", PersistentRecursive)
	r.Add(b, "/a/b", Data)
	r.Trigger(jute.EventNodeDataChanged, "/a/b", 2, nil, nil)
	expect("a change: a (once) and b", "changed 2")

	r.Add(a, "/a/b", Data)
	r.Add(c, "/a/b", Child)
	r.Trigger(jute.EventNodeDeleted, "/a/b", 3, nil, nil)
	// Data manager: a (its data watch, its recursive one above), none of c's. Child
	// manager: a (the recursive one) and c.
	expect("a deletion", "deleted 1", "deleted 2")

	r.Add(c, "/a", Child)
	r.Trigger(jute.EventNodeChildrenChanged, "/a", 4, nil, nil)
	expect("children of /a: c only (a recursive watch sees no children events)", "children 1")

	r.Trigger(jute.EventNodeCreated, "/a/new", 5, nil, nil)
	expect("a creation under a's recursive watch", "created 1")
}

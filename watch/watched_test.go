package watch

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// checkLayout fails t unless r's indexes agree: every slot's watcher id is live and its
// at points back at the entry in that watcher's list, every list entry has a slot,
// entries live in the slice up to maxFew watchers and no entry is empty.
func checkLayout(t *testing.T, r *Registry) {
	t.Helper()
	slots := 0
	for p, e := range r.byPath {
		if e.path != p || e.size() == 0 {
			t.Fatalf("entry %q (key %q) has %d watchers", e.path, p, e.size())
		}
		if e.many != nil && (e.few != nil || len(e.many) <= maxFew/2) {
			t.Fatalf("%s: map of %d watchers beside a slice of %d", p, len(e.many), len(e.few))
		}
		if e.many == nil && len(e.few) > maxFew {
			t.Fatalf("%s: slice of %d watchers, above %d", p, len(e.few), maxFew)
		}
		ids := map[int32]bool{}
		for s := range e.all {
			if ids[s.id] {
				t.Fatalf("%s: watcher %d twice", p, s.id)
			}
			ids[s.id] = true
			slots++
			if s.kind == 0 || int(s.id) >= len(r.lists) || r.lists[s.id].w == nil {
				t.Fatalf("%s: slot %+v of a free id or with no kind", p, s)
			}
			if l := r.lists[s.id].paths; int(s.at) >= len(l) || l[s.at] != e {
				t.Fatalf("%s: slot %+v does not point back", p, s)
			}
		}
	}
	listed := 0
	for id, l := range r.lists {
		if l.w == nil {
			if len(l.paths) != 0 {
				t.Fatalf("free id %d lists %d paths", id, len(l.paths))
			}
			continue
		}
		if r.ids[l.w] != int32(id) || len(l.paths) == 0 {
			t.Fatalf("id %d: ids says %d, %d paths", id, r.ids[l.w], len(l.paths))
		}
		listed += len(l.paths)
	}
	if listed != slots || len(r.ids)+len(r.free) != len(r.lists) {
		t.Fatalf("%d listed, %d slots; %d ids + %d free of %d", listed, slots, len(r.ids), len(r.free), len(r.lists))
	}
}

// A path's watchers move from the slice to a map above maxFew and back at maxFew/2,
// keeping their kinds, and a watcher that leaves and comes back gets a free id again.
func TestPathSwitchesBetweenSliceAndMap(t *testing.T) {
	r := New()
	ws := make([]*rec, maxFew+3)
	for i := range ws {
		ws[i] = &rec{name: fmt.Sprint(i)}
		r.Add(ws[i], "/x", Data)
		r.Add(ws[i], fmt.Sprintf("/own%d", i), Child)
		checkLayout(t, r)
		if inMap := r.byPath["/x"].many != nil; inMap != (i+1 > maxFew) {
			t.Fatalf("%d watchers: in a map %v", i+1, inMap)
		}
	}
	r.Add(ws[0], "/x", Child) // a second kind in map mode
	if !r.Has(ws[0], "/x", jute.WatcherChildren) || !r.Has(ws[0], "/x", jute.WatcherData) {
		t.Fatal("watcher 0 lost a kind on /x")
	}
	for i := len(ws) - 1; i > maxFew/2; i-- {
		if !r.Remove(ws[i], "/x", jute.WatcherData) {
			t.Fatalf("watcher %d had no data watch on /x", i)
		}
		checkLayout(t, r)
	}
	if e := r.byPath["/x"]; len(e.many) != maxFew/2+1 {
		t.Fatalf("above maxFew/2: map of %d, slice of %d", len(e.many), len(e.few))
	}
	r.Remove(ws[maxFew/2], "/x", jute.WatcherData)
	if e := r.byPath["/x"]; e.many != nil || len(e.few) != maxFew/2 {
		t.Fatalf("at maxFew/2: map %v, slice %d", e.many != nil, len(e.few))
	}
	if !r.Has(ws[0], "/x", jute.WatcherChildren) {
		t.Fatal("watcher 0's child watch did not survive the switch back")
	}
	r.RemoveWatcher(ws[1])
	checkLayout(t, r)
	freed := len(r.free)
	r.Add(ws[1], "/x", Data)
	checkLayout(t, r)
	if len(r.free) != freed-1 || len(r.lists) != len(ws) {
		t.Fatalf("re-added watcher: %d free ids (was %d), %d ids", len(r.free), freed, len(r.lists))
	}
	r.Trigger(jute.EventNodeDataChanged, "/x", 1, nil, nil)
	for i, w := range ws {
		got := w.take()
		if want := i <= maxFew/2-1; (len(got) == 1) != want {
			t.Fatalf("watcher %d got %q", i, got)
		}
	}
	checkLayout(t, r)
}

// The registry answers as a plain model (watcher -> path -> kinds) does, with more
// watchers than maxFew on a few paths so entries keep switching between slice and map.
func TestRegistryMatchesModelAcrossTheThreshold(t *testing.T) {
	r := New()
	ws := make([]*rec, 2*maxFew)
	for i := range ws {
		ws[i] = &rec{name: fmt.Sprint(i)}
	}
	model := map[*rec]map[string]Kind{}
	paths := []string{"/", "/a", "/a/b"}
	kinds := []Kind{Data, Child, Persistent, PersistentRecursive}
	events := []int32{jute.EventNodeCreated, jute.EventNodeDeleted, jute.EventNodeDataChanged, jute.EventNodeChildrenChanged}
	rng := rand.New(rand.NewPCG(3, 4))
	toMap, toSlice := 0, 0
	for i := 0; i < 20000; i++ {
		before := map[string]bool{}
		for _, p := range paths {
			before[p] = r.byPath[p] != nil && r.byPath[p].many != nil
		}
		w, p := ws[rng.IntN(len(ws))], paths[rng.IntN(len(paths))]
		switch rng.IntN(13) {
		case 0, 1, 2, 3, 4, 5:
			k := kinds[rng.IntN(len(kinds))]
			r.Add(w, p, k)
			if model[w] == nil {
				model[w] = map[string]Kind{}
			}
			model[w][p] |= k
		case 6, 7:
			k := kindsOf(int32(1 + rng.IntN(5)))
			had := model[w][p]&k != 0
			if r.Remove(w, p, int32(0)) {
				t.Fatal("removed a watch of an unknown type")
			}
			if wt := wtypeOf(k); r.Remove(w, p, wt) != had {
				t.Fatalf("step %d: Remove(%s, %s, %d) disagrees with the model (%v)", i, w.name, p, wt, had)
			}
			if model[w] != nil {
				model[w][p] &^= k
			}
		case 8, 9, 10:
			ev := events[rng.IntN(len(events))]
			r.Trigger(ev, p, int64(i), nil, nil)
			want := modelTrigger(model, ev, p)
			for _, o := range ws {
				got := len(o.take()) == 1
				if got != want[o] {
					t.Fatalf("step %d: event %d on %s: watcher %s notified %v, model says %v", i, ev, p, o.name, got, want[o])
				}
			}
		case 11, 12:
			r.RemoveWatcher(w)
			delete(model, w)
		}
		checkLayout(t, r)
		for _, p := range paths {
			switch inMap := r.byPath[p] != nil && r.byPath[p].many != nil; {
			case inMap && !before[p]:
				toMap++
			case before[p] && !inMap:
				toSlice++
			}
		}
		for _, o := range ws {
			var want []string
			for q, k := range model[o] {
				if k&dataKinds != 0 {
					want = append(want, q)
				}
			}
			sort.Strings(want)
			if got := r.PathsOf(o); fmt.Sprint(got) != fmt.Sprint(want) && len(got)+len(want) > 0 {
				t.Fatalf("step %d: PathsOf(%s) = %q, model %q", i, o.name, got, want)
			}
		}
	}
	if toMap < 10 || toSlice < 10 {
		t.Fatalf("entries switched to a map %d times and back %d times; the test needs more", toMap, toSlice)
	}
	t.Logf("entries switched to a map %d times and back %d times", toMap, toSlice)
}

func wtypeOf(k Kind) int32 {
	for wt := int32(1); wt <= 5; wt++ {
		if kindsOf(wt) == k {
			return wt
		}
	}
	return 0
}

// modelTrigger says who an event notifies, by the rules Trigger documents, and uses up
// the model's one-shot watches.
func modelTrigger(model map[*rec]map[string]Kind, ev int32, path string) map[*rec]bool {
	oneShot := map[int32]Kind{jute.EventNodeCreated: Data, jute.EventNodeDataChanged: Data,
		jute.EventNodeDeleted: Data | Child, jute.EventNodeChildrenChanged: Child}[ev]
	out := map[*rec]bool{}
	for w, ps := range model {
		k := ps[path]
		if k&oneShot != 0 || k&Persistent != 0 || (k&PersistentRecursive != 0 && ev != jute.EventNodeChildrenChanged) {
			out[w] = true
		}
		ps[path] = k &^ oneShot
		if ev == jute.EventNodeChildrenChanged {
			continue
		}
		for p := parentOf(path); p != ""; p = parentOf(p) {
			if ps[p]&PersistentRecursive != 0 {
				out[w] = true
			}
		}
	}
	return out
}

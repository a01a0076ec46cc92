package datatree

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// TestNameIndexFindsWhatTheListHolds grows and shrinks one list of children across
// indexMin and indexMax with random creates and deletes (and so tombstones, rebuilds
// and drops of its index), and checks along the way that children (all of them at the
// end of each phase) and some absent names are found as the list holds them, that the
// list has an index exactly where it should, and that the index does not count as the
// tree's content (MemoryInUse, which every replica must agree on).
func TestNameIndexFindsWhatTheListHolds(t *testing.T) {
	f := newFixture(t)
	f.mustCreate("/p", 0)
	held := map[string]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(step int, all bool) {
		t.Helper()
		p := f.tree.lookup("/p")
		c := f.tree.kidsOf(p)
		if c.len() != len(held) {
			t.Fatalf("step %d: list has %d children, want %d", step, c.len(), len(held))
		}
		has := c != nil && c.index != nil
		if n := len(held); n >= indexMin && n <= indexMax && !has || (n < indexMin/2 || 3*n > 4*indexMax) && has {
			t.Fatalf("step %d: %d children, index %v", step, n, has)
		}
		if has && c.index.live != len(held) {
			t.Fatalf("step %d: index holds %d, list %d", step, c.index.live, len(held))
		}
		if all {
			// The index's table is not content: a replica that loaded the same tree
			// (with indexes of another history) reports the same memory in use.
			var nodes []StoredNode
			f.tree.Nodes(func(n StoredNode) { nodes = append(nodes, n) })
			loaded, err := FromNodes(nodes, Options{ExtendedTypes: true})
			if err != nil {
				t.Fatal(err)
			}
			if a, b := f.tree.MemoryInUse(), loaded.MemoryInUse(); a != b {
				t.Fatalf("step %d: memory in use %d, %d in the same tree loaded", step, a, b)
			}
			// A load builds each list's index once, at its end.
			lp := loaded.lookup("/p")
			lc := loaded.kidsOf(lp)
			if n := len(held); (lc != nil && lc.index != nil) != (n >= indexMin && n <= indexMax) {
				t.Fatalf("step %d: the loaded tree's list of %d has an index: %v", step, n, lc != nil && lc.index != nil)
			}
			for name := range held {
				if loaded.child(lp, name) == nil {
					t.Fatalf("step %d: child %s not found in the loaded tree", step, name)
				}
			}
		}
		seen := 0
		for name := range held { // a random sample, or all
			if f.tree.child(p, name) == nil {
				t.Fatalf("step %d: child %s not found (%d children)", step, name, len(held))
			}
			if seen++; !all && seen == 200 {
				break
			}
		}
		for i := 0; i < 20; i++ {
			name := fmt.Sprintf("c%d", rng.IntN(100000))
			if got := f.tree.child(p, name) != nil; got != held[name] {
				t.Fatalf("step %d: child %s found %v, held %v", step, name, got, held[name])
			}
		}
	}
	// Up past indexMax, down to nothing, up to the middle: creates and deletes of random
	// names, with more of one than the other in each phase.
	phases := []struct {
		until  int
		create int // percent
	}{{indexMin + 5, 100}, {3 * indexMin, 70}, {2 * indexMax, 80}, {indexMin / 4, 25}, {2 * indexMin, 75}, {0, 10}}
	step := 0
	for _, ph := range phases {
		for len(held) != ph.until {
			step++
			name := fmt.Sprintf("c%d", rng.IntN(100000))
			if rng.IntN(100) < ph.create {
				if held[name] {
					continue
				}
				if _, code, _ := f.apply(anyone, jute.OpCreate, &jute.CreateRequest{Path: "/p/" + name, Acl: world}); code != jute.OK {
					t.Fatal(code)
				}
				held[name] = true
			} else {
				if len(held) == 0 {
					continue
				}
				if !held[name] {
					for k := range held {
						name = k
						break
					}
				}
				if _, code, _ := f.apply(anyone, jute.OpDelete, &jute.DeleteRequest{Path: "/p/" + name, Version: -1}); code != jute.OK {
					t.Fatal(code)
				}
				delete(held, name)
			}
			if len(held) < 2*indexMin+8 || step%97 == 0 {
				check(step, false)
			}
		}
		check(step, true)
	}
}

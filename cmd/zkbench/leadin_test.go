package main

import (
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"
)

// The session workload's lead-in makes leadInOps ops per worker before the timed part
// (runSession times only new workers after it): the load generator's heap has grown
// before anything is timed, whichever target runs first.
func TestLeadInOpsAreUntimed(t *testing.T) {
	c := &cell{b: &bench{cfg: config{depth: 2}}, t: &target{}, conns: make([]*zk.Conn, 3)}
	var mu sync.Mutex
	calls := map[int]int{}
	leadIn(c, func(w *worker) error {
		mu.Lock()
		calls[w.id]++
		mu.Unlock()
		return nil
	})
	if len(calls) != 6 {
		t.Fatalf("lead-in ran %d workers, want 6 (3 sessions, depth 2)", len(calls))
	}
	for id, n := range calls {
		if n != leadInOps {
			t.Fatalf("worker %d made %d lead-in ops, want %d", id, n, leadInOps)
		}
	}
}

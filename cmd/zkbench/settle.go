package main

import (
	"math"
	"time"
)

// A JVM keeps working for a while after a load ends (collections, the JIT, G1's
// refinement threads): measured here at 0.1-0.5 CPU seconds inside the next 4 s cell,
// which runs the other target. Before a cell starts, settle waits until every other
// target's processes used at most settleQuietTicks of /proc's 10 ms clock ticks in a
// settleWindow (5% of a core), for at most settleMax, so each cell measures its own
// target, not the one before it. Every target's cells follow the same rule.
const (
	settleWindow     = 200 * time.Millisecond
	settleQuietTicks = 1
	settleMax        = 3 * time.Second
)

// settle waits for the targets other than t to go quiet, and returns how long it took.
func (b *bench) settle(t *target) time.Duration {
	var pids []int
	for _, o := range b.targets {
		if o != t {
			pids = append(pids, o.pids...)
		}
	}
	if len(pids) == 0 {
		return 0
	}
	start := time.Now()
	for c0 := cpuSeconds(pids...); time.Since(start) < settleMax; {
		time.Sleep(settleWindow)
		c1 := cpuSeconds(pids...)
		if c0 < 0 || c1 < 0 || math.Round((c1-c0)*clockTicks) <= settleQuietTicks {
			break
		}
		c0 = c1
	}
	return time.Since(start)
}

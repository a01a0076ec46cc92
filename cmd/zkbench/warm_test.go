package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Every workload of a run is run once, untimed, before the first timed cell, and leaves
// nothing behind: the report holds only the timed cells, and the run's root is gone
// after teardown (its delete fails while a warm-up cell's base is still there).
func TestEveryWorkloadIsWarmedBeforeTheFirstCell(t *testing.T) {
	workloads := []string{"create", "lock", "watch", "visibility-poll"}
	cfg := shortRun(t, "zkraft", 0, workloads, 2)
	cfg.warmup = 800 * time.Millisecond
	var mu sync.Mutex
	var lines []string
	cfg.logf = func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		t.Log(line)
		mu.Lock()
		lines = append(lines, line)
		mu.Unlock()
	}
	targets, errs := startTargets(cfg)
	defer stopTargets(cfg, targets)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	rep := runBench(cfg, targets)

	mu.Lock()
	defer mu.Unlock()
	firstCell := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "zkraft: create, 2 sessions") {
			firstCell = i
			break
		}
	}
	if firstCell < 0 {
		t.Fatal("no timed cell was logged")
	}
	for _, w := range workloads {
		warmed := false
		for _, l := range lines[:firstCell] {
			switch {
			case l == fmt.Sprintf("zkraft: warming %s for %v", w, cfg.warmup/warmShare):
				warmed = true
			case strings.HasPrefix(l, fmt.Sprintf("zkraft: warming %s: ", w)):
				t.Errorf("warming %s failed: %s", w, l)
			}
		}
		if !warmed {
			t.Errorf("%s was not warmed before the first timed cell", w)
		}
	}
	if len(rep.results) != len(workloads) {
		t.Fatalf("%d results, want the %d timed cells only: %+v", len(rep.results), len(workloads), rep.results)
	}
	for _, res := range rep.results {
		if res.Error != "" || res.Ops == 0 {
			t.Errorf("%s: %+v", res.Workload, res)
		}
	}
	conns, err := connectAll(targets[0].members, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(conns)
	top, _, err := conns[0].Children("/")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range top {
		if strings.HasPrefix(name, "zkbench-") {
			t.Errorf("the run's root /%s is still there after teardown", name)
		}
	}
}

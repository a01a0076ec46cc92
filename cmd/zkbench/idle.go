package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of utime and stime in /proc/<pid>/stat: 100
// on every Linux port zkbench runs on.
const clockTicks = 100

// cpuSeconds returns the CPU time (user + system) the pids and their descendants have
// used so far, or -1 if a pid cannot be read.
func cpuSeconds(pids ...int) float64 {
	var total float64
	for _, p := range descendants(pids) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			return -1
		}
		// The command name (field 2) is in parentheses and may hold spaces; utime and
		// stime are the 12th and 13th fields after it.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 13 {
			return -1
		}
		ut, err1 := strconv.ParseFloat(fields[11], 64)
		st, err2 := strconv.ParseFloat(fields[12], 64)
		if err1 != nil || err2 != nil {
			return -1
		}
		total += (ut + st) / clockTicks
	}
	return total
}

// descendants returns the pids and every process below them.
func descendants(pids []int) []int {
	var out []int
	seen := map[int]bool{}
	queue := append([]int(nil), pids...)
	for len(queue) > 0 && len(seen) < 256 {
		p := queue[0]
		queue = queue[1:]
		if p <= 0 || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
		queue = append(queue, childPids(p)...)
	}
	return out
}

// measureIdle lets every target sit with no client for d, all in the same window, and
// prints the CPU each used, per 10 s: what a server costs doing nothing (heartbeats,
// timers), which matters for a cluster on a shared machine.
func measureIdle(cfg config, targets []*target, d time.Duration, out io.Writer) {
	time.Sleep(2 * time.Second) // start-up work done
	before := make([]float64, len(targets))
	for i, t := range targets {
		before[i] = cpuSeconds(t.pids...)
	}
	cfg.logf("idle for %v", d)
	time.Sleep(d)
	parts := make([]string, 0, len(targets))
	per10 := make([]float64, len(targets))
	for i, t := range targets {
		after := cpuSeconds(t.pids...)
		if before[i] < 0 || after < 0 || len(t.pids) == 0 {
			per10[i] = -1
			parts = append(parts, t.name+" n/a")
			continue
		}
		per10[i] = (after - before[i]) * float64(10*time.Second) / float64(d)
		parts = append(parts, fmt.Sprintf("%s %.2f", t.name, per10[i]))
	}
	line := "idle CPU seconds per 10 s: " + strings.Join(parts, ", ")
	if len(per10) == 2 && per10[0] >= 0 && per10[1] > 0 {
		line += fmt.Sprintf(" (ratio %.2fx)", per10[0]/per10[1])
	}
	fmt.Fprintln(out, line)
	fmt.Fprintln(out)
}

package main

import (
	"os"
	"testing"
	"time"
)

// cpuSeconds counts the CPU a process used: it grows by about the time spent spinning.
func TestCPUSecondsCountsBusyTime(t *testing.T) {
	before := cpuSeconds(os.Getpid())
	if before < 0 {
		t.Fatal("cannot read this process's CPU time")
	}
	x := 0
	for start := time.Now(); time.Since(start) < 300*time.Millisecond; {
		x++
	}
	if got := cpuSeconds(os.Getpid()) - before; got < 0.1 {
		t.Fatalf("300 ms of spinning counted as %.2f CPU seconds (%d)", got, x)
	}
	if cpuSeconds(1<<30) != -1 {
		t.Fatal("a pid that does not exist has a CPU time")
	}
}

package main

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// cpuSeconds counts the CPU a process used: it grows by about the CPU the process spent
// spinning, by the kernel's other account of it (getrusage). Spinning is measured in
// CPU, not wall time: on a loaded machine 300 ms of wall time can be far less CPU.
func TestCPUSecondsCountsBusyTime(t *testing.T) {
	used := func() float64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	before, start := cpuSeconds(os.Getpid()), used()
	if before < 0 {
		t.Fatal("cannot read this process's CPU time")
	}
	x := 0
	for deadline := time.Now().Add(30 * time.Second); used()-start < 0.3; {
		if time.Now().After(deadline) {
			t.Fatalf("spun %.2f CPU seconds in 30 s", used()-start)
		}
		for i := 0; i < 100000; i++ {
			x++
		}
	}
	spent := used() - start
	if got := cpuSeconds(os.Getpid()) - before; got < spent-0.05 {
		t.Fatalf("%.2f CPU seconds of spinning counted as %.2f (%d)", spent, got, x)
	}
	if cpuSeconds(1<<30) != -1 {
		t.Fatal("a pid that does not exist has a CPU time")
	}
}

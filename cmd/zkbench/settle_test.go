package main

import (
	"os/exec"
	"testing"
)

func startChild(t *testing.T, name string, args ...string) int {
	t.Helper()
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// A cell waits while another target burns CPU (up to settleMax), and not while it idles.
func TestSettleWaitsForABusyTarget(t *testing.T) {
	me := &target{name: "me"}
	idle := &target{name: "idle", pids: []int{startChild(t, "sleep", "30")}}
	b := &bench{targets: []*target{me, idle}}
	if d := b.settle(me); d > settleMax/2 {
		t.Fatalf("waited %v for an idle target", d)
	}
	busy := &target{name: "busy", pids: []int{startChild(t, "sh", "-c", "while :; do :; done")}}
	b.targets = append(b.targets, busy)
	if d := b.settle(me); d < settleMax {
		t.Fatalf("waited only %v for a busy target", d)
	}
	if d := b.settle(busy); d > settleMax/2 {
		t.Fatalf("a busy target waited %v for itself", d)
	}
}

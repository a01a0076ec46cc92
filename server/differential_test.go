package server

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server/ztest"
)

// TestDifferentialAgainstZooKeeper runs the same kazoo steps against Apache ZooKeeper
// 3.8 and zkraft and requires identical normalized output: error types, every stat
// field (zxids and times by rank), sequential names, ACLs, multi results and the
// order of watch events. Deliberate differences belong in docs/compatibility.md.
func TestDifferentialAgainstZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8, java and kazoo", ztest.Available() == nil)
	steps := func(name string, start func(ztest.Options) (*ztest.Server, error)) []string {
		s, err := start(ztest.Options{Logf: t.Logf})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer s.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, systemPy, "testdata/diff_steps.py", s.Addr).Output()
		if err != nil {
			t.Fatalf("%s: diff_steps.py: %v\n%s", name, err, out)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	want := steps("zookeeper", ztest.StartZooKeeper)
	got := steps("zkraft", ztest.StartZkraft)
	if len(want) < 40 {
		t.Fatalf("reference run printed only %d steps", len(want))
	}
	compareLines(t, want, got)
}

// compareLines reports every line where zkraft's transcript differs from ZooKeeper's.
func compareLines(t *testing.T, want, got []string) {
	t.Helper()
	for i := 0; i < len(want) || i < len(got); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Errorf("line %d differs\nzookeeper: %s\nzkraft:    %s", i, w, g)
		}
	}
}

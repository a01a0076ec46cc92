package server

import (
	"testing"

	"github.com/zkraft/zkraft/server/ztest"
)

// TestMain removes the zkraft binary the tests built once they have run.
//
// Most of this package's time is spent waiting: for JVMs (ZooKeeper, zkCli.sh, Curator)
// to start, elections and sessions. The tests that start only their own processes on
// ports of their own (ztest.FreePort) and compare transcripts with ZooKeeper or drive a
// real client call t.Parallel, so go test runs them side by side (GOMAXPROCS at a time)
// once the others have run. Tests that kill, pause or restart members (Fault*, Crash*,
// the histories through kills, a rolling upgrade), that compare time windows with
// ZooKeeper's (a session's expiry, read-only mode, a close within 500 ms), that watch
// the process (its descriptors, goroutines or logs) or that set a package variable stay
// serial.
func TestMain(m *testing.M) { ztest.Main(m) }

package quorum

import (
	"testing"
	"time"
)

// A leader heartbeats at leaderHeartbeatSlowdown times raft's pace, and every member that
// does not lead keeps the configured timeout, through a hand-over too.
func TestOnlyTheLeaderHeartbeatsSlower(t *testing.T) {
	_, _, nodes := openThree(t)
	base := 100 * time.Millisecond // openMember's
	paced := func(leader *Node) bool {
		for _, n := range nodes {
			want := base
			if n == leader {
				want = base * leaderHeartbeatSlowdown
			}
			rc := n.raft.ReloadableConfig()
			if rc.HeartbeatTimeout != want || rc.ElectionTimeout != want {
				return false
			}
		}
		return true
	}
	waitPaced := func(leader *Node, when string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !paced(leader); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				for id, n := range nodes {
					rc := n.raft.ReloadableConfig()
					t.Logf("member %s leading %v: heartbeat %v, election %v", id, n.IsLeader(), rc.HeartbeatTimeout, rc.ElectionTimeout)
				}
				t.Fatalf("%s: the leader's timeouts are not %dx the configured %v, or another member's are not that", when, leaderHeartbeatSlowdown, base)
			}
		}
	}
	first := leaderOf(t, nodes)
	waitPaced(first, "after the first election")

	if err := first.HandOver(5 * time.Second); err != nil {
		t.Logf("hand-over: %v", err) // a loaded machine may finish it later; the wait below asks
	}
	var second *Node
	for deadline := time.Now().Add(15 * time.Second); second == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no other member leads after the hand-over")
		}
		for _, n := range nodes {
			if n != first && n.IsLeader() {
				second = n
			}
		}
	}
	waitPaced(second, "after the hand-over")
}

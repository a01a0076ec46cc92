package quorum

import (
	"testing"
	"time"
)

// A leader heartbeats at leaderHeartbeatSlowdown times raft's pace, and every member that
// does not lead keeps the configured timeout, through a hand-over too. (Below slowedFrom,
// as in the other tests here, every member keeps it.)
func TestOnlyTheLeaderHeartbeatsSlower(t *testing.T) {
	base := slowedFrom
	nodes := openMembersWith(t, threePeers(t), func(_ Peer, c *Config) { c.HeartbeatTimeout = base })
	// paced reports the one member that leads, if its timeouts are the slowed ones and
	// every other member's the configured ones.
	paced := func() *Node {
		var leader *Node
		for _, n := range nodes {
			want := base
			if n.IsLeader() {
				if leader != nil {
					return nil
				}
				leader, want = n, base*leaderHeartbeatSlowdown
			}
			if rc := n.raft.ReloadableConfig(); rc.HeartbeatTimeout != want || rc.ElectionTimeout != want {
				return nil
			}
		}
		return leader
	}
	waitPaced := func(when string, not *Node) *Node {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if l := paced(); l != nil && l != not {
				return l
			}
			if time.Now().After(deadline) {
				for id, n := range nodes {
					rc := n.raft.ReloadableConfig()
					t.Logf("member %s leading %v: heartbeat %v, election %v", id, n.IsLeader(), rc.HeartbeatTimeout, rc.ElectionTimeout)
				}
				t.Fatalf("%s: no leader's timeouts are %dx the configured %v with every other member's at it", when, leaderHeartbeatSlowdown, base)
			}
		}
	}
	first := waitPaced("after the first election", nil)
	if err := first.HandOver(5 * time.Second); err != nil {
		t.Logf("hand-over: %v", err) // a loaded machine may finish it later; the wait asks
	}
	waitPaced("after the hand-over", first)
}

// Below slowedFrom a leader keeps raft's pace.
func TestAShortHeartbeatTimeoutIsNotSlowed(t *testing.T) {
	_, _, nodes := openThree(t) // 100 ms
	leader := leaderOf(t, nodes)
	time.Sleep(500 * time.Millisecond) // pacing takes a few milliseconds after an election
	if rc := leader.raft.ReloadableConfig(); rc.HeartbeatTimeout != 100*time.Millisecond || rc.ElectionTimeout != 100*time.Millisecond {
		t.Fatalf("a leader at a 100 ms timeout has heartbeat %v, election %v", rc.HeartbeatTimeout, rc.ElectionTimeout)
	}
}

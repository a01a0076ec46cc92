package quorum

import (
	"testing"
	"time"
)

// A leader heartbeats at leaderHeartbeatTimeout's pace, and every member that
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
				leader, want = n, leaderHeartbeatTimeout(base)
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
				t.Fatalf("%s: no leader's timeouts are %v with every other member's at the configured %v", when, leaderHeartbeatTimeout(base), base)
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

// A slowed leader's longest gap between heartbeats (a fifth of its timeout) leaves every
// follower its slack, or the leader heartbeats at twice raft's pace where that slack would
// allow less; at the default tick (a 1 s follower timeout) 3.5 s, a heartbeat every
// 350-700 ms.
func TestALeadersHeartbeatGapLeavesFollowersTheirSlack(t *testing.T) {
	if got := leaderHeartbeatTimeout(time.Second); got != 3500*time.Millisecond {
		t.Fatalf("at a 1 s timeout the leader's is %v, want 3.5s", got)
	}
	for ht := slowedFrom; ht <= 30*time.Second; ht += 50 * time.Millisecond {
		lt := leaderHeartbeatTimeout(ht)
		gap := lt / 5
		switch {
		case lt < 2*ht:
			t.Fatalf("at %v the leader's timeout %v is under twice raft's pace", ht, lt)
		case lt > 2*ht && gap+heartbeatSlack(ht) > ht:
			t.Fatalf("at %v the leader's longest gap %v leaves less than %v", ht, gap, heartbeatSlack(ht))
		case lt > 2*ht && gap+heartbeatSlack(ht) < ht-time.Millisecond:
			t.Fatalf("at %v the leader's longest gap %v leaves more than %v: slowed less than it may be", ht, gap, heartbeatSlack(ht))
		}
	}
	if got := leaderHeartbeatTimeout(slowedFrom - time.Millisecond); got != slowedFrom-time.Millisecond {
		t.Fatalf("below slowedFrom the leader's timeout is %v", got)
	}
}

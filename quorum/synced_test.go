package quorum

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// waitUntil polls cond every few milliseconds for up to bound and reports whether it held.
func waitUntil(bound time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(bound); ; time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// A follower is synced with its leader's term only once its log holds an entry of that
// term. One whose log store takes nothing hears the new leader of a leadership transfer
// (its term and its leader change) but is not synced, however long it waits; once its
// store takes entries again it is.
func TestAFollowerIsSyncedOnceItHoldsAnEntryOfTheTerm(t *testing.T) {
	nodes, stores := openMembersWrappingLogs(t, threePeers(t), func(c *Config) {},
		func(l raft.LogStore) *refusingLogs { return &refusingLogs{LogStore: l} })
	leader := leaderOf(t, nodes)
	var lagging, next *Node
	for _, n := range nodes {
		switch {
		case n == leader:
		case lagging == nil:
			lagging = n
		default:
			next = n
		}
	}
	if !waitUntil(10*time.Second, func() bool { return leader.Synced() && lagging.Synced() && next.Synced() }) {
		t.Fatalf("not synced in the first term: leader %v, followers %v %v", leader.Synced(), lagging.Synced(), next.Synced())
	}
	term := lagging.raft.CurrentTerm()
	stores[lagging.cfg.ID].refuse.Store(1 << 30)
	nextAddr, _ := next.peer(next.cfg.ID)
	if err := leader.raft.LeadershipTransferToServer(raft.ServerID(next.cfg.ID), raft.ServerAddress(nextAddr.RaftAddr)).Error(); err != nil {
		t.Fatalf("leadership transfer: %v", err)
	}
	if !waitUntil(10*time.Second, func() bool {
		id, _ := lagging.LeaderID()
		return lagging.raft.CurrentTerm() > term && id == next.cfg.ID
	}) {
		id, _ := lagging.LeaderID()
		t.Fatalf("the lagging member did not hear the new leader: term %d (was %d), leader %q", lagging.raft.CurrentTerm(), term, id)
	}
	if waitUntil(500*time.Millisecond, lagging.Synced) {
		t.Fatal("a follower whose log holds no entry of the term is synced")
	}
	if !waitUntil(10*time.Second, next.Synced) {
		t.Fatal("the new leader is not established")
	}
	stores[lagging.cfg.ID].refuse.Store(0)
	if !waitUntil(10*time.Second, lagging.Synced) {
		t.Fatal("the follower is not synced once its store takes the term's entries")
	}
}

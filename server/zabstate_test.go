package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// A leader that won its election but has no quorum to acknowledge it (it is not
// established) is no quorum member yet, as a ZooKeeper leader before a quorum acked its
// NEWLEADER: srvr says it does not serve, and zabstate agrees (not voting, no state)
// instead of answering broadcast. The leader is made by handing leadership to a member
// whose only peer is cut off as soon as it leads; the hand-over is repeated until the
// new leader is caught before it is established.
func TestALeaderNotYetEstablishedIsNoQuorumMember(t *testing.T) {
	tc := newTestCluster(t, 3)
	caught := 0
	for attempt := 0; attempt < 8 && caught == 0; attempt++ {
		old := tc.leader()
		next, third := (old+1)%3, (old+2)%3
		tc.net.Isolate(fmt.Sprint(third + 1))
		// A write the third member misses, so the hand-over picks next.
		c := dial(t, tc.addr(old))
		c.connect(0, nil)
		if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("/a%d", attempt), Acl: openACL}, nil); h.Err != 0 {
			t.Fatalf("create: %d", h.Err)
		}
		s := tc.servers[next]
		// Cut the old leader off as soon as next leads: next then has the old
		// leader's vote but not yet its acknowledgement of the new term's entries.
		cut := make(chan struct{})
		go func() {
			defer close(cut)
			for deadline := time.Now().Add(5 * time.Second); !s.node.IsLeader() && time.Now().Before(deadline); {
				time.Sleep(50 * time.Microsecond)
			}
			tc.net.Isolate(fmt.Sprint(old + 1))
		}()
		err := tc.servers[old].node.HandOver(5 * time.Second)
		<-cut
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if !s.node.IsLeader() || s.node.Established() {
				continue
			}
			caught++
			zab := s.adminZabState()
			if zab["voting"] != false || zab["zabstate"] != "" || len(zab) != 2 {
				t.Fatalf("zabstate of a leader not established: %v", zab)
			}
			if srvr := askFourLetter(t, tc.addr(next), "srvr"); !strings.Contains(srvr, "not currently serving") {
				t.Fatalf("srvr of a leader not established: %q", srvr)
			}
			break
		}
		t.Logf("attempt %d: caught %d", attempt, caught)
		tc.net.Heal()
	}
	if caught == 0 {
		t.Fatal("no hand-over left a leader not established")
	}
}

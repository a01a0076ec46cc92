package quorum

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/session"
)

// A member restarted while the others wrote knows its leader before raft has brought it
// what it missed; once Sync returns, it holds every write acknowledged before.
func TestSyncBringsARestartedMemberUpToDate(t *testing.T) {
	peers, dirs, nodes := openThree(t)
	leader, follower := leaderAndFollowerOf(t, nodes)
	id := follower.ID()
	follower.Close()
	delete(nodes, id)
	propose(t, leader, &Entry{Session: 7, Op: jute.OpCreateSession, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	var last int64
	for i := 0; i < 200; i++ {
		r := propose(t, leader, &Entry{Session: 7, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: fmt.Sprintf("/n%d", i), Data: []byte("x"), Acl: open}})
		if r.Err != jute.OK {
			t.Fatalf("create: %v", r.Err)
		}
		last = r.Zxid
	}
	follower = openMember(t, id, dirs[id], peers)
	nodes[id] = follower
	deadline := time.Now().Add(15 * time.Second)
	for !follower.HasLeader() {
		if time.Now().After(deadline) {
			t.Fatal("the restarted member knows no leader after 15s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !follower.Sync() {
		t.Fatal("Sync failed with a leader")
	}
	if got := follower.FSM.LastZxid(); got < last {
		t.Fatalf("after Sync the restarted member applied 0x%x, the last acknowledged write is 0x%x", got, last)
	}
	var code jute.Code
	follower.FSM.Read(func(tr *datatree.Tree, _ *session.Table) { _, code = tr.Stat("/n199") })
	if code != jute.OK {
		t.Fatalf("after Sync the restarted member lacks the last node written: %v", code)
	}
}

package quorum

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/session"
)

func voters(ids ...raft.ServerID) raft.Configuration {
	var c raft.Configuration
	for _, id := range ids {
		c.Servers = append(c.Servers, raft.Server{ID: id, Address: raft.ServerAddress(id), Suffrage: raft.Voter})
	}
	return c
}

// The index a majority of the voters stored counts the leader's durable point, each
// follower's newest point of the leader's term, and no observer.
func TestQuorumStoredCountsAMajorityOfVoters(t *testing.T) {
	var p followerPoints
	three := voters("a", "b", "c")
	three.Servers = append(three.Servers, raft.Server{ID: "o", Address: "o", Suffrage: raft.Nonvoter})
	if got := p.quorumStored(three, "a", 9, 5); got != 0 {
		t.Fatalf("no follower heard from: %d, want 0", got)
	}
	p.note("b", 5, 10)
	p.note("o", 5, 100)
	p.note("b", 5, 8) // an answer overtaken by a later one
	for _, c := range []struct{ own, want uint64 }{{8, 8}, {12, 10}} {
		if got := p.quorumStored(three, "a", c.own, 5); got != c.want {
			t.Errorf("leader at %d, b at 10: %d, want %d", c.own, got, c.want)
		}
	}
	p.note("c", 4, 50) // stored for an earlier leader: not counted in term 5
	if got := p.quorumStored(three, "a", 5, 5); got != 5 {
		t.Errorf("leader at 5, b at 10, c in another term: %d, want 5", got)
	}
	if got := p.quorumStored(three, "a", 12, 6); got != 0 {
		t.Errorf("no follower heard from in term 6: %d, want 0", got)
	}
	if n := p.newest.Load(); n.index != 100 || n.term != 5 {
		t.Errorf("newest %+v, want index 100 of term 5", *n)
	}

	five := voters("a", "b", "c", "d", "e")
	p.note("c", 5, 9)
	p.note("d", 5, 3)
	if got := p.quorumStored(five, "a", 20, 5); got != 9 { // 20, 10, 9 of 5 voters
		t.Errorf("five voters: %d, want 9", got)
	}
}

// Only an answer that accepted entries is a stored point.
func TestOnlyAcceptedEntriesAreNoted(t *testing.T) {
	var p followerPoints
	req := &raft.AppendEntriesRequest{Term: 3, Entries: []*raft.Log{{Index: 4}, {Index: 5}}}
	p.noteAccepted("b", req, &raft.AppendEntriesResponse{Term: 3, Success: false})
	p.noteAccepted("b", req, &raft.AppendEntriesResponse{Term: 4, Success: true})
	p.noteAccepted("b", &raft.AppendEntriesRequest{Term: 3}, &raft.AppendEntriesResponse{Term: 3, Success: true})
	if p.newest.Load() != nil {
		t.Fatalf("noted %+v from a refusal, a newer term or a heartbeat", *p.newest.Load())
	}
	p.noteAccepted("b", req, &raft.AppendEntriesResponse{Term: 3, Success: true})
	if n := p.newest.Load(); n == nil || n.index != 5 || n.term != 3 {
		t.Fatalf("newest %v, want index 5 of term 3", n)
	}
}

// waitThrough is satisfied by an index that is no command's (a configuration, a no-op),
// which a zxid wait never is.
func TestWaitThroughAnEntryThatIsNoCommand(t *testing.T) {
	f := NewFSM(datatree.Options{})
	if f.waitThrough(1, 10*time.Millisecond) {
		t.Fatal("index 1 applied before anything was")
	}
	done := make(chan bool, 1)
	go func() { done <- f.waitThrough(1, 10*time.Second) }()
	conf := raft.EncodeConfiguration(voters("a"))
	f.ApplyBatch([]*raft.Log{{Index: 1, Type: raft.LogConfiguration, Data: conf}})
	if !<-done || f.LastZxid() != 0 {
		t.Fatalf("configuration at index 1 applied: wait not satisfied, or zxid %d", f.LastZxid())
	}
}

// A read on the leader waits for the entry a follower has stored and the leader holds,
// while the leader's apply of it is held back, and then sees it.
func TestAReadOnTheLeaderWaitsForWhatAMajorityStored(t *testing.T) {
	_, _, nodes := openThree(t)
	leader := leaderOf(t, nodes)
	self := leader.ID()
	propose(t, leader, &Entry{Session: 7, Op: jute.OpCreateSession, Origin: self, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	leader.freshReadWait = time.Minute // nothing reads it yet: the test's reads are its only ones

	leader.FSM.applyMu.Lock() // raft's apply on the leader waits here
	held := true
	defer func() {
		if held {
			leader.FSM.applyMu.Unlock()
		}
	}()
	f := leader.Propose(&Entry{Session: 7, Op: jute.OpCreate, Origin: self, Req: &jute.CreateRequest{Path: "/fresh", Acl: open}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		top := leader.lead.followers.newest.Load()
		if top != nil && top.index > leader.FSM.through.Load() &&
			leader.lead.followers.quorumStored(leader.raft.GetConfiguration().Configuration(), raft.ServerID(self), leader.lead.durableIndex(leader.raft), top.term) > leader.FSM.through.Load() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no follower's stored point above the leader's apply")
		}
		time.Sleep(time.Millisecond)
	}
	read := make(chan struct{})
	go func() {
		leader.WaitFreshRead()
		close(read)
	}()
	select {
	case <-read:
		t.Fatal("the read did not wait for the entry a majority stored")
	case <-time.After(200 * time.Millisecond):
	}
	leader.FSM.applyMu.Unlock()
	held = false
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the read still waits after the apply")
	}
	var code jute.Code
	leader.FSM.Read(func(tr *datatree.Tree, _ *session.Table) { _, _, code = tr.Get("/fresh") })
	if code != jute.OK {
		t.Fatalf("the read after the wait does not see /fresh: %v", code)
	}
	if err := f.Error(); err != nil {
		t.Fatal(err)
	}
}

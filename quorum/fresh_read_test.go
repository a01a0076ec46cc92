package quorum

import (
	"strconv"
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

// The followers' share of a majority counts each voting follower's newest point of the
// leader's term, and no observer: the highest point with three voters, the second
// highest of four followers with five.
func TestTheFollowersShareOfAMajority(t *testing.T) {
	var p followerPoints
	majority := func() commitPoint { return *p.majority.Load() }
	three := voters("a", "b", "c")
	three.Servers = append(three.Servers, raft.Server{ID: "o", Address: "o", Suffrage: raft.Nonvoter})
	p.note("o", 5, 100, three, "a")
	if m := majority(); m.index != 0 {
		t.Fatalf("an observer alone: %+v, want index 0", m)
	}
	p.note("b", 5, 10, three, "a")
	p.note("b", 5, 8, three, "a") // an answer overtaken by a later one
	if m := majority(); m.index != 10 || m.term != 5 {
		t.Fatalf("b at 10: %+v, want index 10 of term 5", m)
	}
	p.note("c", 4, 50, three, "a") // from an earlier leadership: overtaken
	p.note("c", 5, 12, three, "a")
	p.note("c", 4, 60, three, "a")
	if m := majority(); m.index != 12 {
		t.Fatalf("b at 10, c at 12 of term 5 (then 60 of term 4): %+v, want index 12", m)
	}
	p.note("b", 6, 3, three, "a") // a new term: only its own points count
	if m := majority(); m.index != 3 || m.term != 6 {
		t.Fatalf("b at 3 of term 6: %+v, want index 3 of term 6", m)
	}

	var q followerPoints
	five := voters("a", "b", "c", "d", "e")
	q.note("b", 5, 20, five, "a")
	if m := *q.majority.Load(); m.index != 0 {
		t.Fatalf("one follower of four: %+v, want index 0", m)
	}
	q.note("c", 5, 9, five, "a")
	q.note("d", 5, 3, five, "a")
	if m := *q.majority.Load(); m.index != 9 {
		t.Fatalf("followers at 20, 9, 3 of five voters: %+v, want index 9", m)
	}
}

// An answer's point is the last command or configuration it stored: raft's no-ops and
// barriers never reach the FSM, so a read waiting for one would wait until its bound.
func TestTheAcceptedPointIsAnEntryTheFSMSees(t *testing.T) {
	req := func(types ...raft.LogType) *raft.AppendEntriesRequest {
		r := &raft.AppendEntriesRequest{Term: 3}
		for i, ty := range types {
			r.Entries = append(r.Entries, &raft.Log{Index: uint64(4 + i), Type: ty})
		}
		return r
	}
	ok := &raft.AppendEntriesResponse{Term: 3, Success: true}
	for _, c := range []struct {
		name string
		req  *raft.AppendEntriesRequest
		resp *raft.AppendEntriesResponse
		want uint64
	}{
		{"refused", req(raft.LogCommand), &raft.AppendEntriesResponse{Term: 3}, 0},
		{"a newer term", req(raft.LogCommand), &raft.AppendEntriesResponse{Term: 4, Success: true}, 0},
		{"a heartbeat", req(), ok, 0},
		{"a no-op and a barrier", req(raft.LogNoop, raft.LogBarrier), ok, 0},
		{"commands", req(raft.LogCommand, raft.LogCommand), ok, 5},
		{"a command, then a barrier", req(raft.LogCommand, raft.LogBarrier), ok, 4},
		{"a configuration, then a no-op", req(raft.LogNoop, raft.LogConfiguration, raft.LogNoop), ok, 5},
	} {
		if got := acceptedPoint(c.req, c.resp); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
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

// openFreshThree opens three members whose reads on a leader wait up to a minute, with
// a HeartbeatTimeout long enough that a loaded machine does not move the leadership while
// a test holds the leader's apply.
func openFreshThree(t *testing.T) map[string]*Node {
	t.Helper()
	return openMembersWith(t, threePeers(t), func(_ Peer, c *Config) {
		c.HeartbeatTimeout = time.Second
		c.freshReadWait = time.Minute
	})
}

// A new leader's no-op and barrier, which the FSM never sees, leave its reads, and its
// followers', nothing to wait for once the followers stored them: after a hand-over in a
// cluster whose first leader wrote its membership and a command, the new leader writes
// nothing more.
func TestANewLeadersReadsWaitForNothing(t *testing.T) {
	nodes := openFreshThree(t)
	first := leaderOf(t, nodes)
	propose(t, first, &Entry{Session: 7, Op: jute.OpCreateSession, Origin: first.ID(), Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	waitSame(t, nodes)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, ok := first.FSM.Members(); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first leader wrote no membership")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := first.HandOver(5 * time.Second); err != nil {
		t.Logf("hand-over: %v", err) // another member may still win later; the wait below asks
	}
	var leader *Node
	for leader == nil {
		for _, n := range nodes {
			if n != first && n.IsLeader() {
				leader = n
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no other member leads")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for {
		c, _ := strconv.ParseUint(leader.Stats()["commit_index"], 10, 64)
		if last := leader.raft.LastIndex(); c >= last && leader.lead.durableIndex(leader.raft) >= last {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the new leader's first entries not committed and durable")
		}
		time.Sleep(time.Millisecond)
	}
	deadline = time.Now().Add(2 * time.Second)
	for _, n := range nodes { // the followers got the new leader's no-op and barrier
		for q := n.FreshReadTarget(); q != 0; q = n.FreshReadTarget() {
			if time.Now().After(deadline) {
				t.Fatalf("a read on %s (leader %v) without writes would wait for index %d (applied through %d)", n.ID(), n == leader, q, n.FSM.through.Load())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// A read on the leader waits for the entry a follower has stored and the leader holds,
// while the leader's apply of it is held back, and then sees it.
func TestAReadOnTheLeaderWaitsForWhatAMajorityStored(t *testing.T) {
	nodes := openFreshThree(t)
	leader := leaderOf(t, nodes)
	propose(t, leader, &Entry{Session: 7, Op: jute.OpCreateSession, Origin: leader.ID(), Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	term := leader.raft.CurrentTerm()
	readWaitsForHeldApply(t, leader, leader, func() bool { return !leader.IsLeader() || leader.raft.CurrentTerm() != term })
}

// readWaitsForHeldApply holds every apply on n, creates /fresh through leader, and checks
// that a read on n then waits until the apply is let go, and sees /fresh. moved says
// whether the leadership moved meanwhile (a stalled machine): the test is then skipped
// if the read did not wait.
func readWaitsForHeldApply(t *testing.T, leader, n *Node, moved func() bool) {
	t.Helper()
	n.FSM.applyMu.Lock() // every apply on n (raft's and the notices') waits here
	held := true
	defer func() {
		if held {
			n.FSM.applyMu.Unlock()
		}
	}()
	f := leader.Propose(&Entry{Session: 7, Op: jute.OpCreate, Origin: leader.ID(), Req: &jute.CreateRequest{Path: "/fresh", Acl: open}})
	// The read must wait for the create itself, not for an entry before it (the first
	// leader's membership): on a follower the leader's answer names the create's index.
	// A leader whose apply is held answers nothing, so there any index is taken (its
	// session was applied before the hold).
	var want uint64 = 1
	if n != leader {
		if err := f.Error(); err != nil {
			t.Fatal(err)
		}
		want = uint64(f.Response().(*Result).Zxid)
	}
	deadline := time.Now().Add(10 * time.Second)
	for n.FreshReadTarget() < want {
		if time.Now().After(deadline) {
			t.Fatalf("no index at or above %d for a read to wait for above the held apply", want)
		}
		time.Sleep(time.Millisecond)
	}
	read := make(chan struct{})
	go func() {
		n.WaitFreshRead()
		close(read)
	}()
	select {
	case <-read:
		if moved() {
			t.Skip("the leadership moved while the apply was held (a stalled machine)")
		}
		t.Fatal("the read did not wait for the write")
	case <-time.After(200 * time.Millisecond):
	}
	n.FSM.applyMu.Unlock()
	held = false
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the read still waits after the apply")
	}
	var code jute.Code
	n.FSM.Read(func(tr *datatree.Tree, _ *session.Table) { _, _, code = tr.Get("/fresh") })
	if code != jute.OK {
		if moved() { // the create may be lost with the leadership, or the wait end with it
			t.Skipf("the leadership moved while the apply was held (a stalled machine): term %d, leader %v", leader.raft.CurrentTerm(), leader.IsLeader())
		}
		t.Fatalf("the read after the wait does not see /fresh: %v", code)
	}
	if err := f.Error(); err != nil {
		t.Fatal(err)
	}
}

// A follower's read waits for the newest commit notice, and for the newest command
// received from the leader of its current term: never for a no-op or barrier, nor for
// what a replaced leader sent.
func TestAFollowersReadTarget(t *testing.T) {
	c := newCatchUp(NewFSM(datatree.Options{}), nil, nil, func() uint64 { return 3 }, func() uint64 { return 0 })
	typed := func(req *raft.AppendEntriesRequest, ty raft.LogType) *raft.AppendEntriesRequest {
		req.Entries[0].Type = ty
		return req
	}
	for _, step := range []struct {
		notice uint64                     // a commit notice, if not 0
		req    *raft.AppendEntriesRequest // entries received, if not nil
		term   uint64                     // the member's current term
		want   uint64
		why    string
	}{
		{term: 3, want: 0, why: "no notice"},
		{notice: 5, term: 3, want: 5, why: "the commit notice"},
		{req: appendReq(3, 5, 3, 3, 3), term: 3, want: 8, why: "the last command received"},
		{req: typed(appendReq(3, 8, 3), raft.LogNoop), term: 3, want: 8, why: "the last command, not the no-op after it"},
		{term: 4, want: 5, why: "only the commit notice in a later term"},
		{req: typed(appendReq(4, 9, 4), raft.LogBarrier), term: 4, want: 5, why: "the commit notice, not a new leader's barrier"},
		{req: appendReq(4, 10, 4), term: 4, want: 11, why: "the new leader's command"},
	} {
		if step.notice != 0 {
			c.wantIndex.Store(step.notice)
		}
		if step.req != nil {
			c.recv.add(step.req)
		}
		if q := c.followerTarget(step.term); q != step.want {
			t.Fatalf("target %d, want %d: %s", q, step.want, step.why)
		}
	}
}

// A read on a follower whose apply is held waits for the write it received, and then
// sees it; an idle follower's read waits for nothing.
func TestAReadOnAFollowerWaitsForWhatItReceived(t *testing.T) {
	nodes := openFreshThree(t)
	leader, follower := leaderAndFollowerOf(t, nodes)
	propose(t, leader, &Entry{Session: 7, Op: jute.OpCreateSession, Origin: leader.ID(), Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	waitSame(t, nodes)
	deadline := time.Now().Add(5 * time.Second)
	for q := follower.FreshReadTarget(); q != 0; q = follower.FreshReadTarget() {
		if time.Now().After(deadline) {
			t.Fatalf("an idle follower's read would wait for %d (applied through %d)", q, follower.FSM.through.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	readWaitsForHeldApply(t, leader, follower, func() bool { return false })
}

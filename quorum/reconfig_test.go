package quorum

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
)

const threeMembers = "server.1=127.0.0.1:2391:2491:participant\n" +
	"server.2=127.0.0.1:2392:2492:participant\n" +
	"server.3=127.0.0.1:2393:2493:participant\n"

// reconfigFSM is a state machine with one session (0x100) and three members in
// /zookeeper/config, set by the entry at index 4.
func reconfigFSM(t *testing.T) *FSM {
	t.Helper()
	f := NewFSM(datatree.Options{})
	for _, r := range applyAll(t, f, []*Entry{
		{Session: 0x100, Op: jute.OpCreateSession, Time: 1000, Req: &SessionRequest{Timeout: 4000, Password: make([]byte, 16)}},
		{Op: OpSetConfig, Time: 1001, Req: &jute.SetDataRequest{Path: datatree.ConfigPath, Data: []byte(threeMembers), Version: -1}},
	}) {
		if r.Err != jute.OK {
			t.Fatalf("setup: %v", r.Err)
		}
	}
	return f
}

// ZooKeeper 3.8's PrepRequestProcessor checks a reconfig's version, then its arguments,
// then the new membership's quorum, and the ACL on /zookeeper/config last: a caller
// without WRITE there is told what else is wrong first.
func TestReconfigCheckOrder(t *testing.T) {
	const noQuorumJoin = "server.5=127.0.0.1:1:2;3,server.6=127.0.0.1:4:5;6,server.7=127.0.0.1:7:8;9"
	cases := []struct {
		name  string
		op    int32
		super bool
		req   jute.ReconfigRequest
		want  jute.Code
	}{
		{"bad version", jute.OpReconfig, false, jute.ReconfigRequest{LeavingServers: "3", CurConfigId: 1}, jute.ErrBadVersion},
		{"bad version and arguments", jute.OpReconfig, false, jute.ReconfigRequest{JoiningServers: "server.5=127.0.0.1:1:2", CurConfigId: 1}, jute.ErrBadVersion},
		{"joiner without client port", jute.OpReconfig, false, jute.ReconfigRequest{JoiningServers: "server.5=127.0.0.1:1:2", CurConfigId: -1}, jute.ErrBadArguments},
		{"one voter left", jute.OpReconfig, false, jute.ReconfigRequest{LeavingServers: "1,2", CurConfigId: -1}, jute.ErrBadArguments},
		{"bad arguments, judged without quorum", OpReconfigNoQuorum, false, jute.ReconfigRequest{LeavingServers: "1,2", CurConfigId: -1}, jute.ErrBadArguments},
		{"no quorum", OpReconfigNoQuorum, false, jute.ReconfigRequest{JoiningServers: noQuorumJoin, CurConfigId: -1}, jute.ErrNewConfigNoQuorum},
		{"no quorum, super", OpReconfigNoQuorum, true, jute.ReconfigRequest{JoiningServers: noQuorumJoin, CurConfigId: -1}, jute.ErrNewConfigNoQuorum},
		{"no right", jute.OpReconfig, false, jute.ReconfigRequest{LeavingServers: "3", CurConfigId: -1}, jute.ErrNoAuth},
	}
	for _, c := range cases {
		f := reconfigFSM(t)
		req := c.req
		res := applyAll(t, f, []*Entry{{Session: 0x100, Op: c.op, Time: 1002, Super: c.super, Req: &req}})[0]
		if res.Err != c.want {
			t.Errorf("%s: %v, want %v", c.name, res.Err, c.want)
		}
		if m, _ := f.Members(); len(m.Peers) != 3 {
			t.Errorf("%s: membership changed to %v", c.name, m)
		}
	}
}

// The leader marks a reconfig whose new voters hold no quorum of members that answered
// it lately; a reconfig it cannot judge (bad version or arguments) is left for Apply.
func TestJudgeReconfig(t *testing.T) {
	ct := &contactTransport{}
	ct.answered.Store(raft.ServerID("2"), time.Now())
	ct.answered.Store(raft.ServerID("3"), time.Now().Add(-time.Minute)) // silent since
	n := &Node{cfg: Config{ID: "1", TickTime: time.Second}, FSM: reconfigFSM(t), trans: ct}
	cases := []struct {
		req  jute.ReconfigRequest
		want int32
	}{
		{jute.ReconfigRequest{LeavingServers: "3", CurConfigId: -1}, jute.OpReconfig},                                 // 1, 2 of 1, 2
		{jute.ReconfigRequest{JoiningServers: "server.4=127.0.0.1:1:2;3", CurConfigId: -1}, OpReconfigNoQuorum},       // 1, 2 of 1..4
		{jute.ReconfigRequest{JoiningServers: "server.4=127.0.0.1:1:2:observer;3", CurConfigId: -1}, jute.OpReconfig}, // observers do not vote
		{jute.ReconfigRequest{LeavingServers: "1", CurConfigId: -1}, OpReconfigNoQuorum},                              // 2 of 2, 3
		{jute.ReconfigRequest{JoiningServers: "server.4=127.0.0.1:1:2;3", CurConfigId: 1}, jute.OpReconfig},           // bad version
		{jute.ReconfigRequest{JoiningServers: "server.4=127.0.0.1:1:2", CurConfigId: -1}, jute.OpReconfig},            // bad arguments
	}
	for _, c := range cases {
		req := c.req
		e := &Entry{Op: jute.OpReconfig, Super: true, Req: &req}
		n.FSM.pendingReconfig.Store(nil) // each judged alone
		n.judgeReconfig(e, 1)
		if e.Op != c.want {
			t.Errorf("%+v: op %d, want %d", c.req, e.Op, c.want)
		}
	}
}

// A reconfig judged while one the leader let through in its term is not applied yet is
// OpReconfigInProgress, answered ReconfigInProgress after the session check; one that
// will be refused NoAuth, or judged in a later term, holds no other off.
func TestReconfigInProgress(t *testing.T) {
	ct := &contactTransport{}
	ct.answered.Store(raft.ServerID("2"), time.Now())
	ct.answered.Store(raft.ServerID("3"), time.Now())
	f := reconfigFSM(t)
	n := &Node{cfg: Config{ID: "1", TickTime: time.Second}, FSM: f, trans: ct}
	seq := uint64(0)
	entry := func(super bool, observer string) *Entry {
		seq++
		return &Entry{Session: 0x100, Op: jute.OpReconfig, Super: super, Time: 1002, Seq: seq,
			Req: &jute.ReconfigRequest{JoiningServers: "server." + observer + "=127.0.0.1:1" + observer + ":2" + observer + ":observer;3" + observer, CurConfigId: -1}}
	}
	judge := func(e *Entry, term uint64, want int32) {
		t.Helper()
		n.judgeReconfig(e, term)
		if e.Op != want {
			t.Fatalf("entry %d judged in term %d: op %d, want %d", e.Seq, term, e.Op, want)
		}
	}
	e1, e2 := entry(true, "4"), entry(true, "5")
	judge(e1, 1, jute.OpReconfig)
	judge(e2, 1, OpReconfigInProgress)
	gone := &Entry{Session: 0x999, Op: OpReconfigInProgress, Super: true, Time: 1002, Seq: 99, Req: e2.Req}
	res := applyAll(t, f, []*Entry{e2, gone})
	if res[0].Err != jute.ErrReconfigInProgress || res[1].Err != jute.ErrSessionExpired {
		t.Fatalf("applied: %v, %v; want ReconfigInProgress, SessionExpired", res[0].Err, res[1].Err)
	}
	judge(entry(true, "5"), 1, OpReconfigInProgress) // e1 is not applied yet
	if res := applyAll(t, f, []*Entry{e1}); res[0].Err != jute.OK {
		t.Fatalf("e1: %v", res[0].Err)
	}
	// e1 is applied: the next goes through, also one refused NoAuth when applied, and
	// that one, applied, holds none off.
	noRight := entry(false, "6")
	judge(noRight, 1, jute.OpReconfig)
	if res := applyAll(t, f, []*Entry{noRight}); res[0].Err != jute.ErrNoAuth {
		t.Fatalf("without the right: %v", res[0].Err)
	}
	judge(entry(true, "6"), 1, jute.OpReconfig)
	// A later term's leader has let nothing through yet.
	judge(entry(true, "7"), 1, OpReconfigInProgress)
	judge(entry(true, "7"), 2, jute.OpReconfig)
}

// A joiner may not take an address another member has (ZooKeeper's
// checkAddressDuplicate): BadArguments, and the membership stays. A wildcard client
// address is nobody's.
func TestReconfigRefusesAJoinerWithAMembersAddress(t *testing.T) {
	f := reconfigFSM(t)
	res := applyAll(t, f, []*Entry{
		{Session: 0x100, Op: jute.OpReconfig, Super: true, Time: 1002,
			Req: &jute.ReconfigRequest{JoiningServers: "server.4=127.0.0.1:2391:2491;2181", CurConfigId: -1}},
		{Session: 0x100, Op: jute.OpReconfig, Super: true, Time: 1003,
			Req: &jute.ReconfigRequest{JoiningServers: "server.4=127.0.0.1:2394:2494;0.0.0.0:2181", CurConfigId: -1}},
	})
	if res[0].Err != jute.ErrBadArguments {
		t.Fatalf("a joiner with server.1's peer and election ports: %v, want BadArguments", res[0].Err)
	}
	if res[1].Err != jute.OK {
		t.Fatalf("a joiner with ports of its own: %v", res[1].Err)
	}
}

// /zookeeper/config holding data that is no membership (a super user's setData, which
// older versions let through) reads as no membership when the state is loaded, not as a
// panic at every start; the configured membership is then written as in a new cluster.
func TestConfigNodeWithoutAMembershipLoadsAsNone(t *testing.T) {
	f := reconfigFSM(t)
	f.mu.Lock()
	f.tree.SetConfig(datatree.Txn{Zxid: 5, Time: 1003}, []byte("garbage"))
	f.loadMembers()
	f.mu.Unlock()
	if m, ok := f.Members(); ok {
		t.Fatalf("membership %v from garbage", m)
	}
	res := applyAll(t, f, []*Entry{{Op: OpSetConfig, Time: 1004, Req: &jute.SetDataRequest{Path: datatree.ConfigPath, Data: []byte(threeMembers), Version: -1}}})
	if m, ok := f.Members(); res[0].Err != jute.OK || !ok || len(m.Peers) != 3 {
		t.Fatalf("the configured membership written again: %v, %v", res[0].Err, m)
	}
}

// A member counts as synced for a reconfig if it answered within SyncWindow
// (ZooKeeper's syncLimit ticks: a learner is synced while its last packet is at most
// syncLimit ticks old), or two ticks without one.
func TestJudgeReconfigSyncWindow(t *testing.T) {
	for _, c := range []struct {
		name   string
		window time.Duration
		want   int32
	}{
		{"two ticks without a window", 0, OpReconfigNoQuorum},
		{"syncLimit 5 ticks", 5 * time.Second, jute.OpReconfig},
		{"syncLimit 2 ticks", 2 * time.Second, OpReconfigNoQuorum},
	} {
		ct := &contactTransport{}
		ct.answered.Store(raft.ServerID("2"), time.Now().Add(-3*time.Second)) // silent for 3 ticks
		ct.answered.Store(raft.ServerID("3"), time.Now().Add(-time.Minute))
		n := &Node{cfg: Config{ID: "1", TickTime: time.Second, SyncWindow: c.window}, FSM: reconfigFSM(t), trans: ct}
		// Leaving 3: the new voters 1 and 2 need both; 2 answered 3 s ago.
		e := &Entry{Op: jute.OpReconfig, Super: true, Req: &jute.ReconfigRequest{LeavingServers: "3", CurConfigId: -1}}
		n.judgeReconfig(e, 1)
		if e.Op != c.want {
			t.Errorf("%s: op %d, want %d", c.name, e.Op, c.want)
		}
	}
}

// mntr's synced followers use the reconfig's window: a follower silent for three ticks
// counts with syncLimit 5, not with syncLimit 2 or without syncLimit (two ticks);
// observers are counted apart, by the same window, and this member never; a member the
// membership does not list (a reconfig removed it) heard from within the window is a
// follower, also counted apart as non-voting.
func TestLearnersSyncWindow(t *testing.T) {
	const withObserver = threeMembers + "server.4=127.0.0.1:2394:2494:observer\n" +
		"server.5=127.0.0.1:2395:2495:observer\n"
	for _, c := range []struct {
		name                string
		window              time.Duration
		followers, observer int
	}{
		{"two ticks without a window", 0, 0, 1},
		{"syncLimit 5 ticks", 5 * time.Second, 1, 1},
		{"syncLimit 2 ticks", 2 * time.Second, 0, 1},
	} {
		f := NewFSM(datatree.Options{})
		if r := applyAll(t, f, []*Entry{{Op: OpSetConfig, Time: 1001, Req: &jute.SetDataRequest{Path: datatree.ConfigPath, Data: []byte(withObserver), Version: -1}}}); r[0].Err != jute.OK {
			t.Fatalf("membership: %v", r[0].Err)
		}
		n := &Node{cfg: Config{ID: "1", TickTime: time.Second, SyncWindow: c.window}, FSM: f}
		now := time.Now()
		n.learners.Store("1", now)                     // this member: never counted
		n.learners.Store("2", now.Add(-3*time.Second)) // silent for three ticks
		n.learners.Store("3", now.Add(-time.Minute))   // gone
		n.learners.Store("4", now.Add(-time.Second))   // an observer, one tick ago
		n.learners.Store("5", now.Add(-time.Minute))   // an observer gone
		n.learners.Store("6", now)                     // removed by a reconfig: a non-voting follower
		n.learners.Store("7", now.Add(-time.Minute))   // removed, and gone
		if fo, nv, ob := n.learnersAt(now); fo != c.followers+1 || ob != c.observer || nv != 1 {
			t.Errorf("%s: %d followers (%d non-voting) and %d observers, want %d (1) and %d", c.name, fo, nv, ob, c.followers+1, c.observer)
		}
	}
}

// heldFuture is a proposal whose outcome the test decides: Error waits until done closes.
type heldFuture struct {
	raft.ApplyFuture
	done chan struct{}
	err  error
}

func (h *heldFuture) Error() error { <-h.done; return h.err }

// A reconfig that reaches a new cluster's first leader before the membership it proposed
// on gaining leadership is applied waits for that proposal and then goes through, as on
// a ZooKeeper ensemble, which has its configuration from the start. It does not wait
// when no such proposal is in flight, stops waiting when the proposal fails (leadership
// lost), and waits at most ten heartbeat timeouts.
func TestReconfigWaitsForTheFirstMembership(t *testing.T) {
	ct := &contactTransport{}
	ct.answered.Store(raft.ServerID("2"), time.Now())
	ct.answered.Store(raft.ServerID("3"), time.Now())
	peers := []Peer{{ID: "1"}, {ID: "2"}, {ID: "3"}}
	node := func(heartbeat time.Duration, proposal *heldFuture) *Node {
		f := NewFSM(datatree.Options{})
		applyAll(t, f, []*Entry{{Session: 0x100, Op: jute.OpCreateSession, Time: 1000, Req: &SessionRequest{Timeout: 4000, Password: make([]byte, 16)}}})
		n := &Node{cfg: Config{ID: "1", Peers: peers, TickTime: time.Second, HeartbeatTimeout: heartbeat}, FSM: f, trans: ct}
		if proposal != nil {
			var af raft.ApplyFuture = proposal
			n.firstMembership.Store(&af)
		}
		return n
	}
	reconfig := func() *Entry {
		return &Entry{Session: 0x100, Op: jute.OpReconfig, Super: true, Time: 1002, Seq: 1,
			Req: &jute.ReconfigRequest{JoiningServers: "server.4=127.0.0.1:14:24:observer;34", CurConfigId: -1}}
	}
	timed := func(n *Node, e *Entry) time.Duration {
		start := time.Now()
		n.awaitMembers(e)
		n.judgeReconfig(e, 1)
		return time.Since(start)
	}

	proposal := &heldFuture{done: make(chan struct{})}
	n := node(time.Minute, proposal)
	e := reconfig()
	judged := make(chan struct{})
	go func() {
		timed(n, e)
		close(judged)
	}()
	select {
	case <-judged:
		t.Fatal("the reconfig was judged while the first membership was on its way")
	case <-time.After(50 * time.Millisecond):
	}
	if r := applyAll(t, n.FSM, []*Entry{{Op: OpSetConfig, Time: 1001, Req: &jute.SetDataRequest{Path: datatree.ConfigPath, Data: []byte(threeMembers), Version: -1}}}); r[0].Err != jute.OK {
		t.Fatalf("initial membership: %v", r[0].Err)
	}
	close(proposal.done)
	select {
	case <-judged:
	case <-time.After(10 * time.Second):
		t.Fatal("the reconfig still waits after the membership was applied")
	}
	if r := applyAll(t, n.FSM, []*Entry{e}); e.Op != jute.OpReconfig || r[0].Err != jute.OK {
		t.Fatalf("reconfig after the first membership: op %d, %v; want a reconfig answered OK", e.Op, r[0].Err)
	}
	if m, _ := n.FSM.Members(); len(m.Peers) != 4 {
		t.Fatalf("membership %v, want 4 servers", m)
	}

	// No membership and none on its way: no wait, refused as before.
	n = node(time.Minute, nil)
	e = reconfig()
	if waited := timed(n, e); waited > 5*time.Second {
		t.Fatalf("waited %v with no membership on its way", waited)
	}
	if r := applyAll(t, n.FSM, []*Entry{e}); r[0].Err != jute.ErrReconfigInProgress {
		t.Fatalf("reconfig without a membership: %v, want ReconfigInProgress", r[0].Err)
	}

	// The proposal failed (leadership lost): the wait ends with it.
	failed := &heldFuture{done: make(chan struct{}), err: raft.ErrLeadershipLost}
	close(failed.done)
	if waited := timed(node(time.Minute, failed), reconfig()); waited > 5*time.Second {
		t.Fatalf("waited %v after the proposal failed", waited)
	}

	// A proposal that never ends: ten heartbeat timeouts at most.
	if waited := timed(node(5*time.Millisecond, &heldFuture{done: make(chan struct{})}), reconfig()); waited < 50*time.Millisecond || waited > 5*time.Second {
		t.Fatalf("waited %v, want ten heartbeat timeouts (50 ms)", waited)
	}
}

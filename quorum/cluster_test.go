package quorum

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
	"github.com/zkraft/zkraft/session"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	// Below the ephemeral range: a port the kernel handed out could be taken meanwhile as
	// the local end of another test's connection (seen in make test as "address already
	// in use").
	port, err := ztest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// threePeers is the membership of a 3-member cluster on free loopback ports.
func threePeers(t *testing.T) []Peer {
	t.Helper()
	var peers []Peer
	for _, id := range []string{"1", "2", "3"} {
		peers = append(peers, Peer{ID: id, RaftAddr: freeAddr(t), PeerAddr: freeAddr(t)})
	}
	return peers
}

func openMember(t *testing.T, id string, dir string, peers []Peer) *Node {
	t.Helper()
	cfg := DefaultConfig(dir)
	cfg.ID, cfg.Peers = id, peers
	cfg.HeartbeatTimeout = 100 * time.Millisecond
	n, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// openThree starts a 3-member cluster, each member in its own data dir, and closes the
// members nodes holds when the test ends (a test may close, drop and reopen members).
func openThree(t *testing.T) (peers []Peer, dirs map[string]string, nodes map[string]*Node) {
	t.Helper()
	peers = threePeers(t)
	dirs, nodes = map[string]string{}, map[string]*Node{}
	for _, p := range peers {
		dirs[p.ID] = t.TempDir()
		nodes[p.ID] = openMember(t, p.ID, dirs[p.ID], peers)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.Close()
		}
	})
	return peers, dirs, nodes
}

// openMembersWith opens a member for each of peers with a 100 ms heartbeat, its
// configuration changed by mod, all closed at the test's end.
func openMembersWith(t *testing.T, peers []Peer, mod func(Peer, *Config)) map[string]*Node {
	t.Helper()
	nodes := map[string]*Node{}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.Close()
		}
	})
	for _, p := range peers {
		cfg := DefaultConfig(t.TempDir())
		cfg.ID, cfg.Peers = p.ID, peers
		cfg.HeartbeatTimeout = 100 * time.Millisecond
		mod(p, &cfg)
		n, err := Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		nodes[p.ID] = n
	}
	return nodes
}

// openMembersWrappingLogs opens members as openMembersWith does, with mod's changes and
// each member's raft log store wrapped by wrap, and returns the wrapped stores by member
// id (Open wraps the store before it returns, so the map is complete and not written
// after).
func openMembersWrappingLogs[L raft.LogStore](t *testing.T, peers []Peer, mod func(*Config), wrap func(raft.LogStore) L) (map[string]*Node, map[string]L) {
	t.Helper()
	stores := map[string]L{}
	nodes := openMembersWith(t, peers, func(p Peer, c *Config) {
		mod(c)
		c.wrapLogs = func(l raft.LogStore) raft.LogStore {
			w := wrap(l)
			stores[p.ID] = w
			return w
		}
	})
	return nodes, stores
}

func leaderOf(t *testing.T, nodes map[string]*Node) *Node {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for _, n := range nodes {
			if n.IsLeader() {
				return n
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no leader")
	return nil
}

// waitSame waits until every node has applied the same zxid and holds the same tree.
// closeLeader closes leader, takes it out of nodes and returns its id.
func closeLeader(nodes map[string]*Node, leader *Node) (id string) {
	for k, n := range nodes {
		if n == leader {
			id = k
			n.Close()
			delete(nodes, k)
		}
	}
	return id
}

// leaderAndFollowerOf waits for a leader among nodes and returns it and another member.
func leaderAndFollowerOf(t *testing.T, nodes map[string]*Node) (leader, follower *Node) {
	leader = leaderOf(t, nodes)
	for _, n := range nodes {
		if n != leader {
			follower = n
		}
	}
	return leader, follower
}

func waitSame(t *testing.T, nodes map[string]*Node) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var zxids []int64
		var digests []uint64
		for _, n := range nodes {
			d, _ := digest(n.FSM)
			zxids = append(zxids, n.FSM.LastZxid())
			digests = append(digests, d)
		}
		same := true
		for i := range zxids {
			same = same && zxids[i] == zxids[0] && digests[i] == digests[0]
		}
		if same {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replicas differ: zxids %v digests %x", zxids, digests)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func propose(t *testing.T, n *Node, e *Entry) *Result {
	t.Helper()
	f := n.Propose(e)
	if err := f.Error(); err != nil {
		t.Fatal(err)
	}
	return f.Response().(*Result)
}

// Three voters elect a leader, replicate writes to identical trees, survive the
// leader's loss, and a restarted member catches up.
func TestThreeMemberCluster(t *testing.T) {
	peers, dirs, nodes := openThree(t)
	leader := leaderOf(t, nodes)
	modes := map[string]int{}
	for _, n := range nodes {
		modes[n.Mode()]++
	}
	if modes["leader"] != 1 || modes["follower"] != 2 {
		t.Fatalf("modes %v", modes)
	}
	// Origin is set as a server sets it: on a loaded machine leadership may move during
	// the test, and an entry the node forwards would otherwise name it while one it
	// applied as leader names nobody (SessionMoved).
	self := leader.ID()
	propose(t, leader, &Entry{Session: 7, Op: jute.OpCreateSession, Origin: self, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	for i := 0; i < 20; i++ {
		if r := propose(t, leader, &Entry{Session: 7, Op: jute.OpCreate, Origin: self, Req: &jute.CreateRequest{Path: fmt.Sprintf("/n%d", i), Acl: open}}); r.Err != jute.OK {
			t.Fatalf("create: %v", r.Err)
		}
	}
	waitSame(t, nodes)

	// A follower forwards to the leader and answers once the entry is applied here,
	// with the same result the leader computed.
	var follower *Node
	for _, n := range nodes {
		if !n.IsLeader() {
			follower = n
		}
	}
	// The session's client moves to the follower (its writes from there carry its id).
	if r := propose(t, follower, &Entry{Session: 7, Op: OpMoveSession}); r.Err != jute.OK {
		t.Fatalf("move session: %v", r.Err)
	}
	r := propose(t, follower, &Entry{Session: 7, Op: jute.OpCreate2, Req: &jute.CreateRequest{Path: "/via-follower", Acl: open}})
	if r.Err != jute.OK || r.Resp.(*jute.Create2Response).Path != "/via-follower" || follower.FSM.LastZxid() < r.Zxid {
		t.Fatalf("forwarded create: %+v", r)
	}
	if r := propose(t, follower, &Entry{Session: 7, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: "/via-follower", Acl: open}}); r.Err != jute.ErrNodeExists {
		t.Fatalf("forwarded duplicate create: %v, want NodeExists", r.Err)
	}
	waitSame(t, nodes)

	killed := closeLeader(nodes, leader)
	leader, follower = leaderAndFollowerOf(t, nodes)
	// The follower's stream moves to the new leader.
	if r := propose(t, follower, &Entry{Session: 7, Op: OpMoveSession}); r.Err != jute.OK {
		t.Fatalf("move session: %v", r.Err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for retried := false; ; retried = true {
		f := follower.Propose(&Entry{Session: 7, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: "/after", Acl: open}})
		if err := f.Error(); err == nil {
			// After a failed attempt the outcome was unknown: it may have been applied.
			if r := f.Response().(*Result); r.Err != jute.OK && !(retried && r.Err == jute.ErrNodeExists) {
				t.Fatalf("create after failover: %v", r.Err)
			}
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("no forwarding after failover: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitSame(t, nodes)

	nodes[killed] = openMember(t, killed, dirs[killed], peers)
	waitSame(t, nodes)
	if _, code := func() (d []byte, c jute.Code) {
		nodes[killed].FSM.Read(func(tr *datatree.Tree, _ *session.Table) { _, _, c = tr.Get("/after") })
		return
	}(); code != jute.OK {
		t.Fatalf("restarted member lacks /after: %v", code)
	}
}

// Sessions heard from on a follower stay alive on the leader; silent ones expire there.
func TestFollowerPingsKeepSessionsAlive(t *testing.T) {
	peers := threePeers(t)
	nodes := map[string]*Node{}
	for _, p := range peers {
		cfg := DefaultConfig(t.TempDir())
		cfg.ID, cfg.Peers = p.ID, peers
		cfg.HeartbeatTimeout = 100 * time.Millisecond
		cfg.TickTime = 50 * time.Millisecond
		n, err := Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		nodes[p.ID] = n
		defer n.Close()
	}
	leader := leaderOf(t, nodes)
	var follower *Node
	for _, n := range nodes {
		if n != leader {
			follower = n
		}
	}
	for _, id := range []int64{1, 2} {
		propose(t, follower, &Entry{Session: id, Op: jute.OpCreateSession, Req: &SessionRequest{Timeout: 300, Password: make([]byte, 16)}})
	}
	alive := func(id int64) (ok bool) {
		leader.FSM.Read(func(_ *datatree.Tree, s *session.Table) { _, ok = s.Get(id) })
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive(2) {
		follower.Touch(1, 300)
		if time.Now().After(deadline) {
			t.Fatal("silent session 2 never expired")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !alive(1) {
		t.Fatal("session 1 expired although the follower heard from it")
	}
}

// A leader that stepped down says so on its members' streams ('L'); if raft then names
// the same member leader again (it was re-elected), the member replaces the stream it
// was told to leave rather than wait forever for a leader with another name.
func TestStreamReplacedWhenALeaderThatLeftLeadsAgain(t *testing.T) {
	_, follower := leaderAndFollower(t)
	propose(t, follower, &Entry{Session: 7, Op: jute.OpCreateSession, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	follower.fwd.mu.Lock()
	st := follower.fwd.st
	follower.fwd.mu.Unlock()
	if st == nil {
		t.Fatal("the follower has no stream to the leader")
	}
	st.leave() // as if the leader had stepped down and then won the election again
	if r := propose(t, follower, &Entry{Session: 7, Op: OpMoveSession}); r.Err != jute.OK {
		t.Fatalf("move session through the follower: %v", r.Err)
	}
	follower.fwd.mu.Lock()
	replaced := follower.fwd.st != st
	follower.fwd.mu.Unlock()
	if !replaced {
		t.Fatal("the stream the leader left was not replaced")
	}
}

// A follower pings the leader with the sessions it heard from, and its clients' last
// frame (a closeSession) is among them, so a ping may reach the leader after the
// session's closeSession was applied there. The leader must not track such a session
// again (as ZooKeeper's touchSession ignores a session it does not hold): it would
// expire it a timeout later, one useless closeSession entry for every session a
// follower's client closed.
func TestPingDoesNotTrackAClosedSession(t *testing.T) {
	leader, follower := leaderAndFollower(t)
	tracked := func(id int64) (tracker bool, ok bool) {
		leader.duties.mu.Lock()
		tr := leader.duties.tracker
		leader.duties.mu.Unlock()
		if tr == nil {
			return false, false
		}
		_, ok = tr.Deadline(id)
		return true, ok
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if has, _ := tracked(0); has {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the leader never started its duties")
		}
	}
	const id, timeout = 5, 30000
	// A follower may apply a write before the leader does (a durable notice), so each
	// check of the leader's tracker first waits for the leader's apply.
	proposeSeen := func(e *Entry) *Result {
		r := propose(t, follower, e)
		if !leader.FSM.WaitApplied(r.Zxid, 10*time.Second) {
			t.Fatalf("the leader did not apply zxid %d", r.Zxid)
		}
		return r
	}
	// The tracker hears of an applied entry right after the apply wakes zxid waiters,
	// so its state is waited for too.
	trackedSoon := func(want bool) bool {
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if _, ok := tracked(id); ok == want || time.Now().After(deadline) {
				return ok
			}
		}
	}
	proposeSeen(&Entry{Session: id, Op: jute.OpCreateSession, Req: &SessionRequest{Timeout: timeout, Password: make([]byte, 16)}})
	if !trackedSoon(true) {
		t.Fatal("a session created through a follower is not tracked by the leader")
	}
	follower.Touch(id, timeout) // the closeSession frame, read before it is proposed
	if r := proposeSeen(&Entry{Session: id, Op: jute.OpCloseSession}); r.Err != jute.OK {
		t.Fatalf("close session: %v", r.Err)
	}
	if trackedSoon(false) {
		t.Fatal("a closed session is still tracked")
	}
	// The follower's next ping names the closed session. Pings and proposals share the
	// stream and the leader handles its frames in order, so once an entry sent after the
	// ping is applied, the leader has handled the ping.
	follower.fwd.mu.Lock()
	st := follower.fwd.st
	follower.fwd.mu.Unlock()
	if st == nil {
		t.Fatal("the follower has no stream to the leader")
	}
	follower.fwd.ping(st)
	proposeSeen(&Entry{Op: jute.OpSync, Req: &jute.SyncRequest{Path: "/"}})
	leader.Touch(id, timeout) // a late frame on one of the leader's own connections
	if _, ok := tracked(id); ok {
		t.Fatal("the leader tracks a closed session again after a ping or a touch named it")
	}
}

// leaderAndFollower starts three in-process members, closed at the test's end, and
// returns the leader and one follower.
func leaderAndFollower(t *testing.T) (leader, follower *Node) {
	peers := threePeers(t)
	nodes := map[string]*Node{}
	for _, p := range peers {
		nodes[p.ID] = openMember(t, p.ID, t.TempDir(), peers)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.Close()
		}
	})
	return leaderAndFollowerOf(t, nodes)
}

// A write whose entry is larger than a leader reads in one forwarded frame (a request
// near jute.maxbuffer with megabytes of its caller's identities) fails alone on the
// follower: sent, it made the leader drop the stream, and every other client's write in
// flight on it with it.
func TestAnEntryTooLargeToForwardFailsAlone(t *testing.T) {
	_, _, nodes := openThree(t)
	leader := leaderOf(t, nodes)
	propose(t, leader, &Entry{Session: 7, Op: jute.OpCreateSession, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	// With 100 ms timeouts on a loaded machine the leadership may move while this runs,
	// which breaks the stream for its own reason: the check is then made again. (A
	// follower that stood for election for a moment, the leader keeping its term, finds
	// no usable stream meanwhile; that one is not broken.)
	const attempts = 5
	for attempt := 1; ; attempt++ {
		leader, follower := leaderAndFollowerOf(t, nodes)
		term := leader.raft.CurrentTerm()
		propose(t, follower, &Entry{Session: 7, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: fmt.Sprintf("/before%d", attempt), Acl: open}})
		st, _ := follower.fwd.usable()
		if st == nil {
			t.Fatal("no stream to the leader after a forwarded write")
		}
		big := &Entry{Session: 7, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: "/big", Acl: open},
			Ids: []jute.Id{{Scheme: "digest", Id: strings.Repeat("x", maxForwardFrame)}}}
		if err := follower.Propose(big).Error(); !errors.Is(err, ErrEntryTooLarge) {
			t.Fatalf("a write too large to forward: %v, want ErrEntryTooLarge", err)
		}
		if !st.broken.Load() {
			break
		}
		if leader.IsLeader() && leader.raft.CurrentTerm() == term && follower.raft.CurrentTerm() == term {
			t.Fatal("the stream to the leader was dropped for one write too large")
		}
		if attempt == attempts {
			t.Fatalf("the leadership moved in each of %d attempts", attempts)
		}
		t.Logf("attempt %d: the leadership moved (term %d, now %d); again", attempt, term, leader.raft.CurrentTerm())
	}
	_, follower := leaderAndFollowerOf(t, nodes)
	propose(t, follower, &Entry{Session: 7, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: "/after", Acl: open}})
	waitSame(t, nodes)
}

// A follower that stops is no synced follower of the leader from the moment its stream
// ends (mntr's synced_followers), as a ZooKeeper leader drops a learner whose socket
// closed, not two ticks later.
func TestAStoppedFollowerIsNoLearnerOnceItsStreamEnds(t *testing.T) {
	_, _, nodes := openThree(t)
	leader, follower := leaderAndFollowerOf(t, nodes)
	if leader.cfg.TickTime < time.Second {
		t.Fatalf("tick %v: two ticks would not be told apart from the stream's end", leader.cfg.TickTime)
	}
	learners := func() int { f, _, _ := leader.Learners(); return f }
	for deadline := time.Now().Add(10 * time.Second); learners() != 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d synced followers, want 2", learners())
		}
	}
	follower.Close()
	for deadline := time.Now().Add(time.Second); learners() != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a second after a follower stopped: %d synced followers, want 1", learners())
		}
	}
}

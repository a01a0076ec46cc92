package quorum

import (
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
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

// A follower restarted within its leader's term holds entries of that term from before
// it stopped, which say nothing of what it missed: it is not synced while its store
// takes none of the entries written meanwhile, however long it knows its leader, and is
// once it has taken and applied them.
func TestAFollowerRestartedWithinATermSyncsOnceCaughtUp(t *testing.T) {
	peers, dirs, nodes := openThree(t)
	leader := leaderOf(t, nodes)
	var follower *Node
	for _, n := range nodes {
		if n != leader {
			follower = n
		}
	}
	id := follower.cfg.ID
	propose(t, leader, &Entry{Op: jute.OpCreate, Req: &jute.CreateRequest{Path: "/before", Acl: open}})
	if !waitUntil(10*time.Second, follower.Synced) {
		t.Fatal("the follower did not sync")
	}
	term := leader.raft.CurrentTerm()
	follower.Close()
	delete(nodes, id)
	for i := range 5 {
		propose(t, leader, &Entry{Op: jute.OpCreate, Req: &jute.CreateRequest{Path: "/missed" + strconv.Itoa(i), Acl: open}})
	}
	var store *refusingLogs
	cfg := DefaultConfig(dirs[id])
	cfg.ID, cfg.Peers = id, peers
	cfg.HeartbeatTimeout = 100 * time.Millisecond
	// It holds one received entry at most (received.limit), so it cannot apply the five
	// it missed from what it received either. Its sync window is short: the leader's
	// news, not the window's fallback, is what keeps it from serving.
	cfg.TrailingLogs = 2
	cfg.SyncWindow = 200 * time.Millisecond
	// Its half-tick check comes too late to matter: the notice it acts on tells it.
	cfg.TickTime = time.Minute
	served := make(chan bool, 4)
	cfg.Figures.Serving = func(leading bool, _, _ time.Duration) { served <- leading }
	cfg.wrapLogs = func(l raft.LogStore) raft.LogStore {
		store = &refusingLogs{LogStore: l}
		store.refuse.Store(1 << 30)
		return store
	}
	back, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nodes[id] = back
	if back.restartTerm.Load() != term {
		t.Fatalf("restart term %d, want %d", back.restartTerm.Load(), term)
	}
	// On a loaded machine the members may elect again meanwhile (another leader, or
	// a later term): the restart is then not within the term, which this test is about.
	elected := func() bool { return leader.raft.CurrentTerm() != term || !leader.IsLeader() }
	if !waitUntil(10*time.Second, func() bool { l, _ := back.LeaderID(); return l == leader.cfg.ID || elected() }) {
		t.Fatal("the restarted follower does not know its leader")
	}
	if elected() || back.raft.CurrentTerm() != term {
		t.Skipf("an election came between (term %d, was %d)", back.raft.CurrentTerm(), term)
	}
	if waitUntil(5*cfg.SyncWindow, back.Synced) {
		t.Fatalf("synced with none of the entries it missed (applied %d, leader's %d)", back.FSM.appliedIndex.Load(), leader.FSM.appliedIndex.Load())
	}
	select {
	case <-served:
		t.Fatal("counted as serving before it caught up")
	default:
	}
	store.refuse.Store(0)
	if !waitUntil(10*time.Second, back.Synced) {
		t.Fatal("not synced once its store takes the entries")
	}
	awaitServingAsFollower(t, served, "not counted as serving (Figures.Serving) once caught up")
	if applied, want := back.FSM.appliedIndex.Load(), back.catch.firstHeard.Load(); applied < want || want == 0 {
		t.Errorf("synced having applied %d, first heard %d", applied, want)
	}
}

// caughtUpSinceStart: a member that was told a commit point since it started has caught
// up once it applied that point, without waiting a sync window; one told none goes by the
// term alone once it has known its leader for a sync window, and not before, nor while it
// knows no leader. (That it has not caught up before it applied the point is
// TestAFollowerRestartedWithinATermSyncsOnceCaughtUp's.)
func TestCaughtUpSinceStart(t *testing.T) {
	n := &Node{cfg: Config{SyncWindow: time.Second}, FSM: NewFSM(datatree.Options{}), catch: &catchUp{}, look: &looking{}}
	if n.caughtUpSinceStart() {
		t.Error("caught up knowing no leader")
	}
	n.look.lost()
	n.look.found()
	if n.caughtUpSinceStart() {
		t.Error("caught up at once, told nothing")
	}
	n.catch.firstHeard.Store(5)
	n.FSM.through.Store(5)
	if !n.caughtUpSinceStart() {
		t.Error("not caught up at the point it was told, within the sync window")
	}
	n.catch.firstHeard.Store(0)
	time.Sleep(1100 * time.Millisecond)
	if !n.caughtUpSinceStart() {
		t.Error("not caught up a sync window after knowing the leader, told nothing")
	}
}

package quorum

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/session"
)

// heldDurability stands in front of a member's log store: while held, the entries the
// member stores deferred are reported not durable yet, as if its fdatasync were slow.
type heldDurability struct {
	deferringStore
	deferred atomic.Int64 // deferred stores seen

	mu      sync.Mutex
	cond    sync.Cond
	holding bool
	from    uint64 // the first entry stored deferred while holding; 0: none
}

func newHeldDurability() *heldDurability {
	h := &heldDurability{}
	h.cond.L = &h.mu
	return h
}

func (h *heldDurability) StoreLogsDeferred(logs []*raft.Log) error {
	h.deferred.Add(1)
	err := h.deferringStore.StoreLogsDeferred(logs)
	h.mu.Lock()
	if h.holding && h.from == 0 {
		h.from = logs[0].Index
	}
	h.mu.Unlock()
	return err
}

func (h *heldDurability) UnsyncedFrom() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.from != 0 {
		return h.from
	}
	return h.deferringStore.UnsyncedFrom()
}

func (h *heldDurability) WaitDurable(index uint64) error {
	h.mu.Lock()
	for h.from != 0 && index >= h.from {
		h.cond.Wait()
	}
	h.mu.Unlock()
	return h.deferringStore.WaitDurable(index)
}

func (h *heldDurability) hold() {
	h.mu.Lock()
	h.holding = true
	h.mu.Unlock()
}

// heldFrom is the first entry held, 0 until one is.
func (h *heldDurability) heldFrom() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.from
}

func (h *heldDurability) release() {
	h.mu.Lock()
	h.holding, h.from = false, 0
	h.cond.Broadcast()
	h.mu.Unlock()
}

// heldCluster starts three members whose deferred stores can be held, with raft's
// commit timeout at 5 ms, so raft would tell the followers of a commit within
// milliseconds if the leader let it; they are stopped when the test ends.
func heldCluster(t *testing.T) (map[string]*Node, map[string]*heldDurability) {
	t.Helper()
	peers := threePeers(t)
	held := map[string]*heldDurability{}
	nodes := map[string]*Node{}
	t.Cleanup(func() {
		for _, h := range held {
			h.release()
		}
		for _, n := range nodes {
			n.Close()
		}
	})
	for _, p := range peers {
		h := newHeldDurability()
		held[p.ID] = h
		cfg := DefaultConfig(t.TempDir())
		cfg.ID, cfg.Peers = p.ID, peers
		cfg.HeartbeatTimeout = 100 * time.Millisecond
		cfg.CommitTimeout = 5 * time.Millisecond
		cfg.wrapDeferring = func(d deferringStore) deferringStore {
			h.deferringStore = d
			return h
		}
		n, err := Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		nodes[p.ID] = n
	}
	return nodes, held
}

// hasHeld reports whether n's tree holds /held.
func hasHeld(n *Node) bool {
	var code jute.Code
	n.FSM.Read(func(tr *datatree.Tree, _ *session.Table) { _, _, code = tr.Get("/held") })
	return code == jute.OK
}

// appliedNowhere fails the test if any member applied the entry at index.
func appliedNowhere(t *testing.T, nodes map[string]*Node, index uint64, when string) {
	t.Helper()
	for id, n := range nodes {
		if applied := n.FSM.appliedIndex.Load(); applied >= index || hasHeld(n) {
			t.Errorf("member %s (leading: %v) applied entry %d (it applied up to %d) %s", id, n.IsLeader(), index, applied, when)
		}
	}
}

// The leader's store returns before its copy of a batch is durable, and raft then counts
// that copy committed with one follower's. Until the leader's copy is durable, no member
// applies the entry: not the leader's FSM, not a follower told by a commit notice, and not
// a follower told by raft's own commit index, although raft sends that every few
// milliseconds here. Followers never defer a store.
func TestNothingAppliesBeforeTheLeadersCopyIsDurable(t *testing.T) {
	nodes, held := heldCluster(t)
	leader := leaderOf(t, nodes)
	propose(t, leader, &Entry{Session: 7, Op: jute.OpCreateSession, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	waitSame(t, nodes)
	for _, h := range held { // a member that led for a moment at the start stored its no-op deferred
		h.deferred.Store(0)
	}

	h := held[leader.cfg.ID]
	h.hold()
	f := leader.Propose(&Entry{Session: 7, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: "/held", Acl: open}})
	deadline := time.Now().Add(10 * time.Second)
	index := h.heldFrom()
	for ; index == 0; index = h.heldFrom() {
		if time.Now().After(deadline) {
			t.Fatal("the leader never stored the create deferred")
		}
		time.Sleep(time.Millisecond)
	}
	// Raft counts it committed, and every member holds it.
	for {
		c, _ := strconv.ParseUint(leader.Stats()["commit_index"], 10, 64)
		stored := c >= index
		for _, n := range nodes {
			stored = stored && n.raft.LastIndex() >= index
		}
		if stored {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("entry %d: raft's commit index %d, not stored everywhere after 10 s", index, c)
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // sixty of raft's commit timeouts
	appliedNowhere(t, nodes, index, "before the leader's copy was durable")

	h.release()
	if err := f.Error(); err != nil {
		t.Fatal(err)
	}
	if r := f.Response().(*Result); r.Err != jute.OK {
		t.Fatalf("create: %v", r.Err)
	}
	waitSame(t, nodes)
	for id, n := range nodes {
		if !hasHeld(n) {
			t.Errorf("member %s lacks /held once the leader's copy is durable", id)
		}
		if d := held[id].deferred.Load(); n == leader && d == 0 || n != leader && d != 0 {
			t.Errorf("member %s (leader %v) stored %d batches deferred", id, n == leader, d)
		}
	}
}

// A new leader commits the entries of an earlier term by counting its own no-op, which
// its store defers like any batch of its own. Until that no-op is durable on the new
// leader, the earlier entry it commits is applied nowhere: it rests on the no-op being on
// a majority of disks (were the new leader to crash, a member that lacks the entry could
// otherwise win the next election and replace it).
func TestAnEarlierTermsEntryWaitsForTheNewLeadersNoop(t *testing.T) {
	nodes, held := heldCluster(t)
	first := leaderOf(t, nodes)
	propose(t, first, &Entry{Session: 7, Op: jute.OpCreateSession, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	waitSame(t, nodes)

	for _, h := range held {
		h.hold()
	}
	first.Propose(&Entry{Session: 7, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: "/held", Acl: open}})
	deadline := time.Now().Add(10 * time.Second)
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("after 10 s: %s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	index := uint64(0)
	waitFor("the first leader stores the create deferred", func() bool { index = held[first.cfg.ID].heldFrom(); return index != 0 })
	waitFor("every member stores the create", func() bool {
		for _, n := range nodes {
			if n.raft.LastIndex() < index {
				return false
			}
		}
		return true
	})
	if err := first.HandOver(5 * time.Second); err != nil {
		// raft gives a transfer up after an election timeout; on a loaded machine the
		// member it woke may still win, later (seen under -race): whether another
		// member leads is what the waits below ask.
		t.Logf("hand-over: %v", err)
	}
	var second *Node
	waitFor("another member leads", func() bool {
		for _, n := range nodes {
			if n != first && n.IsLeader() {
				second = n
			}
		}
		return second != nil
	})
	noop := uint64(0)
	waitFor("the new leader's no-op is stored deferred and counted committed", func() bool {
		noop = held[second.cfg.ID].heldFrom()
		c, _ := strconv.ParseUint(second.Stats()["commit_index"], 10, 64)
		return noop > index && c >= noop
	})
	time.Sleep(300 * time.Millisecond)
	appliedNowhere(t, nodes, index, fmt.Sprintf("(of the first leader's term) before the new leader's no-op %d was durable there", noop))

	for _, h := range held {
		h.release()
	}
	deadline = time.Now().Add(10 * time.Second)
	waitFor("every member applies /held once the no-op is durable", func() bool {
		for _, n := range nodes {
			if !hasHeld(n) {
				return false
			}
		}
		return true
	})
	waitSame(t, nodes)
}

// pendingFrom is a deferring store whose first pending entry is fixed (0: none).
type pendingFrom uint64

func (p pendingFrom) StoreLogsDeferred([]*raft.Log) error { return nil }
func (p pendingFrom) WaitDurable(uint64) error            { return nil }
func (p pendingFrom) UnsyncedFrom() uint64                { return uint64(p) }

// The commit index an AppendEntries carries is raft's own whenever the leader's log is
// durable up to it, even if the FSM was never handed a batch to find that (a leader whose
// log past its snapshot holds only its no-op); only while an entry at or below it is
// pending does it fall back to what the FSM found durable.
func TestClampCommitOnlyWhileTheCommitIndexIsPending(t *testing.T) {
	for _, c := range []struct {
		pending, safe, want uint64
	}{
		{pending: 0, safe: 0, want: 10},  // nothing pending: raft's index, although the FSM found nothing
		{pending: 11, safe: 3, want: 10}, // pending above it: raft's index
		{pending: 10, safe: 3, want: 3},  // its own entry pending: what the FSM found
		{pending: 8, safe: 3, want: 3},   // an entry below it pending
	} {
		l := &leaderLog{store: pendingFrom(c.pending)}
		l.safe.Store(c.safe)
		args := &raft.AppendEntriesRequest{LeaderCommitIndex: 10}
		l.clampCommit(args)
		if args.LeaderCommitIndex != c.want {
			t.Errorf("pending from %d, safe %d: commit index 10 sent as %d, want %d", c.pending, c.safe, args.LeaderCommitIndex, c.want)
		}
	}
}

package quorum

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
)

// appendReq is an AppendEntries of term after prev carrying entries of the given terms.
func appendReq(term, prev uint64, terms ...uint64) *raft.AppendEntriesRequest {
	req := &raft.AppendEntriesRequest{Term: term, PrevLogEntry: prev}
	for k, t := range terms {
		req.Entries = append(req.Entries, &raft.Log{Index: prev + 1 + uint64(k), Term: t, Type: raft.LogCommand})
	}
	return req
}

func indexes(es []*raft.Log) []uint64 {
	var out []uint64
	for _, e := range es {
		out = append(out, e.Index)
	}
	return out
}

// The run of received entries joins batches that follow or overlap it, starts again on a
// gap or a new leader, ignores a replaced leader, and gives a span only when it starts
// at or below the first index asked for and holds the last with the asked term.
func TestTheReceivedRun(t *testing.T) {
	r := &received{}
	r.add(appendReq(3, 10, 3, 3, 3)) // 11..13
	if got := indexes(r.span(11, 13, 3)); len(got) != 3 || got[0] != 11 || got[2] != 13 {
		t.Fatalf("span 11..13 = %v", got)
	}
	if r.span(11, 13, 2) != nil {
		t.Fatal("a span whose last entry has another term was given")
	}
	if r.span(12, 13, 3) == nil {
		t.Fatal("a span inside the run was refused")
	}
	if r.span(10, 13, 3) != nil {
		t.Fatal("a span reaching below the run was given")
	}
	if r.span(11, 14, 3) != nil {
		t.Fatal("a span past the run was given")
	}

	r.add(appendReq(3, 12, 3, 3, 3)) // overlaps 13, adds 14..15
	if got := indexes(r.span(11, 15, 3)); len(got) != 5 || got[4] != 15 {
		t.Fatalf("after an overlapping batch, span 11..15 = %v", got)
	}
	r.add(appendReq(3, 15)) // a heartbeat changes nothing
	r.add(appendReq(2, 15, 2, 2))
	if r.span(11, 17, 2) != nil || r.span(11, 15, 3) == nil {
		t.Fatal("a batch from a replaced leader changed the run")
	}
	r.add(appendReq(3, 20, 3)) // a gap: the run starts again at 21
	if r.span(11, 15, 3) != nil || r.span(21, 21, 3) == nil {
		t.Fatal("a batch after a gap did not start the run again")
	}
	r.add(appendReq(4, 18, 3, 4)) // a new leader, whose log differs from 19 on
	if r.span(21, 21, 3) != nil || r.span(19, 20, 4) == nil {
		t.Fatal("a new leader's batch did not replace the run")
	}
	bad := appendReq(4, 20, 4, 4)
	bad.Entries[1].Index = 30
	r.add(bad)
	if r.span(19, 21, 4) != nil {
		t.Fatal("a batch whose indexes are not contiguous was taken")
	}
}

// The run drops what the FSM applied, and holds at most maxReceived entries (or the
// node's limit) and maxReceivedBytes of data.
func TestTheReceivedRunIsBounded(t *testing.T) {
	fsm := NewFSM(datatree.Options{})
	r := &received{}
	r.catch.Store(&catchUp{fsm: fsm, wake: make(chan struct{}, 1)})
	terms := make([]uint64, maxReceived+100)
	for k := range terms {
		terms[k] = 1
	}
	r.add(appendReq(1, 0, terms...))
	if len(r.entries) != maxReceived || r.base != 100 {
		t.Fatalf("run of %d entries after %d, want %d after 100", len(r.entries), r.base, maxReceived)
	}
	fsm.appliedIndex.Store(1000)
	r.add(appendReq(1, uint64(len(terms)), 1))
	if r.base != 1000 || r.entries[0].Index != 1001 {
		t.Fatalf("run starts after %d at %d, want after the applied 1000", r.base, r.entries[0].Index)
	}
	fsm.appliedIndex.Store(2000)
	r.dropApplied(fsm.appliedIndex.Load())
	if r.base != 2000 {
		t.Fatalf("run starts after %d once 2000 is applied", r.base)
	}

	// The entries' data is bounded too, and so is their count by the node's limit.
	big := appendReq(1, 5000, 1, 1, 1, 1, 1)
	for _, e := range big.Entries {
		e.Data = make([]byte, maxReceivedBytes/3)
	}
	r.add(big)
	if len(r.entries) != 3 || r.base != 5002 || r.bytes != 3*(maxReceivedBytes/3) {
		t.Fatalf("run of %d entries (%d bytes) after %d, want the last 3 after 5002", len(r.entries), r.bytes, r.base)
	}
	small := &received{limit: 2}
	small.add(appendReq(1, 0, 1, 1, 1))
	if len(small.entries) != 2 || small.base != 1 {
		t.Fatalf("run of %d entries after %d with a limit of 2", len(small.entries), small.base)
	}
}

// holdingLogs is a follower's raft log store whose stores wait while hold is set, as a
// slow fdatasync would hold raft's follower.
type holdingLogs struct {
	raft.LogStore
	hold     atomic.Bool
	waiting  atomic.Int32
	heldLast atomic.Uint64 // the last index of the batch held
	release  chan struct{}
}

func (l *holdingLogs) StoreLogs(es []*raft.Log) error {
	if l.hold.Load() {
		l.heldLast.Store(es[len(es)-1].Index)
		l.waiting.Add(1)
		<-l.release
		l.waiting.Add(-1)
	}
	return l.LogStore.StoreLogs(es)
}

func (l *holdingLogs) StoreLog(e *raft.Log) error { return l.StoreLogs([]*raft.Log{e}) }

// A follower whose raft is stuck storing a batch applies a write committed meanwhile on
// the leader's commit notice, from the entries it read ahead of raft: its log store has
// not seen the write, so neither the log nor the batch raft writes holds it. Raft's
// leader keeps two batches in flight to a follower, so the write is the one right after
// the batch raft is stuck on: the first write proposed if raft is stuck on an earlier
// batch, else a second one (catch-up may read the first from the batch being written,
// writingOrStored).
func TestAFollowerAppliesWhatItReceivedBeforeRaftStoresIt(t *testing.T) {
	nodes, stores := openMembersWrappingLogs(t, threePeers(t), func(c *Config) { c.HeartbeatTimeout = 500 * time.Millisecond },
		func(l raft.LogStore) *holdingLogs { return &holdingLogs{LogStore: l, release: make(chan struct{})} })
	leader, follower := leaderAndFollowerOf(t, nodes)
	sid := int64(0x51)
	propose(t, leader, &Entry{Session: sid, Op: jute.OpCreateSession, Time: 1, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	waitSame(t, nodes)
	held := stores[follower.cfg.ID]
	held.hold.Store(true)
	defer func() {
		held.hold.Store(false)
		close(held.release)
	}()

	res := propose(t, leader, &Entry{Session: sid, Op: jute.OpCreate, Time: 2, Req: &jute.CreateRequest{Path: "/first", Acl: open}})
	if res.Err != jute.OK {
		t.Fatalf("create /first: %v", res.Err)
	}
	for deadline := time.Now().Add(5 * time.Second); held.waiting.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Skip("the follower's raft never stored a batch in 5 s (the leadership moved?)")
		}
	}
	if held.heldLast.Load() >= leader.raft.LastIndex() {
		if res = propose(t, leader, &Entry{Session: sid, Op: jute.OpCreate, Time: 3, Req: &jute.CreateRequest{Path: "/second", Acl: open}}); res.Err != jute.OK {
			t.Fatalf("create /second: %v", res.Err)
		}
	}
	if !follower.FSM.WaitApplied(res.Zxid, 5*time.Second) {
		t.Fatalf("the follower did not apply zxid %d while raft was storing the batch up to %d (received-applied %d)", res.Zxid, held.heldLast.Load(), follower.FSM.ReceivedApplied())
	}
	if held.waiting.Load() == 0 {
		t.Fatal("the follower's raft stored the batch meanwhile: the test proves nothing")
	}
	if follower.FSM.ReceivedApplied() == 0 {
		t.Fatal("the write was applied, but not from the received entries")
	}
}

package quorum

import (
	"cmp"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// Entries a follower received but raft has not yet stored. hashicorp/raft's follower
// handles one AppendEntries at a time: while it stores a batch (its fdatasync), the next
// batch waits unread in the transport, so a commit notice for that next batch finds
// nothing to apply until the store returns, and the member serves reads without a write
// the writer's member has already answered. A ZooKeeper follower reads proposals on one
// thread and logs them on another, and applies a COMMIT for a proposal it has not logged
// yet.
//
// So each raft stream this member accepts is read ahead of raft (read_ahead.go), and the
// AppendEntries requests on it are decoded a second time, into received: the run of
// entries that the leader of one term sent, contiguous from the index after base. A
// commit notice (i, t) may be applied from received alone, without this member's log,
// when:
//
//   - the run holds the entry at i with term t: it is the leader's entry at i (a leader
//     never changes its own log during its term, so every batch it sends agrees with
//     the run where they overlap), and it is committed, so by Log Matching the leader's
//     entries up to i are the committed ones;
//   - the run starts at or below the FSM's next index (base <= appliedIndex): the FSM
//     applied the committed entries up to appliedIndex, so the run's entries from
//     appliedIndex+1 up to i are the committed entries that follow them.
//
// Nothing of this member's log is read, so no check of the log against the run (which
// raft makes only when it stores the batch) is needed, and a run that raft will refuse
// (it does not follow this member's log yet) is as good as one it will store: a
// committed entry is committed wherever it is read from. Raft later applies the same
// entries from its log and gets the kept results (FSM.Apply), as for any early apply.

// maxReceived and maxReceivedBytes (of the entries' data) bound the run held: a member
// whose applies fall this far behind what it received applies through its log, as
// before. The count stays below the entries a snapshot leaves in the leader's log
// (received.limit, half of Config.TrailingLogs when that is lower), so that a member whose
// FSM ran ahead of its own log on the run is not sent a snapshot older than its state
// while raft stores what the run took (raft refusing those batches for long could still
// get it one, and its reads would go back until raft replays the rest).
const (
	maxReceived      = 4096
	maxReceivedBytes = 8 << 20
)

// received is the run of entries this member took off its raft streams, from the newest
// leader it heard.
type received struct {
	mu      sync.Mutex
	term    uint64      // the term of the leader that sent the run
	base    uint64      // the index before entries[0]
	entries []*raft.Log // contiguous: entries[k].Index == base+1+k
	bytes   int         // the entries' data
	limit   int         // the most entries held; maxReceived if 0
	// lastCmd is the index of the newest command received from the leader of term
	// cmdTerm; a read on a follower waits for it (fresh_read.go). Read without the lock.
	cmdTerm, lastCmd atomic.Uint64
	// catch is woken when the run grows, and its FSM's applied index is where the run's
	// entries are dropped; nil until the node is wired.
	catch atomic.Pointer[catchUp]
}

// add takes an AppendEntries request decoded off a raft stream, before raft handles it.
func (r *received) add(req *raft.AppendEntriesRequest) {
	es := req.Entries
	if len(es) == 0 {
		return
	}
	for k, e := range es {
		if e.Index != req.PrevLogEntry+1+uint64(k) {
			return // not a run raft would store; nothing to learn from it
		}
	}
	c := r.catch.Load()
	var applied uint64
	if c != nil {
		applied = c.fsm.appliedIndex.Load()
	}
	r.mu.Lock()
	hi := r.base + uint64(len(r.entries))
	switch {
	case req.Term < r.term:
		r.mu.Unlock()
		return // from a leader that was replaced
	case req.Term > r.term || req.PrevLogEntry < r.base || req.PrevLogEntry > hi:
		// A new leader, or a batch that does not join the run: start again from it.
		r.term, r.base, r.bytes = req.Term, req.PrevLogEntry, 0
		r.entries = r.entries[:0:0]
		r.push(es)
	default:
		if k := hi - req.PrevLogEntry; k < uint64(len(es)) {
			r.push(es[k:])
		}
	}
	r.dropThrough(applied)
	limit := cmp.Or(r.limit, maxReceived)
	if n := len(r.entries); n > limit {
		r.dropThrough(r.base + uint64(n-limit))
	}
	for len(r.entries) > 0 && r.bytes > maxReceivedBytes {
		r.dropThrough(r.base + 1)
	}
	last := r.base + uint64(len(r.entries))
	r.noteCommand(req.Term, es)
	r.mu.Unlock()
	if c != nil {
		c.arrived(last)
	}
}

// noteCommand records the newest command of es, taken from the leader of term; under
// r.mu.
func (r *received) noteCommand(term uint64, es []*raft.Log) {
	if r.cmdTerm.Load() != term {
		r.cmdTerm.Store(term)
		r.lastCmd.Store(0)
	}
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].Type == raft.LogCommand {
			if es[i].Index > r.lastCmd.Load() {
				r.lastCmd.Store(es[i].Index)
			}
			return
		}
	}
}

// push appends es to the run; under r.mu.
func (r *received) push(es []*raft.Log) {
	for _, e := range es {
		r.bytes += len(e.Data)
	}
	r.entries = append(r.entries, es...)
}

// dropThrough drops the entries up to index (applied, or past the bounds); under r.mu.
func (r *received) dropThrough(index uint64) {
	if index <= r.base {
		return
	}
	n := min(index-r.base, uint64(len(r.entries)))
	for _, e := range r.entries[:n] {
		r.bytes -= len(e.Data)
	}
	clear(r.entries[:n])
	r.entries = r.entries[n:]
	r.base += n
}

// dropApplied drops the entries the FSM applied, so a run is not held after a burst of
// writes until the next one.
func (r *received) dropApplied(applied uint64) {
	r.mu.Lock()
	r.dropThrough(applied)
	r.mu.Unlock()
}

// span is the run's entries from..to if they are all there, to has term t and the run
// starts at or below from; nil otherwise.
func (r *received) span(from, to, t uint64) []*raft.Log {
	r.mu.Lock()
	defer r.mu.Unlock()
	if from > to || r.base >= from || to > r.base+uint64(len(r.entries)) {
		return nil
	}
	if r.entries[to-r.base-1].Term != t {
		return nil
	}
	return append([]*raft.Log(nil), r.entries[from-r.base-1:to-r.base]...)
}

// applyReceived applies up to the committed point p from the entries received (see
// above), ahead of raft; false if the run does not hold what it needs.
func (f *FSM) applyReceived(r *received, p commitPoint) bool {
	if r == nil {
		return false
	}
	if p.index <= f.appliedIndex.Load() {
		return true
	}
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	run := r.span(f.appliedIndex.Load()+1, p.index, p.term)
	if run == nil {
		return false
	}
	for len(run) > 0 {
		k := min(len(run), applyHold)
		f.applyEarly(run[:k], &f.receivedApplied)
		run = run[k:]
	}
	return true
}

// ReceivedApplied counts the commands this member applied on commit notices from entries
// it had received but raft had not stored yet (EarlyApplied counts them too).
func (f *FSM) ReceivedApplied() uint64 { return f.receivedApplied.Load() }

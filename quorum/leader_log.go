package quorum

import (
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// The leader's own log write, overlapped with replication. hashicorp/raft's leader stores
// a batch (one fdatasync) before it sends the batch to anyone, so a write paid the
// leader's fdatasync and then a follower's, one after the other; a ZooKeeper leader logs a
// proposal while it sends it. Here the leader's store returns once the batch is written
// (deferringStore.StoreLogsDeferred) and its fdatasync runs while the batch travels to
// the followers and into their logs. Raft then counts the leader's copy towards a quorum
// before it is durable, so what raft calls committed may rest on one durable copy too
// few; the package doc says what the leader holds back until its copy is durable, and
// why that is enough.

// deferringStore is a log store whose writes can return before they are durable
// (persistence.WAL).
type deferringStore interface {
	// StoreLogsDeferred stores entries and returns before they are durable; it first
	// waits until whatever was stored before them is durable.
	StoreLogsDeferred(logs []*raft.Log) error
	// WaitDurable returns once the entries up to index are durable (or they cannot be).
	WaitDurable(index uint64) error
	// UnsyncedFrom is the first entry stored but not yet durable, 0 when none is.
	UnsyncedFrom() uint64
}

// leaderLog decides which of raft's stores may be deferred: only the leader's batches of
// commands, stored from raft's own goroutine. A follower's store must be durable before
// it returns (its answer to the leader says so), and so must a configuration change
// (raft acts on a membership as soon as it counts it committed).
type leaderLog struct {
	store deferringStore
	raft  atomic.Pointer[raft.Raft] // nil until raft runs: every store is durable
	// safe is the highest commit index found durable on this member (waitDurable): a
	// commit on durable copies, which the followers may be told of.
	safe atomic.Uint64
	// stored is the last entry of the newest batch stored deferred: an entry of the
	// leader's own term (durablePoint).
	stored atomic.Pointer[commitPoint]
	// storedCmd is the newest command stored deferred, and noticeTerm the newest term in
	// which this member sent a durable notice: a read on the leader waits for the
	// commands a follower may have applied on one (fresh_read.go).
	storedCmd  atomic.Pointer[commitPoint]
	noticeTerm atomic.Uint64
	// onDurable wakes the peer streams' writers when a deferred batch is durable.
	onDurable func()
	// followers is what each follower last said it stored (fresh_read.go); self is this
	// member's id.
	followers followerPoints
	self      raft.ServerID
}

// storedDeferred records es, just stored deferred, as the newest deferred batch. If its
// fdatasync returned already, the syncer's call of onDurable came before the record,
// so it is made again here.
func (l *leaderLog) storedDeferred(es []*raft.Log) {
	last := es[len(es)-1]
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].Type == raft.LogCommand {
			l.storedCmd.Store(&commitPoint{index: es[i].Index, term: es[i].Term})
			break
		}
	}
	l.stored.Store(&commitPoint{index: last.Index, term: last.Term})
	if _, ok := l.durablePoint(); ok && l.onDurable != nil {
		l.onDurable()
	}
}

// durablePoint is the last entry of the newest deferred batch if it is durable: this
// member's log is durable up to it, and it is an entry of the term it was stored in as
// the leader (durable notices, see the package doc). false while that batch is pending.
func (l *leaderLog) durablePoint() (commitPoint, bool) {
	if l == nil || l.store == nil {
		return commitPoint{}, false
	}
	p := l.stored.Load()
	if p == nil {
		return commitPoint{}, false
	}
	// At most one frame is pending, and a frame is stored only once the one before it is
	// durable: p is durable unless the pending frame is at or below it.
	if from := l.store.UnsyncedFrom(); from != 0 && from <= p.index {
		return commitPoint{}, false
	}
	return *p, true
}

// deferrable reports whether es, which raft is storing now, may be stored deferred. Raft
// changes its own state only on the goroutine that stores (Shutdown aside, which is
// never Leader), so a leader seen here is the leader storing its own batch
// (dispatchLogs); every other store (a follower's appendEntries, a bootstrap) is durable.
func (l *leaderLog) deferrable(es []*raft.Log) bool {
	if l == nil || l.store == nil {
		return false
	}
	r := l.raft.Load()
	if r == nil || r.State() != raft.Leader {
		return false
	}
	for _, e := range es {
		if e.Type == raft.LogConfiguration {
			return false
		}
	}
	return true
}

// waitDurable returns once the batch raft hands the FSM, whose last entry is last, is
// committed on durable copies: once this member's log is durable up to raft's commit
// index, not only up to last. Raft commits an earlier term's entries by counting an entry
// of the leader's own term (its no-op, at the start of a term), which may be the very
// entry not yet durable here; until it is, a crash of this member could leave those
// entries on too few disks to survive the next election. The commit index waited for is
// then safe to tell the followers (clampCommit). On a follower nothing is pending and it
// returns at once.
func (l *leaderLog) waitDurable(last uint64) error {
	c := last
	if r := l.raft.Load(); r != nil {
		c = max(c, r.CommitIndex())
	}
	if err := l.store.WaitDurable(c); err != nil {
		return err
	}
	if c > l.safe.Load() { // raft's FSM goroutine is the only writer
		l.safe.Store(c)
	}
	return nil
}

// clampCommit keeps the commit index the leader sends in an AppendEntries to one that is
// committed on durable copies, so a follower applies nothing that only raft's count, not
// the disks, calls committed. Raft's commit index c is such an index when this member's
// log is durable up to it (no frame pending at or below c; the package doc's argument):
// it is sent as it is. While a frame at or below c is pending, the last index the FSM
// found durable (waitDurable) is sent instead. Raft's followers take the smaller of it
// and their last entry, and a lower index than the leader knows is always allowed: the
// followers hear of the rest from the next AppendEntries or commit notice.
//
// Looking at the log, not only at what the FSM found, matters when raft hands the FSM
// nothing: a leader whose log past its snapshot holds only its no-op (a cluster restarted
// idle) commits it without an apply, and its followers must still hear of that commit to
// apply what they hold below it.
func (l *leaderLog) clampCommit(args *raft.AppendEntriesRequest) {
	if l == nil || l.store == nil {
		return
	}
	c := args.LeaderCommitIndex
	if from := l.store.UnsyncedFrom(); from == 0 || from > c {
		return
	}
	if s := l.safe.Load(); c > s {
		args.LeaderCommitIndex = s
	}
}

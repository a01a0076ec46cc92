package quorum

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/jute"
)

// Figures are told of events in quorum that ZooKeeper counts in its metrics (the server
// keeps the counts; quorum knows no metric's name). Each may be nil; each runs on the
// goroutine where the event happens (raft's, the WAL's or its syncer's, a snapshot's, the
// leader's duties', or Open's), so it must not block.
type Figures struct {
	// LogSynced: an fdatasync of the transaction log took took.
	LogSynced func(took time.Duration)
	// LogSyncSlow: an fdatasync of the transaction log took longer than
	// Config.FsyncWarning (quorum also logs it as a warning, when it has a logger).
	LogSyncSlow func()
	// SnapshotTaken: a snapshot of the state was written, in took.
	SnapshotTaken func(took time.Duration)
	// Looking: this cluster member has no leader, at its start or since it lost the one
	// it had (as a ZooKeeper peer goes LOOKING).
	Looking func()
	// Elected: a voting member that was looking knows its leader again (itself, if it
	// leads); took is the time since it began looking. A non-voter is told nothing, as
	// a ZooKeeper observer records no election time.
	Elected func(took time.Duration)
	// SessionsExpired: the leader closes n sessions whose timeout passed.
	SessionsExpired func(n int)

	// Serving: a cluster member that was looking serves again: a follower or observer
	// once it synced with its leader (Node.Synced), took after it knew the leader (-1 for
	// an observer); a leader once it is established (leading is true, took is 0). down is
	// the time since it began looking, as ZooKeeper counts a peer unavailable from
	// LOOKING to BROADCAST.
	Serving func(leading bool, took, down time.Duration)
	// Loaded: the state this member started from: restoring its newest snapshot took
	// snap; then applying n transactions of its own log that followed it took txns (n is
	// -1 when its log held none).
	Loaded func(snap, txns time.Duration, n int)
	// Proposed: this member, leading, handed one transaction to raft.
	Proposed func()
	// Received: this member, a follower, stored one transaction from its leader, which
	// stamped it age ms before (negative when the clocks disagree: ZooKeeper drops those).
	Received func(age int64)
	// Committed: this member applied one committed transaction, stamped by its leader
	// age ms before (negative when the clocks disagree), in role; not one of the
	// transactions it replays from its own log after its start (Loaded), which ZooKeeper
	// loads before it serves and counts nowhere else.
	Committed func(role Role, age int64)
	// SnapshotSent: this member, leading, sent a member its snapshot.
	SnapshotSent func()
	// LearnerJoined: this member, leading, heard from a member's new stream: a learner
	// that synced with it (by its log, or by a snapshot as well).
	LearnerJoined func()
}

// Role is what a member was when it applied a transaction (Figures.Committed).
type Role int

const (
	Alone   Role = iota // a standalone server
	Leading             // the leader of a cluster
	Learner             // a follower or observer
)

// txnOp reports whether an entry's op is one of ZooKeeper's transactions, which its
// metrics count: a write, createSession or closeSession, a failed one too; not a sync,
// nor an entry of zkraft's own.
func txnOp(op int32) bool {
	switch op {
	case jute.OpSync, OpMoveSession, OpSetConfig, OpSetEnforceQuota:
		return false
	}
	return true
}

// looking tracks a member's time without a leader for Figures.Looking and Elected, and
// its time without serving for Figures.Serving.
type looking struct {
	mu    sync.Mutex
	since time.Time // zero while a leader is known
	// down is when the member stopped serving (its start, or its last look), zero while
	// it serves; knew is when it last learned its leader.
	down, knew time.Time
	// pending is whether down is set, read without the lock on the store path.
	pending atomic.Bool
	voter   bool
	figs    Figures
}

// lost is told that no leader is known (at the start, or a leader observation without
// one); it counts one look per stretch without a leader.
func (l *looking) lost() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.since.IsZero() {
		return
	}
	l.since = time.Now()
	if l.down.IsZero() {
		l.down = l.since
		l.pending.Store(true)
	}
	if l.figs.Looking != nil {
		l.figs.Looking()
	}
}

// found is told that a leader is known.
func (l *looking) found() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.since.IsZero() {
		return
	}
	l.knew = time.Now()
	took := l.knew.Sub(l.since)
	l.since = time.Time{}
	if l.voter && l.figs.Elected != nil {
		l.figs.Elected(took)
	}
}

// knownFor is how long the member has known its leader, 0 while it knows none.
func (l *looking) knownFor() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.since.IsZero() || l.knew.IsZero() {
		return 0
	}
	return time.Since(l.knew)
}

// serving is told that the member serves again: leading, or synced with the leader it
// knows; the first call after a look counts.
func (l *looking) serving(leading bool) {
	if l == nil || !l.pending.Load() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down.IsZero() || !l.since.IsZero() {
		return // served already, or no leader known
	}
	now := time.Now()
	var took time.Duration
	switch {
	case !leading && l.voter:
		took = now.Sub(l.knew)
	case !leading:
		took = -1 // an observer: ZooKeeper's records no sync time
	}
	down := now.Sub(l.down)
	l.down = time.Time{}
	l.pending.Store(false)
	if l.figs.Serving != nil {
		l.figs.Serving(leading, took, down)
	}
}

// role is what this member is now, for Figures.Committed; raft's FSM goroutine asks it,
// which may run before Open has set n.raft, so raft is read where Open stores it last.
func (n *Node) role() Role {
	if !n.IsClustered() {
		return Alone
	}
	if r := n.lead.raft.Load(); r != nil && r.State() == raft.Leader {
		return Leading
	}
	return Learner
}

// followerStored is told of every batch raft stores on this member as a follower (from
// raft's goroutine, before the store): each transaction a voter receives from its
// leader (Figures.Received; an observer, as ZooKeeper's, is informed of commits only;
// a voter as configured at the start, as looking counts elections and syncs),
// and the first entry of its leader's term, with which it is synced (Synced; but in the
// term it restarted within, where checkServing finds it synced).
func (n *Node) followerStored(es []*raft.Log) {
	if f := n.cfg.Figures.Received; f != nil && n.look != nil && n.look.voter {
		now := time.Now().UnixMilli()
		for _, l := range es {
			if l.Type != raft.LogCommand || len(l.Data) < entryOpAt+4 {
				continue
			}
			if txnOp(int32(binary.BigEndian.Uint32(l.Data[entryOpAt:]))) {
				f(now - int64(binary.BigEndian.Uint64(l.Data[entryTimeAt:])))
			}
		}
	}
	if n.look != nil && n.look.pending.Load() {
		if term := n.raft.CurrentTerm(); es[len(es)-1].Term == term && term != n.restartTerm.Load() {
			n.look.serving(false)
		}
	}
}

// checkServing tells look that this member, following, serves once it is synced with
// its leader: for a member that restarted within its leader's term, which followerStored
// leaves to it (called after each commit or durable notice is acted on, and every half
// tick).
func (n *Node) checkServing() {
	if n.look == nil || !n.look.pending.Load() || n.IsLeader() || !n.HasLeader() {
		return
	}
	if n.Synced() {
		n.look.serving(false)
	}
}

// LeaderUptime is how long this member has led since it was established, in ms; 0 when
// it does not lead (mntr's leader_uptime).
func (n *Node) LeaderUptime() int64 {
	if !n.Established() {
		return 0
	}
	return time.Since(time.Unix(0, n.leadingSince.Load())).Milliseconds()
}

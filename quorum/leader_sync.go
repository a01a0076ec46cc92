package quorum

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// leaderSync keeps a member from starting sessions on a state older than its leader's.
// A ZooKeeper follower serves clients only after it has synced with its leader (DIFF,
// SNAP or TRUNC, then UPTODATE). A raft member knows its leader from the first
// heartbeat, which carries no commit index, and applies the log it lacks only when an
// AppendEntries brings it; after a restart or a partition raft backs its replication to
// that member off (up to seconds), while its heartbeats may already have resumed. So
// under each leader this member knows, the first session waits for one sync through the
// log: once applied here, this member holds everything committed before it. So does
// the first session after this member went without a word from its leader for half a
// heartbeat timeout (a process paused, or cut off, for less than an election takes):
// raft may still be sending what it missed.
type leaderSync struct {
	gen    atomic.Uint64 // bumped whenever the leader this member knows changes (or is lost)
	synced atomic.Uint64 // 1 + the gen in which a sync last completed; 0: none yet
	mu     sync.Mutex    // one sync at a time; the others take its outcome
	ended  atomic.Uint64 // syncs attempted and ended, either way
	syncs  atomic.Uint64 // syncs that succeeded
}

// leaderChanged is called by raft's observer, on raft's goroutine, whenever the leader
// this member knows changes, and when this member has not heard from it for a while: a
// session started after it syncs again.
func (l *leaderSync) leaderChanged() { l.gen.Add(1) }

func (l *leaderSync) current() bool { return l.synced.Load() == l.gen.Load()+1 }

// SyncWithLeader returns true once this member has applied everything its current
// leader had committed before the first call under that leader (see leaderSync.run).
// A standalone server is its own leader, always in sync.
func (n *Node) SyncWithLeader() bool {
	if !n.IsClustered() {
		return true
	}
	if !n.IsLeader() && time.Since(n.raft.LastContact()) > n.cfg.HeartbeatTimeout/2 {
		// Not heard from the leader for five of its heartbeats (paused, or cut off
		// without noticing yet): what it sent meanwhile may still be on its way.
		n.leaderSync.leaderChanged()
	}
	return n.leaderSync.run(n.CatchUp)
}

// run returns true at once when a sync completed under the current leader, else after
// running sync. False if sync failed (no leader, or the leader went away), or if another
// caller's sync ended while this one waited for it and did not leave this member in
// sync: callers queued behind a failing sync fail with it instead of each retrying for
// as long.
func (l *leaderSync) run(sync func() bool) bool {
	if l.current() {
		return true
	}
	ended := l.ended.Load()
	l.mu.Lock()
	defer l.mu.Unlock()
	gen := l.gen.Load()
	if l.synced.Load() == gen+1 {
		return true
	}
	if l.ended.Load() != ended {
		return false
	}
	ok := sync()
	defer l.ended.Add(1)
	if !ok {
		return false
	}
	// Recorded for the generation read before the sync: if the leader changed since,
	// the next session syncs again.
	l.synced.Store(gen + 1)
	l.syncs.Add(1)
	return true
}

// CatchUp proposes a sync through the log and reports whether it was applied here:
// everything committed before it is then applied here too, as a ZooKeeper sync makes
// sure of.
func (n *Node) CatchUp() bool {
	return n.Propose(&Entry{Op: jute.OpSync, Req: &jute.SyncRequest{Path: "/"}}).Error() == nil
}

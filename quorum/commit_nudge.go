package quorum

import (
	"context"
	"time"
)

// Followers answer the writes of their clients, and fire their watches, once they have
// applied them, so they must learn of a commit promptly. hashicorp/raft sends a follower
// the leader's commit index only with its next AppendEntries: the next entries, or an
// empty one after CommitTimeout without any. A CommitTimeout short enough for that (a few
// milliseconds) keeps every member busy sending and answering while the cluster is idle
// (a 3-member cluster used a fifth of a core doing nothing at 5 ms). So the timer is long
// (idleCommitTimeout) and the leader nudges instead: when it has applied the last entry of
// its log, it appends a Barrier, whose replication carries the commit index. Under load
// later entries carry it and no barrier is added; Barriers never reach the FSM.
const idleCommitTimeout = 50 * time.Millisecond

// signalApplied notifies f.applied (without blocking) after the FSM applied a command.
func (f *FSM) signalApplied() {
	select {
	case f.applied <- struct{}{}:
	default:
	}
}

// nudgeLoop runs on the leader of a cluster (a leader duty).
func (d *duties) nudgeLoop(ctx context.Context) {
	n := d.n
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.FSM.applied:
		}
		// Entries after the last applied command (more commands, or the barrier sent
		// before) carry or will carry the commit index: nothing to add.
		if n.raft.LastIndex() > uint64(n.FSM.LastZxid()) {
			continue
		}
		n.raft.Barrier(0) // its outcome does not matter: only its replication does
	}
}

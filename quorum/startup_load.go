package quorum

import (
	"time"

	"github.com/hashicorp/raft"
)

// What a member loads at its start, for Figures.Loaded (ZooKeeper's dbinittime and
// startup_* metrics). ZooKeeper reads its snapshot, then replays the transactions of its
// log that follow it, before it looks for a leader. A member here restores its newest
// snapshot at Open, and raft applies the commands of its log that follow the snapshot
// once it knows they are committed: after its election as a standalone server or a
// leader, on its leader's first news as a follower. So the replay is timed from its first
// command applied to its last, not from Open, which would count the election too.

// startupReplay counts the commands of the log at Open that follow the snapshot, up to
// the last of them (FSM.replayed), as they are applied.
type startupReplay struct {
	snap  time.Duration // the snapshot's restore
	first time.Time     // the first of them applied
	n     int           // the transactions among them (txnOp)
	done  func(snap, txns time.Duration, n int)
}

// applied is told of each run applyRun applies (es[i] the decoded command of logs[i],
// nil for other entries); it reports true, having told done, once the run reaches until,
// the replay's last command.
func (r *startupReplay) applied(logs []*raft.Log, es []*Entry, until uint64) bool {
	for i, l := range logs {
		if l.Index > until {
			break
		}
		if es[i] != nil && txnOp(es[i].Op) {
			if r.n == 0 {
				r.first = time.Now()
			}
			r.n++
		}
	}
	if logs[len(logs)-1].Index < until {
		return false
	}
	r.end()
	return true
}

// end tells done what was replayed.
func (r *startupReplay) end() {
	var took time.Duration
	if r.n > 0 {
		took = time.Since(r.first)
	}
	r.done(r.snap, took, r.n)
}

// lastCommandAfter is the index of the last command logs holds after index from, 0 if
// it holds none: read from the end, as the last entry is mostly a command.
func lastCommandAfter(logs raft.LogStore, from uint64) uint64 {
	last, err := logs.LastIndex()
	if err != nil {
		return 0
	}
	first, err := logs.FirstIndex()
	if err != nil {
		return 0
	}
	var l raft.Log
	for i := last; i > from && i >= first && i > 0; i-- {
		if logs.GetLog(i, &l) == nil && l.Type == raft.LogCommand {
			return i
		}
	}
	return 0
}

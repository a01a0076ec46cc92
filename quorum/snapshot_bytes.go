package quorum

import (
	"errors"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// Snapshots by the log's size as well as its length. Raft snapshots when SnapshotThreshold
// entries (snapCount) went to the log since the last snapshot; with large entries that is
// a lot of log (100,000 entries of a megabyte are 100 GB) to keep on disk and replay at a
// restart. ZooKeeper also snapshots once the transaction log since the last snapshot
// reaches snapSizeLimitInKb (4 GB by default), and so does zkraft: the FSM counts the bytes
// of the commands it applies (Config.SnapshotBytes), and once they reach the limit it
// asks for a snapshot, which counts from nought again.

// snapshotBytes is the FSM's count of applied command bytes since the last snapshot.
type snapshotBytes struct {
	limit int64 // 0: no limit
	since atomic.Int64
	due   chan struct{} // one snapshot asked for at a time
}

func newSnapshotBytes(limit int64) *snapshotBytes {
	return &snapshotBytes{limit: limit, due: make(chan struct{}, 1)}
}

// add counts n bytes of applied commands and asks for a snapshot once they reach the
// limit.
func (s *snapshotBytes) add(n int) {
	if s == nil || s.limit <= 0 {
		return
	}
	if s.since.Add(int64(n)) >= s.limit {
		select {
		case s.due <- struct{}{}:
		default:
		}
	}
}

// reset starts counting again, when a snapshot of the state is taken.
func (s *snapshotBytes) reset() {
	if s != nil {
		s.since.Store(0)
	}
}

// snapshotOnSize takes a snapshot whenever the FSM asks for one, until done closes.
func (n *Node) snapshotOnSize(s *snapshotBytes) {
	for {
		select {
		case <-n.done:
			return
		case <-s.due:
		}
		if s.since.Load() < s.limit {
			continue // a snapshot by count came first
		}
		err := n.raft.Snapshot().Error()
		switch {
		case err == nil:
			n.cfg.Logger.Info("snapshot: the log since the last one reached snapSizeLimitInKb", "limit_bytes", s.limit)
		case errors.Is(err, raft.ErrNothingNewToSnapshot), errors.Is(err, raft.ErrRaftShutdown):
		default:
			n.cfg.Logger.Warn("snapshot by the log's size failed", "err", err)
		}
	}
}

package quorum

import (
	"io"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/persistence"
)

// What a member starts from: its newest snapshot, and the term of its restart
// (Node.Synced counts a follower restarted within a term as caught up only once it
// applied what it heard since its start).

// restoreNewest loads the newest snapshot into fsm, if there is one, and returns its
// index (0 without one); a snapshot that does not match its meta.json, or does not
// decode, is a *persistence.CorruptError.
func restoreNewest(store *persistence.Store, fsm *FSM) (index, term uint64, err error) {
	snap, err := store.OpenNewestSnapshot()
	if err != nil || snap == nil {
		return 0, 0, err
	}
	defer snap.Close()
	rerr := fsm.Restore(io.NopCloser(snap))
	if err := snap.Verify(); err != nil {
		return 0, 0, err
	}
	if rerr != nil {
		return 0, 0, &persistence.CorruptError{Path: store.Dir + "/snapshots/" + snap.Meta.ID + "/state.bin", What: rerr.Error()}
	}
	// Raft goes on after the snapshot's index; the entries between the state's last
	// command and that index change nothing.
	fsm.appliedIndex.Store(max(fsm.appliedIndex.Load(), snap.Meta.Index))
	// A snapshot holds only what was committed: a leader that applies no command
	// before its members connect tells them this point (caughtUpSinceStart).
	fsm.committed.Store(&commitPoint{index: snap.Meta.Index, term: snap.Meta.Term})
	return snap.Meta.Index, snap.Meta.Term, nil
}

// restartTerm is raft's current term as stored, if this member's log (or its snapshot,
// at snapIndex with snapTerm) already holds an entry of it: the term it restarts within
// (Node.restartTerm); 0 otherwise.
func restartTerm(store *persistence.Store, logs raft.LogStore, snapIndex, snapTerm uint64) uint64 {
	current, err := store.Stable.GetUint64([]byte("CurrentTerm")) // raft's key
	if err != nil || current == 0 {
		return 0
	}
	held := snapTerm
	if last, err := logs.LastIndex(); err == nil && last > snapIndex {
		var l raft.Log
		if logs.GetLog(last, &l) == nil {
			held = l.Term
		}
	}
	if held != current {
		return 0
	}
	return current
}

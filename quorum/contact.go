package quorum

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// contactTransport is Raft's TCP transport noting when each peer last answered an
// AppendEntries of this server's (a leader heartbeats every member many times a
// second). It is the leader's view of which members are connected and following, which
// a reconfig needs, as ZooKeeper's leader asks its LearnerHandlers whether they are
// synced; the followers' session pings come only every half tick. Every outcome also
// goes to reach, which logs a peer's outages.
//
// It also clamps the commit index of every AppendEntries it sends to what is durable on
// this member (leaderLog.clampCommit), and notes what each follower stored (fresh_read.go).
type contactTransport struct {
	*raft.NetworkTransport
	answered sync.Map // raft.ServerID -> time.Time
	reach    *reachability
	log      *leaderLog
	accepted *openStreams // the streams its listener accepted (read_ahead.go)
	pipes    sync.Map     // raft.ServerID -> *pipeline, the newest made to each peer
	// votes, if set, withholds this member's votes (empty_store_votes.go).
	votes *voteGate
	// snapshotSent, if set, counts the snapshots sent (Figures.SnapshotSent).
	snapshotSent func()
}

// dropStale closes the streams to peer id that may have died with it, as its outage
// starts and ends: raft's pipeline to it and the streams raft keeps pooled for its next
// calls. Raft finds such a stream dead only when it next writes to it: an idle pipeline
// at its CommitTimeout or with the next entry, which may come after the peer is back
// (the leader's barrier for a member that answered again is one), and would start a
// second outage, logged as one, a moment after the first ended. Raft has no per-peer
// call for its pool, so every peer's pooled streams go; the others are dialled again
// once per outage. A pipeline closed here makes raft replicate without one until a call
// succeeds, as after any failed batch.
func (t *contactTransport) dropStale(id raft.ServerID) {
	if p, ok := t.pipes.LoadAndDelete(id); ok {
		p.(*pipeline).Close()
	}
	if t.NetworkTransport != nil {
		t.NetworkTransport.CloseStreams()
	}
}

// Close closes the transport and every stream it accepted.
func (t *contactTransport) Close() error {
	if t.votes != nil {
		t.votes.close()
	}
	err := t.NetworkTransport.Close()
	t.accepted.closeAll()
	return err
}

// InstallSnapshot sends a member this leader's snapshot, counted whatever the outcome,
// as ZooKeeper counts a snapshot sync it began.
func (t *contactTransport) InstallSnapshot(id raft.ServerID, target raft.ServerAddress, args *raft.InstallSnapshotRequest, resp *raft.InstallSnapshotResponse, data io.Reader) error {
	if t.snapshotSent != nil {
		t.snapshotSent()
	}
	return t.NetworkTransport.InstallSnapshot(id, target, args, resp, data)
}

func (t *contactTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	t.log.clampCommit(args)
	err := t.NetworkTransport.AppendEntries(id, target, args, resp)
	if err != nil {
		// ErrTransportShutdown: this server is stopping, not the peer.
		if !errors.Is(err, raft.ErrTransportShutdown) {
			if connRefused(err) || hungUp(err) {
				// Its process is gone (its port refuses, or it closed or reset the
				// stream), not slow: it is no longer synced for a reconfig, as a
				// ZooKeeper leader drops a learner whose socket closed at once rather
				// than after syncLimit ticks.
				t.answered.Delete(id)
			}
			if t.reach.failed(id, err) {
				t.dropStale(id)
			}
		}
		return err
	}
	t.answered.Store(id, time.Now())
	if t.reach.answered(id) {
		t.dropStale(id)
	}
	if t.log != nil {
		t.log.noteAccepted(id, args, resp)
	}
	return nil
}

func (t *contactTransport) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	p, err := t.NetworkTransport.AppendEntriesPipeline(id, target)
	if err != nil {
		return nil, err
	}
	pl := newPipeline(p, t.log, id)
	pl.reach = t.reach
	t.pipes.Store(id, pl)
	return pl, nil
}

// answeredSince reports whether the member with id answered this server since t.
func (n *Node) answeredSince(id string, t time.Time) bool {
	ct, ok := n.trans.(*contactTransport)
	if !ok {
		return false
	}
	last, ok := ct.answered.Load(raft.ServerID(id))
	return ok && !last.(time.Time).Before(t)
}

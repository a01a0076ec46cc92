package quorum

import (
	"errors"
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
}

func (t *contactTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	t.log.clampCommit(args)
	err := t.NetworkTransport.AppendEntries(id, target, args, resp)
	if err != nil {
		if !errors.Is(err, raft.ErrTransportShutdown) { // this server is stopping, not the peer
			t.reach.failed(id, err)
		}
		return err
	}
	t.answered.Store(id, time.Now())
	t.reach.answered(id)
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

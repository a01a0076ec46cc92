package quorum

import (
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// contactTransport is Raft's TCP transport noting when each peer last answered an
// AppendEntries of this server's (a leader heartbeats every member many times a
// second). It is the leader's view of which members are connected and following, which
// a reconfig needs, as ZooKeeper's leader asks its LearnerHandlers whether they are
// synced; the followers' session pings come only every half tick.
type contactTransport struct {
	*raft.NetworkTransport
	answered sync.Map // raft.ServerID -> time.Time
}

func (t *contactTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	err := t.NetworkTransport.AppendEntries(id, target, args, resp)
	if err == nil {
		t.answered.Store(id, time.Now())
	}
	return err
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

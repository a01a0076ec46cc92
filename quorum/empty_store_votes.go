package quorum

import (
	"log/slog"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// ZooKeeper's zookeeper.db.autocreate=false: a member that starts on an empty store,
// without the data dir's "initialize" marker, takes part in no election until it has
// synced with a leader. Its store may be empty because its disk was lost or replaced;
// what it acknowledged before is then gone, and a vote from it could elect a member
// that lacks committed entries (a ZooKeeper member loads such a database at zxid -1,
// and FastLeaderElection ignores notifications while its own zxid is -1 and those of
// members at -1). Raft has no switch for it, so the transport answers every RequestVote
// and RequestPreVote refused (term 0, which makes no candidate step down) until the
// member's log holds an entry beyond what it started with: an AppendEntries or a
// snapshot from a leader. Raft's own election then finds no vote here either way: its
// empty log wins no other member's vote, and another gated member's is refused. The
// relay costs one channel hop per RPC for as long as the process runs (raft asks for
// its channel once); only such a start has it.

// voteGate relays the RPCs raft consumes, refusing votes while shut.
type voteGate struct {
	in, out chan raft.RPC
	done    chan struct{}
	log     *slog.Logger
	// lastIndex is raft's last log index once raft runs (nil before: shut); start is
	// the store's last index when the member started.
	lastIndex atomic.Pointer[func() uint64]
	start     uint64
	open      atomic.Bool
	refused   atomic.Uint64
}

func newVoteGate(in <-chan raft.RPC, start uint64, log *slog.Logger) *voteGate {
	g := &voteGate{out: make(chan raft.RPC), done: make(chan struct{}), log: log, start: start}
	go g.relay(in)
	return g
}

// relay hands raft every RPC but the votes it refuses, until the transport closes.
func (g *voteGate) relay(in <-chan raft.RPC) {
	for {
		select {
		case rpc := <-in:
			if g.refuse(rpc) {
				continue
			}
			select {
			case g.out <- rpc:
			case <-g.done:
				return
			}
		case <-g.done:
			return
		}
	}
}

// refuse answers a vote request refused while the gate is shut, and reports whether it
// did.
func (g *voteGate) refuse(rpc raft.RPC) bool {
	var resp any
	switch rpc.Command.(type) {
	case *raft.RequestVoteRequest:
		resp = &raft.RequestVoteResponse{}
	case *raft.RequestPreVoteRequest:
		resp = &raft.RequestPreVoteResponse{}
	default:
		return false
	}
	if g.isOpen() {
		return false
	}
	if g.refused.Add(1) == 1 {
		g.log.Warn("zookeeper.db.autocreate=false and this member started on an empty store: it refuses votes until it has synced with a leader")
	}
	rpc.Respond(resp, nil)
	return true
}

// isOpen reports whether the member's log holds an entry it did not start with.
func (g *voteGate) isOpen() bool {
	if g.open.Load() {
		return true
	}
	last := g.lastIndex.Load()
	if last == nil || (*last)() <= g.start {
		return false
	}
	g.open.Store(true)
	g.log.Info("synced with a leader after starting on an empty store: this member votes again", "refused_votes", g.refused.Load())
	return true
}

func (g *voteGate) close() {
	select {
	case <-g.done:
	default:
		close(g.done)
	}
}

// Consumer is raft's channel of incoming RPCs: the gate's relay when the member started
// gated.
func (t *contactTransport) Consumer() <-chan raft.RPC {
	if t.votes != nil {
		return t.votes.out
	}
	return t.NetworkTransport.Consumer()
}

// VotesWithheld reports whether this member still refuses votes (it started on an empty
// store with zookeeper.db.autocreate=false and has not synced with a leader yet), and
// how many it refused.
func (n *Node) VotesWithheld() (shut bool, refused uint64) {
	ct, ok := n.trans.(*contactTransport)
	if !ok || ct.votes == nil {
		return false, 0
	}
	return !ct.votes.isOpen(), ct.votes.refused.Load()
}

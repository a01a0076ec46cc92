package quorum

import (
	"errors"
	"log/slog"
	"sync"
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
// member holds an entry of its current term (Node.lastHeldTerm): a leader elected
// without this member's vote sent it, and by Log Matching the member's log then matches
// that leader's up to it, every entry committed before the term included; a part of a
// catch-up (one batch of AppendEntries, a snapshot of an older term) does not open it.
// Nor does it stand as a candidate: while the gate is shut its own RequestVote and
// RequestPreVote calls fail before they are sent (raft logs that at debug), so its
// pre-vote never succeeds and it neither bumps the term nor wins (ZooKeeper's election
// ignores a member at zxid -1). The relay costs one channel hop per RPC for as long as
// the process runs (raft asks for its channel once); only such a start has it.

// termsOf is how the gate reads raft once raft runs.
type termsOf struct{ current, held func() uint64 }

// voteGate relays the RPCs raft consumes, refusing votes while shut.
type voteGate struct {
	out       chan raft.RPC
	done      chan struct{}
	closeOnce sync.Once
	log       *slog.Logger
	terms     atomic.Pointer[termsOf] // nil until raft runs: shut
	open      atomic.Bool
	refused   atomic.Uint64
}

func newVoteGate(in <-chan raft.RPC, log *slog.Logger) *voteGate {
	g := &voteGate{out: make(chan raft.RPC), done: make(chan struct{}), log: log}
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

// isOpen reports whether the member holds an entry of its current term. It is asked at
// each vote request (and by VotesWithheld), so its log line comes then, not at the sync.
func (g *voteGate) isOpen() bool {
	if g.open.Load() {
		return true
	}
	t := g.terms.Load()
	if t == nil {
		return false
	}
	if cur := t.current(); cur == 0 || t.held() != cur {
		return false
	}
	if g.open.CompareAndSwap(false, true) {
		g.log.Info("synced with a leader after starting on an empty store: this member votes again", "refused_votes", g.refused.Load())
	}
	return true
}

func (g *voteGate) close() { g.closeOnce.Do(func() { close(g.done) }) }

// errVotesWithheld fails a gated member's own vote requests.
var errVotesWithheld = errors.New("quorum: this member started on an empty store and has not synced with a leader: it stands in no election (zookeeper.db.autocreate=false)")

// RequestVote asks a peer's vote, unless this member's votes are withheld.
func (t *contactTransport) RequestVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	if t.votes != nil && !t.votes.isOpen() {
		return errVotesWithheld
	}
	return t.NetworkTransport.RequestVote(id, target, args, resp)
}

// RequestPreVote asks a peer's pre-vote, unless this member's votes are withheld.
func (t *contactTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	if t.votes != nil && !t.votes.isOpen() {
		return errVotesWithheld
	}
	return t.NetworkTransport.RequestPreVote(id, target, args, resp)
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

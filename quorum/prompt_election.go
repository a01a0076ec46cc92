package quorum

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
)

// promptElection lets a voting follower whose leader's process is gone call an election
// at once instead of waiting out raft's heartbeat timeout (one to two ticks). A ZooKeeper
// follower notices a killed leader the same way, by its connection closing; a raft
// follower only counts missed heartbeats. So the timeout can be long, which keeps an idle
// cluster's heartbeats few, and a killed leader is still replaced within an election.
//
// The sign is strong: the follower's stream to the leader broke and a new connection to
// the leader's peer port and to its raft port is refused (nothing listens there any
// more), while raft still names that leader in the term it named it in. A paused or cut
// off leader refuses nothing; its followers wait for the timeout as before.
//
// The election is called by handing this member's own raft a TimeoutNow, the request a
// leader sends the member it hands leadership to. Raft is safe whenever a member stands
// for election; the request only makes the other voters grant their vote although they
// still name a leader (as they would, moments later, when their own timeouts fire).
// Survivors stand one after another, by rank in the membership, staggerOf apart, and a
// member stands only while no new leader is known, so two survivors seldom split a vote.
type promptElection struct {
	n *Node
	// named is the leader raft names and this member's term when it named it.
	named atomic.Pointer[namedLeader]

	mu     sync.Mutex
	judged namedLeader // the leadership last found refusing, or not
	timer  *time.Timer
}

type namedLeader struct {
	id   raft.ServerID
	term uint64
}

// staggerOf is how long each surviving voter waits after the one ranked before it: long
// enough for that one to win (a vote's round trip and two stable-store writes).
func staggerOf(heartbeat time.Duration) time.Duration { return heartbeat / 8 }

func newPromptElection(n *Node, r *raft.Raft) *promptElection {
	p := &promptElection{n: n}
	if _, id := r.LeaderWithID(); id != "" {
		p.leaderNamed(id)
	}
	return p
}

// leaderNamed records that raft names leader (or none) now; Node's leader observer calls
// it on raft's goroutine as raft sets the leader, so the term is the one it was named in.
func (p *promptElection) leaderNamed(leader raft.ServerID) {
	p.named.Store(&namedLeader{id: leader, term: p.n.raft.CurrentTerm()})
}

// refused is told that dialing leader's peer port was refused (forwarder.redial).
func (p *promptElection) refused(leader raft.ServerID) {
	lead, ok := p.current(leader)
	if !ok {
		return
	}
	rank, ok := p.rank(leader) // not ok: this member does not vote
	if !ok {
		return
	}
	// Each leadership is judged once: every proposal while there is no stream wakes
	// the dialer, and a leader whose raft port answers is not dialed again for it.
	p.mu.Lock()
	judged := p.judged == lead
	p.judged = lead
	p.mu.Unlock()
	if judged {
		return
	}
	peer, ok := p.n.peer(string(leader))
	if !ok {
		return
	}
	// The peer port may not be up yet on a member just started; its raft port is
	// listening as long as its raft runs.
	if c, err := p.n.cfg.Network.Dial(peer.RaftAddr, time.Second); err == nil {
		c.Close()
		return
	} else if !connRefused(err) {
		return
	}
	delay := time.Duration(rank) * staggerOf(p.n.cfg.HeartbeatTimeout)
	p.n.cfg.Logger.Warn("the leader's ports refuse connections: standing for election",
		"leader", string(leader), "term", lead.term, "after", delay)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer != nil {
		p.timer.Stop()
	}
	p.timer = time.AfterFunc(delay, func() { p.stand(lead) })
}

// current reports whether this member follows leader, named in the term it is in now.
func (p *promptElection) current(leader raft.ServerID) (namedLeader, bool) {
	named := p.named.Load()
	if named == nil || named.id != leader || leader == "" {
		return namedLeader{}, false
	}
	if p.n.raft.State() != raft.Follower || p.n.raft.CurrentTerm() != named.term {
		return namedLeader{}, false
	}
	return *named, true
}

// rank is this member's place among the voters other than gone, by id.
func (p *promptElection) rank(gone raft.ServerID) (int, bool) {
	f := p.n.raft.GetConfiguration()
	if f.Error() != nil {
		return 0, false
	}
	var ids []raft.ServerID
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter && s.ID != gone {
			ids = append(ids, s.ID)
		}
	}
	slices.Sort(ids)
	i := slices.Index(ids, raft.ServerID(p.n.cfg.ID))
	return i, i >= 0
}

// stand hands this member's raft a TimeoutNow if it still follows the gone leadership.
func (p *promptElection) stand(gone namedLeader) {
	select {
	case <-p.n.done:
		return
	default:
	}
	if now, ok := p.current(gone.id); !ok || now != gone {
		return
	}
	self := p.n.cfg.self()
	req := &raft.TimeoutNowRequest{RPCHeader: raft.RPCHeader{
		ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(self.ID), Addr: []byte(self.RaftAddr),
	}}
	if err := p.n.trans.TimeoutNow(raft.ServerID(self.ID), raft.ServerAddress(self.RaftAddr), req, &raft.TimeoutNowResponse{}); err != nil {
		p.n.cfg.Logger.Warn("cannot stand for election", "err", err)
	}
}

func (p *promptElection) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer != nil {
		p.timer.Stop()
	}
}

func connRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

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
// at once instead of waiting out raft's heartbeat timeout (half a tick, once or twice). A ZooKeeper
// follower notices a killed leader the same way, by its connection closing; a raft
// follower only counts missed heartbeats. So the timeout can be long, which keeps an idle
// cluster's heartbeats few, and a killed leader is still replaced within an election.
//
// The sign is strong: the follower's stream to the leader broke and a new connection to
// the leader's peer port and to its raft port is refused (nothing listens there any
// more), while raft still names that leader. A paused or cut off leader refuses nothing;
// its followers wait for the timeout as before.
//
// The election is called by handing this member's own raft a TimeoutNow, the request a
// leader sends the member it hands leadership to. Raft is safe whenever a member stands
// for election. The request also makes the other voters grant their vote although they
// still name a leader (until their own timeouts fire), and skips raft's pre-vote: a
// follower that alone finds both of a live leader's ports refusing it (a firewall that
// resets only its connections) can depose that leader, at the cost of an election.
// Survivors stand one after another, by rank in the membership, staggerOf apart (timed
// from the refusal of the leader's peer port, see probe), each only while it still
// follows and names no leader but the gone one (or none): a survivor whose log is behind
// stands first and loses, and the next one stands in a later term and wins.
type promptElection struct {
	n *Node
	// named is the leader raft names now, a new value each time raft names one (or none).
	named atomic.Pointer[namedLeader]

	mu       sync.Mutex
	judged   *namedLeader // the leadership an election is scheduled against
	probing  *namedLeader // the leadership whose raft port is being dialed now
	probed   *namedLeader // the leadership whose raft port last answered, and when
	probedAt time.Time
	timer    *time.Timer
}

type namedLeader struct{ id raft.ServerID }

// staggerOf is how long each surviving voter waits after the one ranked before it: long
// enough for that one to win (a vote's round trip and two stable-store writes). A raft
// port that answered is probed again no sooner than this per leadership.
func staggerOf(heartbeat time.Duration) time.Duration { return heartbeat / 8 }

func newPromptElection(n *Node) *promptElection { return &promptElection{n: n} }

// leaderNamed records that raft names leader (or none) now; Node's leader observer calls
// it as raft sets the leader.
func (p *promptElection) leaderNamed(leader raft.ServerID) {
	p.named.Store(&namedLeader{id: leader})
}

// refused is told that dialing leader's peer port was refused (forwarder.redial).
func (p *promptElection) refused(leader raft.ServerID) {
	lead, ok := p.current(leader)
	if !ok {
		return
	}
	// Every proposal while there is no stream wakes the dialer: a leadership already
	// judged or being probed, or whose raft port answered a moment ago, is not probed again.
	first := time.Now()
	p.mu.Lock()
	skip := p.judged == lead || p.probing == lead || (p.probed == lead && first.Sub(p.probedAt) < staggerOf(p.n.cfg.HeartbeatTimeout))
	if !skip {
		p.probing = lead
	}
	p.mu.Unlock()
	if !skip {
		go p.probe(lead, leader, first)
	}
}

// probeTries is how often probe dials the leader's raft port, probeGap apart, before it
// takes an answer for a leader that lives.
const probeTries = 4

func probeGap(heartbeat time.Duration) time.Duration { return staggerOf(heartbeat) / 8 }

// probe dials the raft port of the leader whose peer port refused this member at first,
// and schedules this member's stand if that port refuses too. The peer port closes first
// when a member stops, so a dying leader's raft port may still answer the first dial: it
// is dialed again a few times, probeGap apart, before the leader is taken to live. The
// stand is due rank staggers after first, not after the refusal: a survivor that took
// a gap or two longer to judge still stands before the next one (were it timed from its
// own verdict, the one ranked first and the one ranked second could stand together and
// split the vote, which costs a whole election timeout).
func (p *promptElection) probe(lead *namedLeader, leader raft.ServerID, first time.Time) {
	heartbeat := p.n.cfg.HeartbeatTimeout
	refused := false
	defer func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.probing == lead {
			p.probing = nil
		}
		if !refused {
			p.probed, p.probedAt = lead, time.Now()
		}
	}()
	rank, ok := p.rank(leader) // not ok: this member does not vote
	if !ok {
		return
	}
	peer, ok := p.n.peer(string(leader))
	if !ok {
		return
	}
	// The peer port may not be up yet on a member just started; its raft port listens
	// as long as its raft runs.
	for try := 0; !refused; try++ {
		if try > 0 {
			if try == probeTries || p.closed() {
				return
			}
			time.Sleep(probeGap(heartbeat))
			if _, ok := p.current(leader); !ok {
				return
			}
		}
		c, err := p.n.cfg.Network.Dial(peer.RaftAddr, time.Second)
		if err == nil {
			c.Close()
			continue
		}
		if !connRefused(err) {
			return
		}
		refused = true
	}
	delay := max(0, time.Until(first.Add(time.Duration(rank)*staggerOf(heartbeat))))
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.judged == lead {
		return
	}
	p.judged = lead
	p.n.cfg.Logger.Warn("the leader's ports refuse connections: standing for election",
		"leader", string(leader), "after", delay.Round(time.Millisecond))
	if p.timer != nil {
		p.timer.Stop()
	}
	p.timer = time.AfterFunc(delay, func() { p.stand(lead) })
}

// current returns raft's naming of leader if this member follows it now.
func (p *promptElection) current(leader raft.ServerID) (*namedLeader, bool) {
	named := p.named.Load()
	if named == nil || named.id != leader || leader == "" || p.n.raft.State() != raft.Follower {
		return nil, false
	}
	return named, true
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

// stand hands this member's raft a TimeoutNow if it still follows and knows no leader
// but the gone one.
func (p *promptElection) stand(gone *namedLeader) {
	if p.closed() {
		return
	}
	// Raft clears the leader it names whenever it changes state, as when another
	// survivor's vote request moves it to a later term: none named is still no leader.
	if named := p.named.Load(); (named != gone && named.id != "") || p.n.raft.State() != raft.Follower {
		return
	}
	self := p.n.cfg.self()
	req := &raft.TimeoutNowRequest{RPCHeader: raft.RPCHeader{
		ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(self.ID), Addr: []byte(self.RaftAddr),
	}}
	if err := p.n.trans.TimeoutNow(raft.ServerID(self.ID), raft.ServerAddress(self.RaftAddr), req, &raft.TimeoutNowResponse{}); err != nil && !p.closed() {
		p.n.cfg.Logger.Warn("cannot stand for election", "err", err)
	}
}

func (p *promptElection) closed() bool {
	select {
	case <-p.n.done:
		return true
	default:
		return false
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

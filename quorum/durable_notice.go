package quorum

import (
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// Durable notices: how a follower of a three-voter membership learns a commit without
// waiting for the leader to count it. The leader stores its batch while the batch
// travels (leader_log.go); when its fdatasync returns it tells each voting follower, on
// the peer stream, the (index, term) its log is durable up to. A follower whose own log
// holds that entry, durably and with that term, while its current term is that term,
// knows the entry is on two of the three voters' disks, both of which took it in that
// term: committed, by the rule raft's leader uses for its own term's entries (the
// package doc says why, and why a membership change in flight does not break it). It
// then applies up to it, as on a commit notice, without the round trip of its answer to
// the leader and the leader's commit, apply and commit notice: a member applies a write
// about when its own fdatasync returns.
//
// A follower reads only what its log store has stored (not the batch raft is writing, as
// commit notices may): a follower's store returns once its frame is durable, and an
// entry is readable only after that, so an entry read here is durable on this member.

// durableNotice is the durable point the leader sends on member's stream, if it is not
// the one sent last: only while it leads a membership of exactly three voters of which
// it and the member are two.
func (n *Node) durableNotice(member *atomic.Pointer[string], sent commitPoint) (commitPoint, bool) {
	id := member.Load()
	if id == nil || !n.IsLeader() {
		return commitPoint{}, false
	}
	p, ok := n.lead.durablePoint()
	// Only a point of the term it leads in now: the newest deferred batch may be from an
	// earlier time it led, whose entries a leader between could have replaced.
	if !ok || p == sent || p.term != n.raft.CurrentTerm() {
		return commitPoint{}, false
	}
	if !threeVoters(n.raft.GetConfiguration().Configuration(), n.cfg.ID, *id) {
		return commitPoint{}, false
	}
	n.lead.noticeTerm.Store(p.term)
	return p, true
}

// appliesOnItsOwn reports whether the member of a stream needs no commit notice for p:
// it was sent a durable notice at or past p in p's term, and it told this leader that it
// stored the entries up to p in that term. It then applies p on that notice once its
// own store returns, which it already did, so the notice would only cost a message on
// each side. A follower that has not answered for p yet (its fdatasync is slower than
// the other voters') still gets it: it may apply on it before its own store returns.
//
// Only while this member leads in p's term: a follower applies on a durable notice only
// while the notice's term is its current one, so once a newer term may have begun (this
// member no longer leads, or leads in a later term) the commit notice goes out as before
// instead of leaving the follower to wait for the next leader's news.
func (n *Node) appliesOnItsOwn(member *atomic.Pointer[string], durable, p commitPoint) bool {
	id := member.Load()
	if id == nil || durable.term != p.term || durable.index < p.index {
		return false
	}
	if !n.IsLeader() || n.raft.CurrentTerm() != p.term {
		return false
	}
	return n.lead.followers.holds(raft.ServerID(*id), p)
}

// threeVoters reports whether c has exactly three voters, a and b among them.
func threeVoters(c raft.Configuration, a, b string) bool {
	voters, found := 0, 0
	for _, s := range c.Servers {
		if s.Suffrage != raft.Voter {
			continue
		}
		voters++
		if id := string(s.ID); id == a || id == b {
			found++
		}
	}
	return voters == 3 && found == 2 && a != b
}

// leaderDurable takes a durable notice from the stream to the leader, on the stream's
// reader, and applies at once what it lets this member apply.
func (c *catchUp) leaderDurable(p commitPoint) {
	c.firstHeard.CompareAndSwap(0, p.index)
	c.mu.Lock()
	if p.term > c.durable.term || (p.term == c.durable.term && p.index > c.durable.index) {
		c.durable = p
		c.durableIndex.Store(p.index)
	}
	c.mu.Unlock()
	c.applyDurable()
	c.told()
}

// stored is told of every batch this member stored durably (as a follower), once its
// store returned; it wakes the loop if the leader's durable point is past what is
// applied.
func (c *catchUp) stored() {
	if c.durableIndex.Load() > c.fsm.appliedIndex.Load() {
		c.signal()
	}
}

// applyDurable applies up to the leader's durable point or this member's last stored
// entry, whichever is lower, if that entry is there with the notice's term and that term
// is this member's current term.
func (c *catchUp) applyDurable() {
	c.mu.Lock()
	p := c.durable
	c.mu.Unlock()
	if p.index == 0 || p.term != c.term() {
		return
	}
	idx := min(p.index, c.lastStored())
	if idx <= c.fsm.appliedIndex.Load() {
		return
	}
	// The term is checked again once the entry is read, under the apply lock: a member
	// whose term moved on meanwhile may hold it from a later leader (Figure 8).
	c.fsm.applyCommitted(c.durableLogs, idx, p.term, &c.fsm.durableApplied, func() bool { return c.term() == p.term })
}

package quorum

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Reads on a leader as fresh as a ZooKeeper leader's. A ZooKeeper leader applies a
// transaction as soon as a quorum has acknowledged it, before its COMMIT reaches the
// followers, so a client that got its answer from a follower and then reads on the leader
// sees its write. A raft leader learns of the same acknowledgement later: the follower's
// answer passes the transport's decoder, the pipeline's forwarder, raft's decoder, its
// commitment count, its leader loop and its FSM goroutine before the FSM applies the
// entry, and the writer's follower (which applies on the leader's durable notice and its
// own fdatasync) has often answered its client by then.
//
// So the leader notes each follower's answer as it comes off the wire (followerPoints,
// from pipeline.forward and contactTransport.AppendEntries), keeping the highest index of
// an entry the FSM is handed (a command or a configuration, never raft's no-ops and
// barriers, which it would wait for in vain) that enough voting followers hold in the
// leader's term to make a majority with the leader. A client's read on the leader first
// waits, for at most freshReadWait, until the FSM has applied up to that index, or up to
// what the leader's own log holds durably if that is lower. Waiting never makes a read
// wrong: it only delays it, and a point that raft commits late (an earlier term's entry,
// committed with the leader's no-op) costs at most freshReadWait. While nothing a majority
// stored is still to be applied (on a leader without writes) a read costs a few atomic
// loads.
//
// The same holds for whatever another member may already have answered its client for.
// A write's member answers once it applied the write, which it does on the leader's
// commit notice, or, with three voters, on the leader's durable notice and its own
// fdatasync (durable_notice.go). The other members get the same notices at about the
// same moment, but an fdatasync may end later on a shared disk, a notice may leave for
// the writer's member first, and a leader counts that member's answer a few hand-offs
// after it was sent: so a member could serve a read without a write whose client already
// had its answer, where a ZooKeeper follower applies the COMMIT that the writer's member
// gets at the same time. So a client's read also waits, for at most freshReadWait, for:
//
//   - on a follower or an observer, the newest commit notice, and the newest command of
//     its current term received from the leader (read_ahead.go): every command another
//     member may have applied, as nothing is applied anywhere before the leader sent it;
//   - on a leader that sent durable notices in its term, the newest command of the term
//     its log holds durably: a follower applies on a durable notice nothing past it.
//
// What a member has not yet received it cannot wait for: when the leader's messages for a
// write reach the writer's member first and this one late (a loaded machine), a read here
// may miss a write another follower already answered, as a ZooKeeper follower's read
// misses a COMMIT it has not yet got. Only sync makes another client's write certain.
//
// A member over freshReadWindow entries behind (catching up after a restart) does not
// wait, as waiting would not make it fresh. Raft's no-ops and barriers are never waited
// for (a member does not apply them on notices that follow no command).

// freshReadWait bounds how long a read on the leader waits for its apply to catch up with
// what a majority stored: the few goroutine hand-offs of raft's commit path, or, should a
// point be noted that raft commits late, no more than this.
const freshReadWait = 2 * time.Millisecond

// freshReadWindow is the most entries a read waits to see applied.
const freshReadWindow = 1024

// followerPoints is what each follower last said it stored, with the term of the leader
// that sent the entries: the entries of an AppendEntries the follower accepted are then in
// its log and durable (a follower stores before it answers).
type followerPoints struct {
	mu sync.Mutex
	at map[raft.ServerID]commitPoint
	// majority is the highest index, of the newest term noted, that enough voting
	// followers hold to make a majority with the leader; read without the lock.
	majority atomic.Pointer[commitPoint]
}

// note records that follower id accepted entries up to index from the leader (self) of
// term, and what that makes the followers' share of a majority of c's voters.
func (p *followerPoints) note(id raft.ServerID, term, index uint64, c raft.Configuration, self raft.ServerID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.at == nil {
		p.at = make(map[raft.ServerID]commitPoint)
	}
	if old, ok := p.at[id]; ok && (old.term > term || (old.term == term && old.index >= index)) {
		return // an answer overtaken by a later one, or one from an earlier leadership
	}
	p.at[id] = commitPoint{index: index, term: term}
	m := p.majorityOf(c, self, term)
	if cur := p.majority.Load(); cur == nil || term > cur.term || (term == cur.term && m > cur.index) {
		p.majority.Store(&commitPoint{index: m, term: term})
	}
}

// holds reports whether follower id said it stored the entries up to p.index in p.term.
func (p *followerPoints) holds(id raft.ServerID, pt commitPoint) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.at[id]
	return ok && at.term == pt.term && at.index >= pt.index
}

// majorityOf is the highest index that enough of c's voting followers hold in term to
// make a majority with the leader (self): the highest of two followers' points with
// three voters, the second highest of four with five. Under p.mu.
func (p *followerPoints) majorityOf(c raft.Configuration, self raft.ServerID, term uint64) uint64 {
	var held []uint64
	voters := 0
	for _, s := range c.Servers {
		if s.Suffrage != raft.Voter {
			continue
		}
		voters++
		if s.ID == self {
			continue
		}
		pt, ok := p.at[s.ID]
		if !ok || pt.term != term {
			pt.index = 0
		}
		held = append(held, pt.index)
	}
	need := voters / 2 // followers besides the leader in a majority
	if need == 0 || len(held) < need {
		return 0
	}
	slices.Sort(held)
	return held[len(held)-need]
}

// noteAccepted records a follower's answer to an AppendEntries (acceptedPoint).
func (l *leaderLog) noteAccepted(id raft.ServerID, req *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) {
	last := acceptedPoint(req, resp)
	r := l.raft.Load()
	if last == 0 || r == nil {
		return
	}
	l.followers.note(id, req.Term, last, r.GetConfiguration().Configuration(), l.self)
}

// acceptedPoint is the last entry the FSM is handed (a command or a configuration) that
// an answer says the follower stored, 0 when there is none: a refusal, an answer from a
// newer term, a heartbeat, a batch of no-ops and barriers only.
func acceptedPoint(req *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) uint64 {
	if !resp.Success || resp.Term > req.Term {
		return 0
	}
	for i := len(req.Entries) - 1; i >= 0; i-- {
		if t := req.Entries[i].Type; t == raft.LogCommand || t == raft.LogConfiguration {
			return req.Entries[i].Index
		}
	}
	return 0
}

// durableIndex is the last entry this member's log holds durably.
func (l *leaderLog) durableIndex(r *raft.Raft) uint64 {
	last := r.LastIndex() // before the pending frame is looked at: a later store is not counted
	if l.store == nil {
		return last
	}
	if from := l.store.UnsyncedFrom(); from != 0 && from <= last {
		return from - 1
	}
	return last
}

// FreshReadTarget is the index a client's read here must see applied first, 0 when
// there is none: on a leader, what a majority of the voters holds in its term (the
// followers' share noted from their answers, the leader's own durable log) or the
// followers may have applied on its durable notices; on a follower or an observer, what
// its notices and the leader's entries say another member may have applied. It is 0 on a
// standalone server.
func (n *Node) FreshReadTarget() uint64 {
	if n.lead == nil || n.raft == nil {
		return 0
	}
	through := n.FSM.through.Load()
	term := n.raft.CurrentTerm()
	q := n.catch.followerTarget(term)
	if q <= through {
		if q = n.lead.leaderTarget(term); q <= through || n.raft.State() != raft.Leader {
			return 0
		}
		if q = min(q, n.lead.durableIndex(n.raft)); q <= through {
			return 0
		}
	}
	if q-through > freshReadWindow {
		return 0
	}
	return q
}

// followerTarget is what a read on a follower waits for: the newest commit notice, and
// the newest command received from the leader of term (the member's current one). On
// a leader it is at most what it applied (it sends notices and entries in its term, it
// gets none).
func (c *catchUp) followerTarget(term uint64) uint64 {
	q := c.wantIndex.Load()
	if c.recv.cmdTerm.Load() == term {
		q = max(q, c.recv.lastCmd.Load())
	}
	return q
}

// leaderTarget is what a read on the leader of term waits for, before the leader's own
// durable point bounds it: what a majority of voters holds, and, if it sent durable
// notices in term, its newest command.
func (l *leaderLog) leaderTarget(term uint64) uint64 {
	var q uint64
	if m := l.followers.majority.Load(); m != nil && m.term == term {
		q = m.index
	}
	if l.noticeTerm.Load() == term {
		if c := l.storedCmd.Load(); c != nil && c.term == term {
			q = max(q, c.index)
		}
	}
	return q
}

// WaitFreshRead is called before a client's read: it waits (at most freshReadWait)
// until the FSM has applied FreshReadTarget, as a ZooKeeper leader has applied what a
// quorum acknowledged and a ZooKeeper follower applies a COMMIT when the writer's member
// does. It returns at once where FreshReadTarget is 0.
func (n *Node) WaitFreshRead() {
	if q := n.FreshReadTarget(); q != 0 {
		n.FSM.waitThrough(q, n.freshReadWait)
	}
}

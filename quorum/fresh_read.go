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
// stored is still to be applied (always on a follower, and on a leader without writes) a
// read costs two atomic loads.

// freshReadWait bounds how long a read on the leader waits for its apply to catch up with
// what a majority stored: the few goroutine hand-offs of raft's commit path, or, should a
// point be noted that raft commits late, no more than this.
const freshReadWait = 2 * time.Millisecond

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
// followers' share noted from their answers, the leader's own durable log) and its FSM
// has not applied yet. It is 0 on a follower, an observer and a standalone server.
func (n *Node) FreshReadTarget() uint64 {
	if n.lead == nil || n.raft == nil {
		return 0
	}
	m := n.lead.followers.majority.Load()
	if m == nil || m.index <= n.FSM.through.Load() {
		return 0
	}
	if n.raft.State() != raft.Leader || m.term != n.raft.CurrentTerm() {
		return 0
	}
	q := min(m.index, n.lead.durableIndex(n.raft))
	if q <= n.FSM.through.Load() {
		return 0
	}
	return q
}

// WaitFreshRead is called before a client's read: on a leader, it waits (at most
// freshReadWait) until the FSM has applied FreshReadTarget, as a ZooKeeper leader has
// applied what a quorum acknowledged. It returns at once where FreshReadTarget is 0.
func (n *Node) WaitFreshRead() {
	if q := n.FreshReadTarget(); q != 0 {
		n.FSM.waitThrough(q, n.freshReadWait)
	}
}

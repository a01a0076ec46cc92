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
// So the leader notes each follower's stored point as its answer comes off the wire
// (followerPoints, from pipeline.forward and contactTransport.AppendEntries), and a client
// read on the leader first waits, for at most freshReadWait, until the FSM has applied up
// to the highest index that a majority of the voters, the leader counted with its own
// durable point, holds in the leader's term. Waiting never makes a read wrong: it only
// delays it, and a point noted too high (raft's commit count comes later and is what
// decides) costs at most freshReadWait. Outside the window between a quorum's answer and
// the leader's apply, a read costs two atomic loads.

// freshReadWait bounds how long a read on the leader waits for its apply to catch up with
// what a majority stored: the few goroutine hand-offs of raft's commit path, or, should a
// point be noted that raft never commits (an entry of an earlier term), no more than this.
const freshReadWait = 2 * time.Millisecond

// followerPoints is what each follower last said it stored, with the term of the leader
// that sent the entries: the entries of an AppendEntries the follower accepted are then in
// its log and durable (a follower stores before it answers).
type followerPoints struct {
	mu sync.Mutex
	at map[raft.ServerID]commitPoint
	// newest is the highest point noted in the newest term noted, read without the lock.
	newest atomic.Pointer[commitPoint]
}

// note records that follower id accepted entries up to index from the leader of term.
func (p *followerPoints) note(id raft.ServerID, term, index uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.at == nil {
		p.at = make(map[raft.ServerID]commitPoint)
	}
	if old, ok := p.at[id]; ok && (old.term > term || (old.term == term && old.index >= index)) {
		return // an answer overtaken by a later one, or one from an earlier leadership
	}
	p.at[id] = commitPoint{index: index, term: term}
	if n := p.newest.Load(); n == nil || term > n.term || (term == n.term && index > n.index) {
		p.newest.Store(&commitPoint{index: index, term: term})
	}
}

// noteAccepted records a follower's answer to an AppendEntries that carried entries.
func (p *followerPoints) noteAccepted(id raft.ServerID, req *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) {
	if p == nil || !resp.Success || resp.Term > req.Term || len(req.Entries) == 0 {
		return
	}
	p.note(id, req.Term, req.Entries[len(req.Entries)-1].Index)
}

// quorumStored is the highest index that a majority of c's voters hold in term: the
// leader (self) with what its own log holds durably (own), each follower with what it
// last said it stored in that term, nothing for a follower not heard from in it.
func (p *followerPoints) quorumStored(c raft.Configuration, self raft.ServerID, own, term uint64) uint64 {
	var held []uint64
	p.mu.Lock()
	for _, s := range c.Servers {
		switch {
		case s.Suffrage != raft.Voter:
		case s.ID == self:
			held = append(held, own)
		default:
			pt, ok := p.at[s.ID]
			if !ok || pt.term != term {
				pt.index = 0
			}
			held = append(held, pt.index)
		}
	}
	p.mu.Unlock()
	if len(held) == 0 {
		return 0
	}
	slices.Sort(held)
	return held[(len(held)-1)/2] // the majority's lowest: 2nd of 3, 3rd of 5 from the top
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

// WaitFreshRead is called before a client's read: on a leader, it waits (at most
// freshReadWait) until the FSM has applied what a majority of the voters has stored in
// this leader's term, as a ZooKeeper leader has applied what a quorum acknowledged. It
// returns at once on a follower, an observer, a standalone server, and whenever nothing
// stored is still to be applied.
func (n *Node) WaitFreshRead() {
	if n.lead == nil || n.raft == nil {
		return
	}
	top := n.lead.followers.newest.Load()
	if top == nil || top.index <= n.FSM.through.Load() {
		return
	}
	if n.raft.State() != raft.Leader || top.term != n.raft.CurrentTerm() {
		return
	}
	own := n.lead.durableIndex(n.raft)
	q := n.lead.followers.quorumStored(n.raft.GetConfiguration().Configuration(), raft.ServerID(n.cfg.ID), own, top.term)
	if q > n.FSM.through.Load() {
		n.FSM.waitThrough(q, n.freshReadWait)
	}
}

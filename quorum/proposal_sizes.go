package quorum

import (
	"sync/atomic"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/jute"
)

// ProposalSizes are the sizes in bytes of the entries this member handed to Raft while
// it led, in its current leadership (or since ResetProposalSizes): the last, the
// smallest and the largest, each -1 before the first. ZooKeeper's leader keeps the same
// figures of its proposals (Leader.proposalStats, a BufferStats: -1 until the first,
// new with every leadership, reset by srst) and reports them in mntr
// (zk_last/min/max_proposal_size) and in stat and srvr ("Proposal sizes
// last/min/max"). The bytes are zkraft's log entries (type byte, header, request), not
// ZooKeeper's serialized txns, so the figures are of the same kind, not equal.
type ProposalSizes struct {
	Last, Min, Max int64
}

// proposalSizes keeps ProposalSizes for every writer of proposals without a lock:
// each proposal updates last, and min and max only when it moves them.
type proposalSizes struct {
	last, min, max atomic.Int64
}

func newProposalSizes() *proposalSizes {
	p := &proposalSizes{}
	p.reset()
	return p
}

func (p *proposalSizes) reset() {
	p.last.Store(-1)
	p.min.Store(-1)
	p.max.Store(-1)
}

func (p *proposalSizes) observe(n int64) {
	p.last.Store(n)
	for cur := p.min.Load(); (cur == -1 || n < cur) && !p.min.CompareAndSwap(cur, n); cur = p.min.Load() {
	}
	for cur := p.max.Load(); n > cur && !p.max.CompareAndSwap(cur, n); cur = p.max.Load() {
	}
}

func (p *proposalSizes) get() ProposalSizes {
	return ProposalSizes{Last: p.last.Load(), Min: p.min.Load(), Max: p.max.Load()}
}

// applyEntry hands an entry's bytes to Raft, counting their size unless the entry is a
// sync: every entry this member proposes as leader goes through here (but for the
// initial membership, proposeFirstMembership, and the enforceQuota setting,
// writeEnforceQuota, which have no counterpart in ZooKeeper), and ZooKeeper's leader
// counts the txns it proposes, which a sync is not.
func (n *Node) applyEntry(op int32, b []byte) raft.ApplyFuture {
	if op != jute.OpSync {
		n.proposalSizes.observe(int64(len(b)))
	}
	if f := n.cfg.Figures.Proposed; f != nil && txnOp(op) && n.IsClustered() {
		f()
	}
	return n.raft.Apply(b, 0)
}

// ProposalSizes reports the sizes of the entries this member proposed as leader.
func (n *Node) ProposalSizes() ProposalSizes { return n.proposalSizes.get() }

// ResetProposalSizes starts the figures again (srst).
func (n *Node) ResetProposalSizes() { n.proposalSizes.reset() }

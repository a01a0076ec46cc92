package quorum

import (
	"context"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
)

// membershipLoop is the leader's duty for the cluster's membership. /zookeeper/config
// is the membership as the log decided it (a reconfig entry changes it on every server
// in log order); this loop makes Raft's own configuration follow it: it adds voters and
// observers and demotes servers, one change at a time (reconcile). A leader whose state
// machine holds no membership also writes the configured members into /zookeeper/config,
// if the write it proposed first in its term (membershipFirst) did not.
func (d *duties) membershipLoop(ctx context.Context) {
	n := d.n
	if f := n.proposeFirstMembership(); f != nil {
		if err := f.Error(); err != nil {
			n.cfg.Logger.Warn("writing the initial membership failed", "err", err)
		}
	}
	for {
		if err := d.reconcile(); err != nil {
			n.cfg.Logger.Warn("membership change failed; retrying", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(n.cfg.HeartbeatTimeout):
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-n.membersChanged:
		}
	}
}

// membershipFirst makes the first membership (proposeFirstMembership) the first command
// this member appends in each term it leads (raft's own no-op may come before it):
// watchLeadership calls it on hearing of the leadership, and the two paths that append a
// client's write as leader (send, and a follower's stream in servePeer) call it before
// they append, since a write that waited for a leader can reach them before
// watchLeadership runs. (Not inside applyEntry: a reconfig's awaitMembers, which runs
// before that, waits on this term's proposal.) Once per term; the mutex holds a caller's
// append until the proposal is made, so no command of the term precedes it.
func (n *Node) membershipFirst() {
	if !n.IsClustered() {
		return
	}
	term := n.raft.CurrentTerm()
	if n.membershipTerm.Load() == term {
		return
	}
	n.membershipMu.Lock()
	defer n.membershipMu.Unlock()
	if n.membershipTerm.Load() == term || n.raft.State() != raft.Leader || n.raft.CurrentTerm() != term {
		return
	}
	n.proposeFirstMembership()
	n.membershipTerm.Store(term)
}

// proposeFirstMembership proposes the configured members as /zookeeper/config if this
// member's state machine holds no membership, and returns the proposal (nil if none).
// A new cluster's first leader proposes it before any other command of its term
// (membershipFirst), so sessions created and writes made under that leader see the
// configuration, as on a ZooKeeper ensemble, which has it from the start. A leader whose
// state machine has not yet applied an earlier term's membership (after a restart, until
// a snapshot holds it) proposes it again, one entry that applySetConfig answers
// NodeExists, changing nothing.
func (n *Node) proposeFirstMembership() raft.ApplyFuture {
	if !n.IsClustered() {
		return nil
	}
	if _, ok := n.FSM.Members(); ok {
		return nil
	}
	text := Membership{Peers: n.cfg.Peers}
	text.sort()
	body := []byte(text.String()) // the version line is replaced when applied
	// Not counted in ProposalSizes: ZooKeeper proposes nothing like it.
	f := n.raft.Apply((&Entry{Op: OpSetConfig, Time: time.Now().UnixMilli(),
		Req: &jute.SetDataRequest{Path: datatree.ConfigPath, Data: body, Version: -1}}).Marshal(), 0)
	n.firstMembership.Store(&f)
	return f
}

// reconcile brings Raft's configuration to the membership in /zookeeper/config.
// Additions go first, so a replaced majority never drops below a quorum. A member the
// membership no longer lists is not dropped from Raft's configuration but demoted to a
// non-voter: as ZooKeeper's removed server, it goes on following the leader as a
// "non-voting follower" and serving its clients, until it is stopped or added back. The
// leader demotes itself last (it steps down once that commits).
func (d *duties) reconcile() error {
	n := d.n
	want, ok := n.FSM.Members()
	if !ok {
		return nil
	}
	fut := n.raft.GetConfiguration()
	if err := fut.Error(); err != nil {
		return err
	}
	have := map[raft.ServerID]raft.Server{}
	for _, s := range fut.Configuration().Servers {
		have[s.ID] = s
	}
	const wait = 10 * time.Second
	// A removed member whose Raft address a listed server now has (a replacement on the
	// same host and port) leaves Raft's configuration first: raft refuses two servers
	// at one address, and the replacement would otherwise never be added.
	self := raft.ServerID(n.cfg.ID)
	for id, s := range have {
		if _, listed := want.Peer(string(id)); listed || id == self {
			continue
		}
		for _, p := range want.Peers {
			if raft.ServerAddress(p.RaftAddr) != s.Address {
				continue
			}
			if err := n.raft.RemoveServer(id, 0, wait).Error(); err != nil {
				return err
			}
			delete(have, id)
			n.cfg.Logger.Info("membership: removed server dropped; its address is taken", "server", string(id), "by", p.ID)
			break
		}
	}
	for _, p := range want.Peers {
		id, addr := raft.ServerID(p.ID), raft.ServerAddress(p.RaftAddr)
		cur, in := have[id]
		switch {
		case p.Observer && (!in || cur.Address != addr):
			if err := n.raft.AddNonvoter(id, addr, 0, wait).Error(); err != nil {
				return err
			}
		case p.Observer && cur.Suffrage == raft.Voter:
			if err := n.raft.DemoteVoter(id, 0, wait).Error(); err != nil {
				return err
			}
		case !p.Observer && (!in || cur.Address != addr || cur.Suffrage != raft.Voter):
			if err := n.raft.AddVoter(id, addr, 0, wait).Error(); err != nil {
				return err
			}
		default:
			continue
		}
		n.cfg.Logger.Info("membership: server added or changed", "server", p.ID, "observer", p.Observer)
	}
	demoteSelf := false
	for id, s := range have {
		if _, ok := want.Peer(string(id)); ok || s.Suffrage != raft.Voter {
			continue
		}
		if id == self {
			demoteSelf = true
			continue
		}
		if err := n.raft.DemoteVoter(id, 0, wait).Error(); err != nil {
			return err
		}
		n.cfg.Logger.Info("membership: server removed; it follows as a non-voter", "server", string(id))
	}
	if demoteSelf {
		n.cfg.Logger.Info("membership: this leader was removed; stepping down to follow as a non-voter")
		return n.raft.DemoteVoter(self, 0, wait).Error()
	}
	return nil
}

// MembershipApplied reports whether Raft's configuration, as this server knows it,
// matches /zookeeper/config: a reconfig's answer waits for it.
func (n *Node) MembershipApplied() bool {
	want, ok := n.FSM.Members()
	if !ok {
		return true
	}
	fut := n.raft.GetConfiguration()
	if fut.Error() != nil {
		return false
	}
	servers := fut.Configuration().Servers
	listed := 0
	for _, s := range servers {
		p, ok := want.Peer(string(s.ID))
		switch {
		case !ok && s.Suffrage == raft.Voter:
			return false // removed, not yet demoted
		case !ok:
			continue // a removed member following as a non-voter
		case (s.Suffrage == raft.Voter) == p.Observer || string(s.Address) != p.RaftAddr:
			return false
		}
		listed++
	}
	return listed == len(want.Peers)
}

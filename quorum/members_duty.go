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
//
// A removed member that stops answering is dropped from Raft's configuration
// (forgetRemoved); this leader remembers it for the rest of its term and takes it back
// as a non-voter once it answers again (readmit).
func (d *duties) membershipLoop(ctx context.Context) {
	n := d.n
	leading := time.Now() // what this server saw of its peers before it led does not count
	if f := n.proposeFirstMembership(); f != nil {
		if err := f.Error(); err != nil {
			n.cfg.Logger.Warn("writing the initial membership failed", "err", err)
		}
	}
	forgotten := map[raft.ServerID]raft.ServerAddress{}
	for {
		removed, err := d.reconcile(leading, forgotten)
		if err != nil {
			n.cfg.Logger.Warn("membership change failed; retrying", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(n.cfg.HeartbeatTimeout):
			}
			continue
		}
		// While a removed member follows as a non-voter, look again now and then: it is
		// forgotten once it has been unreachable for the grace (forgetRemoved), and one
		// forgotten is taken back once it answers (readmit).
		var again <-chan time.Time
		if removed || len(forgotten) > 0 {
			again = time.After(max(n.forgetRemovedAfter()/2, 50*time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return
		case <-n.membersChanged:
		case <-again:
		}
	}
}

// forgetRemovedAfter is how long a removed member, following as a non-voter, may refuse
// connections (its process is gone) before the leader drops it from Raft's
// configuration: the sync window (syncLimit ticks, after which a ZooKeeper leader drops
// a learner that stopped answering), at least two heartbeat timeouts. A member that is
// unreachable otherwise (timeouts: a cut network, a paused process, a host that is down)
// is dropped only after forgetUnreachableAfter. Dropped, it comes back only if it was
// dropped for refusals and while the leader that dropped it leads (readmit), so a blip
// must not do it.
func (n *Node) forgetRemovedAfter() time.Duration {
	return max(n.syncWindow(), 2*n.cfg.HeartbeatTimeout)
}

// forgetUnreachableAfter: see forgetRemovedAfter.
const forgetUnreachableAfter = 10 * time.Minute

// reach is the transport's record of which peers answer (nil on other transports).
func (n *Node) reach() *reachability {
	if ct, ok := n.trans.(*contactTransport); ok {
		return ct.reach
	}
	return nil
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
// "non-voting follower" and serving its clients, until it is stopped (then, unreachable
// for forgetRemovedAfter, it is dropped, as a ZooKeeper leader forgets a learner that
// went silent) or added back. The leader demotes itself last (it steps down once that
// commits). removed reports whether a removed member still follows as a non-voter.
func (d *duties) reconcile(leading time.Time, forgotten map[raft.ServerID]raft.ServerAddress) (removed bool, err error) {
	n := d.n
	want, ok := n.FSM.Members()
	if !ok {
		return false, nil
	}
	fut := n.raft.GetConfiguration()
	if err := fut.Error(); err != nil {
		return false, err
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
				return false, err
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
				return false, err
			}
		case p.Observer && cur.Suffrage == raft.Voter:
			if err := n.raft.DemoteVoter(id, 0, wait).Error(); err != nil {
				return false, err
			}
		case !p.Observer && (!in || cur.Address != addr || cur.Suffrage != raft.Voter):
			if err := n.raft.AddVoter(id, addr, 0, wait).Error(); err != nil {
				return false, err
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
			return false, err
		}
		n.cfg.Logger.Info("membership: server removed; it follows as a non-voter", "server", string(id))
		removed = true
	}
	if demoteSelf {
		n.cfg.Logger.Info("membership: this leader was removed; stepping down to follow as a non-voter")
		return false, n.raft.DemoteVoter(self, 0, wait).Error()
	}
	// Those forgotten in an earlier look are dialled before this look forgets more.
	if err := d.readmit(want, have, forgotten); err != nil {
		return true, err
	}
	left, err := d.forgetRemoved(want, have, leading, forgotten)
	return removed || left, err
}

// readmit takes back, as non-voters, the members forgetRemoved dropped for refusing
// connections (their process was gone) whose Raft port accepts a connection again (it
// was started again), as a ZooKeeper learner a reconfig removed reconnects as a
// non-voting follower whenever it runs. A stopped one costs a refused dial per look, not
// two membership changes. A member dropped after timeouts only (a cut, a paused process,
// a host that is down) is not in forgotten: a paused process's port still accepts
// connections, and taking it back would only drop it again ten minutes later. One no
// longer to take back (added again by a reconfig, or its address taken by a listed
// server) is dropped from forgotten.
func (d *duties) readmit(want Membership, have map[raft.ServerID]raft.Server, forgotten map[raft.ServerID]raft.ServerAddress) error {
	n := d.n
	for id, addr := range forgotten {
		_, listed := want.Peer(string(id))
		_, in := have[id]
		taken := false
		for _, p := range want.Peers {
			taken = taken || raft.ServerAddress(p.RaftAddr) == addr
		}
		if listed || in || taken {
			delete(forgotten, id)
			continue
		}
		// A short bound: a host that is down costs this loop at most that per look.
		c, err := n.cfg.Network.Dial(string(addr), max(n.cfg.HeartbeatTimeout/4, 100*time.Millisecond))
		if err != nil {
			continue
		}
		c.Close()
		if r := n.reach(); r != nil {
			r.answered(id) // its outage is over; it is judged afresh from here
		}
		if err := n.raft.AddNonvoter(id, addr, 0, 10*time.Second).Error(); err != nil {
			return err
		}
		delete(forgotten, id)
		n.cfg.Logger.Info("membership: a forgotten removed server answers again; it follows as a non-voter", "server", string(id))
	}
	return nil
}

// forgetRemoved drops from Raft's configuration each removed member (a non-voter the
// membership does not list) that has refused this leader's connections for
// forgetRemovedAfter, or been unreachable for forgetUnreachableAfter, and reports
// whether one is left following. Each one dropped for refusals goes into forgotten
// (readmit).
func (d *duties) forgetRemoved(want Membership, have map[raft.ServerID]raft.Server, leading time.Time, forgotten map[raft.ServerID]raft.ServerAddress) (left bool, err error) {
	n := d.n
	r := n.reach()
	for id, s := range have {
		if _, listed := want.Peer(string(id)); listed || s.Suffrage != raft.Nonvoter || id == raft.ServerID(n.cfg.ID) {
			continue
		}
		var down, refused time.Duration
		if r != nil {
			down, refused = r.outageSince(id, leading)
		}
		if refused < n.forgetRemovedAfter() && down < forgetUnreachableAfter {
			left = true
			continue
		}
		if err := n.raft.RemoveServer(id, 0, 10*time.Second).Error(); err != nil {
			return true, err
		}
		delete(have, id)
		if refused >= n.forgetRemovedAfter() {
			forgotten[id] = s.Address
		}
		n.cfg.Logger.Info("membership: a removed server that stopped answering is forgotten", "server", string(id),
			"down_for", down.Round(time.Millisecond), "refused_for", refused.Round(time.Millisecond))
	}
	return left, nil
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

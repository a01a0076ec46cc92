package quorum

import (
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
)

// OpReconfigNoQuorum is zkraft's own op: a reconfig the leader found no synced quorum
// for in the membership it asks for. Whether members are connected is the leader's
// judgement at proposal time, not state the log holds, so the leader writes its verdict
// into the entry (as it writes its clock) and every server answers alike. The body is
// the client's ReconfigRequest. A server older than this op panics on it: finish a
// rolling upgrade before using reconfig.
const OpReconfigNoQuorum int32 = -102

// judgeReconfig is run by the leader on a reconfig entry before it enters the log. If
// the version and arguments are fine by the membership now (else Apply refuses them)
// but fewer than a majority of the new membership's voters are this leader or members
// that answered it within the last two ticks, the entry becomes OpReconfigNoQuorum.
// ZooKeeper's leader asks the same (Leader.isQuorumSynced), so a reconfig that would
// leave the cluster without a working quorum is refused instead of committed. Unlike
// ZooKeeper's, it does not count new servers: they are not heartbeated before the
// reconfig adds them, so a change whose quorum rests on them is refused.
func (n *Node) judgeReconfig(e *Entry) {
	if e.Op != jute.OpReconfig {
		return
	}
	cur, ok := n.FSM.Members()
	if !ok {
		return
	}
	r := e.Req.(*jute.ReconfigRequest)
	if r.CurConfigId != -1 && r.CurConfigId != cur.Version {
		return
	}
	next, err := cur.reconfigure(r.JoiningServers, r.LeavingServers, r.NewMembers)
	if err != nil {
		return
	}
	synced := 0
	recent := time.Now().Add(-2 * n.cfg.TickTime)
	for _, p := range next.Peers {
		if !p.Observer && (p.ID == n.cfg.ID || n.answeredSince(p.ID, recent)) {
			synced++
		}
	}
	if 2*synced <= next.Voters() {
		e.Op = OpReconfigNoQuorum
	}
}

// applyReconfig is ZooKeeper's reconfig as the leader prepares and every server applies
// it, with the checks in PrepRequestProcessor's order: the session, a configuration to
// change, the expected config version, the new membership itself, the leader's verdict
// on its quorum (OpReconfigNoQuorum), and only then WRITE on /zookeeper/config (only a
// super user has it by default). So a caller without that right still learns what is
// wrong with its request, as from ZooKeeper. The reply is the new configuration and the
// node's stat.
func (f *FSM) applyReconfig(zxid int64, e *Entry) (*Result, []datatree.Event) {
	if code := f.checkSession(e); code != jute.OK {
		return &Result{Err: code}, nil
	}
	cur, ok := f.Members()
	if !ok {
		return &Result{Err: jute.ErrReconfigInProgress}, nil
	}
	r := e.Req.(*jute.ReconfigRequest)
	if r.CurConfigId != -1 && r.CurConfigId != cur.Version {
		return &Result{Err: jute.ErrBadVersion}, nil
	}
	next, err := cur.reconfigure(r.JoiningServers, r.LeavingServers, r.NewMembers)
	if err != nil {
		return &Result{Err: jute.ErrBadArguments}, nil
	}
	if e.Op == OpReconfigNoQuorum {
		return &Result{Err: jute.ErrNewConfigNoQuorum}, nil
	}
	if code := f.tree.CheckACL(datatree.ConfigPath, jute.PermWrite, f.txn(zxid, e).Caller); code != jute.OK {
		return &Result{Err: code}, nil
	}
	st, events := f.setMembers(zxid, e, next)
	data, _, _ := f.tree.Get(datatree.ConfigPath)
	return &Result{Resp: &jute.GetDataResponse{Data: data, Stat: st}}, events
}

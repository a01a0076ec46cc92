package quorum

import (
	"sync"
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

// OpReconfigInProgress is zkraft's own op: a reconfig the leader received while an
// earlier one it let through was not yet applied (ZooKeeper's leader compares its last
// proposed configuration with its committed one). Every server answers
// ReconfigInProgress, after the session check. The body is the client's ReconfigRequest;
// a server older than this op panics on it, as on OpReconfigNoQuorum.
const OpReconfigInProgress int32 = -104

// reconfigKey names a reconfig entry: the (Origin, Conn, Seq) of a client's write.
type reconfigKey struct {
	origin    string
	conn, seq uint64
}

func keyOf(e *Entry) reconfigKey { return reconfigKey{e.Origin, e.Conn, e.Seq} }

// pendingReconfig orders a leader's judgements of reconfigs: term is the one it led in
// when it last let one through (FSM.pendingReconfig names that one until it is applied);
// a later term's leader has let nothing through yet (the entries of earlier terms are
// applied before it serves).
type pendingReconfig struct {
	mu   sync.Mutex
	term uint64
}

// judgeReconfig is run by the leader on a reconfig entry before it enters the log. If
// the version and arguments are fine by the membership now (else Apply refuses them)
// but fewer than a majority of the new membership's voters are this leader or members
// that answered it within the sync window (syncLimit ticks, Config.SyncWindow) and did
// not refuse its last connection since, the entry becomes OpReconfigNoQuorum.
// ZooKeeper's leader asks the same (Leader.isQuorumSynced), so a reconfig that would
// leave the cluster without a working quorum is refused instead of committed. Unlike
// ZooKeeper's, it does not count new servers: they are not heartbeated before the
// reconfig adds them, so a change whose quorum rests on them is refused.
//
// While another reconfig it let through in this term is not yet applied here, the entry
// becomes OpReconfigInProgress instead, before any other check, as in ZooKeeper's
// PrepRequestProcessor. The two checks and the record of the one let through are one
// step under the pending lock, so of two reconfigs raced by two clients one proceeds.
// The one let through ends when it is applied here, whatever Apply answers it (its ACL
// is checked again there, and a reconfig from an earlier term may have changed the
// version).
func (n *Node) judgeReconfig(e *Entry, term uint64) {
	if e.Op != jute.OpReconfig {
		return
	}
	p := &n.reconfig
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.term == term && n.FSM.pendingReconfig.Load() != nil {
		e.Op = OpReconfigInProgress
		return
	}
	if n.judgeQuorum(e) && n.FSM.wouldReconfigure(e) {
		k := keyOf(e)
		p.term = term
		n.FSM.pendingReconfig.Store(&k)
	}
}

// awaitMembers holds a reconfig this leader is about to judge while the membership it
// proposed first in its term (membershipFirst) is still on its way: a reconfig
// judged before that entry is applied would find no membership and be answered
// ReconfigInProgress, where a ZooKeeper ensemble has its configuration from the start.
// It waits on that proposal's future only, so the wait ends when the entry is applied or
// the proposal fails (raft fails it when leadership is lost), at most ten heartbeat
// timeouts, or when the member stops; with no such proposal in flight (a membership that
// is none for another reason) it does not wait. Called where the entry is judged and
// appended, in its connection's order, so the writes behind it wait too.
func (n *Node) awaitMembers(e *Entry) {
	if e.Op != jute.OpReconfig {
		return
	}
	f := n.firstMembership.Load()
	if f == nil {
		return
	}
	if _, ok := n.FSM.Members(); ok {
		return
	}
	done := make(chan struct{})
	go func() {
		(*f).Error()
		close(done)
	}()
	t := time.NewTimer(10 * n.cfg.HeartbeatTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-n.stopping:
	}
}

// judgeQuorum marks e OpReconfigNoQuorum if its new voters hold no quorum of members
// that answered lately, and says whether e is still a reconfig to apply.
func (n *Node) judgeQuorum(e *Entry) bool {
	cur, ok := n.FSM.Members()
	if !ok {
		return false
	}
	r := e.Req.(*jute.ReconfigRequest)
	if r.CurConfigId != -1 && r.CurConfigId != cur.Version {
		return false
	}
	next, err := cur.reconfigure(r.JoiningServers, r.LeavingServers, r.NewMembers)
	if err != nil {
		return false
	}
	synced := 0
	recent := time.Now().Add(-n.syncWindow())
	for _, p := range next.Peers {
		if !p.Observer && (p.ID == n.cfg.ID || n.answeredSince(p.ID, recent)) {
			synced++
		}
	}
	if 2*synced <= next.Voters() {
		e.Op = OpReconfigNoQuorum
		return false
	}
	return true
}

// applyReconfig is ZooKeeper's reconfig as the leader prepares and every server applies
// it, with the checks in PrepRequestProcessor's order: the session, a configuration to
// change, the expected config version, the new membership itself, the leader's verdict
// on its quorum (OpReconfigNoQuorum), and only then WRITE on /zookeeper/config (only a
// super user has it by default). So a caller without that right still learns what is
// wrong with its request, as from ZooKeeper. The reply is the new configuration and the
// node's stat.
func (f *FSM) applyReconfig(zxid int64, e *Entry) (*Result, []datatree.Event) {
	if k := f.pendingReconfig.Load(); k != nil && *k == keyOf(e) {
		f.pendingReconfig.CompareAndSwap(k, nil)
	}
	if code := f.checkSession(e); code != jute.OK {
		return &Result{Err: code}, nil
	}
	if e.Op == OpReconfigInProgress {
		return &Result{Err: jute.ErrReconfigInProgress}, nil
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

// wouldReconfigure says whether e, a reconfig, may change the membership when applied:
// its caller may write /zookeeper/config now. Only a guess (the ACL may change before e
// is applied); it keeps a reconfig that will be refused NoAuth from holding others off.
func (f *FSM) wouldReconfigure(e *Entry) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.tree.CheckACL(datatree.ConfigPath, jute.PermWrite, f.txn(0, e).Caller) == jute.OK
}

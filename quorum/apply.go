package quorum

import (
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
)

// The apply path. Raft hands the FSM its committed entries in batches (ApplyBatch, as
// raft.BatchingFSM; Apply is a batch of one), and a commit notice lets a member apply
// a run of its own log ahead of raft (applyCommitted). Both come to applyRun, under
// applyMu, which takes the per-batch costs once a run: the commit point published to
// the members, the tree's write lock (once per applyHold entries), the wake-up of the
// zxid waits. Per entry there is the decode, the handler, the entry's watch events and
// the news of it (applied).

// applyHold bounds how many entries one hold of the tree's write lock applies, so a
// read waits for at most that many, even while a member catches up on a long log.
const applyHold = 64

// Apply applies one committed entry (raft.FSM); see ApplyBatch.
func (f *FSM) Apply(l *raft.Log) interface{} {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch applies committed entries in log order (raft.BatchingFSM) and returns
// each one's response: a *Result for a command, nil for anything else. Raft passes
// commands and configuration changes and leaves out its no-ops and barriers, so the
// indexes may have gaps. Entries a commit notice let this member apply already are not
// applied again: each returns the result kept for it. An entry that cannot be decoded
// panics: the servers must not diverge. ZooKeeper-level failures are in the Result.
func (f *FSM) ApplyBatch(logs []*raft.Log) []interface{} {
	out := make([]interface{}, len(logs))
	if f.waitDurable != nil && len(logs) > 0 {
		// A leader's batch may be committed before its own copy is durable (leaderLog).
		if err := f.waitDurable(logs[len(logs)-1].Index); err != nil {
			panic(fmt.Sprintf("quorum: entries up to %d cannot be made durable on this member, stopping: %v", logs[len(logs)-1].Index, err))
		}
	}
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	applied := f.appliedIndex.Load()
	fresh := 0
	for ; fresh < len(logs) && logs[fresh].Index <= applied; fresh++ {
		if r := f.earlyResult(logs[fresh].Index); r != nil {
			out[fresh] = r
		}
	}
	if fresh < len(logs) {
		f.applyRun(logs[fresh:], out[fresh:])
	}
	return out
}

// applyRun applies logs, the entries that follow appliedIndex, in order, and sets the
// *Result of each command in out (leaving the other entries' nil); under applyMu.
func (f *FSM) applyRun(logs []*raft.Log, out []interface{}) {
	es := make([]*Entry, len(logs))
	var last *raft.Log // the last command
	size := 0          // the commands' bytes, for snapSizeLimitInKb
	for i, l := range logs {
		if l.Type != raft.LogCommand {
			continue
		}
		e, err := UnmarshalEntry(l.Data)
		if err != nil {
			panic(fmt.Sprintf("quorum: log entry %d: %v", l.Index, err))
		}
		es[i], last = e, l
		size += len(l.Data)
	}
	end := logs[len(logs)-1].Index
	f.appliedIndex.Store(end)
	f.snapBytes.add(size)
	if f.replay != nil && f.replay.applied(logs, es, f.replayed) {
		f.replay = nil
	}
	if last == nil {
		f.appliedThrough(end)
		return
	}
	// The entries are committed: in a cluster the members hear of them before they are
	// applied here, as ZooKeeper's leader sends COMMIT before it applies.
	if f.commitNoticed != nil {
		f.committed.Store(&commitPoint{index: last.Index, term: last.Term})
		f.commitNoticed()
	}
	for lo := 0; lo < len(logs); lo += applyHold {
		hi := min(lo+applyHold, len(logs))
		f.applyHeld(logs[lo:hi], es[lo:hi], out[lo:hi])
	}
	f.appliedThrough(end)
}

// appliedThrough publishes that every entry up to index is applied, and wakes the waits
// that satisfies (waitThrough; a zxid is the index of its command, so WaitApplied's too).
func (f *FSM) appliedThrough(index uint64) {
	f.through.Store(index)
	f.zxidWaits.release(int64(index))
}

// applyHeld applies the decoded commands es (nil for the entries of logs that are no
// commands) under one hold of the tree's write lock, puts their results in out, then
// tells whoever waits for them.
func (f *FSM) applyHeld(logs []*raft.Log, es []*Entry, out []interface{}) {
	var zxid int64
	var role Role
	var now int64 // ms
	if f.committedTxn != nil {
		role, now = f.role(), time.Now().UnixMilli()
	}
	f.mu.Lock()
	for i, e := range es {
		if e == nil {
			continue
		}
		if f.committedTxn != nil && txnOp(e.Op) && logs[i].Index > f.replayed {
			f.committedTxn(role, now-e.Time)
		}
		zxid = int64(logs[i].Index)
		var (
			r      *Result
			events []datatree.Event
		)
		if f.inOrder(e) {
			r, events = f.handlers[e.Op](zxid, e)
		} else {
			r = &Result{Err: ErrOutOfOrder}
		}
		r.Zxid = zxid
		out[i] = r
		f.lastZxid.Store(zxid) // before its events, so no reply after them carries less
		for _, ev := range events {
			f.Watches.Trigger(ev.Type, ev.Path, zxid, ev.ACL, f.mayRead)
		}
	}
	f.mu.Unlock()
	if zxid == 0 {
		return
	}
	f.zxidWaits.release(zxid)
	for i, e := range es {
		if e != nil {
			f.applied(e, out[i].(*Result))
		}
	}
}

// applied passes on the news of an applied entry: to the member's own forwarded
// proposal that waits for it, the leader's expiry tracker, and the server.
func (f *FSM) applied(e *Entry, res *Result) {
	if f.self != "" && e.Origin == f.self && e.Seq != 0 { // a proposal this member forwarded
		if w, ok := f.waiters.take(waitKey{conn: e.Conn, seq: e.Seq}); ok {
			w.complete(res, nil)
		}
	}
	if res.Err != jute.OK {
		return
	}
	if f.sessionsChanged != nil {
		switch e.Op {
		case jute.OpCreateSession:
			f.sessionsChanged(e.Session, e.Req.(*SessionRequest).Timeout, true)
		case jute.OpCloseSession:
			f.sessionsChanged(e.Session, 0, false)
		}
	}
	switch {
	case e.Op == jute.OpCloseSession && f.OnSessionClosed != nil:
		f.OnSessionClosed(e.Session, res.Ephemerals)
	case e.Op == OpMoveSession && f.OnSessionMoved != nil:
		f.OnSessionMoved(e.Session, e.Origin)
	case (e.Op == OpSetConfig || e.Op == jute.OpReconfig) && f.membersChanged != nil:
		f.membersChanged()
	}
}

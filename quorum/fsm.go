package quorum

import (
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/session"
	"github.com/zkraft/zkraft/watch"
)

// Result is what applying one entry returns to the server that waits for it.
type Result struct {
	Zxid int64
	Err  jute.Code
	Resp jute.Record
	// Ephemerals are the nodes a closeSession deleted (for OnSessionClosed).
	Ephemerals []string
}

// Caller is implemented by watchers that have an identity: a watch event is delivered
// to them only if they may read the node it is about, by the ACL it had at the change
// (ZooKeeper 3.8.4 and 3.9.2, ZOOKEEPER-4799). A watcher without one gets every event.
type Caller interface {
	Caller() datatree.Caller
}

// FSM is the replicated state machine: the znode tree and the session table, changed
// only by committed log entries, in log order, on every server. It owns the one lock
// of that state: Apply writes under it; reads go through Read under the read lock.
type FSM struct {
	mu       sync.RWMutex
	tree     *datatree.Tree
	sessions *session.Table
	opts     datatree.Options
	lastZxid atomic.Int64

	// Watches are per server, not replicated: Apply fires them for this server's clients.
	Watches *watch.Registry
	// OnSessionClosed, if set, is called (outside the lock) after a session is closed or
	// expired through the log, with the ephemeral nodes that went with it, so the server
	// can drop that session's connection (and audit the deletions).
	OnSessionClosed func(id int64, ephemerals []string)
	// OnSessionMoved, if set, is called (outside the lock) after a session's owner
	// changed, so the server that held it can drop the old connection.
	OnSessionMoved func(id int64, owner string)

	// sessionsChanged tells the leader's expiry tracker about sessions the log created
	// (true) or closed (false), whichever server proposed them, and the member's newest
	// connections of the closed ones (Stream.sendAll). It has no effect on state.
	sessionsChanged func(id int64, timeout int32, created bool)

	// self is this server's id; waiters holds the forwarded proposals of this server
	// that wait to be applied here, by their (Conn, Seq).
	self    string
	waiters forwardWaits

	// applyMu orders every apply: raft's own (ApplyBatch, see apply.go) and the early
	// ones a commit notice allows (applyCommitted, see commit_notice.go). appliedIndex
	// is the Raft index of the last entry applied either way; early holds the results
	// of entries applied early, in index order, until raft's apply of the same entry
	// returns them.
	applyMu      sync.Mutex
	appliedIndex atomic.Uint64
	// through is the Raft index up to which every entry is applied and its changes are
	// in the tree (appliedIndex moves first, when a run starts); waitThrough waits on it.
	through      atomic.Uint64
	early        []earlyResult
	earlyApplied atomic.Uint64
	// Of those, the ones a durable notice allowed, and the ones read from the entries
	// received but not yet stored (received.go).
	durableApplied  atomic.Uint64
	receivedApplied atomic.Uint64
	// In a cluster, committed is the (index, term) of the last command applied, which is
	// committed, and commitNoticed is told of it (the leader passes it on to the members);
	// a standalone server keeps neither.
	committed     atomic.Pointer[commitPoint]
	commitNoticed func()
	// waitDurable, if set, returns once this member's log holds the entries up to an
	// index durably; raft's batches wait for it before they are applied (leaderLog).
	waitDurable func(index uint64) error
	// OnRestored, if set, is called after Restore replaced the state while serving.
	OnRestored func()
	// sessionsReplaced, if set, is told after Restore which sessions the new state holds
	// (sessionsChanged hears of no session a snapshot dropped).
	sessionsReplaced func(has func(id int64) bool)
	// zxidWaits are callers waiting for a zxid to be applied (WaitApplied); stopping
	// (the node's, set by Open; nil for an FSM without one) ends every wait.
	zxidWaits zxidWaits
	stopping  <-chan struct{}

	// members is the membership /zookeeper/config holds (nil before one is set).
	members atomic.Pointer[Membership]
	// membersChanged, if set, is called (outside the lock) after the membership changed.
	membersChanged func()
	// pendingReconfig names the reconfig this member let through as leader until it is
	// applied here, with any outcome (judgeReconfig). Not state: a restart forgets it,
	// and the member then leads, if at all, in a later term.
	pendingReconfig atomic.Pointer[reconfigKey]

	// snapBytes, if set, counts the command bytes applied since the last snapshot.
	snapBytes *snapshotBytes

	// logger, if set, gets one line per snapshot written.
	logger *slog.Logger
	// longWork, if set, is told of each snapshot written or installed while it runs.
	longWork func() (done func())
	// snapshotTaken, if set, is told how long each snapshot written took (Figures).
	snapshotTaken func(took time.Duration)
	// committedTxn, if set, is told of each transaction applied (Figures.Committed), and
	// role says what this member is; both set before raft runs.
	committedTxn func(role Role, age int64)
	role         func() Role
	// replayed is the last command of this member's own log after its snapshot at its
	// start, set before raft runs: committedTxn skips the commands up to it, and replay,
	// while set, counts them as they are applied (Figures.Loaded); under applyMu.
	replay   *startupReplay
	replayed uint64

	handlers map[int32]func(zxid int64, e *Entry) (*Result, []datatree.Event)
}

// NewFSM returns a state machine with a fresh tree.
func NewFSM(opts datatree.Options) *FSM {
	f := &FSM{tree: datatree.New(opts), sessions: session.NewTable(), opts: opts, Watches: watch.New()}
	f.handlers = map[int32]func(int64, *Entry) (*Result, []datatree.Event){
		jute.OpCreateSession: f.applyCreateSession,
		jute.OpCloseSession:  f.applyCloseSession,
		jute.OpSync:          f.applySync,
		OpMoveSession:        f.applyMoveSession,
		OpSetConfig:          f.applySetConfig,
		jute.OpReconfig:      f.applyReconfig,
		OpReconfigNoQuorum:   f.applyReconfig,
		OpReconfigInProgress: f.applyReconfig,
		OpSetEnforceQuota:    f.applySetEnforceQuota,
	}
	for _, op := range []int32{jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL,
		jute.OpDelete, jute.OpSetData, jute.OpSetACL, jute.OpCheck, jute.OpMulti, jute.OpDeleteContainer} {
		f.handlers[op] = f.applyTree
	}
	return f
}

// mayRead is the FSM's watch.ReadCheck: may w read a node whose ACL is acl.
func (f *FSM) mayRead(w watch.Watcher, acl []jute.ACL) bool {
	c, ok := w.(Caller)
	return !ok || f.opts.Permitted(acl, jute.PermRead, c.Caller())
}

// LastZxid is the zxid of the last applied entry.
func (f *FSM) LastZxid() int64 { return f.lastZxid.Load() }

// Read runs fn under the read lock. A read that sets a watch registers it inside fn, so
// no change can slip between the read and the watch; fn must not block.
func (f *FSM) Read(fn func(t *datatree.Tree, s *session.Table)) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	fn(f.tree, f.sessions)
}

// frozenWaitMax bounds how long ReadFrozen waits for raft's snapshot, which holds the
// tree's one frozen view, to be written.
const frozenWaitMax = 5 * time.Minute

// ReadFrozen hands begin the state's zxid, its sessions and a frozen view of its tree
// (datatree.Frozen: the tree as it is now, while writes go on), then calls next until it
// reports the walk over: each call runs with changes kept out, as raft's snapshot reads
// its view, so a walk of a large tree holds writes back for a chunk at a time, not for
// the whole tree. While raft writes a snapshot (the tree has one frozen view at a time)
// it waits; a snapshot raft starts meanwhile fails with datatree.ErrFrozen, which raft
// logs, and is taken at its next turn. An error from begin or next ends the walk.
func (f *FSM) ReadFrozen(begin func(zxid int64, sessions []session.Session, fz *datatree.Frozen) error, next func(fz *datatree.Frozen) (done bool, err error)) error {
	var (
		fz       *datatree.Frozen
		tree     *datatree.Tree
		zxid     int64
		sessions []session.Session
	)
	for deadline := time.Now().Add(frozenWaitMax); ; time.Sleep(20 * time.Millisecond) {
		var err error
		f.mu.Lock()
		tree = f.tree
		if fz, err = tree.Freeze(); err == nil {
			zxid, sessions = f.lastZxid.Load(), f.sessions.All()
		}
		f.mu.Unlock()
		if err == nil {
			break
		}
		if !errors.Is(err, datatree.ErrFrozen) || time.Now().After(deadline) {
			return err
		}
	}
	defer func() {
		f.mu.Lock()
		tree.Thaw(fz)
		f.mu.Unlock()
	}()
	if err := begin(zxid, sessions, fz); err != nil {
		return err
	}
	for {
		f.mu.RLock()
		done, err := next(fz)
		f.mu.RUnlock()
		if err != nil || done {
			return err
		}
	}
}

func (f *FSM) txn(zxid int64, e *Entry) datatree.Txn {
	return datatree.Txn{Zxid: zxid, Time: e.Time,
		Caller: datatree.Caller{Session: e.Session, Ids: e.Ids, Super: e.Super}}
}

// ErrOutOfOrder is the Result.Err of a connection's write that does not directly follow
// the last one applied of its connection (an earlier write was lost): it is not applied,
// and the connection that sent it is closed without an answer, so its client sees
// ConnectionLoss (the code's name on the client side) and never a later write applied
// without an earlier one.
const ErrOutOfOrder = jute.ErrConnectionLoss

// inOrder moves the session's write cursor past a connection's write and reports
// whether the write may be applied: it must directly follow the connection's previous
// one (see ErrOutOfOrder). Entries that are no connection's writes pass, as do writes
// of a session that is gone or owned elsewhere (their handler refuses them with
// SessionExpired or SessionMoved, as ZooKeeper does). Under the lock.
func (f *FSM) inOrder(e *Entry) bool {
	if e.Conn == 0 {
		return true
	}
	s, ok := f.sessions.Get(e.Session)
	if !ok || (e.Origin != "" && s.Owner != e.Origin) {
		return true
	}
	return f.sessions.Advance(e.Session, e.Conn, e.Seq)
}

// checkSession is ZooKeeper's checkSession(id, owner): the session must exist and, for
// an entry a client asked for, be owned by the member it came through.
func (f *FSM) checkSession(e *Entry) jute.Code {
	s, ok := f.sessions.Get(e.Session)
	switch {
	case !ok:
		return jute.ErrSessionExpired
	case e.Origin != "" && s.Owner != e.Origin:
		return jute.ErrSessionMoved
	}
	return jute.OK
}

func (f *FSM) applyTree(zxid int64, e *Entry) (*Result, []datatree.Event) {
	if e.Op != jute.OpDeleteContainer {
		if code := f.checkSession(e); code != jute.OK {
			return &Result{Err: code}, nil
		}
	}
	resp, code, events := f.tree.Apply(f.txn(zxid, e), e.Op, e.Req)
	return &Result{Err: code, Resp: resp}, events
}

func (f *FSM) applyCreateSession(zxid int64, e *Entry) (*Result, []datatree.Event) {
	r := e.Req.(*SessionRequest)
	if !f.sessions.Add(session.Session{ID: e.Session, Password: r.Password, Timeout: r.Timeout, Owner: e.Origin}) {
		return &Result{Err: jute.ErrSessionExpired}, nil
	}
	return &Result{}, nil
}

// applyCloseSession closes a session a client closed (through the member that owns it)
// or the leader expired (no Origin). A close from a member the session has moved away
// from is refused, so an old connection cannot end the session its client moved.
func (f *FSM) applyCloseSession(zxid int64, e *Entry) (*Result, []datatree.Event) {
	if code := f.checkSession(e); code != jute.OK {
		if code == jute.ErrSessionExpired {
			code = jute.OK // closing a closed session is a no-op
		}
		return &Result{Err: code}, nil
	}
	f.sessions.Remove(e.Session)
	events := f.tree.CloseSession(f.txn(zxid, e), e.Session)
	r := &Result{}
	for _, ev := range events {
		if ev.Type == jute.EventNodeDeleted {
			r.Ephemerals = append(r.Ephemerals, ev.Path)
		}
	}
	return r, events
}

func (f *FSM) applyMoveSession(zxid int64, e *Entry) (*Result, []datatree.Event) {
	if !f.sessions.SetOwner(e.Session, e.Origin) {
		return &Result{Err: jute.ErrSessionExpired}, nil
	}
	return &Result{}, nil
}

// Members is the cluster's membership as /zookeeper/config holds it; false before the
// first leader wrote it (and always in standalone).
func (f *FSM) Members() (Membership, bool) {
	m := f.members.Load()
	if m == nil {
		return Membership{}, false
	}
	return *m, true
}

// loadMembers parses /zookeeper/config into the membership cache; under the lock. Data
// that is no membership (a super user's setData of the node, which older versions let
// through) is taken as none, on every member alike: the next leader writes the
// configured one (OpSetConfig), as in a new cluster.
func (f *FSM) loadMembers() {
	data, _, _ := f.tree.Get(datatree.ConfigPath)
	if len(data) == 0 {
		f.members.Store(nil)
		return
	}
	m, err := ParseMembership(string(data))
	if err != nil {
		if f.logger != nil {
			f.logger.Warn("/zookeeper/config holds no membership; the leader writes the configured one", "err", err)
		}
		f.members.Store(nil)
		return
	}
	f.members.Store(&m)
}

func (f *FSM) setMembers(zxid int64, e *Entry, m Membership) (jute.Stat, []datatree.Event) {
	m.Version = zxid
	st, events := f.tree.SetConfig(f.txn(zxid, e), []byte(m.String()))
	f.members.Store(&m)
	return st, events
}

// applySetConfig writes the configured membership once, if no leader did before.
func (f *FSM) applySetConfig(zxid int64, e *Entry) (*Result, []datatree.Event) {
	if f.members.Load() != nil {
		return &Result{Err: jute.ErrNodeExists}, nil
	}
	m, err := ParseMembership(string(e.Req.(*jute.SetDataRequest).Data))
	if err != nil {
		return &Result{Err: jute.ErrBadArguments}, nil
	}
	_, events := f.setMembers(zxid, e, m)
	return &Result{}, events
}

// applySetEnforceQuota records the leader's zookeeper.enforceQuota in the tree.
func (f *FSM) applySetEnforceQuota(zxid int64, e *Entry) (*Result, []datatree.Event) {
	f.tree.SetEnforceQuota(e.Req.(*EnforceQuotaRequest).On)
	return &Result{}, nil
}

// EnforceQuota reports whether the applied log has quotas enforced.
func (f *FSM) EnforceQuota() bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.tree.EnforceQuota()
}

// applySync answers a sync once it is applied: a client's (one of its connection's
// writes, in its order) or a member's catch-up sync, which has no session.
func (f *FSM) applySync(zxid int64, e *Entry) (*Result, []datatree.Event) {
	return &Result{Resp: &jute.SyncResponse{Path: e.Req.(*jute.SyncRequest).Path}}, nil
}

// Snapshot freezes the tree and encodes the sessions under the lock, which takes time in
// the number of sessions only; Persist then streams the tree from the frozen view while
// entries go on being applied (see datatree.Frozen).
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snapBytes.reset()
	head, err := persistence.StateHeader(f.lastZxid.Load(), f.sessions)
	if err != nil {
		return nil, err
	}
	fz, err := f.tree.Freeze()
	if err != nil {
		return nil, err
	}
	return &fsmSnapshot{fsm: f, tree: f.tree, frozen: fz, head: head}, nil
}

// Restore replaces the state with a snapshot's. Entries up to the snapshot's zxid are
// then skipped when raft or a commit notice offers them again; the ones after it that
// are not commands change nothing, so they may be applied again.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	defer f.longWorkStarts()()
	st, err := persistence.ReadState(rc, f.opts)
	if err != nil {
		return err
	}
	f.applyMu.Lock()
	f.mu.Lock()
	f.tree, f.sessions = st.Tree, st.Sessions
	f.lastZxid.Store(st.Zxid)
	f.appliedIndex.Store(uint64(st.Zxid))
	f.through.Store(uint64(st.Zxid))
	f.early = nil
	f.loadMembers()
	f.mu.Unlock()
	if f.replay != nil {
		// A snapshot from the leader replaces what the replay had left to apply.
		f.replay.end()
		f.replay = nil
	}
	f.applyMu.Unlock()
	f.zxidWaits.release(st.Zxid)
	if f.membersChanged != nil {
		f.membersChanged()
	}
	if f.sessionsReplaced != nil {
		f.sessionsReplaced(func(id int64) bool {
			f.mu.RLock()
			defer f.mu.RUnlock()
			_, ok := f.sessions.Get(id)
			return ok
		})
	}
	if f.OnRestored != nil {
		f.OnRestored()
	}
	return nil
}

// fsmSnapshot writes one state snapshot; raft runs Persist on a goroutine of its own.
type fsmSnapshot struct {
	fsm    *FSM
	tree   *datatree.Tree // the tree frozen (a Restore may have replaced the FSM's since)
	frozen *datatree.Frozen
	head   []byte
	once   sync.Once
}

// snapshotChunk is how many nodes Persist encodes per hold of the read lock.
const snapshotChunk = 512

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	defer s.fsm.longWorkStarts()() // until the tree is thawed too
	defer s.Release()
	start := time.Now()
	size := int64(len(s.head))
	if _, err := sink.Write(s.head); err != nil {
		sink.Cancel()
		return err
	}
	for {
		s.fsm.mu.RLock()
		b, done := s.frozen.Next(snapshotChunk)
		s.fsm.mu.RUnlock()
		size += int64(len(b))
		if _, err := sink.Write(b); err != nil {
			sink.Cancel()
			return err
		}
		if done {
			err := sink.Close()
			took := time.Since(start)
			if s.fsm.logger != nil && err == nil {
				s.fsm.logger.Info("snapshot written", "id", sink.ID(), "bytes", size, "took", took.Round(time.Millisecond))
			}
			if s.fsm.snapshotTaken != nil && err == nil {
				s.fsm.snapshotTaken(took)
			}
			return err
		}
	}
}

// longWorkStarts tells longWork that a snapshot is written or installed, and returns
// what tells it that this ended.
func (f *FSM) longWorkStarts() (done func()) {
	if f.longWork == nil {
		return func() {}
	}
	return f.longWork()
}

// Release thaws the tree (once), whether or not Persist ran.
func (s *fsmSnapshot) Release() {
	s.once.Do(func() {
		s.fsm.mu.Lock()
		s.tree.Thaw(s.frozen)
		s.fsm.mu.Unlock()
	})
}

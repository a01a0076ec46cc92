package quorum

import (
	"cmp"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/session"
)

// Node is one server's Raft member with its state machine.
type Node struct {
	cfg    Config
	FSM    *FSM
	raft   *raft.Raft
	store  *persistence.Store
	trans  raft.Transport
	peers  net.Listener // the peer port, in a cluster
	fwd    *forwarder
	prompt *promptElection // a follower's election when its leader's ports refuse (cluster)
	// leaderNews gets a token whenever raft names another leader or none, or the stream
	// to the leader changes (cluster).
	leaderNews chan struct{}
	// nudging is set while a barrier started by peerBack is on its way.
	nudging   atomic.Bool
	duties    *duties
	notify    chan bool
	done      chan struct{}
	closeOnce sync.Once
	// stopping is closed when the member begins to stop (StopWaiting).
	stopping chan struct{}
	stopOnce sync.Once
	// membersChanged wakes the leader's membership duty (see membershipLoop).
	membersChanged chan struct{}
	// learners is when each follower or observer last sent its heartbeat (leader).
	learners sync.Map // member id -> time.Time
	// commits wakes the peer streams' writers to send commit notices; catch applies
	// the notices this member gets (commit_notice.go).
	commits commitSubs
	// noticesSkipped counts the commit notices the leader's streams left out because the
	// follower applies on its durable notice (appliesOnItsOwn).
	noticesSkipped atomic.Uint64
	catch          *catchUp
	lead           *leaderLog
	// conns numbers the client connections' Streams as they begin to write, and the
	// moves of sessions here; it starts at the clock, so a restarted member never
	// reuses a number its previous run gave.
	conns atomic.Uint64
	// sessionConns keeps each session's writes to its newest connection here, or to
	// those begun after it moved here (Stream.sendAll).
	sessionConns newestClaims[int64]
	// peerConns are the members' streams accepted on the peer port, closed with the node.
	peerConns sync.Map // net.Conn -> struct{}
	// streamGen numbers the accepted streams; streams says which is each member's newest
	// (newest_stream.go).
	streamGen atomic.Uint64
	streams   newestClaims[string]
	// logFailed holds the transaction log's failure, once it failed (LogFailed).
	logFailed chan error
	// proposalSizes are the sizes of the entries proposed while leading (mntr, srvr).
	proposalSizes *proposalSizes
	// applies waits on raft's futures of the writes this member proposes as leader.
	applies applyWaiter
	// reconfig is the reconfig this member let through as leader (judgeReconfig).
	reconfig pendingReconfig
	// firstMembership is the membership this member proposed last as leader, first thing
	// in its term (proposeFirstMembership), which a reconfig waits for (awaitMembers).
	firstMembership atomic.Pointer[raft.ApplyFuture]
	// membershipTerm is the last term in which this member, leading, proposed its first
	// membership or found none needed (membershipFirst); membershipMu orders the
	// proposal before the entries of the callers that found it missing.
	membershipTerm atomic.Uint64
	membershipMu   sync.Mutex
	// establishedTerm is the term whose leadership watchLeadership last established
	// (barrier applied, duties started); 0 once it hears the leadership is lost.
	establishedTerm atomic.Uint64
	// syncedTerm is the last term in which this member, following, held an entry of
	// its leader's term (Synced).
	syncedTerm atomic.Uint64
	// restartTerm is the term this member restarted within: its log held an entry of
	// raft's current term at Open (0 if not). Synced asks more in that term.
	restartTerm atomic.Uint64
	// look times this member's stretches without a leader and without serving (nil on
	// a standalone server); leadingSince is when it was last established as leader, in
	// Unix ns (LeaderUptime).
	look         *looking
	leadingSince atomic.Int64
	// freshReadWait bounds WaitFreshRead (the constant, or Config.freshReadWait).
	freshReadWait time.Duration
}

// Open starts a node: with no peers a one-voter Raft cluster over an in-memory
// transport, else a member of the cluster of cfg.Peers over TCP. Its log is persistence's
// transaction log and its snapshots on disk; a new data dir is bootstrapped with the configured members.
func Open(cfg Config) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, err
	}
	if cfg.Network == nil {
		cfg.Network = TCP{}
	}
	if cfg.TLS != nil {
		cfg.Network = newTLSNetwork(cfg.Network, *cfg.TLS, cfg.Logger)
	}
	hlog := newRaftLog(cfg.Logger)
	store, err := persistence.Open(cfg.DataDir, cfg.SnapshotRetain, hlog)
	if err != nil {
		return nil, err
	}
	warnSlowSyncs(store, cfg.FsyncWarning, cfg.Logger, cfg.Figures.LogSyncSlow)
	if cfg.NoLogSync {
		store.SkipLogSyncs()
	}
	if cfg.Figures.LogSynced != nil {
		store.ObserveSyncs(cfg.Figures.LogSynced)
	}
	cache := newRecentLogs(store.Log, recentLogsMax, recentLogsMaxBytes)
	snaps := store.Snapshots
	rc := raft.DefaultConfig()
	rc.Logger = hlog
	// A standalone server has no replication for its fdatasync to overlap: it stores
	// every batch durably, as a deferred one would only add the syncer's hand-offs.
	lead := &leaderLog{self: raft.ServerID(cfg.ID)}
	if d, ok := store.Log.(deferringStore); ok && len(cfg.Peers) > 0 {
		lead.store = d
		if cfg.wrapDeferring != nil {
			lead.store = cfg.wrapDeferring(d)
		}
	}
	recv := &received{limit: int(max(1, min(maxReceived, cfg.TrailingLogs/2)))}
	trans, conf, err := transport(&cfg, rc, hlog, lead, recv)
	if err != nil {
		store.Close()
		return nil, err
	}
	rc.CommitTimeout = cfg.CommitTimeout
	rc.MaxAppendEntries = 1024
	rc.BatchApplyCh = true
	// A leader a reconfig removed steps down and follows as a non-voter (reconcile), as
	// ZooKeeper's removed server does; raft's default would shut it down.
	rc.ShutdownOnRemove = false
	rc.SnapshotThreshold = cfg.SnapshotThreshold
	// Raft checks the threshold on this timer (randomized up to twice it); its default of
	// two minutes lets the log grow far past snapCount under load.
	rc.SnapshotInterval = 5 * time.Second
	rc.TrailingLogs = cfg.TrailingLogs
	notify := make(chan bool, 8)
	rc.NotifyCh = notify

	fsm := NewFSM(cfg.Tree)
	if cfg.SnapshotBytes > 0 {
		fsm.snapBytes = newSnapshotBytes(cfg.SnapshotBytes)
	}
	stopping := make(chan struct{})
	fsm.stopping = stopping
	n := &Node{cfg: cfg, FSM: fsm, store: store, notify: notify, done: make(chan struct{}), stopping: stopping, proposalSizes: newProposalSizes(), freshReadWait: cmp.Or(cfg.freshReadWait, freshReadWait),
		logFailed: make(chan error, 1)}
	if fl, ok := store.Log.(interface{ OnFailed(func(error)) }); ok {
		fl.OnFailed(func(err error) { n.logFailed <- err }) // once: the buffer holds it
	}
	n.conns.Store(uint64(time.Now().UnixNano()))
	n.lead = lead
	if dn, ok := store.Log.(interface{ OnDurable(func()) }); ok && lead.store != nil {
		// The peer streams tell the voting followers (durable_notice.go).
		lead.onDurable = n.commits.notify
		dn.OnDurable(lead.onDurable)
	}
	logs := &noticedLogs{recentLogs: cache, lead: lead}
	n.catch = newCatchUp(fsm, writingOrStored{logs}, logs.recentLogs,
		func() uint64 { return n.raft.CurrentTerm() }, func() uint64 { i, _ := cache.LastIndex(); return i })
	n.catch.recv = recv
	n.catch.applied = n.checkServing
	recv.catch.Store(n.catch)
	logs.arrived = n.catch.arrived
	logs.stored = n.catch.stored
	if len(cfg.Peers) > 0 {
		fsm.commitNoticed = n.commits.notify
	}
	fsm.self = cfg.ID
	if lead.store != nil {
		fsm.waitDurable = lead.waitDurable
	}
	fsm.logger = cfg.Logger
	fsm.longWork = cfg.LongWork
	fsm.snapshotTaken = cfg.Figures.SnapshotTaken
	if fsm.committedTxn = cfg.Figures.Committed; fsm.committedTxn != nil {
		fsm.role = n.role
	}
	logs.followerStored = n.followerStored
	d := &duties{}
	fsm.sessionsChanged = func(id int64, timeout int32, created bool) {
		if created {
			d.add(id, timeout)
		} else {
			d.forget(id)
			n.sessionConns.forget(id)
		}
	}
	fsm.sessionsReplaced = func(has func(int64) bool) {
		n.sessionConns.prune(has)
		d.reseed() // a leader's state replaced by a restore (user_restore.go)
	}
	fsm.OnSessionClosed = cfg.OnSessionClosed
	fsm.OnSessionMoved = cfg.OnSessionMoved
	n.membersChanged = make(chan struct{}, 1)
	fsm.membersChanged = func() {
		select {
		case n.membersChanged <- struct{}{}:
		default:
		}
	}
	has, err := raft.HasExistingState(logs, store.Stable, snaps)
	if err != nil {
		store.Close()
		return nil, err
	}
	if !has && len(cfg.Peers) > 0 && clusterFormed(&cfg) {
		cfg.Logger.Info("joining an existing cluster: waiting to be added by its leader", "id", cfg.ID)
	} else if !has {
		// Every member bootstraps with the same configuration; Raft accepts that.
		if err := raft.BootstrapCluster(rc, logs, store.Stable, snaps, trans, conf); err != nil {
			store.Close()
			return nil, fmt.Errorf("quorum: bootstrap: %w", err)
		}
	}
	if ct, ok := trans.(*contactTransport); ok && cfg.DistrustEmptyStore && !has && len(cfg.Peers) > 0 {
		ct.votes = newVoteGate(ct.NetworkTransport.Consumer(), cfg.Logger)
	}
	// The FSM starts from the newest snapshot, read once and checked against its CRC as it
	// is read, instead of by raft (which would read it twice and, were it damaged, fall
	// back to an older snapshot without saying so).
	rc.NoSnapshotRestoreOnStart = true
	restoreStart := time.Now()
	snapIndex, snapTerm, err := restoreNewest(store, fsm)
	if err != nil {
		if c, ok := trans.(io.Closer); ok {
			c.Close()
		}
		store.Close()
		return nil, err
	}
	fsm.OnRestored = cfg.OnRestored // after restoreNewest: only a leader's snapshot counts
	if cfg.Figures.Loaded != nil || cfg.Figures.Committed != nil {
		snapTook := time.Since(restoreStart)
		until := lastCommandAfter(logs, snapIndex)
		fsm.replayed = until
		switch loaded := cfg.Figures.Loaded; {
		case loaded != nil && until > 0:
			fsm.replay = &startupReplay{snap: snapTook, done: loaded}
		case loaded != nil:
			loaded(snapTook, 0, -1)
		}
	}
	if self := cfg.self(); self != nil {
		// Before raft runs: its goroutine reads both (followerStored).
		n.look = &looking{voter: !self.Observer, figs: cfg.Figures}
		n.look.lost() // a member starts looking for its leader
		n.restartTerm.Store(restartTerm(store, logs, snapIndex, snapTerm))
	}
	var raftLogs raft.LogStore = logs
	if cfg.wrapLogs != nil {
		raftLogs = cfg.wrapLogs(logs)
	}
	r, err := raft.NewRaft(rc, fsm, raftLogs, store.Stable, snaps, trans)
	if err != nil {
		if c, ok := trans.(io.Closer); ok {
			c.Close()
		}
		store.Close()
		return nil, fmt.Errorf("quorum: start raft: %w", err)
	}
	n.raft, n.trans = r, trans
	if ct, ok := trans.(*contactTransport); ok {
		back := n.peerBack
		ct.reach.back.Store(&back)
		if ct.votes != nil {
			ct.votes.terms.Store(&termsOf{current: r.CurrentTerm, held: n.lastHeldTerm})
		}
	}
	lead.raft.Store(r)
	d.n = n
	n.duties = d
	n.fwd = newForwarder(n)
	if !n.IsClustered() {
		if err := electAtOnce(r); err != nil {
			n.Close()
			return nil, fmt.Errorf("quorum: standalone timeouts: %w", err)
		}
	}
	if self := cfg.self(); self != nil {
		if n.peers, err = cfg.Network.Listen(self.PeerAddr); err != nil {
			n.Close()
			return nil, fmt.Errorf("quorum: listen on peer address %s: %w", self.PeerAddr, err)
		}
		n.prompt = newPromptElection(n)
		n.leaderNews = make(chan struct{}, 1)
		look := n.look
		// Runs on raft's goroutine as raft sets the leader; delivers nothing itself.
		r.RegisterObserver(raft.NewObserver(nil, false, func(o *raft.Observation) bool {
			if lo, ok := o.Data.(raft.LeaderObservation); ok {
				if lo.LeaderID == "" {
					look.lost()
				} else {
					look.found()
				}
				n.prompt.leaderNamed(lo.LeaderID)
				n.fwd.wakeDialer()
				n.announce()
			}
			return false
		}))
		// A leader named before the observer was registered.
		if _, id := r.LeaderWithID(); id != "" {
			n.prompt.named.CompareAndSwap(nil, &namedLeader{id: id})
			look.found()
		}
		go n.servePeers(n.peers)
		go n.fwd.dialLoop()
		go n.fwd.pingLoop(cfg.TickTime / 2)
		go n.catch.run(n.done)
		go n.paceHeartbeats()
	}
	go n.watchLeadership()
	if fsm.snapBytes != nil {
		go n.snapshotOnSize(fsm.snapBytes)
	}
	return n, nil
}

// transport sets rc's identity and timing and returns the transport and the initial
// membership for cfg.
func transport(cfg *Config, rc *raft.Config, hlog hclog.Logger, lead *leaderLog, recv *received) (raft.Transport, raft.Configuration, error) {
	if len(cfg.Peers) == 0 {
		rc.LocalID = "1"
		standaloneTimeouts(rc)
		addr, trans := raft.NewInmemTransport("")
		return trans, raft.Configuration{Servers: []raft.Server{{ID: "1", Address: addr, Suffrage: raft.Voter}}}, nil
	}
	self := cfg.self()
	rc.LocalID = raft.ServerID(self.ID)
	rc.HeartbeatTimeout = cfg.HeartbeatTimeout
	rc.ElectionTimeout = cfg.HeartbeatTimeout
	// A leader steps down after a lease without hearing from a quorum; as long as a
	// follower waits for it, so a busy moment does not cost an election.
	rc.LeaderLeaseTimeout = cfg.HeartbeatTimeout
	ln, err := cfg.Network.Listen(self.RaftAddr)
	if err != nil {
		return nil, raft.Configuration{}, fmt.Errorf("quorum: listen on %s: %w", self.RaftAddr, err)
	}
	// Advertise the configured address (the listener may be bound to 0.0.0.0).
	adv, err := net.ResolveTCPAddr("tcp", self.RaftAddr)
	if err != nil {
		ln.Close()
		return nil, raft.Configuration{}, fmt.Errorf("quorum: raft address %q: %w", self.RaftAddr, err)
	}
	accepted := &openStreams{}
	trans := &contactTransport{NetworkTransport: raft.NewNetworkTransportWithLogger(&streamLayer{Listener: readAheadListener{ln, recv, accepted}, network: cfg.Network, advertise: adv}, 3, 10*time.Second, hlog),
		reach: newReachability(cfg.Logger, time.Now, time.Minute), log: lead, accepted: accepted, snapshotSent: cfg.Figures.SnapshotSent}
	var conf raft.Configuration
	for _, p := range cfg.Peers {
		sv := raft.Server{ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.RaftAddr), Suffrage: raft.Voter}
		if p.Observer {
			sv.Suffrage = raft.Nonvoter
		}
		conf.Servers = append(conf.Servers, sv)
	}
	return trans, conf, nil
}

// peerBack is told of a peer that answered this member's AppendEntries again after
// failing to (reachability.go). Raft's leader retries replication to a peer it could not
// reach only on a new entry or at its CommitTimeout, which is long (Config.CommitTimeout:
// an idle leader sends an empty AppendEntries to each follower that often), so a member
// cut off while a write committed would stay behind that long after the cut healed. A
// leader appends a barrier, as any new entry starts replication to every follower: the
// member catches up one heartbeat after it answers again. One barrier at a time.
func (n *Node) peerBack(id raft.ServerID) {
	if n.cfg.noPeerBackBarrier || n.raft.State() != raft.Leader || !n.nudging.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer n.nudging.Store(false)
		if err := n.raft.Barrier(n.cfg.HeartbeatTimeout).Error(); err != nil {
			n.cfg.Logger.Debug("no barrier for a member that answered again", "peer", string(id), "err", err)
		}
	}()
}

// ID is this member's id (ZooKeeper's myid); empty in standalone. Entries a client asks
// for carry it as their Origin.
func (n *Node) ID() string { return n.cfg.ID }

// IsClustered reports whether this node is a member of a cluster.
func (n *Node) IsClustered() bool { return len(n.cfg.Peers) > 0 }

// HeartbeatTimeout is the Raft timeout of a cluster member.
func (n *Node) HeartbeatTimeout() time.Duration { return n.cfg.HeartbeatTimeout }

// LogFailed delivers the error of a failed write or fdatasync of the transaction log.
// The log then takes no more writes until the server restarts and replays it from
// disk, so the server stops on it, as ZooKeeper's does when its log fails.
func (n *Node) LogFailed() <-chan error { return n.logFailed }

// Touch records that a session was heard from. The leader keeps the deadlines; a
// follower passes the news on every half tick.
func (n *Node) Touch(id int64, timeout int32) {
	if len(n.cfg.Peers) > 0 && n.raft.State() != raft.Leader {
		n.fwd.touch(id, timeout)
		return
	}
	n.duties.touch(id, timeout)
}

// SessionBuckets returns the leader's session deadlines grouped by bucket, earliest
// first, and true; a member that does not lead keeps no deadlines and returns false.
func (n *Node) SessionBuckets() ([]session.Bucket, bool) {
	t := n.duties.current()
	if t == nil {
		return nil, false
	}
	return t.Buckets(), true
}

// Forget stops tracking a session this server closed.
func (n *Node) Forget(id int64) { n.duties.forget(id) }

// peer finds a member in /zookeeper/config's membership, else among the configured
// ones.
func (n *Node) peer(id string) (Peer, bool) {
	if m, ok := n.FSM.Members(); ok {
		if p, ok := m.Peer(id); ok {
			return p, true
		}
	}
	for _, p := range n.cfg.Peers {
		if p.ID == id {
			return p, true
		}
	}
	return Peer{}, false
}

// Stats are raft's own figures (its term, commit and applied index, last snapshot and
// log index), for the AdminServer and /metrics.
func (n *Node) Stats() map[string]string { return n.raft.Stats() }

// TakeSnapshot writes a snapshot of the state now and compacts the log behind it
// (keeping the trailing entries followers may still need).
func (n *Node) TakeSnapshot() error {
	if err := n.raft.Snapshot().Error(); err != nil {
		return fmt.Errorf("quorum: snapshot: %w", err)
	}
	return nil
}

// LastSnapshot is the newest snapshot on disk: the zxid it holds the state at and when
// it was written; ok is false while there is none.
func (n *Node) LastSnapshot() (zxid int64, written time.Time, ok bool) {
	index, written, ok := n.store.NewestSnapshot()
	return int64(index), written, ok
}

// StopWaiting begins this member's stop: from now on no proposal waits for a leader or
// is proposed again after its leader went away, and no wait for an entry to be applied
// here goes on (WaitApplied), so the connections still being served end at once. A
// server calls it before it waits for its connections to end: when a whole cluster
// stops, the election such a wait would wait out never ends. Close calls it too.
func (n *Node) StopWaiting() {
	n.stopOnce.Do(func() { close(n.stopping) })
}

func (n *Node) isStopping() bool {
	select {
	case <-n.stopping:
		return true
	default:
		return false
	}
}

// Close stops duties and Raft and closes the store. Applied entries are durable.
func (n *Node) Close() error {
	first := false
	n.closeOnce.Do(func() { first = true })
	if !first {
		return nil
	}
	n.StopWaiting()
	close(n.done)
	n.duties.stop()
	if n.peers != nil {
		n.peers.Close()
	}
	n.peerConns.Range(func(c, _ any) bool {
		c.(net.Conn).Close()
		return true
	})
	if n.fwd != nil {
		n.fwd.close()
	}
	if n.prompt != nil {
		n.prompt.stop()
	}
	err := n.raft.Shutdown().Error()
	n.applies.stop(raft.ErrRaftShutdown)
	if c, ok := n.trans.(io.Closer); ok {
		c.Close()
	}
	if cerr := n.store.Close(); err == nil {
		err = cerr
	}
	return err
}

var _ io.Closer = (*Node)(nil)

package quorum

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/persistence"
)

// Config is what a node needs; the server fills it from zoo.cfg and flags.
type Config struct {
	DataDir string           // holds log/ (the transaction log), raft.db (stable store) and snapshots/
	Tree    datatree.Options // must be the same on every server
	// EnforceQuota is this server's zookeeper.enforceQuota. It takes effect when this
	// server leads: it then writes it into the log (OpSetEnforceQuota) if the log holds
	// the other setting, and every member applies the log's.
	EnforceQuota bool
	TickTime     time.Duration // session expiry bucket width
	// SyncWindow is how lately a member must have answered the leader to count as
	// synced, for a reconfig's quorum and mntr's synced followers: ZooKeeper's syncLimit
	// ticks (a learner is synced while its last packet is at most syncLimit ticks old).
	// 0: two ticks.
	SyncWindow time.Duration
	// ContainerCheckInterval is how often the leader looks for empty containers and
	// expired TTL nodes (znode.container.checkIntervalMs).
	ContainerCheckInterval time.Duration
	// ContainerMaxPerMinute bounds how fast that cleanup proposes deletions
	// (ZooKeeper's znode.container.maxPerMinute); 0 or less: no bound.
	ContainerMaxPerMinute int
	// SnapshotThreshold is how many entries go to the log between snapshots (snapCount).
	SnapshotThreshold uint64
	// SnapshotBytes is how many bytes of commands go to the log between snapshots
	// (snapSizeLimitInKb); 0 is no limit (snapshot_bytes.go).
	SnapshotBytes int64
	// SnapshotRetain is how many snapshots are kept (autopurge.snapRetainCount).
	SnapshotRetain int
	// TrailingLogs is how many entries a snapshot leaves in the log, for members that
	// are behind; one further behind gets the snapshot instead.
	TrailingLogs uint64
	// FsyncWarning is how long an fdatasync of the transaction log may take before a
	// warning says so (fsync.warningthresholdms); 0 is ZooKeeper's 1 s.
	FsyncWarning time.Duration
	Logger       *slog.Logger
	// OnSessionClosed is called after a closeSession entry is applied (see FSM).
	OnSessionClosed func(id int64, ephemerals []string)
	// OnSessionMoved is called after a session's owner changed (see FSM).
	OnSessionMoved func(id int64, owner string)
	// OnRestored is called after a snapshot from the leader replaced the state while
	// the node runs (see FSM).
	OnRestored func()
	// LongWork, if set, is told when the FSM starts writing or installing a snapshot,
	// and through the function it returns when that ends.
	LongWork func() (done func())
	// Figures are told of what ZooKeeper's metrics count (figures.go).
	Figures Figures

	// DistrustEmptyStore (zookeeper.db.autocreate=false without the data dir's
	// initialize marker): a cluster member that starts on an empty store refuses votes
	// until it has synced with a leader (empty_store_votes.go).
	DistrustEmptyStore bool

	// ID and Peers make a cluster: Peers lists every member (this one included) with
	// its Raft address (ZooKeeper's election port). No peers: a standalone one-voter
	// cluster over an in-memory transport.
	ID    string
	Peers []Peer
	// HeartbeatTimeout is the Raft heartbeat and election timeout of a cluster.
	HeartbeatTimeout time.Duration
	// CommitTimeout is how long Raft's leader waits, with nothing to send, before it
	// sends an empty AppendEntries that carries its commit index. Members learn of
	// commits from commit notices at once (commit_notice.go), so this is only the
	// fallback; a short one keeps an idle cluster busy. A member the leader could not
	// reach is retried when it answers again, not only this often (Node.peerBack).
	CommitTimeout time.Duration
	// Network carries the members' streams; nil is TCP.
	Network Network
	// TLS, if set, makes every stream between members mutual TLS on Network
	// (tls_network.go).
	TLS *TLS

	// wrapDeferring, if set (tests only), wraps the store the leader's deferred writes
	// go through, to hold their durability back.
	wrapDeferring func(deferringStore) deferringStore
	// wrapLogs, if set (tests only), wraps the log store raft is given.
	wrapLogs func(raft.LogStore) raft.LogStore
	// noCommitNotices (tests only) keeps the leader's streams from sending commit
	// notices, so a test sees what durable notices do alone.
	noCommitNotices bool
	// freshReadWait, if set (tests only), bounds WaitFreshRead instead of freshReadWait.
	freshReadWait time.Duration
	// beforeLeading, if set (tests only), runs when this member hears it leads, before
	// it proposes anything (watchLeadership), to widen the window in which writes that
	// waited for a leader reach it first.
	beforeLeading func()
	// noPeerBackBarrier, if set (tests only), keeps peerBack from appending its
	// barrier, so a test that reads a term's barriers sees only the election's.
	noPeerBackBarrier bool
}

// Peer is one cluster member: ZooKeeper's server.N line.
type Peer struct {
	ID       string // N, the myid
	RaftAddr string // host:port Raft listens on (ZooKeeper's election port)
	PeerAddr string // host:port followers forward proposals to (ZooKeeper's peer port)
	Observer bool   // a non-voter: replicates and serves reads, never votes
	// ClientAddr is the client address the server line names after ';' (empty: not
	// named, the member's own clientPort applies). Shown in /zookeeper/config.
	ClientAddr string
}

// DefaultConfig returns ZooKeeper's defaults.
func DefaultConfig(dataDir string) Config {
	return Config{
		DataDir:                dataDir,
		Tree:                   datatree.Options{ExtendedTypes: true},
		TickTime:               2 * time.Second,
		ContainerCheckInterval: time.Minute,
		SnapshotThreshold:      100000,
		SnapshotBytes:          4 << 30,
		SnapshotRetain:         3,
		TrailingLogs:           10240,
		Logger:                 slog.Default(),
		HeartbeatTimeout:       500 * time.Millisecond,
		CommitTimeout:          500 * time.Millisecond,
	}
}

// Validate names the first bad field.
func (c *Config) Validate() error {
	switch {
	case c.DataDir == "":
		return errors.New("quorum: DataDir is empty")
	case c.TickTime <= 0:
		return fmt.Errorf("quorum: TickTime %v must be positive", c.TickTime)
	case c.ContainerCheckInterval <= 0:
		return fmt.Errorf("quorum: ContainerCheckInterval %v must be positive", c.ContainerCheckInterval)
	case c.CommitTimeout <= 0:
		return fmt.Errorf("quorum: CommitTimeout %v must be positive", c.CommitTimeout)
	case c.SnapshotRetain < 1:
		return fmt.Errorf("quorum: SnapshotRetain %d must be at least 1", c.SnapshotRetain)
	case len(c.Peers) > 0 && c.self() == nil:
		return fmt.Errorf("quorum: ID %q is not among the peers", c.ID)
	case len(c.Peers) > 0 && c.HeartbeatTimeout < 10*time.Millisecond:
		return fmt.Errorf("quorum: HeartbeatTimeout %v is below 10ms", c.HeartbeatTimeout)
	}
	if c.TLS != nil {
		return c.TLS.validate()
	}
	return nil
}

func (c *Config) self() *Peer {
	for i := range c.Peers {
		if c.Peers[i].ID == c.ID {
			return &c.Peers[i]
		}
	}
	return nil
}

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
	warnSlowSyncs(store, cfg.FsyncWarning, cfg.Logger)
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
	fsm.sessionsReplaced = func(has func(int64) bool) { n.sessionConns.prune(has) }
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

// HasLeader reports whether this node knows a leader now (standalone: always) and, as a
// follower, reaches it: a usable stream to it, or one lost less than streamGrace ago.
func (n *Node) HasLeader() bool {
	addr, id := n.raft.LeaderWithID()
	if addr == "" {
		return false
	}
	if !n.IsClustered() || string(id) == n.cfg.ID || n.fwd == nil {
		return true // standalone, or the leader itself
	}
	return n.fwd.reachesLeader()
}

// Established reports whether this member leads and has applied everything committed
// before its term (its barrier), with the membership it writes first, and has started
// its duties: a ZooKeeper leader serves once it has synced with a quorum, and answers
// the four-letter words as not serving before. The term is compared, so duties started
// for an earlier term (leadership lost and won again before watchLeadership heard of
// it) do not count for the current one.
func (n *Node) Established() bool {
	return n.IsLeader() && n.establishedTerm.Load() == n.raft.CurrentTerm()
}

// Synced reports whether this member is in step with its leader's term: a leader once
// it is established; a follower or observer once its log (or a snapshot it installed)
// holds an entry of the current term. Raft's consistency check admits that entry only
// onto a log that matches the leader's up to it (Log Matching), and the leader's first
// entry of a term comes after every entry committed before the term, so the member has
// synced with the leader, as a ZooKeeper learner serves only once its leader's sync is
// done (UPTODATE). After an election a member far behind (a snapshot or a long backlog
// to take) or with a log that diverged is not synced while it catches up, nor one that
// has heard the new leader's heartbeat before its first entries. A member restarted
// within a term (no election since) held entries of that term before it stopped, which
// say nothing of what it missed: in that term it is synced once it applied the first
// commit point its leader told it (caughtUpSinceStart). Cached per term.
func (n *Node) Synced() bool {
	if n.IsLeader() {
		return n.Established()
	}
	term := n.raft.CurrentTerm()
	if term == 0 {
		return false
	}
	if n.syncedTerm.Load() == term {
		return true
	}
	if n.lastHeldTerm() != term {
		return false
	}
	if term == n.restartTerm.Load() && !n.caughtUpSinceStart() {
		return false
	}
	n.syncedTerm.Store(term)
	return true
}

// caughtUpSinceStart reports whether this member applied the first commit point it was
// told since it started: the leader tells it, on the stream this member opens to it,
// what it committed so far (a commit or a durable notice) before anything else. With no
// such news within a sync window of knowing its leader (a leader that applied no command
// yet, nor restored a snapshot; a stream to the leader that does not open), the member
// goes by the term alone, as after an election.
func (n *Node) caughtUpSinceStart() bool {
	if heard := n.catch.firstHeard.Load(); heard > 0 {
		// The point may be an entry the FSM is never given (a no-op, a barrier) that an
		// installed snapshot ends at: its index counts as applied too.
		if n.FSM.through.Load() >= heard {
			return true
		}
		snap, _ := strconv.ParseUint(n.raft.Stats()["last_snapshot_index"], 10, 64)
		return snap >= heard
	}
	return n.look != nil && n.look.knownFor() >= n.syncWindow()
}

// lastHeldTerm is the term of the last entry this member holds: its log's last entry, or
// the snapshot it installed if that reaches further (raft's last_log_term leaves an
// installed snapshot out). Asked rarely: it formats all of raft's stats.
func (n *Node) lastHeldTerm() uint64 {
	st := n.raft.Stats()
	num := func(k string) uint64 {
		v, _ := strconv.ParseUint(st[k], 10, 64)
		return v
	}
	if num("last_snapshot_index") >= num("last_log_index") {
		return num("last_snapshot_term")
	}
	return num("last_log_term")
}

// LeaderID is the id of the member this one knows to lead.
func (n *Node) LeaderID() (string, bool) {
	_, id := n.raft.LeaderWithID()
	return string(id), id != ""
}

// Peer is the member with id, by the current membership (the configured one before the
// first leader wrote it).
func (n *Node) Peer(id string) (Peer, bool) { return n.peer(id) }

// ID is this member's id (ZooKeeper's myid); empty in standalone. Entries a client asks
// for carry it as their Origin.
func (n *Node) ID() string { return n.cfg.ID }

// IsClustered reports whether this node is a member of a cluster.
func (n *Node) IsClustered() bool { return len(n.cfg.Peers) > 0 }

// HeartbeatTimeout is the Raft timeout of a cluster member.
func (n *Node) HeartbeatTimeout() time.Duration { return n.cfg.HeartbeatTimeout }

// LeaderNews gets a token whenever raft names another leader or none, and whenever this
// member's stream to its leader breaks, is replaced or is refused; nil (never ready) in
// standalone. One token may stand for several changes.
func (n *Node) LeaderNews() <-chan struct{} { return n.leaderNews }

// announce puts a token on LeaderNews.
func (n *Node) announce() {
	if n.leaderNews != nil {
		select {
		case n.leaderNews <- struct{}{}:
		default:
		}
	}
}

// LeaderSteady reports whether this member leads, or names a leader and holds a stream
// to it that new proposals may take: a state that ends only with a token on LeaderNews,
// so a watcher of HasLeader need not look again until one comes. Always in standalone.
func (n *Node) LeaderSteady() bool {
	_, id := n.raft.LeaderWithID()
	if id == "" {
		return false
	}
	if !n.IsClustered() || string(id) == n.cfg.ID || n.fwd == nil {
		return true
	}
	st, _ := n.fwd.usable()
	return st != nil
}

// IsLeader reports whether this node leads now.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// LogFailed delivers the error of a failed write or fdatasync of the transaction log.
// The log then takes no more writes until the server restarts and replays it from
// disk, so the server stops on it, as ZooKeeper's does when its log fails.
func (n *Node) LogFailed() <-chan error { return n.logFailed }

// WaitForLeader blocks until some member leads, or the timeout passes.
func (n *Node) WaitForLeader(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if addr, _ := n.raft.LeaderWithID(); addr != "" {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("quorum: no leader elected in time")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitLeader blocks until this node leads and has applied everything committed before,
// or the timeout passes.
func (n *Node) WaitLeader(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for n.raft.State() != raft.Leader {
		if time.Now().After(deadline) {
			return errors.New("quorum: no leader elected in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := n.raft.Barrier(time.Until(deadline)).Error(); err != nil {
		return err
	}
	// A new leader writes its enforceQuota first thing (watchLeadership); serve after it.
	for n.FSM.EnforceQuota() != n.cfg.EnforceQuota {
		if time.Now().After(deadline) {
			return errors.New("quorum: enforceQuota not applied in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// writeEnforceQuota makes the log hold this leader's enforceQuota (Config.EnforceQuota).
func (n *Node) writeEnforceQuota() {
	if n.FSM.EnforceQuota() == n.cfg.EnforceQuota {
		return
	}
	// Not counted in ProposalSizes: ZooKeeper proposes nothing like it.
	e := &Entry{Op: OpSetEnforceQuota, Time: time.Now().UnixMilli(), Req: &EnforceQuotaRequest{On: n.cfg.EnforceQuota}}
	if err := n.raft.Apply(e.Marshal(), 0).Error(); err != nil {
		n.cfg.Logger.Warn("writing enforceQuota into the log failed", "err", err)
		return
	}
	n.cfg.Logger.Info("quotas enforced by the leader's setting", "zookeeper.enforceQuota", n.cfg.EnforceQuota)
}

// Propose submits an entry that is no client connection's write (a new session, a
// moved session, a catch-up sync, a leader's duty): on the leader directly, on a
// follower over its stream to the leader. A connection's writes go through its Stream,
// which keeps them in order. The future's Response is a *Result once e is applied here;
// its Error is set when the outcome is unknown (no leader, leadership lost, stream
// broken). Every such entry is safe to apply twice (a session id already taken, a
// session already moved or closed, a node already deleted, a config already set are
// all refused by Apply), so one that failed because the leader went away is proposed
// again, for up to ten heartbeat timeouts, when the future is waited for.
func (n *Node) Propose(e *Entry) Future {
	if e.Time == 0 {
		e.Time = time.Now().UnixMilli()
	}
	if e.Op == OpMoveSession {
		// The connections of the session here that began to write before are ones its
		// client left: none of their writes may follow the move (Stream.sendAll).
		n.sessionConns.of(e.Session).whileNewest(n.conns.Add(1), func() {})
	}
	return &retryFuture{n: n, e: e, f: n.propose(e), until: time.Now().Add(10 * n.cfg.HeartbeatTimeout)}
}

func (n *Node) propose(e *Entry) Future {
	p, err := n.path()
	if err != nil {
		return failedFuture{err}
	}
	if p.peer != nil {
		e.Origin, e.Conn, e.Seq = n.cfg.ID, 0, n.fwd.sysSeq.Add(1)
	}
	return n.send(e, p)
}

// leaderLost reports whether a proposal failed because the leader it went to went away.
func leaderLost(err error) bool {
	return errors.Is(err, ErrNoLeader) || errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost)
}

// retryFuture proposes its entry again while it failed because the leader went away.
type retryFuture struct {
	n     *Node
	e     *Entry
	f     Future
	until time.Time
	once  sync.Once
}

func (r *retryFuture) Error() error {
	r.once.Do(func() {
		for err := r.wait(); leaderLost(err) && time.Now().Before(r.until) && !r.n.isStopping(); err = r.wait() {
			time.Sleep(10 * time.Millisecond)
			r.f = r.n.propose(r.e)
		}
	})
	return r.f.Error()
}

// wait waits for the outcome of the proposal made last, or until the member stops: a
// leader's entry that its stopping followers never acknowledge would be answered only
// when raft steps down, a heartbeat timeout later. The outcome is then unknown. (A
// connection's write on a leader, a Stream's, still waits for raft's answer: its
// responder is not among the goroutines Server.Close waits for.)
func (r *retryFuture) wait() error {
	if d, ok := r.f.(interface{ doneCh() <-chan struct{} }); ok {
		select {
		case <-d.doneCh():
		case <-r.n.stopping:
			select {
			case <-d.doneCh(): // done too: the outcome is known
			default:
				r.f = failedFuture{errStopping} // Error and Response answer without it
			}
		}
	}
	return r.f.Error()
}

func (r *retryFuture) Response() interface{} {
	r.Error()
	return r.f.Response()
}

// Touch records that a session was heard from. The leader keeps the deadlines; a
// follower passes the news on every half tick.
func (n *Node) Touch(id int64, timeout int32) {
	if len(n.cfg.Peers) > 0 && n.raft.State() != raft.Leader {
		n.fwd.touch(id, timeout)
		return
	}
	n.duties.touch(id, timeout)
}

// Forget stops tracking a session this server closed.
func (n *Node) Forget(id int64) { n.duties.forget(id) }

// Mode is ZooKeeper's name for this server's role: standalone, leader, follower or
// observer.
func (n *Node) Mode() string {
	switch {
	case len(n.cfg.Peers) == 0:
		return "standalone"
	case n.raft.State() == raft.Leader:
		return "leader"
	case n.isObserver():
		return "observer"
	}
	return "follower"
}

// isObserver reports whether this member observes, by the current membership (the
// configured one before the first leader wrote it).
func (n *Node) isObserver() bool {
	if p, ok := n.peer(n.cfg.ID); ok {
		return p.Observer
	}
	return false
}

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

func (n *Node) learnerSeen(id string) { n.learners.Store(id, time.Now()) }

// syncWindow is Config.SyncWindow, or two ticks without one.
func (n *Node) syncWindow() time.Duration { return cmp.Or(n.cfg.SyncWindow, 2*n.cfg.TickTime) }

// Learners counts, on the leader, the members heard from within the sync window whose
// stream has not ended since, as ZooKeeper's leader counts its synced followers and
// observers (it drops a learner whose socket closed, or read nothing for syncLimit
// ticks); nonVoting counts apart the followers among them that the membership no longer
// lists (a reconfig removed them; they follow as non-voters): ZooKeeper's
// synced_non_voting_followers. Elsewhere all are 0.
func (n *Node) Learners() (followers, nonVoting, observers int) {
	if !n.IsLeader() {
		return 0, 0, 0
	}
	return n.learnersAt(time.Now())
}

// learnersAt counts the members other than this one heard from within the sync window
// before now: followers (non-voting ones included, also counted apart) and observers.
func (n *Node) learnersAt(now time.Time) (followers, nonVoting, observers int) {
	recent := now.Add(-n.syncWindow())
	m, held := n.FSM.Members()
	n.learners.Range(func(k, v any) bool {
		id := k.(string)
		if id == n.cfg.ID || v.(time.Time).Before(recent) {
			return true
		}
		if held {
			if _, listed := m.Peer(id); !listed {
				followers++
				nonVoting++
				return true
			}
		}
		switch p, ok := n.peer(id); {
		case !ok:
		case p.Observer:
			observers++
		default:
			followers++
		}
		return true
	})
	return followers, nonVoting, observers
}

// LastSnapshot describes the newest snapshot, for 4lw and tools.
func (n *Node) Stats() map[string]string { return n.raft.Stats() }

// establishRetry is how long establish waits before it tries a refused barrier again.
const establishRetry = 50 * time.Millisecond

// establish writes the first membership if the state machine lacks it
// (membershipFirst) and waits for the barrier after an election: everything committed
// before this term applied. While this member still leads the same term, a refused
// barrier is tried again, the membership proposed again before it: raft refuses both
// while a leadership transfer is on its way (ErrLeadershipTransferInProgress), and a
// transfer can fail and leave this member leading, which must still become
// established (expire sessions, answer mntr). False once it no longer leads that term.
func (n *Node) establish() (term uint64, ok bool) {
	term = n.raft.CurrentTerm()
	for refused := 0; ; refused++ {
		n.membershipFirst() // its outcome is known once the barrier is
		err := n.raft.Barrier(0).Error()
		if err == nil {
			return term, true
		}
		if n.raft.State() != raft.Leader || n.raft.CurrentTerm() != term {
			n.cfg.Logger.Warn("barrier after election failed", "err", err)
			return term, false
		}
		if refused == 0 {
			n.cfg.Logger.Warn("barrier after election refused; trying again while leading", "term", term, "err", err)
		}
		n.membershipTerm.CompareAndSwap(term, 0)
		select {
		case <-n.done:
			return term, false
		case <-time.After(establishRetry):
		}
	}
}

func (n *Node) watchLeadership() {
	for {
		select {
		case <-n.done:
			return
		case leader := <-n.notify:
			if leader {
				if n.cfg.beforeLeading != nil {
					n.cfg.beforeLeading()
				}
				term, ok := n.establish()
				if !ok {
					continue
				}
				if n.IsClustered() {
					n.cfg.Logger.Info("leading", "term", n.raft.CurrentTerm(), "zxid", fmt.Sprintf("0x%x", n.FSM.LastZxid()))
				}
				n.writeEnforceQuota()
				n.duties.start()
				n.leadingSince.Store(time.Now().UnixNano())
				n.establishedTerm.Store(term)
				n.look.serving(true)
			} else {
				if n.IsClustered() {
					n.cfg.Logger.Info("no longer leading", "term", n.raft.CurrentTerm())
				}
				n.establishedTerm.Store(0)
				n.commits.notify() // the peer streams tell their members (frameLeft)
				n.duties.stop()
				// ZooKeeper's are a leader's own: the next leadership starts from -1.
				// (Cleared on the way out, not on the way in, so that nothing proposed
				// before this goroutine hears of a new leadership is lost.)
				n.proposalSizes.reset()
			}
		}
	}
}

// restoreNewest loads the newest snapshot into fsm, if there is one, and returns its
// index (0 without one); a snapshot that does not match its meta.json, or does not
// decode, is a *persistence.CorruptError.
func restoreNewest(store *persistence.Store, fsm *FSM) (index, term uint64, err error) {
	snap, err := store.OpenNewestSnapshot()
	if err != nil || snap == nil {
		return 0, 0, err
	}
	defer snap.Close()
	rerr := fsm.Restore(io.NopCloser(snap))
	if err := snap.Verify(); err != nil {
		return 0, 0, err
	}
	if rerr != nil {
		return 0, 0, &persistence.CorruptError{Path: store.Dir + "/snapshots/" + snap.Meta.ID + "/state.bin", What: rerr.Error()}
	}
	// Raft goes on after the snapshot's index; the entries between the state's last
	// command and that index change nothing.
	fsm.appliedIndex.Store(max(fsm.appliedIndex.Load(), snap.Meta.Index))
	// A snapshot holds only what was committed: a leader that applies no command
	// before its members connect tells them this point (caughtUpSinceStart).
	fsm.committed.Store(&commitPoint{index: snap.Meta.Index, term: snap.Meta.Term})
	return snap.Meta.Index, snap.Meta.Term, nil
}

// restartTerm is raft's current term as stored, if this member's log (or its snapshot,
// at snapIndex with snapTerm) already holds an entry of it: the term it restarts within
// (Node.restartTerm); 0 otherwise.
func restartTerm(store *persistence.Store, logs raft.LogStore, snapIndex, snapTerm uint64) uint64 {
	current, err := store.Stable.GetUint64([]byte("CurrentTerm")) // raft's key
	if err != nil || current == 0 {
		return 0
	}
	held := snapTerm
	if last, err := logs.LastIndex(); err == nil && last > snapIndex {
		var l raft.Log
		if logs.GetLog(last, &l) == nil {
			held = l.Term
		}
	}
	if held != current {
		return 0
	}
	return current
}

// HandOver passes leadership to another voter and waits (up to timeout) until it leads,
// so stopping this server does not leave the cluster leaderless for an election
// timeout. It does nothing on a follower or a standalone server.
func (n *Node) HandOver(timeout time.Duration) error {
	if len(n.cfg.Peers) == 0 || n.raft.State() != raft.Leader {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- n.raft.LeadershipTransfer().Error() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("quorum: leadership transfer: %w", err)
		}
		return nil
	case <-time.After(timeout):
		return errors.New("quorum: leadership transfer timed out")
	}
}

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

package quorum

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
)

// A node's configuration: ZooKeeper's zoo.cfg as quorum needs it (the members, the
// timing, the data directory), its defaults and its checks.

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
	// NoLogSync is ZooKeeper's forceSync=no: the transaction log is never fdatasynced
	// (persistence/force_sync.go says what that risks).
	NoLogSync bool
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

// Peer is the member with id, by the current membership (the configured one before the
// first leader wrote it).
func (n *Node) Peer(id string) (Peer, bool) { return n.peer(id) }

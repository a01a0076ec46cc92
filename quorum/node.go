package quorum

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"

	"github.com/zkraft/zkraft/datatree"
)

// Config is what a node needs; the server fills it from zoo.cfg and flags.
type Config struct {
	DataDir  string           // holds raft.db (log and stable store) and snapshots/
	Tree     datatree.Options // must be the same on every server
	TickTime time.Duration    // session expiry bucket width
	// ContainerCheckInterval is how often the leader looks for empty containers and
	// expired TTL nodes (znode.container.checkIntervalMs).
	ContainerCheckInterval time.Duration
	// SnapshotThreshold is how many entries go to the log between snapshots (snapCount).
	SnapshotThreshold uint64
	// SnapshotRetain is how many snapshots are kept (autopurge.snapRetainCount).
	SnapshotRetain int
	Logger         *slog.Logger
	// OnSessionClosed is called after a closeSession entry is applied (see FSM).
	OnSessionClosed func(id int64)
}

// DefaultConfig returns ZooKeeper's defaults.
func DefaultConfig(dataDir string) Config {
	return Config{
		DataDir:                dataDir,
		Tree:                   datatree.Options{ExtendedTypes: true},
		TickTime:               2 * time.Second,
		ContainerCheckInterval: time.Minute,
		SnapshotThreshold:      100000,
		SnapshotRetain:         3,
		Logger:                 slog.Default(),
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
	case c.SnapshotRetain < 1:
		return fmt.Errorf("quorum: SnapshotRetain %d must be at least 1", c.SnapshotRetain)
	}
	return nil
}

// Node is one server's Raft member with its state machine.
type Node struct {
	cfg    Config
	FSM    *FSM
	raft   *raft.Raft
	store  *raftboltdb.BoltStore
	duties *duties
	notify chan bool
	done   chan struct{}
}

// Open starts a standalone node: a one-voter Raft cluster over an in-memory transport,
// with its log in bbolt and its snapshots on disk. A new data dir is bootstrapped.
func Open(cfg Config) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, err
	}
	// Log compaction frees many pages; a synced freelist makes every later commit write
	// it out (writes slow down as the log turns over), so the freelist is rebuilt at
	// open instead, as Consul does.
	store, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(cfg.DataDir, "raft.db"),
		BoltOptions: &bbolt.Options{Timeout: time.Second, NoFreelistSync: true, FreelistType: bbolt.FreelistMapType}})
	if err != nil {
		return nil, fmt.Errorf("quorum: open log store %s: %w", filepath.Join(cfg.DataDir, "raft.db"), err)
	}
	logs, err := raft.NewLogCache(1024, store)
	if err != nil {
		store.Close()
		return nil, err
	}
	hlog := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Error, Output: os.Stderr})
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.DataDir, cfg.SnapshotRetain, hlog)
	if err != nil {
		store.Close()
		return nil, err
	}
	id := raft.ServerID("1")
	addr, trans := raft.NewInmemTransport("")
	rc := raft.DefaultConfig()
	rc.LocalID = id
	rc.Logger = hlog
	// One voter: nobody to wait for, so elect at once and batch appends generously.
	rc.HeartbeatTimeout = 50 * time.Millisecond
	rc.ElectionTimeout = 50 * time.Millisecond
	rc.LeaderLeaseTimeout = 50 * time.Millisecond
	rc.CommitTimeout = 5 * time.Millisecond
	rc.MaxAppendEntries = 1024
	rc.BatchApplyCh = true
	rc.SnapshotThreshold = cfg.SnapshotThreshold
	rc.TrailingLogs = 10240
	notify := make(chan bool, 8)
	rc.NotifyCh = notify

	fsm := NewFSM(cfg.Tree)
	fsm.OnSessionClosed = cfg.OnSessionClosed
	has, err := raft.HasExistingState(logs, store, snaps)
	if err != nil {
		store.Close()
		return nil, err
	}
	if !has {
		conf := raft.Configuration{Servers: []raft.Server{{ID: id, Address: addr, Suffrage: raft.Voter}}}
		if err := raft.BootstrapCluster(rc, logs, store, snaps, trans, conf); err != nil {
			store.Close()
			return nil, fmt.Errorf("quorum: bootstrap: %w", err)
		}
	}
	r, err := raft.NewRaft(rc, fsm, logs, store, snaps, trans)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("quorum: start raft: %w", err)
	}
	n := &Node{cfg: cfg, FSM: fsm, raft: r, store: store, notify: notify, done: make(chan struct{})}
	n.duties = newDuties(n)
	go n.watchLeadership()
	return n, nil
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
	return n.raft.Barrier(time.Until(deadline)).Error()
}

// Propose submits e to the log. Entries proposed from one goroutine are applied in the
// order proposed. The future's Response is a *Result once e is applied here.
func (n *Node) Propose(e *Entry) raft.ApplyFuture {
	if e.Time == 0 {
		e.Time = time.Now().UnixMilli()
	}
	return n.raft.Apply(e.Marshal(), 0)
}

// Touch records that a session was heard from; only the leader keeps deadlines.
func (n *Node) Touch(id int64, timeout int32) { n.duties.touch(id, timeout) }

// Forget stops tracking a session this server closed.
func (n *Node) Forget(id int64) { n.duties.forget(id) }

// Mode is "standalone" for a one-voter cluster (the only kind this version runs).
func (n *Node) Mode() string { return "standalone" }

// LastSnapshot describes the newest snapshot, for 4lw and tools.
func (n *Node) Stats() map[string]string { return n.raft.Stats() }

func (n *Node) watchLeadership() {
	for {
		select {
		case <-n.done:
			return
		case leader := <-n.notify:
			if leader {
				if err := n.raft.Barrier(0).Error(); err != nil {
					n.cfg.Logger.Warn("barrier after election failed", "err", err)
					continue
				}
				n.duties.start()
			} else {
				n.duties.stop()
			}
		}
	}
}

// Close stops duties and Raft and closes the store. Applied entries are durable.
func (n *Node) Close() error {
	close(n.done)
	n.duties.stop()
	err := n.raft.Shutdown().Error()
	if cerr := n.store.Close(); err == nil {
		err = cerr
	}
	return err
}

var _ io.Closer = (*Node)(nil)

package quorum

import (
	"errors"
	"fmt"
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/persistence"
)

// Offline work on a stopped server's store: seeding it from an imported state, and
// loading its state for an export.

// Seed makes cfg.DataDir a store that starts from st: a Raft snapshot at index st.Zxid
// (term 1) holding it, with the configured members (cfg.Peers, or this server alone) as
// Raft's configuration. Every member of a new cluster is seeded with the same state. The
// data dir must not hold a store yet. A non-empty /zookeeper/config is emptied first, so
// the first leader writes the configured membership: an imported ensemble's would name
// its old servers.
func Seed(cfg Config, st *persistence.State) error {
	if st.Zxid < 1 {
		return errors.New("quorum: seed: the state has no zxid")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return err
	}
	store, err := persistence.Open(cfg.DataDir, cfg.SnapshotRetain, hclog.NewNullLogger())
	if err != nil {
		return err
	}
	defer store.Close()
	has, err := raft.HasExistingState(store.Log, store.Stable, store.Snapshots)
	if err != nil {
		return err
	}
	if has {
		return fmt.Errorf("quorum: seed: %s already holds a store", cfg.DataDir)
	}
	if data, stat, _ := st.Tree.Get(datatree.ConfigPath); len(data) > 0 {
		// Every member is seeded on its own: no clock, so their trees stay identical.
		st.Tree.SetConfig(datatree.Txn{Zxid: st.Zxid, Time: stat.Mtime}, []byte{})
	}
	conf := raft.Configuration{Servers: []raft.Server{{ID: "1", Address: "standalone", Suffrage: raft.Voter}}}
	if len(cfg.Peers) > 0 {
		conf.Servers = nil
		for _, p := range cfg.Peers {
			sv := raft.Server{ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.RaftAddr), Suffrage: raft.Voter}
			if p.Observer {
				sv.Suffrage = raft.Nonvoter
			}
			conf.Servers = append(conf.Servers, sv)
		}
	}
	state, err := persistence.EncodeState(st.Zxid, st.Tree, st.Sessions)
	if err != nil {
		return err
	}
	sink, err := store.Snapshots.Create(raft.SnapshotVersionMax, uint64(st.Zxid), 1, conf, uint64(st.Zxid), peerEncoder{})
	if err != nil {
		return err
	}
	if _, err := sink.Write(state); err != nil {
		sink.Cancel()
		return err
	}
	if err := sink.Close(); err != nil {
		return err
	}
	// The next election is for term 2, after the snapshot's.
	return store.Stable.SetUint64([]byte("CurrentTerm"), 1)
}

// LoadOffline returns the state a stopped server's store, or a backup, holds: its newest
// snapshot and every entry of its log after it. It reads dir without changing it. (A
// cluster member's log may end with entries it had not yet seen committed; export from
// the leader's store, or from a standalone server.)
func LoadOffline(dir string, opts datatree.Options) (*persistence.State, error) {
	store, err := persistence.OpenReadOnly(dir)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	fsm := NewFSM(opts)
	from, _, err := restoreNewest(store, fsm)
	if err != nil {
		return nil, err
	}
	last, err := store.Log.LastIndex()
	if err != nil {
		return nil, err
	}
	for i := from + 1; i <= last; i++ {
		var l raft.Log
		if err := store.Log.GetLog(i, &l); err != nil {
			return nil, fmt.Errorf("quorum: log entry %d: %w", i, err)
		}
		fsm.Apply(&l)
	}
	return &persistence.State{Zxid: fsm.LastZxid(), Tree: fsm.tree, Sessions: fsm.sessions}, nil
}

// peerEncoder is all of a transport the snapshot store uses (for the old peers field).
type peerEncoder struct{ raft.Transport }

func (peerEncoder) EncodePeer(_ raft.ServerID, addr raft.ServerAddress) []byte { return []byte(addr) }

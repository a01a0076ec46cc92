package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/server"
)

// unimportedZooKeeperData refuses to start on a data dir that holds Apache ZooKeeper's
// data (version-2/ with snapshots or transaction logs, in dataDir or dataLogDir) and no
// zkraft store: zkraft keeps its own store (DATADIR/zkraft) and would serve an empty tree
// beside the operator's data, where ZooKeeper would have loaded it. A store moved aside by
// zkraft wipe (zkraft.wiped-*) marks a member being rebuilt from its leader, which may
// start.
func unimportedZooKeeperData(dataDir, dataLogDir string) error {
	store := persistence.StoreDir(dataDir)
	if wiped, _ := filepath.Glob(store + ".wiped-*"); exists(store) || len(wiped) > 0 {
		return nil
	}
	for _, dir := range []string{dataDir, dataLogDir} {
		if dir != "" && holdsZooKeeperData(dir) {
			from := dir
			if logDir := zooKeeperLogDir(dataDir, dataLogDir); dir == dataDir && logDir != "" {
				from += " --zookeeper-log-dir " + logDir // the writes after the snapshot
			}
			return fmt.Errorf("%s holds Apache ZooKeeper's data (version-2/) and no zkraft store: started here, zkraft would serve an empty tree. "+
				"Import it first (zkraft import --from-zookeeper %s --data-dir %s, docs/operations.md), or give zkraft another dataDir", dir, from, dataDir)
		}
	}
	return nil
}

// zooKeeperLogDir is dataLogDir if it is a dir of its own that holds ZooKeeper's logs
// (the writes after dataDir's snapshot), else "".
func zooKeeperLogDir(dataDir, dataLogDir string) string {
	if dataLogDir != "" && dataLogDir != dataDir && holdsZooKeeperData(dataLogDir) {
		return dataLogDir
	}
	return ""
}

// holdsZooKeeperData reports whether dir/version-2 holds ZooKeeper snapshots or logs.
func holdsZooKeeperData(dir string) bool {
	snaps, _ := filepath.Glob(filepath.Join(dir, "version-2", "snapshot.*"))
	logs, _ := filepath.Glob(filepath.Join(dir, "version-2", "log.*"))
	return len(snaps)+len(logs) > 0
}

// adoptZooKeeperData lets a standalone server start where a standalone ZooKeeper ran, as
// ZooKeeper itself would: a data dir that holds ZooKeeper's snapshots and logs (or its
// snapshots, with the logs in dataLogDir) and no zkraft store is imported into a new
// store beside them (what `zkraft import --from-zookeeper DATADIR [--zookeeper-log-dir
// DATALOGDIR] --data-dir DATADIR` does), and the server then serves that tree and its
// sessions. ZooKeeper's files are left as they are, so the operator can go back. A
// cluster member is refused instead (unimportedZooKeeperData): each member's copy may end
// differently, and every member must be seeded from one of them (docs/operations.md).
func adoptZooKeeperData(cmd *cobra.Command, cfg server.Config, log *slog.Logger) error {
	err := unimportedZooKeeperData(cfg.DataDir, cfg.DataLogDir)
	if err == nil || len(cfg.Servers) > 0 || !holdsZooKeeperData(cfg.DataDir) {
		return err
	}
	logDir := zooKeeperLogDir(cfg.DataDir, cfg.DataLogDir)
	zst, rerr := persistence.ReadZooKeeper(cfg.DataDir, logDir)
	if rerr != nil {
		return fmt.Errorf("importing ZooKeeper's data from %s: %w", cfg.DataDir, rerr)
	}
	opts := datatree.Options{ExtendedTypes: cfg.ExtendedTypes, Emulate353TTL: cfg.Emulate353TTLNodes}
	if n := zst.KillDeadSessions(opts); n > 0 {
		log.Info("ephemeral nodes of sessions that had ended are left out, as ZooKeeper deletes them when it loads its data", "count", n)
	}
	st, rerr := zst.ToState(opts)
	if rerr != nil {
		return fmt.Errorf("importing ZooKeeper's data from %s: %w", cfg.DataDir, rerr)
	}
	log.Info("importing Apache ZooKeeper's data found in the data dir (its files are left as they are)", "dataDir", cfg.DataDir)
	// The store is seeded beside its place and renamed into it whole: an import cut
	// short (a full disk, a kill) leaves no store that a later start would take for
	// an imported one and serve empty.
	store := persistence.StoreDir(cfg.DataDir)
	tmp := store + ".importing"
	if rerr := os.RemoveAll(tmp); rerr != nil { // what an import cut short left
		return rerr
	}
	if rerr := seedInto(cmd, cfg, tmp, st, "imported"); rerr != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("importing ZooKeeper's data from %s: %w", cfg.DataDir, rerr)
	}
	if rerr := os.Rename(tmp, store); rerr != nil {
		return rerr
	}
	return persistence.SyncDir(cfg.DataDir)
}

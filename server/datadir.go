package server

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/zkraft/zkraft/persistence"
)

// ErrMissingDataDir is missingDataDir's refusal (ZooKeeper's DatadirException): zkraft
// exits with ZooKeeper's code for it.
var ErrMissingDataDir = errors.New("missing data directory")

// missingDataDir refuses to start, with zookeeper.datadir.autocreate=false, a server
// whose data dir holds neither its store (DATADIR/zkraft) nor ZooKeeper's version-2/ (as
// zkServer-initialize.sh makes it): ZooKeeper's guard against a data volume that is not
// mounted, where a server would start empty (ZOOKEEPER-1161). Only dataDir counts, as
// the store lives there: a dataLogDir on a volume that is mounted says nothing of it.
func (c *Config) missingDataDir() error {
	if !c.NoDataDirAutocreate {
		return nil
	}
	store := persistence.StoreDir(c.DataDir)
	for _, dir := range []string{store, filepath.Join(c.DataDir, "version-2")} {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return nil
		}
	}
	return fmt.Errorf("%w %s, automatic data directory creation is disabled (zookeeper.datadir.autocreate is false). "+
		"Please create this directory manually (or ZooKeeper's %s, as zkServer-initialize.sh does)", ErrMissingDataDir, store, filepath.Join(c.DataDir, "version-2"))
}

// distrustEmptyStore is zookeeper.db.autocreate=false as ZooKeeper's FileTxnSnapLog
// reads it: an empty database is not trusted (a member starting on one takes part in
// no election until it has synced with a leader; quorum.Config.DistrustEmptyStore),
// unless the marker zkServer-initialize.sh writes, "initialize", is there; every start
// deletes it. zkServer-initialize.sh writes it into dataDir, where zkraft looks;
// ZooKeeper looks beside its transaction log's version-2/, which is in dataLogDir when
// one is set, so there the script's marker does not count. With the setting at its
// default the marker is deleted too.
func (c *Config) distrustEmptyStore(log *slog.Logger) bool {
	if err := os.Remove(filepath.Join(c.DataDir, "initialize")); err == nil {
		log.Info("Initialize file found, an empty database will not block voting participation")
		return false
	}
	return c.NoDBAutocreate
}

package server

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/zkraft/zkraft/persistence"
)

// missingDataDir refuses to start, with zookeeper.datadir.autocreate=false, a server
// whose data dir holds neither its store (DATADIR/zkraft) nor ZooKeeper's version-2/ (in
// dataDir or dataLogDir, as zkServer-initialize.sh makes it): ZooKeeper's guard against a
// data volume that is not mounted, where a server would start empty (ZOOKEEPER-1161).
func (c *Config) missingDataDir() error {
	if !c.NoDataDirAutocreate {
		return nil
	}
	store := persistence.StoreDir(c.DataDir)
	dirs := []string{store, filepath.Join(c.DataDir, "version-2")}
	if c.DataLogDir != "" {
		dirs = append(dirs, filepath.Join(c.DataLogDir, "version-2"))
	}
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return nil
		}
	}
	return fmt.Errorf("missing data directory %s, automatic data directory creation is disabled (zookeeper.datadir.autocreate is false). "+
		"Please create this directory manually (or ZooKeeper's %s, as zkServer-initialize.sh does)", store, filepath.Join(c.DataDir, "version-2"))
}

package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/server/ztest"
)

// With zookeeper.datadir.autocreate=false a server whose data dir was never initialized
// (a data volume not mounted) does not start, as ZooKeeper 3.8's FileTxnSnapLog refuses
// to ("Unable to access datadir" on its stderr, the reason in its log); once the
// directory is made, as zkServer-initialize.sh makes version-2/, it starts.
func TestDataDirAutocreateOffMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	for name, start := range map[string]func(ztest.Options) (*ztest.Server, error){"zookeeper": ztest.StartZooKeeper, "zkraft": ztest.StartZkraft} {
		dir := t.TempDir()
		opts := ztest.Options{Logf: t.Logf, DataDir: dir, JVMFlags: []string{"-Dzookeeper.datadir.autocreate=false"}}
		if s, err := start(opts); err == nil {
			s.Stop()
			t.Fatalf("%s started on a data dir never initialized", name)
		} else if !strings.Contains(err.Error(), map[string]string{"zookeeper": "Unable to access datadir", "zkraft": "automatic data directory creation is disabled"}[name]) {
			t.Fatalf("%s: %v", name, err)
		}
		if err := os.Mkdir(filepath.Join(dir, "version-2"), 0o755); err != nil {
			t.Fatal(err)
		}
		s, err := start(opts)
		if err != nil {
			t.Fatalf("%s, initialized: %v", name, err)
		}
		s.Stop()
	}
}

// The store counts as the data dir: a server that has run starts again.
func TestDataDirAutocreateOffRestarts(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir, cfg.NoDataDirAutocreate = t.TempDir(), true
	if err := cfg.missingDataDir(); err == nil {
		t.Fatal("an empty data dir accepted")
	}
	if err := os.MkdirAll(filepath.Join(cfg.DataDir, "zkraft"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := cfg.missingDataDir(); err != nil {
		t.Fatal(err)
	}
	// A dataLogDir on another volume says nothing of dataDir's.
	cfg.DataDir, cfg.DataLogDir = t.TempDir(), t.TempDir()
	os.Mkdir(filepath.Join(cfg.DataLogDir, "version-2"), 0o755)
	if err := cfg.missingDataDir(); err == nil {
		t.Fatal("ZooKeeper's version-2 in dataLogDir stood for the data dir")
	}
}

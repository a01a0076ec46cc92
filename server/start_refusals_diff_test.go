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
// to: exit code 3 and "Unable to access datadir, exiting abnormally" on stderr (the
// reason in its log; zkraft prints it before that line). Once the directory is made, as
// zkServer-initialize.sh makes version-2/, it starts.
func TestDataDirAutocreateOffMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	for name, start := range map[string]func(ztest.Options) (*ztest.Server, error){"zookeeper": ztest.StartZooKeeper, "zkraft": ztest.StartZkraft} {
		dir := t.TempDir()
		opts := ztest.Options{Logf: t.Logf, DataDir: dir, JVMFlags: []string{"-Dzookeeper.datadir.autocreate=false"}}
		if s, err := start(opts); err == nil {
			s.Stop()
			t.Fatalf("%s started on a data dir never initialized", name)
		} else if !strings.Contains(err.Error(), "(exit code 3)") || !strings.Contains(err.Error(), "Unable to access datadir, exiting abnormally") {
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

// A zoo.cfg the server cannot use stops it with exit code 2 and "Invalid config, exiting
// abnormally", as ZooKeeper's main classes exit on a ConfigException.
func TestInvalidConfigExitsAsZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	for name, start := range map[string]func(ztest.Options) (*ztest.Server, error){"zookeeper": ztest.StartZooKeeper, "zkraft": ztest.StartZkraft} {
		s, err := start(ztest.Options{Logf: t.Logf, ExtraConfig: map[string]string{"tickTime": "often"}})
		if err == nil {
			s.Stop()
			t.Fatalf("%s started with tickTime=often", name)
		}
		if !strings.Contains(err.Error(), "(exit code 2)") || !strings.Contains(err.Error(), "Invalid config, exiting abnormally") {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

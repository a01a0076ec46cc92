package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/quorum"
	"github.com/zkraft/zkraft/server"
)

// `zkraft start zoo.cfg` reads that zoo.cfg, as ZooKeeper's QuorumPeerMain and
// `zkServer.sh start zoo.cfg` take it; zkraft ignored the argument and started
// standalone on 2181 with ./data.
func TestStartTakesZooCfgArgument(t *testing.T) {
	cmd := newStartCommand()
	if err := cmd.Args(cmd, []string{"a.cfg", "b.cfg"}); err == nil {
		t.Fatal("two arguments accepted")
	}
	for _, c := range []struct {
		flag string
		args []string
		want string
	}{{"", []string{"z.cfg"}, "z.cfg"}, {"z.cfg", nil, "z.cfg"}, {"z.cfg", []string{"z.cfg"}, "z.cfg"}, {"", nil, ""}} {
		if got, err := configArgument(c.flag, c.args); err != nil || got != c.want {
			t.Errorf("--config %q %q: %q, %v", c.flag, c.args, got, err)
		}
	}
	if _, err := configArgument("a.cfg", []string{"b.cfg"}); err == nil {
		t.Error("--config a.cfg b.cfg accepted")
	}
}

// `zkraft start --config /etc/zookeeper/conf/zoo.cfg` on ZooKeeper's own data dir
// served an empty tree beside ZooKeeper's snapshot and logs (checked: a node created on
// ZooKeeper 3.8.0 was not there), where ZooKeeper loads them. The start is refused until
// the data is imported; a zkraft store, or one moved aside by zkraft wipe, lets it start.
func TestZooKeeperDataDirNeedsImport(t *testing.T) {
	dir := t.TempDir()
	mkdir := func(path string) {
		if err := os.MkdirAll(filepath.Join(dir, path), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mkdir("version-2")
	if err := unimportedZooKeeperData(dir, ""); err != nil {
		t.Fatalf("an empty version-2: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "version-2", "snapshot.0"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unimportedZooKeeperData(dir, ""); err == nil || !strings.Contains(err.Error(), "zkraft import") {
		t.Fatalf("ZooKeeper's snapshot: %v", err)
	}
	logDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(logDir, "version-2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logDir, "version-2", "log.1"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unimportedZooKeeperData(t.TempDir(), logDir); err == nil {
		t.Fatal("ZooKeeper's log in dataLogDir: started")
	}
	// The import it names reads the logs too: without them it would stop at the snapshot.
	if err := unimportedZooKeeperData(dir, logDir); err == nil || !strings.Contains(err.Error(), "--zookeeper-log-dir "+logDir) {
		t.Fatalf("ZooKeeper's snapshot in dataDir, its log in dataLogDir: %v", err)
	}
	mkdir("zkraft.wiped-20260101-000000")
	if err := unimportedZooKeeperData(dir, ""); err != nil {
		t.Fatalf("a wiped member: %v", err)
	}
	mkdir("zkraft")
	if err := unimportedZooKeeperData(dir, ""); err != nil {
		t.Fatalf("an imported data dir: %v", err)
	}
}

// One server line and no myid is a standalone server in ZooKeeper 3.8 ("Invalid
// configuration, only one server specified (ignoring)", then it serves on clientPort);
// zkraft refused to start ("a cluster member needs its id").
func TestOneServerLineWithoutMyIDIsStandalone(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(path, []byte("dataDir="+dir+"\nclientPort=2999\nserver.1=127.0.0.1:2888:3888;2999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, warnings, err := loadConfig(newStartCommand(), path, envOf(nil), &server.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 0 || cfg.ClientPort != 2999 || !strings.Contains(strings.Join(warnings, "\n"), "standalone") {
		t.Fatalf("servers %+v, port %d, warnings %q", cfg.Servers, cfg.ClientPort, warnings)
	}
	// The tools that seed or read a store (import, restore, export) read it alike: an
	// import seeded a one-voter store with the server line's id, which the standalone
	// server then did not lead.
	tools, err := serverConfig(path, "")
	if err != nil || len(tools.Servers) != 0 {
		t.Fatalf("the tools' reading: servers %+v, err %v", tools.Servers, err)
	}
}

// A standalone start on a ZooKeeper data dir seeds its store beside its place and
// renames it in whole, so an import cut short leaves nothing a later start would take
// for an imported store and serve empty; what such an import left is cleared and the
// import done again. A cluster member is refused.
func TestStandaloneStartAdoptsZooKeeperData(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "version-2"), 0o755); err != nil {
		t.Fatal(err)
	}
	open := []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "world", Id: "anyone"}}}
	zst := &persistence.ZKState{LastZxid: 5, Nodes: []persistence.ZKNode{
		{Path: "/", Data: []byte{}, ACL: open},
		{Path: "/app", Data: []byte("v1"), ACL: open, Czxid: 5, Mzxid: 5, Pzxid: 5},
	}}
	f, err := os.Create(filepath.Join(dir, "version-2", persistence.SnapshotFileName(zst.LastZxid)))
	if err != nil {
		t.Fatal(err)
	}
	if err := persistence.WriteZooKeeperSnapshot(f, zst); err != nil {
		t.Fatal(err)
	}
	f.Close()
	store := persistence.StoreDir(dir)
	if err := os.MkdirAll(filepath.Join(store+".importing", "log"), 0o755); err != nil { // cut short
		t.Fatal(err)
	}
	cfg := server.DefaultConfig()
	cfg.DataDir = dir
	member := cfg
	member.Servers = []quorum.Peer{{ID: "1"}, {ID: "2"}, {ID: "3"}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := adoptZooKeeperData(newStartCommand(), member, log); err == nil || !strings.Contains(err.Error(), "zkraft import") {
		t.Fatalf("a cluster member on ZooKeeper's data: %v", err)
	}
	if err := adoptZooKeeperData(newStartCommand(), cfg, log); err != nil {
		t.Fatal(err)
	}
	if exists(store + ".importing") {
		t.Fatal("the seeding dir is left")
	}
	st, err := quorum.LoadOffline(store, datatree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if data, _, code := st.Tree.Get("/app"); code != jute.OK || string(data) != "v1" || st.Zxid != 5 {
		t.Fatalf("/app %q %v, zxid %d", data, code, st.Zxid)
	}
	if err := adoptZooKeeperData(newStartCommand(), cfg, log); err != nil {
		t.Fatalf("the next start: %v", err)
	}
}

package server

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// The migration an operator does, with the zkraft binary: a ZooKeeper 3.8 server with a
// live session is stopped, `zkraft import --from-zookeeper` seeds a zkraft data dir, and
// zkraft serves the same tree with the same stats; the live client reconnects to it with
// its ZooKeeper session, ephemeral kept. Then zkraft is written to, stopped, and
// `zkraft export --to-zookeeper` writes a snapshot ZooKeeper 3.8 starts from with the
// same tree: the rollback.
func TestMigrateFromZooKeeperAndBack(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	bin, err := ztest.ZkraftBinary()
	if err != nil {
		t.Fatal(err)
	}
	zkSrv, err := ztest.StartZooKeeper(ztest.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zkSrv.Stop() })
	port, err := ztest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	zkraftAddr := fmt.Sprintf("127.0.0.1:%d", port)

	// The live client knows both addresses, as a client of an ensemble being migrated
	// would; only ZooKeeper answers now.
	live, events, err := zk.Connect([]string{zkSrv.Addr, zkraftAddr}, 20*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(live.Close)
	for deadline := time.Now().Add(20 * time.Second); live.State() != zk.StateHasSession; {
		select {
		case <-events:
		case <-time.After(time.Until(deadline)):
			t.Fatal("no session with ZooKeeper")
		}
	}
	go func() {
		for range events {
		}
	}()
	open := zk.WorldACL(zk.PermAll)
	for _, p := range []string{"/kafka", "/kafka/brokers", "/kafka/brokers/ids", "/kafka/config"} {
		if _, err := live.Create(p, []byte("d"+p), 0, open); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := live.Create("/kafka/brokers/ids/1", []byte(`{"host":"b1"}`), zk.FlagEphemeral, open); err != nil {
		t.Fatal(err)
	}
	if _, err := live.Create("/kafka/seq-", nil, zk.FlagSequence, zk.DigestACL(zk.PermAll, "admin", "pw")); err != nil {
		t.Fatal(err)
	}
	if _, err := live.Set("/kafka/config", []byte("v2"), -1); err != nil {
		t.Fatal(err)
	}
	session := live.SessionID()
	before := migSnapshotTree(t, adminReader(t, zkSrv.Addr))
	if err := zkSrv.Kill(); err != nil {
		t.Fatal(err)
	}

	dataDir := t.TempDir()
	out, err := exec.Command(bin, "import", "--from-zookeeper", zkSrv.DataDir, "--data-dir", dataDir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "imported") {
		t.Fatalf("zkraft import: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	cfg := DefaultConfig()
	cfg.ClientPort, cfg.ClientPortAddress, cfg.DataDir = port, "127.0.0.1", dataDir
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	// The live client reconnects to zkraft with its ZooKeeper session and password.
	var ok bool
	if err := retryLoss(t, func() (err error) { ok, _, err = live.Exists("/kafka/brokers/ids/1"); return }); err != nil || !ok {
		t.Fatalf("the live client on zkraft: ephemeral there %v, err %v", ok, err)
	}
	if live.SessionID() != session || live.State() != zk.StateHasSession {
		t.Fatalf("the client did not keep its ZooKeeper session: %#x (was %#x), %v", live.SessionID(), session, live.State())
	}
	after := migSnapshotTree(t, adminReader(t, zkraftAddr))
	migCompareSeen(t, after, before)

	// Write on zkraft, then roll back to ZooKeeper with what zkraft holds.
	if _, err := live.Create("/kafka/on-zkraft", []byte("new"), 0, open); err != nil {
		t.Fatal(err)
	}
	if _, err := live.Set("/kafka/brokers", []byte("changed"), -1); err != nil {
		t.Fatal(err)
	}
	live.Close() // its ephemeral goes, through zkraft's log
	check := adminReader(t, zkraftAddr)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if ok, _, err := check.Exists("/kafka/brokers/ids/1"); err == nil && !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the closed session's ephemeral is still there")
		}
	}
	final := migSnapshotTree(t, check)
	s.Close()
	zkDir := t.TempDir()
	out, err = exec.Command(bin, "export", "--to-zookeeper", zkDir, "--data-dir", dataDir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "exported") {
		t.Fatalf("zkraft export: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	back, err := ztest.StartZooKeeper(ztest.Options{Logf: t.Logf, DataDir: zkDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { back.Stop() })
	onZK := migSnapshotTree(t, adminReader(t, back.Addr))
	if _, ok := onZK["/kafka/on-zkraft"]; !ok {
		t.Fatal("the write made on zkraft is not in the exported snapshot")
	}
	migCompareSeen(t, onZK, final)
}

// adminReader is a session that may read the digest-protected node.
func adminReader(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c := migConnect(t, addr, 10*time.Second)
	t.Cleanup(c.Close)
	if err := c.AddAuth("digest", []byte("admin:pw")); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestZkraftStartsWhereAStandaloneZooKeeperRan: the one-command swap. zkraft started with
// the zoo.cfg a standalone ZooKeeper 3.8 ran with (same dataDir) serves ZooKeeper's tree,
// with the stats it had, and the sessions it had (an ephemeral of a live one stays), as
// ZooKeeper would after a restart; ZooKeeper's files are left as they were. A write made on zkraft is still there after zkraft restarts (the import is done
// once). Before, zkraft served an empty tree there, then refused to start.
func TestZkraftStartsWhereAStandaloneZooKeeperRan(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	dataDir := t.TempDir()
	zkSrv, err := ztest.StartZooKeeper(ztest.Options{Logf: t.Logf, DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zkSrv.Stop() })
	live, _, err := zk.Connect([]string{zkSrv.Addr}, 20*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(live.Close)
	open := zk.WorldACL(zk.PermAll)
	if err := retryLoss(t, func() error { _, err := live.Create("/app", []byte("v1"), 0, open); return err }); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/app/config", "/app/lock-"} {
		if _, err := live.Create(p, []byte("d"), 0, open); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := live.Create("/app/owner", nil, zk.FlagEphemeral, open); err != nil {
		t.Fatal(err)
	}
	if _, err := live.Set("/app/config", []byte("v2"), -1); err != nil {
		t.Fatal(err)
	}
	session := live.SessionID()
	before := migSnapshotTree(t, adminReader(t, zkSrv.Addr))
	zkFiles := func() []string {
		names, _ := filepath.Glob(filepath.Join(dataDir, "version-2", "*"))
		return names
	}
	if err := zkSrv.Kill(); err != nil {
		t.Fatal(err)
	}
	kept := zkFiles()

	zr, err := ztest.StartZkraft(ztest.Options{Logf: t.Logf, DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zr.Stop() })
	if !strings.Contains(zr.Log(), "imported") {
		t.Errorf("zkraft's log does not say it imported ZooKeeper's data:\n%s", zr.Log())
	}
	migCompareSeen(t, migSnapshotTree(t, adminReader(t, zr.Addr)), before)
	if got := zkFiles(); strings.Join(got, " ") != strings.Join(kept, " ") {
		t.Errorf("ZooKeeper's files changed: %v, were %v", got, kept)
	}
	// The live session's ephemeral is there.
	moved, _, err := zk.Connect([]string{zr.Addr}, 20*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(moved.Close)
	var ok bool
	if err := retryLoss(t, func() (err error) { ok, _, err = moved.Exists("/app/owner"); return }); err != nil || !ok {
		t.Fatalf("the ephemeral of the live session: there %v, err %v", ok, err)
	}
	if _, err := moved.Create("/app/on-zkraft", nil, 0, open); err != nil {
		t.Fatal(err)
	}
	if err := zr.Stop(); err != nil {
		t.Fatal(err)
	}
	zr, err = ztest.StartZkraft(ztest.Options{Logf: t.Logf, DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zr.Stop() })
	after := adminReader(t, zr.Addr)
	if ok, _, err := after.Exists("/app/on-zkraft"); err != nil || !ok {
		t.Fatalf("the write made on zkraft after the import, after a restart: there %v, err %v", ok, err)
	}
	if ok, _, err := after.Exists("/app/owner"); err != nil || !ok {
		t.Fatalf("the ephemeral of ZooKeeper's session %#x after a restart: there %v, err %v", session, ok, err)
	}
}

// A ZooKeeper that keeps its transaction logs apart (dataLogDir, as the official image
// does with /datalog) is imported whole when its log dir is given. Given the data dir
// alone, which then holds only snapshots, the import says that the writes after the
// snapshot are missing rather than passing the snapshot's state off as the whole.
func TestImportZooKeeperWithDataLogDir(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	bin, err := ztest.ZkraftBinary()
	if err != nil {
		t.Fatal(err)
	}
	logDir := t.TempDir()
	zkSrv, err := ztest.StartZooKeeper(ztest.Options{Logf: t.Logf, ExtraConfig: map[string]string{"dataLogDir": logDir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zkSrv.Stop() })
	c := migConnect(t, zkSrv.Addr, 10*time.Second)
	t.Cleanup(c.Close)
	create := func(c *zk.Conn, paths ...string) {
		t.Helper()
		for _, p := range paths {
			if _, err := c.Create(p, []byte(p), 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
		}
	}
	create(c, "/app", "/app/a")
	// A restart takes a snapshot (snapshot.<zxid> in the data dir); what comes after it
	// is only in the log dir.
	c.Close()
	if err := zkSrv.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := zkSrv.Restart(true); err != nil {
		t.Fatal(err)
	}
	c = migConnect(t, zkSrv.Addr, 10*time.Second)
	t.Cleanup(c.Close)
	create(c, "/app/b", "/after")
	seen := migSnapshotTree(t, c)
	if err := zkSrv.Kill(); err != nil {
		t.Fatal(err)
	}

	out, err := exec.Command(bin, "import", "--from-zookeeper", zkSrv.DataDir, "--data-dir", t.TempDir()).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--zookeeper-log-dir") {
		t.Fatalf("import of the data dir alone: %v, no word of the missing logs:\n%s", err, out)
	}

	dataDir := t.TempDir()
	out, err = exec.Command(bin, "import", "--from-zookeeper", zkSrv.DataDir, "--zookeeper-log-dir", logDir, "--data-dir", dataDir).CombinedOutput()
	if err != nil || strings.Contains(string(out), "warning") {
		t.Fatalf("import with the log dir: %v\n%s", err, out)
	}
	s := startServer(t, func(c *Config) { c.DataDir = dataDir })
	migCompareSeen(t, migSnapshotTree(t, migConnect(t, s.Addr().String(), 10*time.Second)), seen)

	// The two dirs given the wrong way round are refused, as ZooKeeper refuses them.
	out, err = exec.Command(bin, "import", "--from-zookeeper", logDir, "--zookeeper-log-dir", zkSrv.DataDir, "--data-dir", t.TempDir()).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "check the ZooKeeper data dir and log dir") {
		t.Fatalf("import with the dirs swapped: %v\n%s", err, out)
	}

	// A standalone zkraft started with ZooKeeper's dataDir and dataLogDir imports both.
	zr, err := ztest.StartZkraft(ztest.Options{Logf: t.Logf, DataDir: zkSrv.DataDir, ExtraConfig: map[string]string{"dataLogDir": logDir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zr.Stop() })
	migCompareSeen(t, migSnapshotTree(t, migConnect(t, zr.Addr, 10*time.Second)), seen)
}

package server

import (
	"fmt"
	"os/exec"
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

package server

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/server/ztest"
)

// ZooKeeper 3.8 and zkraft start on the same ZooKeeper data dir (zkraft adopts it, as
// `zkraft import` does) whose snapshot holds an ephemeral of a session that had ended and
// a TTL node in ZooKeeper 3.5.3's layout (the top bit and the TTL). Both drop the ended
// session's ephemeral when they load (ZooKeeperServer.loadData), setting the root's pzxid
// to the snapshot's zxid; the 3.5.3 node goes the same way, unless
// zookeeper.emulate353TTLNodes=true, when both serve it as a TTL node (its owner reads
// 0) and delete it once its TTL has passed. Everything a client sees must match, right
// after the start and once the TTL node is gone.
func TestDeadSessionsAndEmulate353MatchZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	const ttl = 8000 // ms: both servers start and are read within it
	st := &persistence.ZKState{LastZxid: 5, Sessions: []persistence.ZKSession{{ID: 0x77, Timeout: 30000}}, Nodes: []persistence.ZKNode{
		{Path: "/", Data: []byte{}, ACL: openACL, Pzxid: 4, Cversion: 4},
		{Path: "/keep", Data: []byte("k"), ACL: openACL, Czxid: 1, Mzxid: 1, Pzxid: 1},
		{Path: "/live", Data: []byte{}, ACL: openACL, Czxid: 2, Mzxid: 2, Pzxid: 2, EphemeralOwner: 0x77},
		{Path: "/old353", Data: []byte{}, ACL: openACL, Czxid: 3, Mzxid: 3, Pzxid: 3, EphemeralOwner: -0x8000000000000000 | ttl,
			Mtime: time.Now().UnixMilli()},
		{Path: "/orphan", Data: []byte{}, ACL: openACL, Czxid: 4, Mzxid: 4, Pzxid: 4, EphemeralOwner: 0x1234},
		{Path: "/zookeeper", Data: []byte{}, ACL: openACL},
		{Path: "/zookeeper/config", Data: []byte{}, ACL: []jute.ACL{{Perms: jute.PermRead, Id: openACL[0].Id}}, Aversion: -1},
		{Path: "/zookeeper/quota", Data: []byte{}, ACL: openACL},
	}}
	var snap bytes.Buffer
	if err := persistence.WriteZooKeeperSnapshot(&snap, st); err != nil {
		t.Fatal(err)
	}
	for _, emulate := range []bool{false, true} {
		t.Run(fmt.Sprintf("emulate353TTLNodes=%v", emulate), func(t *testing.T) {
			flags := []string{"-Dznode.container.checkIntervalMs=100"}
			if emulate {
				flags = append(flags, "-Dzookeeper.emulate353TTLNodes=true")
			}
			var trees []map[string]migNode
			var servers []*ztest.Server
			for _, start := range []func(ztest.Options) (*ztest.Server, error){ztest.StartZooKeeper, ztest.StartZkraft} {
				dir := t.TempDir()
				os.MkdirAll(filepath.Join(dir, "version-2"), 0o755)
				if err := os.WriteFile(filepath.Join(dir, "version-2", persistence.SnapshotFileName(st.LastZxid)), snap.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				s, err := start(ztest.Options{Logf: t.Logf, DataDir: dir, JVMFlags: flags})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Stop()
				servers = append(servers, s)
			}
			for _, s := range servers {
				c := migConnect(t, s.Addr, 10*time.Second)
				trees = append(trees, migSnapshotTree(t, c))
				c.Close()
			}
			if time.Since(time.UnixMilli(st.Nodes[3].Mtime)) > ttl*time.Millisecond {
				t.Skip("the machine took longer than the TTL to start both servers")
			}
			zk, us := trees[0], trees[1]
			_, has := zk["/old353"]
			if has != emulate || zk["/orphan"].stat.Czxid != 0 || zk["/live"].stat.EphemeralOwner != 0x77 {
				t.Fatalf("ZooKeeper did not load as this test expects: %v", zk)
			}
			compareTrees(t, "after the start", zk, us)

			if emulate {
				for _, s := range servers {
					c := migConnect(t, s.Addr, 10*time.Second)
					deadline := time.Now().Add(30 * time.Second)
					for ok, _, _ := c.Exists("/old353"); ok; ok, _, _ = c.Exists("/old353") {
						if time.Now().After(deadline) {
							t.Fatalf("%s: the 3.5.3 TTL node is still there", s.Name)
						}
						time.Sleep(100 * time.Millisecond)
					}
					c.Close()
				}
			}
		})
	}
}

// compareTrees fails on the first node that differs in data, ACL or stat.
func compareTrees(t *testing.T, when string, zk, us map[string]migNode) {
	t.Helper()
	for p, want := range zk {
		got, ok := us[p]
		if !ok {
			t.Fatalf("%s: zkraft has no %s", when, p)
		}
		if got.stat != want.stat || !migSameData(got.data, want.data) || fmt.Sprint(got.acl) != fmt.Sprint(want.acl) {
			t.Fatalf("%s: %s is %q %+v %v on zkraft, %q %+v %v on ZooKeeper", when, p, got.data, got.stat, got.acl, want.data, want.stat, want.acl)
		}
	}
	for p := range us {
		if _, ok := zk[p]; !ok {
			t.Fatalf("%s: zkraft has %s, ZooKeeper not", when, p)
		}
	}
}

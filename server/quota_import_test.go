package server

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/server/ztest"
)

// A ZooKeeper 3.8 data dir with a quota imports with the stats its clients saw: its
// transaction log holds the stats node only as created ("count=0,bytes=0"), so the
// import counts the subtree again as ZooKeeper does when it loads its database, and the
// imported quota is enforced.
func TestZooKeeperQuotaImport(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	srv, err := ztest.StartZooKeeper(ztest.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	c := migConnect(t, srv.Addr, 10*time.Second)
	t.Cleanup(c.Close)
	open := zk.WorldACL(zk.PermAll)
	for _, n := range []struct{ path, data string }{
		{"/q", "0"}, {"/q/a", "aa"}, {"/zookeeper/quota/q", ""},
		{"/zookeeper/quota/q/zookeeper_limits", "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=5"},
		{"/zookeeper/quota/q/zookeeper_stats", "count=0,bytes=0"},
		{"/q/b", "bbb"}, {"/q/c", "c"},
	} {
		if _, err := c.Create(n.path, []byte(n.data), 0, open); err != nil {
			t.Fatalf("create %s: %v", n.path, err)
		}
	}
	if _, err := c.Set("/q/a", []byte("aaaa"), -1); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("/q/c", -1); err != nil {
		t.Fatal(err)
	}
	seen, _, err := c.Get("/zookeeper/quota/q/zookeeper_stats")
	if err != nil || string(seen) != "count=3,bytes=8" {
		t.Fatalf("ZooKeeper's stats: %q %v", seen, err)
	}
	if err := srv.Kill(); err != nil { // the state is in the startup snapshot and the log
		t.Fatal(err)
	}
	c.Close()
	st, err := persistence.ReadZooKeeper(srv.DataDir, "")
	if err != nil {
		t.Fatal(err)
	}
	state, err := st.ToState(datatree.Options{ExtendedTypes: true})
	if err != nil {
		t.Fatal(err)
	}
	tree := state.Tree
	if d, _, _ := tree.Get("/zookeeper/quota/q/zookeeper_stats"); string(d) != string(seen) {
		t.Fatalf("imported stats %q, ZooKeeper's clients saw %q", d, seen)
	}
	tree.SetEnforceQuota(true)
	tx := datatree.Txn{Zxid: st.LastZxid + 1, Time: time.Now().UnixMilli()}
	for i, want := range []jute.Code{jute.OK, jute.OK, jute.ErrQuotaExceeded} {
		_, code, _ := tree.Apply(tx, jute.OpCreate, &jute.CreateRequest{Path: "/q/n" + string(rune('0'+i)), Acl: []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "world", Id: "anyone"}}}})
		if code != want {
			t.Fatalf("create %d on the imported tree: %v, want %v", i, code, want)
		}
		tx.Zxid++
	}
}

package server

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/server/ztest"
)

// migNode is what a client sees of one znode.
type migNode struct {
	data []byte
	acl  []zk.ACL
	stat zk.Stat
}

func migConnect(t *testing.T, addr string, timeout time.Duration) *zk.Conn {
	t.Helper()
	c, events, err := zk.Connect([]string{addr}, timeout, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(15 * time.Second)
	for c.State() != zk.StateHasSession {
		select {
		case <-events:
		case <-deadline:
			c.Close()
			t.Fatalf("no session with %s", addr)
		}
	}
	go func() { // keep the event channel drained
		for range events {
		}
	}()
	return c
}

// migSnapshotTree reads every node below "/" (the system nodes included).
func migSnapshotTree(t *testing.T, c *zk.Conn) map[string]migNode {
	t.Helper()
	out := map[string]migNode{}
	var visit func(path string)
	visit = func(path string) {
		data, st, err := c.Get(path)
		if err != nil {
			t.Fatalf("get %s: %v", path, err)
		}
		acl, _, err := c.GetACL(path)
		if err != nil {
			t.Fatalf("getACL %s: %v", path, err)
		}
		out[path] = migNode{data: data, acl: acl, stat: *st}
		kids, _, err := c.Children(path)
		if err != nil {
			t.Fatalf("children %s: %v", path, err)
		}
		sort.Strings(kids)
		for _, k := range kids {
			if path == "/" {
				visit("/" + k)
			} else {
				visit(path + "/" + k)
			}
		}
	}
	visit("/")
	return out
}

func migSameData(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func migACL(acl []jute.ACL) []zk.ACL {
	out := make([]zk.ACL, len(acl))
	for i, a := range acl {
		out[i] = zk.ACL{Perms: a.Perms, Scheme: a.Id.Scheme, ID: a.Id.Id}
	}
	return out
}

// migClientStat is DataNode.copyStat over a stored node.
func migClientStat(n persistence.ZKNode, numChildren int32) zk.Stat {
	owner := n.EphemeralOwner
	if owner == -0x8000000000000000 || owner&-0x0100000000000000 == -0x0100000000000000 {
		owner = 0 // container or TTL
	}
	return zk.Stat{
		Czxid: n.Czxid, Mzxid: n.Mzxid, Ctime: n.Ctime, Mtime: n.Mtime,
		Version: n.Version, Cversion: n.Cversion*2 - numChildren, Aversion: n.Aversion,
		EphemeralOwner: owner, DataLength: int32(len(n.Data)), NumChildren: numChildren, Pzxid: n.Pzxid,
	}
}

// migCompareState checks st node by node against what a client saw.
func migCompareState(t *testing.T, st *persistence.ZKState, seen map[string]migNode) {
	t.Helper()
	kids := map[string]int32{}
	for _, n := range st.Nodes {
		if n.Path != "/" {
			kids[filepath.Dir(n.Path)]++
		}
	}
	got := map[string]bool{}
	for _, n := range st.Nodes {
		got[n.Path] = true
		want, ok := seen[n.Path]
		if !ok {
			t.Errorf("%s is in the data dir but no client saw it", n.Path)
			continue
		}
		if !migSameData(n.Data, want.data) {
			t.Errorf("%s: data %q (nil %v), client saw %q (nil %v)", n.Path, n.Data, n.Data == nil, want.data, want.data == nil)
		}
		if a := migACL(n.ACL); fmt.Sprint(a) != fmt.Sprint(want.acl) {
			t.Errorf("%s: ACL %v, client saw %v", n.Path, a, want.acl)
		}
		if s := migClientStat(n, kids[n.Path]); s != want.stat {
			t.Errorf("%s: stat\n %+v, client saw\n %+v", n.Path, s, want.stat)
		}
	}
	for p := range seen {
		if !got[p] {
			t.Errorf("client saw %s, missing from the data dir", p)
		}
	}
}

// migCompareSeen checks what a client sees now against what it saw before.
func migCompareSeen(t *testing.T, now, before map[string]migNode) {
	t.Helper()
	for p, b := range before {
		n, ok := now[p]
		if !ok {
			t.Errorf("%s is gone", p)
			continue
		}
		if !migSameData(n.data, b.data) || fmt.Sprint(n.acl) != fmt.Sprint(b.acl) || n.stat != b.stat {
			t.Errorf("%s changed:\n now    %q %v %+v\n before %q %v %+v", p, n.data, n.acl, n.stat, b.data, b.acl, b.stat)
		}
	}
	for p := range now {
		if _, ok := before[p]; !ok {
			t.Errorf("%s is new", p)
		}
	}
}

// A real ZooKeeper 3.8's data dir is read node by node as its clients saw it, and a
// snapshot written from that state starts a second ZooKeeper 3.8 with the same tree.
func TestZooKeeperDataDirRoundTrip(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	srv, err := ztest.StartZooKeeper(ztest.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })

	c := migConnect(t, srv.Addr, 10*time.Second)
	t.Cleanup(c.Close)
	// The ephemeral's owner: a long enough timeout that its session is still alive
	// when the second server has loaded it and we have read the tree.
	const ephTimeout = 16 * time.Second
	owner := migConnect(t, srv.Addr, ephTimeout)
	t.Cleanup(owner.Close)
	if err := c.AddAuth("digest", []byte("alice:pw")); err != nil {
		t.Fatal(err)
	}
	open := zk.WorldACL(zk.PermAll)
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Create("/app", []byte("v0"), 0, open))
	must(c.Create("/app/null", nil, 0, open))
	must(c.Create("/app/empty", []byte{}, 0, open))
	var seqs []string
	for i := 0; i < 3; i++ {
		name, err := c.Create("/app/seq-", []byte(fmt.Sprint(i)), zk.FlagSequence, open)
		must(name, err)
		seqs = append(seqs, name)
	}
	must(owner.Create("/app/eph", []byte("mine"), zk.FlagEphemeral, open))
	must(c.CreateContainer("/app/box", []byte("c"), zk.FlagContainer, open))
	must(c.Create("/app/box/item", []byte("i"), 0, open))
	must(c.CreateTTL("/app/ttl", []byte("t"), zk.FlagTTL, open, time.Hour))
	secret := append(zk.DigestACL(zk.PermAll, "alice", "pw"), zk.ACL{Perms: zk.PermRead, Scheme: "ip", ID: "127.0.0.1"})
	must(c.Create("/app/secret", []byte("s"), 0, secret))
	for i := 1; i <= 3; i++ {
		must(c.Set("/app", []byte(fmt.Sprintf("v%d", i)), -1))
	}
	must(c.Create("/app/acl", []byte("a"), 0, open))
	must(c.SetACL("/app/acl", append(zk.WorldACL(zk.PermRead|zk.PermWrite), zk.DigestACL(zk.PermAll, "alice", "pw")...), -1))
	must(c.Create("/app/gone", []byte("x"), 0, open))
	must(nil, c.Delete("/app/gone", -1))
	must(c.Multi(
		&zk.CreateRequest{Path: "/app/multi", Data: []byte("m"), Acl: open},
		&zk.CreateRequest{Path: "/app/multi/a", Data: nil, Acl: open},
		&zk.SetDataRequest{Path: "/app/empty", Data: []byte("filled"), Version: 0},
		&zk.DeleteRequest{Path: seqs[0], Version: -1},
		&zk.CheckVersionRequest{Path: "/app", Version: 3},
	))
	// A failed multi is logged as error txns and changes nothing.
	if _, err := c.Multi(
		&zk.CreateRequest{Path: "/app/never", Data: []byte("n"), Acl: open},
		&zk.CheckVersionRequest{Path: "/app", Version: 99},
	); err == nil {
		t.Fatal("failing multi succeeded")
	}
	seen := migSnapshotTree(t, c)
	if len(seen) < 16 {
		t.Fatalf("only %d nodes", len(seen))
	}
	ownerID := owner.SessionID()

	// SIGKILL: the state is in the startup snapshot plus the log.
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	owner.Close()
	c.Close()
	st, err := persistence.ReadZooKeeper(srv.DataDir, "")
	if err != nil {
		t.Fatal(err)
	}
	migCompareState(t, st, seen)
	var found bool
	for _, s := range st.Sessions {
		if s.ID == ownerID {
			found = true
			if s.Timeout != int32(ephTimeout/time.Millisecond) {
				t.Errorf("session %#x timeout %d, want %d", s.ID, s.Timeout, ephTimeout/time.Millisecond)
			}
		}
	}
	if !found {
		t.Errorf("live session %#x not in %+v", ownerID, st.Sessions)
	}
	if st.LastZxid < seen["/app"].stat.Mzxid {
		t.Errorf("LastZxid %#x below /app's mzxid", st.LastZxid)
	}
	if n := migFind(st, "/app/null"); n == nil || n.Data != nil {
		t.Errorf("/app/null: %+v, want null data", n)
	}

	// zkraft's tree from the same state: what its clients would see is the same.
	state, err := st.ToState(datatree.Options{ExtendedTypes: true})
	if err != nil {
		t.Fatal(err)
	}
	tree := state.Tree
	for p, want := range seen {
		data, s, code := tree.Get(p)
		if code != jute.OK {
			t.Errorf("zkraft tree: %s: %v", p, code)
			continue
		}
		got := zk.Stat{Czxid: s.Czxid, Mzxid: s.Mzxid, Ctime: s.Ctime, Mtime: s.Mtime, Version: s.Version,
			Cversion: s.Cversion, Aversion: s.Aversion, EphemeralOwner: s.EphemeralOwner,
			DataLength: s.DataLength, NumChildren: s.NumChildren, Pzxid: s.Pzxid}
		if got != want.stat || !migSameData(data, want.data) {
			t.Errorf("zkraft tree: %s: %q %+v, ZooKeeper gave %q %+v", p, data, got, want.data, want.stat)
		}
		acl, _, _ := tree.ACL(p)
		if fmt.Sprint(migACL(acl)) != fmt.Sprint(want.acl) {
			t.Errorf("zkraft tree: %s: ACL %v, ZooKeeper gave %v", p, acl, want.acl)
		}
	}

	// Export: a second ZooKeeper starts from the written snapshot alone.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "version-2"), 0o755); err != nil {
		t.Fatal(err)
	}
	var sb bytes.Buffer
	if err := persistence.WriteZooKeeperSnapshot(&sb, st); err != nil {
		t.Fatal(err)
	}
	snapName := filepath.Join(dir, "version-2", fmt.Sprintf("snapshot.%x", st.LastZxid))
	if err := os.WriteFile(snapName, sb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	srv2, err := ztest.StartZooKeeper(ztest.Options{Logf: t.Logf, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv2.Stop() })
	c2 := migConnect(t, srv2.Addr, 10*time.Second)
	t.Cleanup(c2.Close)
	if err := c2.AddAuth("digest", []byte("alice:pw")); err != nil {
		t.Fatal(err)
	}
	t.Logf("imported %d nodes, %d sessions, last zxid %#x", len(st.Nodes), len(st.Sessions), st.LastZxid)
	// The imported session is alive (its ephemeral is still there) until it expires.
	migCompareSeen(t, migSnapshotTree(t, c2), seen)

	// Nobody reconnects as the imported session, so ZooKeeper expires it after its
	// timeout: a closeSession txn deletes the ephemeral, which moves the parent's
	// pzxid and child version like any delete.
	deadline := time.Now().Add(ephTimeout + 20*time.Second)
	for {
		ok, _, err := c2.Exists("/app/eph")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/app/eph still there %v after the restart", ephTimeout+20*time.Second)
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, app, err := c2.Get("/app")
	if err != nil {
		t.Fatal(err)
	}
	before := seen["/app"].stat
	if app.Pzxid <= st.LastZxid || app.Cversion != before.Cversion+1 || app.NumChildren != before.NumChildren-1 ||
		app.Mzxid != before.Mzxid || app.Version != before.Version {
		t.Errorf("/app after expiry %+v, before %+v (last imported zxid %#x)", *app, before, st.LastZxid)
	}
}

func migFind(st *persistence.ZKState, path string) *persistence.ZKNode {
	for i := range st.Nodes {
		if st.Nodes[i].Path == path {
			return &st.Nodes[i]
		}
	}
	return nil
}

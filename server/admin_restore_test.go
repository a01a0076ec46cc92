package server

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/server/ztest"
)

// adminPost posts body and returns the status and the JSON answer.
func adminPost(t *testing.T, url, auth string, body []byte) (int, map[string]any) {
	t.Helper()
	status, _, b := adminRequest(t, "POST", url, auth, bytes.NewReader(body))
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("POST %s: %d, not JSON: %q", url, status, b)
	}
	return status, out
}

// restoreFixture is what a restore test sets up through a client on addr before it
// takes the snapshot, and changes after.
type restoreFixture struct {
	client *rawClient
	eph    *rawClient // a session with a short timeout that owns /eph
}

func newRestoreFixture(t *testing.T, addr string) *restoreFixture {
	t.Helper()
	f := &restoreFixture{client: dial(t, addr), eph: dial(t, addr)}
	f.client.connect(0, nil)
	if r := f.eph.tryConnect(jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 1000, Passwd: make([]byte, 16)}}); r == nil || r.TimeOut > 2000 {
		t.Fatalf("short session: %+v", r)
	}
	for _, p := range []string{"/keep", "/keep/child", "/gone"} {
		if h := f.client.call(jute.OpCreate, &jute.CreateRequest{Path: p, Data: []byte("v1"), Acl: openACL}, &jute.CreateResponse{}); h.Err != 0 {
			t.Fatalf("create %s: %d", p, h.Err)
		}
	}
	if h := f.eph.call(jute.OpCreate, &jute.CreateRequest{Path: "/eph", Acl: openACL, Flags: jute.FlagEphemeral}, &jute.CreateResponse{}); h.Err != 0 {
		t.Fatalf("create /eph: %d", h.Err)
	}
	return f
}

// change moves the state away from the snapshot: a new value, a node gone, a new node,
// and the short session closed (its ephemeral gone).
func (f *restoreFixture) change(t *testing.T) {
	t.Helper()
	c := f.client
	for _, h := range []jute.ReplyHeader{
		c.call(jute.OpSetData, &jute.SetDataRequest{Path: "/keep", Data: []byte("v2"), Version: -1}, &jute.SetDataResponse{}),
		c.call(jute.OpDelete, &jute.DeleteRequest{Path: "/gone", Version: -1}, nil),
		c.call(jute.OpCreate, &jute.CreateRequest{Path: "/new", Acl: openACL}, &jute.CreateResponse{}),
		f.eph.call(jute.OpCloseSession, nil, nil),
	} {
		if h.Err != 0 {
			t.Fatalf("change: %d", h.Err)
		}
	}
}

// checkRestored reads the snapshot's state through a new session on addr: the value and
// nodes of the snapshot, and the short session's ephemeral back (its owner in the state
// again). It returns that session's id.
func checkRestored(t *testing.T, addr string, ephOwner int64) *rawClient {
	t.Helper()
	c := dial(t, addr)
	c.connect(0, nil)
	var got jute.GetDataResponse
	if h := c.call(jute.OpGetData, &jute.GetDataRequest{Path: "/keep"}, &got); h.Err != 0 || string(got.Data) != "v1" || got.Stat.Version != 0 {
		t.Fatalf("/keep after the restore: %d %q version %d, want v1 version 0", h.Err, got.Data, got.Stat.Version)
	}
	for path, want := range map[string]jute.Code{"/keep/child": 0, "/gone": 0, "/new": jute.ErrNoNode, "/eph": 0} {
		var ex jute.ExistsResponse
		h := c.call(jute.OpExists, &jute.ExistsRequest{Path: path}, &ex)
		if jute.Code(h.Err) != want {
			t.Fatalf("exists %s after the restore: %d, want %d", path, h.Err, want)
		}
		if path == "/eph" && ex.Stat.EphemeralOwner != ephOwner {
			t.Fatalf("/eph owner 0x%x, want 0x%x", ex.Stat.EphemeralOwner, ephOwner)
		}
	}
	return c
}

// awaitNoNode waits until path is gone as seen from c.
func awaitNoNode(t *testing.T, c *rawClient, path string, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(50 * time.Millisecond) {
		if h := c.call(jute.OpExists, &jute.ExistsRequest{Path: path}, &jute.ExistsResponse{}); jute.Code(h.Err) == jute.ErrNoNode {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still there after %v", path, within)
		}
	}
}

// A restore on a standalone server: the snapshot's state comes back whole (values,
// nodes, the ephemeral of a session that had closed since), at a zxid past every one
// before; the clients are disconnected; the session that came back expires once its
// timeout passes without it (the leader's tracker holds the restored sessions); and the
// restored state, and a write after it, survive a restart.
func TestAdminRestoreReplacesTheState(t *testing.T) {
	mod := func(c *Config) {
		c.AdminEnabled, c.AdminHost, c.AdminPort = true, "127.0.0.1", mustFreePort(t)
		c.TickTime = 200 * time.Millisecond
		c.AdminAuth.RateLimitInterval = 0
	}
	s := startServer(t, mod)
	cfg := s.cfg
	base := fmt.Sprintf("http://127.0.0.1:%d/commands/", cfg.AdminPort)
	f := newRestoreFixture(t, s.Addr().String())
	status, _, snap := adminGet(t, base+"snapshot", "digest x:y")
	if status != 200 {
		t.Fatalf("snapshot: %d %s", status, snap)
	}
	f.change(t)
	before := s.node.FSM.LastZxid()

	// Sent chunked, as a client that streams a file does: no Content-Length.
	status, _, body := adminRequest(t, "POST", base+"restore", "digest x:y", io.MultiReader(bytes.NewReader(snap)))
	var out map[string]any
	json.Unmarshal(body, &out)
	zxid, _ := out["last_zxid"].(float64)
	if status != 200 || out["error"] != nil || out["command"] != "restore" || int64(zxid) <= before {
		t.Fatalf("restore: %d %s, want 200 and a last_zxid above 0x%x", status, body, before)
	}
	// The state encoded for raft went through a file of the store's: none is left.
	filepath.WalkDir(cfg.DataDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "restore-") {
			t.Errorf("left behind: %s", path)
		}
		return nil
	})
	if int64(zxid) != s.node.FSM.LastZxid() {
		t.Fatalf("last_zxid 0x%x, the state's 0x%x", int64(zxid), s.node.FSM.LastZxid())
	}
	// The client of the old state is disconnected.
	f.client.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := f.client.exchange(jute.OpExists, &jute.ExistsRequest{Path: "/keep"}, &jute.ExistsResponse{}); err == nil {
		t.Fatal("a connection of the old state still answers after the restore")
	}
	c := checkRestored(t, s.Addr().String(), f.eph.sid)
	// The client's session was held before the restore and is in the snapshot: it
	// resumes with the password zkraft gave it. The short session had closed before the
	// restore: it came back with ZooKeeper's password, not the one it had.
	back := dial(t, s.Addr().String())
	if r := back.tryConnect(jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 10000, SessionId: f.client.sid, Passwd: f.client.pw}}); r == nil || r.SessionId != f.client.sid || r.TimeOut <= 0 {
		t.Fatalf("the client's session after the restore: %+v, want it resumed", r)
	}
	if h := back.call(jute.OpExists, &jute.ExistsRequest{Path: "/gone"}, &jute.ExistsResponse{}); h.Err != 0 {
		t.Fatalf("exists /gone through the resumed session: %d", h.Err)
	}
	if r := dial(t, s.Addr().String()).tryConnect(jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 1000, SessionId: f.eph.sid, Passwd: f.eph.pw}}); r != nil && r.TimeOut > 0 {
		t.Fatalf("a session not held before the restore resumed with its old password: %+v", r)
	}
	var cr jute.CreateResponse
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/after", Acl: openACL}, &cr); h.Err != 0 {
		t.Fatalf("create after the restore: %d", h.Err)
	}
	var ex jute.ExistsResponse
	if c.call(jute.OpExists, &jute.ExistsRequest{Path: "/after"}, &ex); ex.Stat.Czxid <= int64(zxid) {
		t.Fatalf("a write after the restore has zxid 0x%x, not above the restore's 0x%x", ex.Stat.Czxid, int64(zxid))
	}
	awaitNoNode(t, c, "/eph", 10*time.Second)

	s.Close()
	s2, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Start(); err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	c2 := dial(t, s2.Addr().String())
	c2.connect(0, nil)
	var got jute.GetDataResponse
	if h := c2.call(jute.OpGetData, &jute.GetDataRequest{Path: "/keep"}, &got); h.Err != 0 || string(got.Data) != "v1" {
		t.Fatalf("/keep after a restart: %d %q", h.Err, got.Data)
	}
	for path, want := range map[string]jute.Code{"/after": 0, "/new": jute.ErrNoNode, "/eph": jute.ErrNoNode} {
		if h := c2.call(jute.OpExists, &jute.ExistsRequest{Path: path}, &jute.ExistsResponse{}); jute.Code(h.Err) != want {
			t.Fatalf("exists %s after a restart: %d, want %d", path, h.Err, want)
		}
	}
}

// The restore command's refusals, in 3.9's order: authentication first (401), then the
// switch (503), then the rate limit (429), which a failed restore counts too. A body that
// is no snapshot is refused (500, saying why) and changes nothing; GET is 405.
func TestAdminRestoreRefusals(t *testing.T) {
	s := startServer(t, func(c *Config) {
		c.AdminEnabled, c.AdminHost, c.AdminPort = true, "127.0.0.1", mustFreePort(t)
	})
	base := fmt.Sprintf("http://127.0.0.1:%d/commands/", s.cfg.AdminPort)
	_, _, snap := adminGet(t, base+"snapshot", "digest x:y")
	if status, out := adminPost(t, base+"restore", "", snap); status != 401 || out["error"] != "Auth info is missing for the command" {
		t.Fatalf("restore without auth: %d %v", status, out)
	}
	if status, _, body := adminGet(t, base+"restore", "digest x:y"); status != 405 {
		t.Fatalf("GET restore: %d %s", status, body)
	}
	if status, hdr, _ := adminRequest(t, "OPTIONS", base+"restore", "", nil); status != 200 || !strings.Contains(hdr.Get("Allow"), "POST") {
		t.Fatalf("OPTIONS restore: %d, Allow %q", status, hdr.Get("Allow"))
	}
	before := s.node.FSM.LastZxid()
	bad := append([]byte(nil), snap...)
	bad[len(bad)/2] ^= 0xff
	status, out := adminPost(t, base+"rest", "digest x:y", bad)
	if why, _ := out["error"].(string); status != 500 || !strings.Contains(why, "not a ZooKeeper snapshot") {
		t.Fatalf("restore of a damaged snapshot: %d %v", status, out)
	}
	if s.node.FSM.LastZxid() != before {
		t.Fatalf("a refused restore changed the zxid: 0x%x, was 0x%x", s.node.FSM.LastZxid(), before)
	}
	if status, out := adminPost(t, base+"restore", "digest x:y", snap); status != 429 || out["error"] != nil {
		t.Fatalf("restore within the rate limit: %d %v", status, out)
	}

	off := startServer(t, func(c *Config) {
		c.AdminEnabled, c.AdminHost, c.AdminPort = true, "127.0.0.1", mustFreePort(t)
		c.AdminAuth.RestoreEnabled = false
	})
	if status, out := adminPost(t, fmt.Sprintf("http://127.0.0.1:%d/commands/restore", off.cfg.AdminPort), "digest x:y", snap); status != 503 {
		t.Fatalf("restore with zookeeper.admin.restore.enabled=false: %d %v", status, out)
	}
}

// A restore on a 3-member cluster replaces the state on every member through the log:
// a follower refuses it and names the leader; on the leader every member ends with the
// same tree at the same zxid, the follower's clients are disconnected and find the
// snapshot's state, a write through the follower after it reaches everyone, the
// restored session's ephemeral expires on every member, and a restarted follower
// comes back to the same state. A snapshot of a standalone server, whose
// /zookeeper/config is empty, leaves the cluster's membership as it was.
func TestAdminRestoreCluster(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) {
		c.AdminEnabled, c.AdminHost, c.AdminPort = true, "127.0.0.1", mustFreePort(t)
		c.AdminAuth.RateLimitInterval = 0
	})
	l, fo := tc.leader(), tc.follower()
	url := func(i int, cmd string) string {
		return fmt.Sprintf("http://127.0.0.1:%d/commands/%s", tc.cfgs[i].AdminPort, cmd)
	}
	f := newRestoreFixture(t, tc.addr(fo))
	tc.converge() // the leader may apply the follower's last write after the follower answered it
	status, _, snap := adminGet(t, url(l, "snapshot"), "digest x:y")
	if status != 200 {
		t.Fatalf("snapshot: %d", status)
	}
	f.change(t)
	if status, out := adminPost(t, url(fo, "restore"), "digest x:y", snap); status != 500 ||
		!strings.Contains(fmt.Sprint(out["error"]), fmt.Sprintf("does not lead; send the restore to the leader (server.%d)", l+1)) {
		t.Fatalf("restore on a follower: %d %v", status, out)
	}
	status, out := adminPost(t, url(l, "restore"), "digest x:y", snap)
	if status != 200 || out["error"] != nil {
		t.Fatalf("restore on the leader: %d %v", status, out)
	}
	tc.converge()
	f.client.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := f.client.exchange(jute.OpExists, &jute.ExistsRequest{Path: "/keep"}, &jute.ExistsResponse{}); err == nil {
		t.Fatal("the follower's client of the old state still gets answers after the restore")
	}
	c := checkRestored(t, tc.addr(fo), f.eph.sid)
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/after", Acl: openACL}, &jute.CreateResponse{}); h.Err != 0 {
		t.Fatalf("create through the follower after the restore: %d", h.Err)
	}
	awaitNoNode(t, c, "/eph", 10*time.Second)
	tc.converge()
	tc.stop(fo)
	tc.start(fo)
	tc.converge()
	c2 := dial(t, tc.addr(fo))
	c2.connect(0, nil)
	var got jute.GetDataResponse
	if h := c2.call(jute.OpGetData, &jute.GetDataRequest{Path: "/keep"}, &got); h.Err != 0 || string(got.Data) != "v1" {
		t.Fatalf("/keep on the restarted follower: %d %q", h.Err, got.Data)
	}
	if h := c2.call(jute.OpExists, &jute.ExistsRequest{Path: "/after"}, &jute.ExistsResponse{}); h.Err != 0 {
		t.Fatalf("/after on the restarted follower: %d", h.Err)
	}

	var config jute.GetDataResponse
	if h := c2.call(jute.OpGetData, &jute.GetDataRequest{Path: "/zookeeper/config"}, &config); h.Err != 0 || !strings.Contains(string(config.Data), "server.3=") {
		t.Fatalf("/zookeeper/config: %d %q", h.Err, config.Data)
	}
	other := startServer(t, func(c *Config) {
		c.AdminEnabled, c.AdminHost, c.AdminPort = true, "127.0.0.1", mustFreePort(t)
	})
	oc := dial(t, other.Addr().String())
	oc.connect(0, nil)
	if h := oc.call(jute.OpCreate, &jute.CreateRequest{Path: "/elsewhere", Acl: openACL}, &jute.CreateResponse{}); h.Err != 0 {
		t.Fatal(h.Err)
	}
	_, _, snap = adminGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/snapshot", other.cfg.AdminPort), "digest x:y")
	if status, out := adminPost(t, url(tc.leader(), "restore"), "digest x:y", snap); status != 200 {
		t.Fatalf("restore of a standalone server's snapshot: %d %v", status, out)
	}
	tc.converge()
	for i := range tc.servers {
		c := dial(t, tc.addr(i))
		c.connect(0, nil)
		var got jute.GetDataResponse
		if h := c.call(jute.OpGetData, &jute.GetDataRequest{Path: "/zookeeper/config"}, &got); h.Err != 0 || !bytes.Equal(got.Data, config.Data) || got.Stat.Mzxid != config.Stat.Mzxid {
			t.Fatalf("member %d: /zookeeper/config after the restore: %d %q (mzxid 0x%x), want %q (0x%x)", i+1, h.Err, got.Data, got.Stat.Mzxid, config.Data, config.Stat.Mzxid)
		}
		if h := c.call(jute.OpExists, &jute.ExistsRequest{Path: "/elsewhere"}, &jute.ExistsResponse{}); h.Err != 0 {
			t.Fatalf("member %d: /elsewhere after the restore: %d", i+1, h.Err)
		}
	}
	tc.awaitSrvr(fo, "Mode: follower")
}

// A restore on the leader while clients write through every member: writes in flight
// fail or land before or after it, nothing else; every member ends with the same tree,
// holding the snapshot's nodes and what was written after the restore; and the whole
// cluster restarted from its stores (the leader's log reset under its deferred
// fdatasyncs, the followers' snapshot installs) comes back to that state.
func TestAdminRestoreClusterUnderLoad(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) {
		c.AdminEnabled, c.AdminHost, c.AdminPort = true, "127.0.0.1", mustFreePort(t)
	})
	l := tc.leader()
	c := dial(t, tc.addr(l))
	c.connect(0, nil)
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/snapped", Acl: openACL}, &jute.CreateResponse{}); h.Err != 0 {
		t.Fatal(h.Err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/commands/", tc.cfgs[l].AdminPort)
	_, _, snap := adminGet(t, url+"snapshot", "digest x:y")

	stop := make(chan struct{})
	done := make(chan int, len(tc.servers))
	for i := range tc.servers {
		addr := tc.addr(i)
		go func() {
			// A session of the old state is gone after the restore: a writer whose session
			// expired opens another, as an application would.
			var conn *zk.Conn
			defer func() {
				if conn != nil {
					conn.Close()
				}
			}()
			ok := 0
			for n := 0; n < 100_000; n++ {
				select {
				case <-stop:
					done <- ok
					return
				default:
				}
				if conn == nil {
					if conn, _, _ = zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false)); conn == nil {
						continue
					}
				}
				_, err := conn.Create(fmt.Sprintf("/w-%d-%d", i, n), nil, 0, zk.WorldACL(zk.PermAll))
				switch {
				case err == nil:
					ok++
				case errors.Is(err, zk.ErrSessionExpired) || errors.Is(err, zk.ErrClosing) || errors.Is(err, zk.ErrConnectionClosed):
					conn.Close()
					conn = nil
				}
			}
			done <- ok
		}()
	}
	time.Sleep(300 * time.Millisecond)
	status, out := adminPost(t, url+"restore", "digest x:y", snap)
	if status != 200 {
		t.Fatalf("restore under load: %d %v", status, out)
	}
	zxid := int64(out["last_zxid"].(float64))
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	for range tc.servers {
		<-done
	}
	tc.converge()
	after := 0
	for i := range tc.servers {
		c := dial(t, tc.addr(i))
		c.connect(0, nil)
		if h := c.call(jute.OpExists, &jute.ExistsRequest{Path: "/snapped"}, &jute.ExistsResponse{}); h.Err != 0 {
			t.Fatalf("member %d: /snapped after the restore: %d", i+1, h.Err)
		}
		var kids jute.GetChildrenResponse
		if h := c.call(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/"}, &kids); h.Err != 0 {
			t.Fatal(h.Err)
		}
		n := 0
		for _, k := range kids.Children {
			if strings.HasPrefix(k, "w-") {
				var ex jute.ExistsResponse
				c.call(jute.OpExists, &jute.ExistsRequest{Path: "/" + k}, &ex)
				if ex.Stat.Czxid <= zxid {
					t.Fatalf("member %d: /%s (zxid 0x%x) from before the restore (0x%x) is still there", i+1, k, ex.Stat.Czxid, zxid)
				}
				n++
			}
		}
		if i > 0 && n != after {
			t.Fatalf("member %d holds %d writes made after the restore, member 1 %d", i+1, n, after)
		}
		after = n
	}
	if after == 0 {
		t.Fatal("no write landed after the restore")
	}
	t.Logf("%d writes landed after the restore at zxid 0x%x", after, zxid)
	tc.stopAll()
	all := make([]int, len(tc.servers))
	for i := range all {
		all[i] = i
	}
	tc.start(all...)
	tc.leader()
	tc.converge()
	for i := range tc.servers {
		if z := tc.servers[i].node.FSM.LastZxid(); z <= zxid {
			t.Fatalf("member %d restarted at zxid 0x%x, not past the restore's 0x%x", i+1, z, zxid)
		}
	}
}

// A snapshot file ZooKeeper 3.8 wrote itself (snapCount=2, so it writes one every few
// transactions) restores on zkraft: every node of the file, with its data, ACL, versions
// and zxids, is then on zkraft, and nothing else is but the system nodes.
func TestAdminRestoreTakesZooKeeperSnapshot(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	zks, err := ztest.StartZooKeeper(ztest.Options{Logf: t.Logf, ExtraConfig: map[string]string{"snapCount": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer zks.Stop()
	c := dial(t, zks.Addr)
	c.connect(0, nil)
	digestACL := []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "digest", Id: datatree.DigestID("bob:pw")}}}
	for _, r := range []*jute.CreateRequest{
		{Path: "/app", Data: []byte("config"), Acl: openACL},
		{Path: "/app/locked", Data: []byte("secret"), Acl: digestACL},
		{Path: "/app/seq-", Data: []byte("s"), Acl: openACL, Flags: jute.FlagPersistentSequential},
		{Path: "/app/eph", Acl: openACL, Flags: jute.FlagEphemeral},
	} {
		if h := c.call(jute.OpCreate, r, &jute.CreateResponse{}); h.Err != 0 {
			t.Fatalf("ZooKeeper: create %s: %d", r.Path, h.Err)
		}
	}
	if h := c.call(jute.OpSetData, &jute.SetDataRequest{Path: "/app", Data: []byte("config-2"), Version: 0}, &jute.SetDataResponse{}); h.Err != 0 {
		t.Fatal(h.Err)
	}
	// Writes after, so that a snapshot taken after the ones above is on disk.
	var snap []byte
	var st *persistence.ZKState
	for i := 0; st == nil || !hasPath(st, "/app/eph") || !hasPath(st, "/app/seq-0000000001"); i++ {
		if i == 50 {
			t.Fatal("ZooKeeper wrote no snapshot holding the nodes")
		}
		if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("/pad-%d", i), Acl: openACL}, &jute.CreateResponse{}); h.Err != 0 {
			t.Fatal(h.Err)
		}
		time.Sleep(20 * time.Millisecond)
		files, _ := filepath.Glob(filepath.Join(zks.DataDir, "version-2", "snapshot.*"))
		slices.SortFunc(files, func(a, b string) int {
			za, _ := strconv.ParseInt(strings.TrimPrefix(filepath.Ext(a), "."), 16, 64)
			zb, _ := strconv.ParseInt(strings.TrimPrefix(filepath.Ext(b), "."), 16, 64)
			return cmp.Compare(za, zb)
		})
		if len(files) > 0 {
			if b, err := os.ReadFile(files[len(files)-1]); err == nil {
				if s, err := persistence.ReadZooKeeperSnapshot(b); err == nil {
					snap, st = b, s
				}
			}
		}
	}

	s := startServer(t, func(c *Config) {
		c.AdminEnabled, c.AdminHost, c.AdminPort = true, "127.0.0.1", mustFreePort(t)
	})
	if status, out := adminPost(t, fmt.Sprintf("http://127.0.0.1:%d/commands/restore", s.cfg.AdminPort), "digest x:y", snap); status != 200 {
		t.Fatalf("restore of ZooKeeper's snapshot: %d %v", status, out)
	}
	us := dial(t, s.Addr().String())
	us.connect(0, nil)
	if _, err := us.nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: jute.XidAuth, Type: jute.OpAuth}, &jute.AuthPacket{Scheme: "digest", Auth: []byte("bob:pw")})); err != nil {
		t.Fatal(err)
	}
	var h jute.ReplyHeader
	if us.readFrame(&h); h.Err != 0 {
		t.Fatalf("zkraft: addauth: %d", h.Err)
	}
	for _, n := range st.Nodes {
		if n.Path == "/" || strings.HasPrefix(n.Path, "/zookeeper") {
			continue
		}
		var got jute.GetDataResponse
		if h := us.call(jute.OpGetData, &jute.GetDataRequest{Path: n.Path}, &got); h.Err != 0 {
			t.Fatalf("zkraft: get %s: %d", n.Path, h.Err)
		}
		s := got.Stat
		if !bytes.Equal(got.Data, n.Data) || s.Version != n.Version || s.Cversion != n.Cversion || s.Czxid != n.Czxid ||
			s.Mzxid != n.Mzxid || s.Pzxid != n.Pzxid || s.EphemeralOwner != n.EphemeralOwner || s.Mtime != n.Mtime {
			t.Fatalf("zkraft: %s is %q %+v, the snapshot's %+v", n.Path, got.Data, s, n)
		}
		var acl jute.GetACLResponse
		if h := us.call(jute.OpGetACL, &jute.GetACLRequest{Path: n.Path}, &acl); h.Err != 0 || fmt.Sprint(acl.Acl) != fmt.Sprint(n.ACL) {
			t.Fatalf("zkraft: ACL of %s: %d %v, the snapshot's %v", n.Path, h.Err, acl.Acl, n.ACL)
		}
	}
	var kids jute.GetChildrenResponse
	if h := us.call(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/app"}, &kids); h.Err != 0 || len(kids.Children) != 3 {
		t.Fatalf("zkraft: children of /app: %d %v", h.Err, kids.Children)
	}
}

func hasPath(st *persistence.ZKState, path string) bool {
	return slices.ContainsFunc(st.Nodes, func(n persistence.ZKNode) bool { return n.Path == path })
}

// A member cut off while the leader restores (the other two are a majority) gets the
// new state when it is back, and keeps none of its old one: all three end the same.
func TestAdminRestoreReachesAMemberCutOffMeanwhile(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) {
		c.AdminEnabled, c.AdminHost, c.AdminPort = true, "127.0.0.1", mustFreePort(t)
	})
	l, fo := tc.leader(), tc.follower()
	c := dial(t, tc.addr(l))
	c.connect(0, nil)
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/snapped", Acl: openACL}, &jute.CreateResponse{}); h.Err != 0 {
		t.Fatal(h.Err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/commands/", tc.cfgs[l].AdminPort)
	_, _, snap := adminGet(t, url+"snapshot", "digest x:y")
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/later", Acl: openACL}, &jute.CreateResponse{}); h.Err != 0 {
		t.Fatal(h.Err)
	}
	tc.converge()
	tc.net.Isolate(fmt.Sprint(fo + 1))
	defer tc.net.Heal()
	if status, out := adminPost(t, url+"restore", "digest x:y", snap); status != 200 {
		t.Fatalf("restore with a member cut off: %d %v", status, out)
	}
	tc.net.Heal()
	tc.converge()
	o := dial(t, tc.addr(fo))
	o.connect(0, nil)
	for path, want := range map[string]jute.Code{"/snapped": 0, "/later": jute.ErrNoNode} {
		if h := o.call(jute.OpExists, &jute.ExistsRequest{Path: path}, &jute.ExistsResponse{}); jute.Code(h.Err) != want {
			t.Fatalf("exists %s on the member that was cut off: %d, want %d", path, h.Err, want)
		}
	}
}

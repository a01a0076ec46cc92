package server

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/session"
)

func adminGet(t *testing.T, url, auth string) (int, http.Header, []byte) {
	t.Helper()
	return adminRequest(t, "GET", url, auth, nil)
}

// adminRequest sends one request to the AdminServer, with auth as its Authorization
// header unless empty, and returns the status, headers and body of the answer.
func adminRequest(t *testing.T, method, url, auth string, body io.Reader) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, body)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// The snapshot admin command answers only an identity with ALL on "/" (every bit of it:
// one that may only read the root is refused, as ZooKeeper 3.9.4 refuses it), streams a
// ZooKeeper snapshot of the current state, and is rate limited.
func TestAdminSnapshotNeedsAuthentication(t *testing.T) {
	s := startServer(t, func(c *Config) {
		c.AdminEnabled, c.AdminHost, c.AdminPort = true, "127.0.0.1", mustFreePort(t)
		c.SuperDigest = datatree.DigestID("root:rootpw")
	})
	url := fmt.Sprintf("http://127.0.0.1:%d/commands/snapshot", s.cfg.AdminPort)
	c := dial(t, s.Addr().String())
	c.connect(0, nil)
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/kept", Data: []byte("v"), Acl: openACL}, &jute.CreateResponse{}); h.Err != 0 {
		t.Fatal(h.Err)
	}
	setRootACL(t, s, []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "digest", Id: datatree.DigestID("admin:secret")}},
		{Perms: jute.PermRead, Id: jute.Id{Scheme: "world", Id: "anyone"}}})
	for _, tc := range []struct {
		auth   string
		status int
		why    string
	}{
		{"", 401, "Auth info is missing for the command"},
		{"digest", 401, "Not authenticated"},
		{"sasl bob", 401, "Not authenticated"},
		{"digest bob:pw", 403, "Not authorized"},
		{"digest admin:wrong", 403, "Not authorized"},
	} {
		status, _, body := adminGet(t, url, tc.auth)
		if status != tc.status || !strings.Contains(string(body), tc.why) {
			t.Fatalf("Authorization %q: %d %s, want %d %q", tc.auth, status, body, tc.status, tc.why)
		}
	}
	status, hdr, body := adminGet(t, url, "digest admin:secret")
	if status != 200 || hdr.Get("snapshot_size") != fmt.Sprint(len(body)) || !strings.HasPrefix(hdr.Get("last_zxid"), "0x") {
		t.Fatalf("snapshot: %d, headers %v, %d bytes", status, hdr, len(body))
	}
	// The stream is a snapshot ZooKeeper (and zkraft's import) reads.
	dir := filepath.Join(t.TempDir(), "version-2")
	os.MkdirAll(dir, 0o755)
	var zxid int64
	fmt.Sscanf(hdr.Get("last_zxid"), "0x%x", &zxid)
	os.WriteFile(filepath.Join(dir, persistence.SnapshotFileName(zxid)), body, 0o644)
	st, err := persistence.ReadZooKeeper(filepath.Dir(dir), "")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range st.Nodes {
		found = found || (n.Path == "/kept" && string(n.Data) == "v")
	}
	if !found || st.LastZxid != zxid {
		t.Fatalf("the streamed snapshot (zxid 0x%x) lacks /kept: %d nodes, zxid 0x%x", zxid, len(st.Nodes), st.LastZxid)
	}
	// One snapshot per rate limit interval, whoever asks.
	if status, _, _ := adminGet(t, url, "digest root:rootpw"); status != http.StatusTooManyRequests {
		t.Fatalf("a second snapshot within the interval: %d, want 429", status)
	}
	s.adminSnap.last = s.adminSnap.last.Add(-s.cfg.AdminAuth.RateLimitInterval)
	status, hdr, body = adminGet(t, url+"?streaming=false", "digest root:rootpw")
	if status != 200 || hdr.Get("snapshot_size") == "" || !strings.Contains(string(body), `"command" : "snapshot"`) {
		t.Fatalf("super, streaming=false: %d %v %s", status, hdr, body)
	}
}

// A member that does not serve answers snapshot as every command that needs the server:
// HTTP 200 with "This ZooKeeper instance is not currently serving requests" (ZooKeeper
// 3.9's Commands.runCommand, before authentication), not 503.
func TestAdminSnapshotWithoutQuorum(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) {
		c.AdminEnabled, c.AdminHost, c.AdminPort = true, "127.0.0.1", mustFreePort(t)
	})
	f := tc.follower()
	admin := fmt.Sprintf("http://127.0.0.1:%d/commands/", tc.cfgs[f].AdminPort)
	// The follower serves first: one that has not yet taken an entry of its leader's
	// term says it does not serve either (Node.Synced), and would serve once that entry,
	// already on its way, arrives after the cut.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, _, body := adminGet(t, admin+"srvr", ""); !strings.Contains(string(body), notServing) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the follower does not serve")
		}
	}
	tc.net.Isolate(fmt.Sprint(f + 1))
	defer tc.net.Heal()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, _, body := adminGet(t, admin+"srvr", ""); strings.Contains(string(body), notServing) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an isolated member still serves")
		}
	}
	status, _, body := adminGet(t, admin+"snapshot", "digest admin:secret")
	if status != http.StatusOK || !strings.Contains(string(body), `"error" : "`+notServing+`"`) {
		t.Fatalf("snapshot on a member without quorum: %d %s", status, body)
	}
}

// The snapshot command's stream, written from a frozen view a chunk at a time, holds the
// state as the whole-tree copy does: every node with its data, stat and ACL, and the
// sessions.
func TestAdminSnapshotHoldsTheState(t *testing.T) {
	s := startServer(t, func(c *Config) {
		c.AdminEnabled, c.AdminHost, c.AdminPort = true, "127.0.0.1", mustFreePort(t)
	})
	c := dial(t, s.Addr().String())
	c.connect(0, nil)
	digestACL := []jute.ACL{{Perms: jute.PermRead | jute.PermCreate | jute.PermAdmin, Id: jute.Id{Scheme: "digest", Id: datatree.DigestID("a:b")}}}
	for i := range 3000 { // several chunks
		acl := openACL
		if i >= 30 && i%7 == 0 {
			acl = digestACL
		}
		path := fmt.Sprintf("/n%d", i%30)
		if i >= 30 {
			path = fmt.Sprintf("/n%d/c%d", i%30, i)
		}
		if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: path, Data: []byte(fmt.Sprint(i)), Acl: acl}, &jute.CreateResponse{}); h.Err != 0 {
			t.Fatalf("create %s: %d", path, h.Err)
		}
	}
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/eph", Acl: openACL, Flags: jute.FlagEphemeral}, &jute.CreateResponse{}); h.Err != 0 {
		t.Fatal(h.Err)
	}
	var want *persistence.ZKState
	s.node.FSM.Read(func(tr *datatree.Tree, ss *session.Table) {
		want = persistence.ZKStateOf(&persistence.State{Zxid: s.node.FSM.LastZxid(), Tree: tr, Sessions: ss})
	})
	status, _, body := adminGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/snapshot", s.cfg.AdminPort), "digest x:y")
	if status != 200 {
		t.Fatalf("snapshot: %d %s", status, body)
	}
	got, err := persistence.ReadZooKeeperSnapshot(body)
	if err != nil {
		t.Fatal(err)
	}
	if got.LastZxid != want.LastZxid || fmt.Sprint(got.Sessions) != fmt.Sprint(want.Sessions) {
		t.Fatalf("zxid 0x%x, sessions %v; want 0x%x, %v", got.LastZxid, got.Sessions, want.LastZxid, want.Sessions)
	}
	if len(got.Nodes) != len(want.Nodes) || len(got.Nodes) < 3000 {
		t.Fatalf("%d nodes, want %d", len(got.Nodes), len(want.Nodes))
	}
	for i := range want.Nodes {
		if g, w := fmt.Sprintf("%+v", got.Nodes[i]), fmt.Sprintf("%+v", want.Nodes[i]); g != w {
			t.Fatalf("node %d:\n got %s\nwant %s", i, g, w)
		}
	}
}

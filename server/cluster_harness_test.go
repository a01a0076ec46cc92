package server

import (
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/quorum"
	"github.com/zkraft/zkraft/quorum/netsim"
	"github.com/zkraft/zkraft/server/ztest"
	"github.com/zkraft/zkraft/session"
)

// testCluster is n in-process servers on loopback that form one cluster over a network
// the test can partition. A stopped member restarts on its data dir and ports.
type testCluster struct {
	t       *testing.T
	net     *netsim.Net
	cfgs    []Config
	servers []*Server      // nil while stopped
	logs    []*slog.Logger // each member's logger, if set
}

func loopbackAddr(t *testing.T) string {
	t.Helper()
	port, err := ztest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(port)
}

// newTestCluster starts n members; the members listed in observers (1-based ids) are
// observers.
func newTestCluster(t *testing.T, n int, observers ...int) *testCluster {
	t.Helper()
	return newTestClusterWith(t, n, nil, observers...)
}

// newTestClusterWith is newTestCluster with every member's config changed by mod.
func newTestClusterWith(t *testing.T, n int, mod func(*Config), observers ...int) *testCluster {
	t.Helper()
	return newTestClusterSeeded(t, n, mod, nil, observers...)
}

// newTestClusterSeeded is newTestClusterWith where seed, if set, prepares each member's
// data dir before the first start.
func newTestClusterSeeded(t *testing.T, n int, mod func(*Config), seed func(Config), observers ...int) *testCluster {
	t.Helper()
	return newTestClusterLogged(t, n, mod, seed, nil, observers...)
}

// newTestClusterLogged is newTestClusterSeeded where member i logs to logs[i] (nil
// logs: the default logger).
func newTestClusterLogged(t *testing.T, n int, mod func(*Config), seed func(Config), logs []*slog.Logger, observers ...int) *testCluster {
	t.Helper()
	tc := &testCluster{t: t, net: netsim.New(), servers: make([]*Server, n), logs: logs}
	var peers []quorum.Peer
	for i := 1; i <= n; i++ {
		p := quorum.Peer{ID: strconv.Itoa(i), RaftAddr: loopbackAddr(t), PeerAddr: loopbackAddr(t)}
		for _, o := range observers {
			p.Observer = p.Observer || o == i
		}
		peers = append(peers, p)
	}
	for i := 0; i < n; i++ {
		port, err := ztest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.ClientPort, cfg.ClientPortAddress, cfg.DataDir = port, "127.0.0.1", t.TempDir()
		cfg.ServerID, cfg.Servers = i+1, peers
		cfg.TickTime = 200 * time.Millisecond
		cfg.FourLetterWhitelist = []string{"*"}
		cfg.Network = tc.net.Member(strconv.Itoa(i + 1))
		if mod != nil {
			mod(&cfg)
		}
		tc.cfgs = append(tc.cfgs, cfg)
	}
	t.Cleanup(tc.stopAll)
	if seed != nil {
		for _, cfg := range tc.cfgs {
			seed(cfg)
		}
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	tc.start(all...)
	return tc
}

// start starts the given stopped members (0-based) together and waits until each
// serves.
func (tc *testCluster) start(idx ...int) {
	tc.t.Helper()
	errs := make([]error, len(tc.servers))
	var wg sync.WaitGroup
	for _, i := range idx {
		var log *slog.Logger
		if tc.logs != nil {
			log = tc.logs[i]
		}
		s, err := New(tc.cfgs[i], log)
		if err != nil {
			tc.t.Fatal(err)
		}
		tc.servers[i] = s
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Start()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			tc.t.Fatalf("server %d: %v", i+1, err)
		}
	}
}

func (tc *testCluster) stop(i int) {
	if s := tc.servers[i]; s != nil {
		s.Close()
		tc.servers[i] = nil
	}
}

func (tc *testCluster) stopAll() {
	for i := range tc.servers {
		tc.stop(i)
	}
}

func (tc *testCluster) addr(i int) string { return tc.servers[i].Addr().String() }

// leader waits until one running member leads and is established (its barrier after
// the election applied: it answers mntr and /ready as serving) and returns its index.
func (tc *testCluster) leader() int {
	tc.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for i, s := range tc.servers {
			if s != nil && s.node.Established() {
				return i
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	tc.t.Fatal("no leader within 15s")
	return -1
}

// follower returns the index of a running member that is not the leader.
func (tc *testCluster) follower() int {
	tc.t.Helper()
	l := tc.leader()
	for i, s := range tc.servers {
		if s != nil && i != l && !tc.cfgs[i].Servers[i].Observer {
			return i
		}
	}
	tc.t.Fatal("no follower running")
	return -1
}

// converge waits until every running member holds the same tree at the same zxid.
func (tc *testCluster) converge() {
	tc.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var digests []uint64
		var zxids []int64
		for _, s := range tc.servers {
			if s == nil {
				continue
			}
			s.node.FSM.Read(func(tr *datatree.Tree, _ *session.Table) {
				digests = append(digests, tr.Digest())
				zxids = append(zxids, s.node.FSM.LastZxid())
			})
		}
		same := true
		for i := range digests {
			same = same && digests[i] == digests[0] && zxids[i] == zxids[0]
		}
		if same {
			return
		}
		if time.Now().After(deadline) {
			tc.t.Fatalf("members did not converge: digests %x zxids %v", digests, zxids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// awaitSrvr waits until srvr on member i says want (say "Mode: follower"): a member
// that knows its leader may not serve yet (not synced with it), and on a loaded machine
// a new cluster may still elect again.
func (tc *testCluster) awaitSrvr(i int, want string) {
	tc.t.Helper()
	var out string
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if out, _ = ztest.FourLetter(tc.addr(i), "srvr"); strings.Contains(out, want) {
			return
		}
		if time.Now().After(deadline) {
			tc.t.Fatalf("member %d srvr, want %q:\n%s", i+1, want, out)
		}
	}
}

func askFourLetter(t *testing.T, addr, cmd string) string {
	t.Helper()
	out, err := ztest.FourLetter(addr, cmd)
	if err != nil {
		t.Fatalf("%s on %s: %v", cmd, addr, err)
	}
	return out
}

// addMember configures a new server that knows the members and itself, as ZooKeeper's
// guide says to start a server before `reconfig -add` names it, and starts it in the
// background: it serves once a leader adds it. It returns the new index, the server line
// a reconfig adds it with, and the channel Start's result arrives on.
func (tc *testCluster) addMember() (int, string, <-chan error) {
	tc.t.Helper()
	return tc.addMemberAt(loopbackAddr(tc.t), loopbackAddr(tc.t))
}

// addMemberAt is addMember with the new server's Raft and peer addresses, which may be
// those of a member a reconfig removed; the members a reconfig removed (ids, 1-based)
// are left out of its configuration.
func (tc *testCluster) addMemberAt(raftAddr, peerAddr string, removed ...string) (int, string, <-chan error) {
	tc.t.Helper()
	i := len(tc.cfgs)
	id := strconv.Itoa(i + 1)
	port, err := ztest.FreePort()
	if err != nil {
		tc.t.Fatal(err)
	}
	p := quorum.Peer{ID: id, RaftAddr: raftAddr, PeerAddr: peerAddr}
	cfg := tc.cfgs[0]
	cfg.Servers = nil
	for _, s := range tc.cfgs[0].Servers {
		if !slices.Contains(removed, s.ID) {
			cfg.Servers = append(cfg.Servers, s)
		}
	}
	cfg.Servers = append(cfg.Servers, p)
	cfg.ServerID, cfg.ClientPort, cfg.DataDir = i+1, port, tc.t.TempDir()
	cfg.Network = tc.net.Member(id)
	s, err := New(cfg, nil)
	if err != nil {
		tc.t.Fatal(err)
	}
	tc.cfgs = append(tc.cfgs, cfg)
	tc.servers = append(tc.servers, s)
	started := make(chan error, 1)
	go func() { started <- s.Start() }()
	_, peerPort, _ := net.SplitHostPort(p.PeerAddr)
	_, raftPort, _ := net.SplitHostPort(p.RaftAddr)
	line := "server." + id + "=127.0.0.1:" + peerPort + ":" + raftPort + ";127.0.0.1:" + strconv.Itoa(port)
	return i, line, started
}

// superSession is a raw session on addr authenticated as the super user (superDigest),
// who may reconfig.
func superSession(t *testing.T, addr string) *rawClient {
	t.Helper()
	c := dial(t, addr)
	c.connect(0, nil)
	if h := c.call(jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("super:test")}, nil); h.Err != 0 {
		t.Fatalf("addauth super: %d", h.Err)
	}
	return c
}

// reconfigRemove removes member idx (0-based) with reconfig -remove through c and
// checks that the answered configuration no longer lists it.
func reconfigRemove(t *testing.T, c *rawClient, idx int) {
	t.Helper()
	id := strconv.Itoa(idx + 1)
	var gd jute.GetDataResponse
	if h := c.call(jute.OpReconfig, &jute.ReconfigRequest{LeavingServers: id, CurConfigId: -1}, &gd); h.Err != 0 {
		t.Fatalf("reconfig -remove %s: %d", id, h.Err)
	}
	if strings.Contains(string(gd.Data), "server."+id+"=") {
		t.Fatalf("removed server %s still listed:\n%s", id, gd.Data)
	}
}

// awaitAdded waits for the Start of a server addMember started, which returns once a
// reconfig -add made it a member and it serves.
func awaitAdded(t *testing.T, started <-chan error) {
	t.Helper()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("the new server: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the new server did not start serving after reconfig -add")
	}
}

// zkSession connects go-zookeeper, a client that reconnects and restores its watches
// itself, to the given members, and waits for its session.
func zkSession(t *testing.T, timeout time.Duration, addrs ...string) *zk.Conn {
	t.Helper()
	c, _ := zkSessionWith(t, timeout, addrs, nil)
	return c
}

// zkSessionWith is zkSession with the test's host provider (nil: go-zookeeper's own),
// and the session's events.
func zkSessionWith(t *testing.T, timeout time.Duration, addrs []string, hosts zk.HostProvider) (*zk.Conn, <-chan zk.Event) {
	t.Helper()
	connect := func() (*zk.Conn, <-chan zk.Event, error) {
		if hosts != nil {
			return zk.Connect(addrs, timeout, zk.WithLogInfo(false), zk.WithHostProvider(hosts))
		}
		return zk.Connect(addrs, timeout, zk.WithLogInfo(false))
	}
	c, events, err := connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	// Wait for the HasSession event itself, not c.State(): go-zookeeper sets the state
	// before it sends the event, and a caller reading the channel later would take
	// that first HasSession for a reconnection (the fault test did, in CI).
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return c, events
			}
		case <-deadline:
			t.Fatalf("no session from %v", addrs)
		}
	}
}

// retryLoss runs op until it returns something other than a lost connection, as an
// application retries across a failover, for at most 30s; it returns op's last error.
func retryLoss(t *testing.T, op func() error) error {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := op()
		if err != zk.ErrConnectionClosed && err != zk.ErrNoServer && err != zk.ErrSessionMoved || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// nextEvent returns the next event on a watch channel, failing after 20s.
func nextEvent(t *testing.T, ch <-chan zk.Event, what string) zk.Event {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: no event within 20s", what)
		return zk.Event{}
	}
}

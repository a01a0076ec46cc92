package server

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/quorum"
	"github.com/zkraft/zkraft/server/ztest"
	"github.com/zkraft/zkraft/session"
)

// Clients on different members of a 3-server cluster see one tree: a write through any
// member is answered after it is applied there, a read after sync sees it, and a watch
// set on one member fires for a change made through another.
func TestClusterServesClientsOnEveryMember(t *testing.T) {
	tc := newTestCluster(t, 3)
	servers := tc.servers
	clients := make([]*rawClient, 3)
	for i, s := range servers {
		clients[i] = dial(t, s.Addr().String())
		clients[i].connect(0, nil)
	}
	modes := map[string]int{}
	for _, s := range servers {
		modes[s.node.Mode()]++
	}
	if modes["leader"] != 1 || modes["follower"] != 2 {
		t.Fatalf("modes %v", modes)
	}
	for i, c := range clients {
		p := "/from" + strconv.Itoa(i)
		if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: p, Data: []byte(p), Acl: openACL, Flags: jute.FlagEphemeral}, nil); h.Err != 0 {
			t.Fatalf("create via server %d: %d", i+1, h.Err)
		}
		var gd jute.GetDataResponse
		if h := c.call(jute.OpGetData, &jute.GetDataRequest{Path: p}, &gd); h.Err != 0 || string(gd.Data) != p {
			t.Fatalf("read-your-write on server %d: %d %q", i+1, h.Err, gd.Data)
		}
	}
	// A watch on member 3 fires for a change through member 1.
	if h := clients[2].call(jute.OpExists, &jute.ExistsRequest{Path: "/from0", Watch: true}, &jute.ExistsResponse{}); h.Err != 0 {
		t.Fatalf("exists: %d", h.Err)
	}
	clients[0].call(jute.OpSetData, &jute.SetDataRequest{Path: "/from0", Data: []byte("x"), Version: -1}, &jute.SetDataResponse{})
	var eh jute.ReplyHeader
	var ev jute.WatcherEvent
	clients[2].readFrame(&eh, &ev)
	if eh.Xid != jute.XidNotification || ev.Type != jute.EventNodeDataChanged || ev.Path != "/from0" {
		t.Fatalf("watch on another member: %+v %+v", eh, ev)
	}
	// After sync, member 2 has everything.
	if h := clients[1].call(jute.OpSync, &jute.SyncRequest{Path: "/"}, &jute.SyncResponse{}); h.Err != 0 {
		t.Fatalf("sync: %d", h.Err)
	}
	var kids jute.GetChildrenResponse
	if h := clients[1].call(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/"}, &kids); h.Err != 0 || len(kids.Children) != 4 {
		t.Fatalf("children on member 2: %d %v", h.Err, kids.Children)
	}
	// Every member ends with the same tree.
	tc.converge()
}

// A member cut off from the majority drops its clients and refuses new ones, so they
// move to members that can serve them.
func TestMinorityMemberDropsClients(t *testing.T) {
	servers := newTestCluster(t, 3).servers
	var lone *Server
	for _, s := range servers {
		if !s.node.IsLeader() {
			lone = s
		}
	}
	c := dial(t, lone.Addr().String())
	c.connect(0, nil)
	for _, s := range servers {
		if s != lone {
			s.Close()
		}
	}
	c.nc.SetReadDeadline(time.Now().Add(15 * time.Second))
	if _, err := c.br.ReadByte(); err == nil || isTimeout(err) {
		t.Fatalf("client of a minority member kept its connection: %v", err)
	}
	d := dial(t, lone.Addr().String())
	req := &jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}}
	d.nc.Write(jute.AppendFrame(nil, req))
	if _, err := jute.ReadFrame(d.br, nil, jute.DefaultMaxBuffer); err == nil {
		t.Fatal("a member without a leader gave out a session")
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// connectTimeout opens a session with the given timeout (ms) and returns the client.
//
// A member that has lost sight of its leader for a moment (a loaded machine delays a
// heartbeat or the forwarding stream's dial) refuses the handshake by closing: the
// client tries again, as real clients do, for up to 10 s.
func connectTimeout(t *testing.T, addr string, timeout int32) *rawClient {
	t.Helper()
	req := &jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: timeout, Passwd: make([]byte, 16)}}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c := dial(t, addr)
		c.nc.Write(jute.AppendFrame(nil, req))
		var resp jute.Connected
		b, err := jute.ReadFrame(c.br, nil, jute.DefaultMaxBuffer)
		if err == nil {
			d := jute.NewDecoder(b)
			resp.Decode(d)
			err = d.Err
		}
		if err == nil && resp.SessionId != 0 {
			c.sid, c.pw = resp.SessionId, resp.Passwd
			return c
		}
		c.nc.Close()
		if time.Now().After(deadline) {
			t.Fatalf("no session from %s: %v", addr, err)
		}
	}
}

// expectClosed fails unless the server closes c within d.
func expectClosed(t *testing.T, c *rawClient, d time.Duration, why string) {
	t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(d))
	for {
		if _, err := jute.ReadFrame(c.br, nil, jute.DefaultMaxBuffer); err != nil {
			if isTimeout(err) {
				t.Fatalf("%s: connection still open after %v", why, d)
			}
			return
		}
	}
}

func exists(t *testing.T, c *rawClient, path string) (jute.Stat, bool) {
	t.Helper()
	var r jute.ExistsResponse
	h := c.call(jute.OpExists, &jute.ExistsRequest{Path: path}, &r)
	if h.Err != 0 && h.Err != int32(jute.ErrNoNode) {
		t.Fatalf("exists %s: %d", path, h.Err)
	}
	return r.Stat, h.Err == 0
}

// A client that reattaches its session through another member moves it there: the
// connection it left is closed (ZooKeeper's SESSIONMOVED), a write the old member still
// proposes for it is refused, and the session, its ephemerals and its password live on.
func TestClusterSessionMovesBetweenMembers(t *testing.T) {
	tc := newTestCluster(t, 3)
	a := dial(t, tc.addr(0))
	a.connect(0, nil)
	if h := a.call(jute.OpCreate, &jute.CreateRequest{Path: "/mine", Acl: openACL, Flags: jute.FlagEphemeral}, nil); h.Err != 0 {
		t.Fatalf("create: %d", h.Err)
	}
	b := dial(t, tc.addr(1))
	if r := b.connect(a.sid, a.pw); r.SessionId != a.sid || r.TimeOut == 0 {
		t.Fatalf("reattach on member 2: %+v", r)
	}
	expectClosed(t, a, 5*time.Second, "connection left on member 1")
	if st, ok := exists(t, b, "/mine"); !ok || st.EphemeralOwner != a.sid {
		t.Fatalf("ephemeral after the move: %v %+v", ok, st)
	}
	if h := b.call(jute.OpSetData, &jute.SetDataRequest{Path: "/mine", Data: []byte("b"), Version: -1}, &jute.SetDataResponse{}); h.Err != 0 {
		t.Fatalf("write through the new member: %d", h.Err)
	}
	// A write member 1 proposes for the session now is refused when applied.
	f := tc.servers[0].node.Propose(&quorum.Entry{Session: a.sid, Op: jute.OpSetData, Origin: "1",
		Req: &jute.SetDataRequest{Path: "/mine", Data: []byte("stale"), Version: -1}})
	if err := f.Error(); err != nil {
		t.Fatal(err)
	}
	if res := f.Response().(*quorum.Result); res.Err != jute.ErrSessionMoved {
		t.Fatalf("write from the old member: %v, want SESSIONMOVED", res.Err)
	}
	// So is a close from there: the session survives it.
	f = tc.servers[0].node.Propose(&quorum.Entry{Session: a.sid, Op: jute.OpCloseSession, Origin: "1"})
	if err := f.Error(); err != nil {
		t.Fatal(err)
	}
	if res := f.Response().(*quorum.Result); res.Err != jute.ErrSessionMoved {
		t.Fatalf("close from the old member: %v, want SESSIONMOVED", res.Err)
	}
	tc.converge()
	for i, s := range tc.servers {
		s.node.FSM.Read(func(_ *datatree.Tree, tab *session.Table) {
			if got, ok := tab.Get(a.sid); !ok || got.Owner != "2" {
				t.Fatalf("member %d: session %+v %v, want owner 2", i+1, got, ok)
			}
		})
	}
	// Moving back works too.
	c := dial(t, tc.addr(0))
	if r := c.connect(a.sid, a.pw); r.SessionId != a.sid {
		t.Fatalf("reattach on member 1: %+v", r)
	}
	expectClosed(t, b, 5*time.Second, "connection left on member 2")
	var gd jute.GetDataResponse
	if h := c.call(jute.OpGetData, &jute.GetDataRequest{Path: "/mine"}, &gd); h.Err != 0 || string(gd.Data) != "b" {
		t.Fatalf("read after moving back: %d %q", h.Err, gd.Data)
	}
}

// Killing the leader: a new one is elected, the clients on the other members keep their
// sessions (no expiry storm), ephemerals and watches; writes go on; the old leader
// restarts, catches up and ends with the same tree.
func TestClusterLeaderFailoverKeepsSessionsAndWatches(t *testing.T) {
	tc := newTestCluster(t, 3)
	old := tc.leader()
	var clients []*zk.Conn
	var sessions []int64
	for i := range tc.servers {
		if i == old {
			continue
		}
		c := zkSession(t, 2*time.Second, tc.addr(i))
		p := "/e" + strconv.Itoa(i)
		if _, err := c.Create(p, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
		clients, sessions = append(clients, c), append(sessions, c.SessionID())
	}
	_, _, watch, err := clients[1].ExistsW("/after")
	if err != nil {
		t.Fatal(err)
	}
	tc.stop(old)
	tc.leader()
	// The clients ping through the election (their member may drop them while it has no
	// leader; they come back with the same session); then wait past their timeout.
	time.Sleep(3 * time.Second)
	if err := retryLoss(t, func() error {
		_, err := clients[0].Create("/after", nil, 0, zk.WorldACL(zk.PermAll))
		if err == zk.ErrNodeExists { // the lost attempt was applied
			err = nil
		}
		return err
	}); err != nil {
		t.Fatalf("write after failover: %v", err)
	}
	if ev := nextEvent(t, watch, "watch across failover"); ev.Type != zk.EventNodeCreated || ev.Path != "/after" {
		t.Fatalf("watch across failover: %+v", ev)
	}
	for i, c := range clients {
		if c.SessionID() != sessions[i] {
			t.Fatalf("client %d has a new session", i)
		}
	}
	for i := range tc.servers {
		if i == old {
			continue
		}
		var ok bool
		if err := retryLoss(t, func() (err error) { ok, _, err = clients[0].Exists("/e" + strconv.Itoa(i)); return }); err != nil || !ok {
			t.Fatalf("ephemeral of member %d lost in the failover: %v", i+1, err)
		}
	}
	tc.start(old)
	tc.converge()
}

// The whole cluster stops and starts again with every acknowledged write.
func TestClusterWholeRestartKeepsData(t *testing.T) {
	tc := newTestCluster(t, 3)
	c := dial(t, tc.addr(tc.follower()))
	c.connect(0, nil)
	for i := 0; i < 50; i++ {
		p := "/n" + strconv.Itoa(i)
		if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: p, Data: []byte(p), Acl: openACL}, nil); h.Err != 0 {
			t.Fatalf("create %s: %d", p, h.Err)
		}
	}
	tc.stopAll()
	tc.start(0, 1, 2)
	tc.converge()
	for i := range tc.servers {
		tc.awaitSrvr(i, "Mode: ") // it serves (a leader or a follower): takes a session
		d := dial(t, tc.addr(i))
		d.connect(0, nil)
		var kids jute.GetChildrenResponse
		if h := d.call(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/"}, &kids); h.Err != 0 || len(kids.Children) != 51 {
			t.Fatalf("member %d after restart: %d, %d children", i+1, h.Err, len(kids.Children))
		}
	}
}

// A member started while too few of its peers are up stays up and refuses clients until
// they come, as a ZooKeeper 3.8 member keeps looking for its leader (checked: alone for
// 75 s, it stays up, LOOKING). zkraft's Start failed after its wait for a first leader
// ("quorum: no leader elected in time"), so the process exited a minute after start when
// members were started one by one. The member listens from its start, as ZooKeeper's
// does: its port refused connections until a leader was elected or the wait ran out, so
// ruok and a health check saw a dead process for that minute.
func TestMemberStartedAloneWaitsForItsPeers(t *testing.T) {
	defer func(d time.Duration) { firstLeaderWait = d }(firstLeaderWait)
	firstLeaderWait = 5 * time.Second
	tc := newTestCluster(t, 3)
	tc.stopAll()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(tc.cfgs[0].ClientPort))
	s, err := New(tc.cfgs[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	tc.servers[0] = s
	started := make(chan error, 1)
	go func() { started <- s.Start() }()
	for deadline := time.Now().Add(firstLeaderWait); ; time.Sleep(20 * time.Millisecond) {
		out, err := ztest.FourLetter(addr, "srvr")
		if err == nil {
			if !strings.Contains(out, notServing) {
				t.Fatalf("srvr of a member without a leader: %q", out)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a member waiting for its first leader does not listen: %v", err)
		}
	}
	select {
	case err := <-started:
		t.Fatalf("Start returned (%v) before its wait for a first leader ran out", err)
	default:
	}
	if out := askFourLetter(t, addr, "ruok"); out != "imok" {
		t.Fatalf("ruok of a member without a leader: %q", out)
	}
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("a member alone after its wait for a leader: %v", err)
		}
	case <-time.After(firstLeaderWait + 10*time.Second):
		t.Fatal("Start did not return after its wait for a first leader")
	}
	if out := askFourLetter(t, addr, "srvr"); !strings.Contains(out, notServing) {
		t.Fatalf("srvr of a member alone after its wait: %q", out)
	}
	tc.start(1, 2)
	tc.leader()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if out := askFourLetter(t, addr, "srvr"); strings.Contains(out, "Mode: ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the member started first does not serve once its peers are up")
		}
	}
}

// A session whose client went silent is expired by the new leader after the old one
// died: expiry is a leader duty that survives failover, and its ephemerals go.
func TestClusterSessionExpiryWithLeaderGone(t *testing.T) {
	tc := newTestCluster(t, 3)
	f := tc.follower()
	a := connectTimeout(t, tc.addr(f), 1000)
	if h := a.call(jute.OpCreate, &jute.CreateRequest{Path: "/gone", Acl: openACL, Flags: jute.FlagEphemeral}, nil); h.Err != 0 {
		t.Fatalf("create: %d", h.Err)
	}
	a.nc.Close()
	tc.stop(tc.leader())
	// The follower stands for election at once (the stopped leader's ports refuse it)
	// and refuses handshakes until a leader is known, as a ZooKeeper member does.
	deadline := time.Now().Add(15 * time.Second)
	var w *rawClient
	for w == nil {
		c := dial(t, tc.addr(f))
		if r := c.tryConnect(jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}}); r != nil && r.SessionId != 0 {
			w = c
		} else if time.Now().After(deadline) {
			t.Fatal("no session on the follower after the leader died")
		} else {
			time.Sleep(50 * time.Millisecond)
		}
	}
	for {
		if _, ok := exists(t, w, "/gone"); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the silent session was not expired after the leader died")
		}
		time.Sleep(100 * time.Millisecond)
	}
	b := dial(t, tc.addr(f))
	if r := b.connect(a.sid, a.pw); r.SessionId != 0 {
		t.Fatalf("expired session reattached: %+v", r)
	}
}

// A partition: the leader is cut off from the other two. Its side refuses writes and
// drops its client; the majority elects a leader and serves; after the cut heals, the
// old leader catches up and nothing it accepted without a quorum survives.
func TestClusterPartitionedLeader(t *testing.T) { partitionedLeader(t, newTestCluster(t, 3)) }

func partitionedLeader(t *testing.T, tc *testCluster) {
	cut := tc.leader()
	lone := dial(t, tc.addr(cut))
	lone.connect(0, nil)
	other := (cut + 1) % 3
	m := dial(t, tc.addr(other))
	m.connect(0, nil)
	tc.net.Isolate(strconv.Itoa(cut + 1))

	// A write on the minority side is never acknowledged.
	lone.send(jute.OpCreate, &jute.CreateRequest{Path: "/minority", Acl: openACL})
	lone.nc.SetReadDeadline(time.Now().Add(15 * time.Second))
	for {
		b, err := jute.ReadFrame(lone.br, nil, jute.DefaultMaxBuffer)
		if err != nil {
			if isTimeout(err) {
				t.Fatal("the minority member kept its client connected")
			}
			break
		}
		var h jute.ReplyHeader
		h.Decode(jute.NewDecoder(b))
		if h.Xid > 0 && h.Err == 0 {
			t.Fatal("the minority side acknowledged a write")
		}
	}
	// The majority serves writes (the client's member may need an election first).
	for i := 0; i < 20; i++ {
		if h := m.call(jute.OpCreate, &jute.CreateRequest{Path: "/p" + strconv.Itoa(i), Acl: openACL}, nil); h.Err != 0 {
			t.Fatalf("majority write %d: %d", i, h.Err)
		}
	}
	// Nothing reaches the cut member, and it gives out no sessions.
	tc.servers[cut].node.FSM.Read(func(tr *datatree.Tree, _ *session.Table) {
		if _, _, code := tr.Get("/p0"); code != jute.ErrNoNode {
			t.Fatalf("the cut member has a write from the majority: %v", code)
		}
	})
	d := dial(t, tc.addr(cut))
	d.nc.Write(jute.AppendFrame(nil, &jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}}))
	if _, err := jute.ReadFrame(d.br, nil, jute.DefaultMaxBuffer); err == nil {
		t.Fatal("the cut member gave out a session")
	}
	if out := askFourLetter(t, tc.addr(cut), "srvr"); out != "This ZooKeeper instance is not currently serving requests\n" {
		t.Fatalf("srvr on the cut member: %q", out)
	}

	tc.net.Heal()
	tc.converge()
	c := dial(t, tc.addr(cut))
	c.connect(0, nil)
	if h := c.call(jute.OpSync, &jute.SyncRequest{Path: "/"}, &jute.SyncResponse{}); h.Err != 0 {
		t.Fatalf("sync after heal: %d", h.Err)
	}
	var kids jute.GetChildrenResponse
	if h := c.call(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/"}, &kids); h.Err != 0 || len(kids.Children) != 21 {
		t.Fatalf("after heal the old leader has %d children (%v), want 21", len(kids.Children), kids.Children)
	}
	if _, ok := exists(t, c, "/minority"); ok {
		t.Fatal("a write the minority never committed appeared")
	}
}

// Five voters and an observer: the observer reports its mode, serves reads, forwards
// writes and sees watches fire; the cluster keeps serving with two voters (one the
// leader) down, and they catch up when they return.
func TestFiveVotersAndAnObserver(t *testing.T) {
	tc := newTestCluster(t, 6, 6)
	modes := map[string]int{}
	for _, s := range tc.servers {
		modes[s.node.Mode()]++
	}
	if modes["leader"] != 1 || modes["follower"] != 4 || modes["observer"] != 1 {
		t.Fatalf("modes %v", modes)
	}
	tc.awaitSrvr(5, "Mode: observer")
	// The leader counts its followers and observer as ZooKeeper's mntr does.
	lead := tc.leader()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out := askFourLetter(t, tc.addr(lead), "mntr")
		if strings.Contains(out, "zk_synced_followers\t4\n") && strings.Contains(out, "zk_synced_observers\t1\n") &&
			strings.Contains(out, "zk_learners\t5\n") && strings.Contains(out, "zk_peer_state\tleading - broadcast\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("leader mntr:\n%s", out)
		}
	}
	if out := askFourLetter(t, tc.addr(5), "mntr"); !strings.Contains(out, "zk_peer_state\tobserving - broadcast\n") || strings.Contains(out, "zk_synced_followers") {
		t.Fatalf("observer mntr:\n%s", out)
	}
	o := zkSession(t, 10*time.Second, tc.addr(5))
	if _, err := o.Create("/obs", []byte("1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("write through the observer: %v", err)
	}
	_, _, watch, err := o.GetW("/obs")
	if err != nil {
		t.Fatalf("read on the observer: %v", err)
	}
	leader := tc.leader()
	tc.stop(leader)
	down := []int{leader}
	for i := 0; i < 5; i++ {
		if i != leader {
			tc.stop(i)
			down = append(down, i)
			break
		}
	}
	f := zkSession(t, 10*time.Second, tc.addr(tc.follower()))
	if err := retryLoss(t, func() error { _, err := f.Set("/obs", []byte("2"), -1); return err }); err != nil {
		t.Fatalf("write with two voters down: %v", err)
	}
	if ev := nextEvent(t, watch, "watch on the observer"); ev.Type != zk.EventNodeDataChanged || ev.Path != "/obs" {
		t.Fatalf("watch on the observer: %+v", ev)
	}
	if err := retryLoss(t, func() error {
		_, err := o.Create("/obs2", nil, 0, zk.WorldACL(zk.PermAll))
		if err == zk.ErrNodeExists {
			err = nil
		}
		return err
	}); err != nil {
		t.Fatalf("observer write after failover: %v", err)
	}
	tc.start(down...)
	tc.converge()
	if tc.servers[5].node.IsLeader() {
		t.Fatal("the observer leads")
	}
}

// superDigest is the digest of super:test.
const superDigest = "super:D/InIHSb7yEEbrWz8b9l71RjZJU="

func getConfig(t *testing.T, c *rawClient) (quorum.Membership, jute.Stat) {
	t.Helper()
	var gd jute.GetDataResponse
	if h := c.call(jute.OpGetData, &jute.GetDataRequest{Path: "/zookeeper/config"}, &gd); h.Err != 0 {
		t.Fatalf("get /zookeeper/config: %d", h.Err)
	}
	m, err := quorum.ParseMembership(string(gd.Data))
	if err != nil {
		t.Fatalf("/zookeeper/config %q: %v", gd.Data, err)
	}
	return m, gd.Stat
}

// awaitConfig is getConfig once /zookeeper/config holds a membership: a restored
// cluster's leader proposes its configured one when it leads, which a session created
// before the proposal is applied may not see yet.
func awaitConfig(t *testing.T, c *rawClient) (quorum.Membership, jute.Stat) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if m, st := getConfig(t, c); len(m.Peers) > 0 {
			return m, st
		}
		if time.Now().After(deadline) {
			t.Fatal("/zookeeper/config stayed empty")
		}
	}
}

// reconfig as ZooKeeper gates and answers it: /zookeeper/config shows the members, a
// non-super caller gets NoAuth, a stale version BadVersion; a super user adds a new
// server (which joins without bootstrapping a cluster of its own and serves), and
// removes the leader (which steps down; the rest elect one and serve).
func TestClusterReconfigAddAndRemove(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) { c.ReconfigEnabled, c.SuperDigest = true, superDigest })
	c := dial(t, tc.addr(tc.follower()))
	c.connect(0, nil)
	// No wait: the first leader proposes the membership before anything else of its term,
	// so a session created since sees it (ZooKeeper has it from the start).
	m, st := getConfig(t, c)
	if len(m.Peers) != 3 || m.Version != st.Mzxid || st.Version != -1 || st.Aversion != -1 {
		t.Fatalf("initial config %+v, stat %+v", m, st)
	}
	if h := c.call(jute.OpReconfig, &jute.ReconfigRequest{LeavingServers: "3", CurConfigId: -1}, &jute.GetDataResponse{}); h.Err != int32(jute.ErrNoAuth) {
		t.Fatalf("reconfig without super: %d, want NoAuth", h.Err)
	}
	if h := c.call(jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("super:test")}, nil); h.Err != 0 {
		t.Fatalf("addauth super: %d", h.Err)
	}
	if h := c.call(jute.OpReconfig, &jute.ReconfigRequest{LeavingServers: "3", CurConfigId: m.Version + 1}, &jute.GetDataResponse{}); h.Err != int32(jute.ErrBadVersion) {
		t.Fatalf("reconfig from a wrong version: %d, want BadVersion", h.Err)
	}
	if h := c.call(jute.OpReconfig, &jute.ReconfigRequest{JoiningServers: "server.4=127.0.0.1:1:2", CurConfigId: -1}, &jute.GetDataResponse{}); h.Err != int32(jute.ErrBadArguments) {
		t.Fatalf("joiner without a client port: %d, want BadArguments", h.Err)
	}

	// Add a fourth server.
	i, line, started := tc.addMember()
	var gd jute.GetDataResponse
	if h := c.call(jute.OpReconfig, &jute.ReconfigRequest{JoiningServers: line, CurConfigId: m.Version}, &gd); h.Err != 0 {
		t.Fatalf("reconfig -add: %d", h.Err)
	}
	added, err := quorum.ParseMembership(string(gd.Data))
	if err != nil || len(added.Peers) != 4 || added.Version != gd.Stat.Mzxid || added.Version <= m.Version {
		t.Fatalf("reconfig answer %q (%v), stat %+v", gd.Data, err, gd.Stat)
	}
	awaitAdded(t, started)
	tc.converge()
	if mode := tc.servers[i].node.Mode(); mode != "follower" {
		t.Fatalf("new server's mode %s", mode)
	}
	n := dial(t, tc.addr(i))
	n.connect(0, nil)
	if h := n.call(jute.OpCreate, &jute.CreateRequest{Path: "/via4", Acl: openACL}, nil); h.Err != 0 {
		t.Fatalf("write through the new server: %d", h.Err)
	}
	if now, _ := getConfig(t, n); now.String() != added.String() {
		t.Fatalf("new server's /zookeeper/config:\n%s\nwant\n%s", now, added)
	}

	// Remove the leader.
	l := tc.leader()
	if l == i {
		t.Skip("the new server leads; this test removes an original leader")
	}
	reconfigRemove(t, c, l)
	// The removed leader steps down and follows the next one as a non-voter, as
	// ZooKeeper's does, until it is stopped.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		old := tc.servers[l].node
		if id, ok := old.LeaderID(); ok && id != strconv.Itoa(l+1) && old.HasLeader() && old.Mode() == "follower" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the removed leader does not follow a new leader")
		}
	}
	tc.stop(l)
	// The new server may still forward to the removed leader until it hears of the next
	// one, and the election that follows may take more than one term (two members stood
	// at once in a CI run): a write then loses its connection, as a ZooKeeper client's
	// does when its leader goes. Write through the new server as a client does, again
	// after a connection loss.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if id, ok := tc.servers[i].node.LeaderID(); ok && id != strconv.Itoa(l+1) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the new server learned of no new leader after the old one was removed")
		}
	}
	z := zkSession(t, 10*time.Second, tc.addr(i))
	if err := retryLoss(t, func() error {
		_, err := z.Create("/after-remove", nil, 0, zk.WorldACL(zk.PermAll))
		if err == zk.ErrNodeExists { // a try whose answer was lost
			err = nil
		}
		return err
	}); err != nil {
		t.Fatalf("write after removing the leader: %v", err)
	}
	tc.converge()
}

// A member replaced on the same host and port: reconfig -remove 3, stop it, then
// reconfig -add server.4 at 3's addresses, ZooKeeper's way of swapping a machine. The
// removed member stayed in Raft's configuration as a non-voter; raft refuses two
// servers at one address, so the leader drops it before it adds the new one.
func TestReconfigReplacesARemovedMemberAtItsAddress(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) { c.ReconfigEnabled, c.SuperDigest = true, superDigest })
	l := tc.leader()
	f := (l + 1) % 3
	c := superSession(t, tc.addr(l))
	reconfigRemove(t, c, f)
	old := tc.cfgs[f].Servers[f]
	tc.stop(f)
	i, line, started := tc.addMemberAt(old.RaftAddr, old.PeerAddr, old.ID)
	if h := c.call(jute.OpReconfig, &jute.ReconfigRequest{JoiningServers: line, CurConfigId: -1}, &jute.GetDataResponse{}); h.Err != 0 {
		t.Fatalf("reconfig -add %s: %d", line, h.Err)
	}
	awaitAdded(t, started)
	for deadline := time.Now().Add(15 * time.Second); !tc.servers[l].node.MembershipApplied(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the leader's Raft configuration never took server %d at %s", i+1, old.RaftAddr)
		}
	}
	n := dial(t, tc.addr(i))
	n.connect(0, nil)
	if h := n.call(jute.OpCreate, &jute.CreateRequest{Path: "/via-replacement", Acl: openACL}, nil); h.Err != 0 {
		t.Fatalf("write through the replacement: %d", h.Err)
	}
	tc.converge()
}

// Without reconfigEnabled, reconfig is refused as ZooKeeper 3.8 refuses it.
func TestClusterReconfigDisabled(t *testing.T) {
	tc := newTestCluster(t, 3)
	c := dial(t, tc.addr(0))
	c.connect(0, nil)
	if h := c.call(jute.OpReconfig, &jute.ReconfigRequest{LeavingServers: "3", CurConfigId: -1}, &jute.GetDataResponse{}); h.Err != int32(jute.ErrReconfigDisabled) {
		t.Fatalf("reconfig: %d, want ReconfigDisabled", h.Err)
	}
}

// SIGTERM's Shutdown on the leader hands leadership over first: a new leader is there at
// once and a client of a follower goes on writing on the same connection.
func TestShutdownHandsLeadershipOver(t *testing.T) {
	tc := newTestCluster(t, 3)
	old := tc.leader()
	f := (old + 1) % 3
	c := dial(t, tc.addr(f))
	c.connect(0, nil)
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/before", Acl: openACL}, nil); h.Err != 0 {
		t.Fatalf("create: %d", h.Err)
	}
	// The hand-over Shutdown starts with: when it returns, this member no longer leads.
	if err := tc.servers[old].node.HandOver(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if tc.servers[old].node.IsLeader() {
		t.Fatal("still the leader after handing over")
	}
	if err := tc.servers[old].Shutdown(); err != nil {
		t.Fatal(err)
	}
	tc.servers[old] = nil
	leader := -1
	for deadline := time.Now().Add(time.Second); leader < 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for i, s := range tc.servers {
			if s != nil && s.node.IsLeader() {
				leader = i
			}
		}
	}
	if leader < 0 {
		t.Fatal("no leader within a second of the old one's shutdown")
	}
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/after", Acl: openACL}, nil); h.Err != 0 {
		t.Fatalf("create after the hand-over: %d", h.Err)
	}
}

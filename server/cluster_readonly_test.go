package server

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// readOnlyConnect is a 3.4+ client's ConnectRequest asking for a read-only session.
func readOnlyConnect(sid int64, pw []byte) jute.Connect {
	if pw == nil {
		pw = make([]byte, 16)
	}
	return jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 10000, SessionId: sid, Passwd: pw}, ReadOnly: true, HasReadOnly: true}
}

// awaitFourLetter polls cmd on addr until it answers want, for at most limit.
func awaitFourLetter(t *testing.T, addr, cmd, want string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		got := askFourLetter(t, addr, cmd)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s on %s: %q after %v, want %q", cmd, addr, got, limit, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// With readonlymode.enabled, a member cut off from the quorum serves read-only clients
// once it has had no leader for ZooKeeper's delay, as ZooKeeper 3.8's read-only server
// (with local sessions) does: reads and watches from its own state, NotReadOnly for every
// write, sync included; other clients and global sessions refused; srvr, mntr, isro and
// the AdminServer say read-only. When it rejoins, its read-only clients are dropped and
// it serves read-write again.
func TestReadOnlyMemberServesReadOnlyClients(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) { c.ReadOnlyMode = true })
	w := dial(t, tc.addr(tc.leader()))
	w.connect(0, nil)
	for _, p := range []string{"/ro", "/ro/kid"} {
		if h := w.call(jute.OpCreate, &jute.CreateRequest{Path: p, Data: []byte("hello"), Acl: openACL}, nil); h.Err != 0 {
			t.Fatalf("create %s: %d", p, h.Err)
		}
	}
	eph := dial(t, tc.addr(tc.leader()))
	eph.connect(0, nil)
	if h := eph.call(jute.OpCreate, &jute.CreateRequest{Path: "/eph", Acl: openACL, Flags: jute.FlagEphemeral}, nil); h.Err != 0 {
		t.Fatalf("create /eph: %d", h.Err)
	}
	tc.converge()
	f := tc.follower()
	addr, srv := tc.addr(f), tc.servers[f]
	rw := dial(t, addr)
	rw.connect(0, nil)

	cut := time.Now()
	tc.net.Isolate(strconv.Itoa(f + 1))
	expectClosed(t, rw, 10*time.Second, "read-write client of the isolated member")
	if got := askFourLetter(t, addr, "isro"); got != "null" && got != "ro" {
		t.Fatalf("isro without a leader: %q, want null (or ro once read-only)", got)
	}
	awaitFourLetter(t, addr, "isro", "ro", 15*time.Second)
	if d := time.Since(cut); d < readOnlyDelay(srv.cfg.TickTime) {
		t.Fatalf("read-only %v after the partition, before ZooKeeper's %v", d, readOnlyDelay(srv.cfg.TickTime))
	}

	ro := dial(t, addr)
	resp := ro.tryConnect(readOnlyConnect(0, nil))
	if resp == nil || !resp.HasReadOnly || !resp.ReadOnly || resp.TimeOut != int32(srv.cfg.MaxTimeout().Milliseconds()) || len(resp.Passwd) != 16 ||
		resp.SessionId>>56 != int64(f+1) {
		t.Fatalf("read-only session: %+v", resp)
	}
	var gd jute.GetDataResponse
	if h := ro.call(jute.OpGetData, &jute.GetDataRequest{Path: "/ro"}, &gd); h.Err != 0 || string(gd.Data) != "hello" {
		t.Fatalf("getData in read-only mode: %d %q", h.Err, gd.Data)
	}
	var kids jute.GetChildrenResponse
	if h := ro.call(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/ro", Watch: true}, &kids); h.Err != 0 || len(kids.Children) != 1 {
		t.Fatalf("getChildren with a watch in read-only mode: %d %v", h.Err, kids.Children)
	}
	zxid := srv.node.FSM.LastZxid()
	for _, op := range []struct {
		op  int32
		req jute.Record
	}{
		{jute.OpCreate, &jute.CreateRequest{Path: "/x", Acl: openACL}},
		{jute.OpSetData, &jute.SetDataRequest{Path: "/ro", Data: []byte("no"), Version: -1}},
		{jute.OpDelete, &jute.DeleteRequest{Path: "/ro/kid", Version: -1}},
		{jute.OpSetACL, &jute.SetACLRequest{Path: "/ro", Acl: openACL, Version: -1}},
		{jute.OpSync, &jute.SyncRequest{Path: "/"}},
		{jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{{Type: jute.OpCheck, Req: &jute.CheckVersionRequest{Path: "/ro"}}}}},
		{jute.OpReconfig, &jute.ReconfigRequest{CurConfigId: -1}},
	} {
		if h := ro.call(op.op, op.req, nil); h.Err != int32(jute.ErrNotReadOnly) || h.Zxid != zxid {
			t.Errorf("op %d in read-only mode: %+v, want NotReadOnly at zxid 0x%x", op.op, h, zxid)
		}
	}

	srvr := askFourLetter(t, addr, "srvr")
	if !strings.Contains(srvr, "\nREAD-ONLY mode; serving only read-only clients\n") || !strings.Contains(srvr, "\nMode: read-only\n") {
		t.Errorf("srvr in read-only mode:\n%s", srvr)
	}
	mntr := askFourLetter(t, addr, "mntr")
	if !strings.Contains(mntr, "zk_server_state\tread-only\n") || strings.Contains(mntr, "zk_peer_state") ||
		!strings.Contains(mntr, "zk_local_sessions\t1\n") {
		t.Errorf("mntr in read-only mode:\n%s", mntr)
	}
	admin := srv.adminHandler()
	rec := httptest.NewRecorder()
	admin.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/commands/is_read_only", nil))
	if !strings.Contains(rec.Body.String(), `"read_only" : true`) {
		t.Errorf("is_read_only: %s", rec.Body)
	}
	rec = httptest.NewRecorder()
	admin.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ready", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/ready of a read-only member: %d", rec.Code)
	}

	// Refused without an answer: a read-write client, an old client without the flag, a
	// global session that owns an ephemeral, a client that has seen more than this member
	// has.
	plain := jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}, HasReadOnly: true}
	old := jute.Connect{ConnectRequest: plain.ConnectRequest}
	ahead := readOnlyConnect(0, nil)
	ahead.LastZxidSeen = zxid + 1
	for name, req := range map[string]jute.Connect{"read-write client": plain, "old client": old,
		"global session with an ephemeral": readOnlyConnect(eph.sid, eph.pw), "client ahead": ahead} {
		if resp := dial(t, addr).tryConnect(req); resp != nil {
			t.Errorf("%s got an answer from a read-only member: %+v", name, resp)
		}
	}
	// An unknown session, and a global one without ephemerals (ZooKeeper's local
	// sessions), are expired (the answer keeps the read-only flag).
	for name, req := range map[string]jute.Connect{"unknown session": readOnlyConnect(resp.SessionId+1000, nil),
		"global session without ephemerals": readOnlyConnect(w.sid, w.pw)} {
		if resp := dial(t, addr).tryConnect(req); resp == nil || resp.TimeOut != 0 || resp.SessionId != 0 || !resp.ReadOnly {
			t.Fatalf("%s in read-only mode: %+v", name, resp)
		}
	}
	// The local session can be reattached here with its password; the connection it
	// left is closed. Once closed, it is gone.
	ro2 := dial(t, addr)
	if r := ro2.tryConnect(readOnlyConnect(ro.sid, ro.pw)); r == nil || r.SessionId != ro.sid || !r.ReadOnly {
		t.Fatalf("reattach the local session: %+v", r)
	}
	expectClosed(t, ro, 5*time.Second, "connection the local session left")
	if h := ro2.call(jute.OpCloseSession, nil, nil); h.Err != 0 || h.Zxid != zxid {
		t.Fatalf("closeSession of a local session: %+v", h)
	}
	expectClosed(t, ro2, 5*time.Second, "closed local session")
	if r := dial(t, addr).tryConnect(readOnlyConnect(ro.sid, ro.pw)); r == nil || r.TimeOut != 0 {
		t.Fatalf("closed local session reattached: %+v", r)
	}
	// A check outside a multi is no request at all since ZooKeeper 3.9.3 (ZOOKEEPER-2623):
	// Unimplemented at zxid -1 and the connection closed, before read-only mode looks at it.
	chk := dial(t, addr)
	if r := chk.tryConnect(readOnlyConnect(0, nil)); r == nil || !r.ReadOnly {
		t.Fatalf("read-only session: %+v", r)
	}
	if h := chk.call(jute.OpCheck, &jute.CheckVersionRequest{Path: "/ro", Version: 0}, nil); h.Err != int32(jute.ErrUnimplemented) || h.Zxid != -1 {
		t.Errorf("check outside multi in read-only mode: %+v, want Unimplemented at zxid -1", h)
	}
	expectClosed(t, chk, 5*time.Second, "connection that sent a check outside a multi")

	// Back in the quorum: read-only clients are dropped; a client that asks for a
	// read-only session now gets a read-write one.
	ro3 := dial(t, addr)
	if r := ro3.tryConnect(readOnlyConnect(0, nil)); r == nil || !r.ReadOnly {
		t.Fatalf("second read-only session: %+v", r)
	}
	tc.net.Heal()
	expectClosed(t, ro3, 15*time.Second, "read-only client after its member rejoined")
	awaitFourLetter(t, addr, "isro", "rw", 15*time.Second)
	back := dial(t, addr)
	if r := back.tryConnect(readOnlyConnect(0, nil)); r == nil || r.ReadOnly || r.SessionId == 0 {
		t.Fatalf("read-only client of a read-write member: %+v", r)
	}
	if h := back.call(jute.OpSetData, &jute.SetDataRequest{Path: "/ro", Data: []byte("rw"), Version: -1}, &jute.SetDataResponse{}); h.Err != 0 {
		t.Fatalf("write after rejoining: %d", h.Err)
	}
	if mntr := askFourLetter(t, addr, "mntr"); !strings.Contains(mntr, "zk_local_sessions\t0\n") || !strings.Contains(mntr, "zk_peer_state") {
		t.Errorf("mntr after rejoining:\n%s", mntr)
	}
}

// Without readonlymode.enabled nothing changes: a member without a leader serves nobody,
// a read-only client included, however long it waits; isro says so ("null").
func TestReadOnlyModeOffServesNobodyWithoutLeader(t *testing.T) {
	tc := newTestCluster(t, 3)
	f := tc.follower()
	addr, srv := tc.addr(f), tc.servers[f]
	tc.net.Isolate(strconv.Itoa(f + 1))
	awaitFourLetter(t, addr, "isro", "null", 10*time.Second)
	// The member drops its clients on every tick without a leader; a connection that
	// has sent no handshake is no client, and its word is answered after those ticks.
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	time.Sleep(readOnlyDelay(srv.cfg.TickTime) + time.Second)
	slow.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := slow.Write([]byte("isro")); err != nil {
		t.Fatalf("isro after the member's drops: %v", err)
	}
	if got, err := io.ReadAll(slow); string(got) != "null" {
		t.Fatalf("isro sent after the member's drops: %q (%v), want null", got, err)
	}
	if r := dial(t, addr).tryConnect(readOnlyConnect(0, nil)); r != nil {
		t.Fatalf("read-only client served with read-only mode off: %+v", r)
	}
	if got := askFourLetter(t, addr, "srvr"); !strings.Contains(got, "not currently serving") {
		t.Fatalf("srvr: %q", got)
	}
	tc.net.Heal()
	awaitFourLetter(t, addr, "isro", "rw", 15*time.Second)
}

// A member that starts with readonlymode.enabled and finds no quorum serves read-only
// clients after ZooKeeper's delay, as a ZooKeeper peer that starts looking does, and
// read-write ones once the others are back.
func TestReadOnlyMemberStartsWithoutQuorum(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) { c.ReadOnlyMode = true })
	for i := range tc.servers {
		tc.stop(i)
	}
	start := time.Now()
	tc.start(0)
	if d := time.Since(start); d < readOnlyDelay(tc.cfgs[0].TickTime) {
		t.Fatalf("started after %v, before ZooKeeper's read-only delay", d)
	}
	addr := tc.addr(0)
	if got := askFourLetter(t, addr, "isro"); got != "ro" {
		t.Fatalf("isro of a member started without quorum: %q", got)
	}
	c := dial(t, addr)
	if r := c.tryConnect(readOnlyConnect(0, nil)); r == nil || !r.ReadOnly {
		t.Fatalf("read-only session: %+v", r)
	}
	tc.start(1, 2)
	expectClosed(t, c, 15*time.Second, "read-only client once the quorum is back")
	awaitFourLetter(t, addr, "isro", "rw", 15*time.Second)
}

// A member removed by reconfig follows the leader as a non-voter and goes on serving,
// as ZooKeeper's removed server does ("non-voting follower"): its client keeps its
// connection, sees a write made after the removal and writes through it; srvr says
// follower, and the leader's mntr counts it in synced_followers and apart in
// synced_non_voting_followers. Cut off from the others, it serves no read-only sessions
// (readonlymode.enabled: it is no member) and drops its clients. The reconfig goes as
// soon as the cluster serves, which once met a leader that had not yet written its
// first membership and answered ReconfigInProgress.
func TestRemovedMemberFollowsAsANonVoter(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) {
		c.ReconfigEnabled, c.SuperDigest, c.ReadOnlyMode = true, superDigest, true
	})
	l, f := tc.leader(), tc.follower()
	addr := tc.addr(f)
	on := dial(t, addr)
	on.connect(0, nil)
	c := superSession(t, tc.addr(l))
	reconfigRemove(t, c, f)
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/after", Acl: openACL}, nil); h.Err != 0 {
		t.Fatalf("create after removal: %d", h.Err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, ok := exists(t, on, "/after"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the removed member's client never saw a write made after the removal")
		}
	}
	if h := on.call(jute.OpCreate, &jute.CreateRequest{Path: "/via-removed", Acl: openACL}, nil); h.Err != 0 {
		t.Fatalf("write through the removed member: %d", h.Err)
	}
	if srvr := askFourLetter(t, addr, "srvr"); !strings.Contains(srvr, "\nMode: follower\n") {
		t.Fatalf("srvr on the removed member:\n%s", srvr)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mntr := askFourLetter(t, tc.addr(l), "mntr")
		if mntrLine(mntr, "synced_followers") == "2" && mntrLine(mntr, "synced_non_voting_followers") == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the leader's mntr after the removal:\n%s", mntr)
		}
	}
	// Cut off: past the read-only delay and the leaderless grace, it never serves
	// read-only sessions.
	tc.net.Isolate(strconv.Itoa(f + 1))
	defer tc.net.Heal()
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		if got := askFourLetter(t, addr, "isro"); got == "ro" {
			t.Fatalf("removed member %d entered read-only mode", f+1)
		}
		time.Sleep(200 * time.Millisecond)
	}
	ro := dial(t, addr)
	if resp := ro.tryConnect(readOnlyConnect(0, nil)); resp != nil {
		t.Fatalf("a read-only session on the removed member: %+v", resp)
	}
}

// A removed member that keeps answering follows as a non-voter for as long as it runs,
// and a cut longer than the sync window (timeouts, not refusals) does not drop it; once
// it is stopped and its port has refused the leader for the sync window, the leader
// forgets it, as a ZooKeeper leader drops a learner whose socket closed, and stops
// trying to reach it. Started again, it disturbs nobody (it is no voter), and the leader
// takes it back as a non-voter, as a ZooKeeper learner a reconfig removed reconnects as
// a non-voting follower: it serves as a follower again.
func TestStoppedRemovedMemberIsForgotten(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) { c.ReconfigEnabled, c.SuperDigest = true, superDigest })
	l, f := tc.leader(), tc.follower()
	reconfigRemove(t, superSession(t, tc.addr(l)), f)
	id := fmt.Sprintf("ID:%d ", f+1)
	inRaft := func() bool { return strings.Contains(tc.servers[l].node.Stats()["latest_configuration"], id) }
	// Reachable, it stays, past many times the grace (2 ticks: 400 ms here).
	time.Sleep(2 * time.Second)
	if !inRaft() {
		t.Fatalf("a removed member that answers was dropped: %s", tc.servers[l].node.Stats()["latest_configuration"])
	}
	tc.net.Isolate(strconv.Itoa(f + 1))
	time.Sleep(2 * time.Second)
	tc.net.Heal()
	if !inRaft() {
		t.Fatalf("a removed member cut off for a while was dropped: %s", tc.servers[l].node.Stats()["latest_configuration"])
	}
	tc.stop(f)
	for deadline := time.Now().Add(10 * time.Second); inRaft(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a stopped removed member is still in Raft's configuration: %s", tc.servers[l].node.Stats()["latest_configuration"])
		}
	}
	term := tc.servers[l].node.Stats()["term"]
	tc.start(f)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		srvr := askFourLetter(t, tc.addr(f), "srvr")
		if inRaft() && strings.Contains(srvr, "Mode: follower") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the forgotten member, started again, does not follow: %s\n%s", tc.servers[l].node.Stats()["latest_configuration"], srvr)
		}
	}
	if !tc.servers[l].node.IsLeader() || tc.servers[l].node.Stats()["term"] != term {
		t.Fatalf("the forgotten member's return disturbed the leader: term %s -> %s", term, tc.servers[l].node.Stats()["term"])
	}
	if conf := tc.servers[l].node.Stats()["latest_configuration"]; !strings.Contains(conf, "Suffrage:Nonvoter "+id) {
		t.Fatalf("the forgotten member came back, but not as a non-voter: %s", conf)
	}
}

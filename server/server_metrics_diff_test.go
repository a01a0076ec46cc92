package server

import (
	"strconv"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// ZooKeeper's ServerMetrics that zkraft fills (server_metrics.go) count the same things:
// both servers get the same requests from two sessions (addauth, reads, pings, writes that
// succeed and fail, sync, a multi, data, child and recursive watches that fire), then mntr
// must report the same bytes received and sent, the same split of requests into reads
// and updates, and the same watchers fired per event type; and after srst the same
// zeros (but the four bytes of the mntr that asks).
func TestServerMetricsMatchZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	compared := []string{"bytes_received_count", "connection_drop_count", "response_bytes", "watch_bytes", "looking_count",
		"stale_sessions_expired", "sessionless_connections_expired", "cnt_election_time", "connection_revalidate_count",
		// A standalone server proposes nothing and is never unavailable, but applies its
		// transactions (propagation_latency) and loads its state once.
		"proposal_count", "commit_count", "cnt_quorum_ack_latency", "cnt_propagation_latency",
		"cnt_dbinittime", "cnt_startup_snap_load_time", "cnt_startup_txns_loaded", "cnt_unavailable_time",
		// Without jvm.pause.monitor nothing watches for pauses.
		"cnt_jvm_pause_time_ms",
		// ZooKeeper's default NIO factory neither counts plain connections nor guards TLS
		// handshakes (tls_guard.go).
		"non_mtls_local_conn_count", "non_mtls_remote_conn_count", "outstanding_tls_handshake", "tls_handshake_exceeded",
		"cnxn_closed_without_zk_server_running"}
	for _, s := range []string{"readlatency", "updatelatency"} {
		compared = append(compared, "cnt_"+s)
	}
	for _, s := range []string{"created", "deleted", "changed", "children"} {
		for _, v := range []string{"cnt_", "sum_", "min_", "max_", "avg_"} {
			compared = append(compared, v+"node_"+s+"_watch_count")
		}
	}
	run := func(start func(ztest.Options) (*ztest.Server, error)) (map[string]string, map[string]string, string) {
		s, err := start(ztest.Options{Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		// The harness's probes of the server before it counts as started differ: the bytes
		// received and the connections dropped are compared from here on.
		since := []string{"bytes_received_count", "connection_drop_count"}
		first := map[string]int{}
		first["connection_drop_count"], _ = strconv.Atoi(mntrLine(askFourLetter(t, s.Addr, "mntr"), "connection_drop_count"))
		// A client that goes away without closing its session: a dropped connection.
		gone := dial(t, s.Addr)
		gone.connect(0, nil)
		gone.nc.Close()
		dropped := func() int {
			n, _ := strconv.Atoi(mntrLine(askFourLetter(t, s.Addr, "mntr"), "connection_drop_count"))
			return n - first["connection_drop_count"]
		}
		for deadline := time.Now().Add(10 * time.Second); dropped() < 1; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the dropped connection is not counted", s.Name)
			}
		}
		// It comes back on a new connection, which reattaches its session: a reconnect
		// ZooKeeper revalidates (connection_revalidate_count), then closes it.
		back := dial(t, s.Addr)
		if r := back.connect(gone.sid, gone.pw); r.SessionId != gone.sid || r.TimeOut == 0 {
			t.Fatalf("%s: reconnect of 0x%x: %+v", s.Name, gone.sid, r)
		}
		if h := back.call(jute.OpCloseSession, nil, nil); h.Err != 0 {
			t.Fatalf("%s: closeSession after the reconnect: %d", s.Name, h.Err)
		}
		first["bytes_received_count"], _ = strconv.Atoi(mntrLine(askFourLetter(t, s.Addr, "mntr"), "bytes_received_count"))
		a, b := dial(t, s.Addr), dial(t, s.Addr)
		a.connect(0, nil)
		b.connect(0, nil)
		ok := func(what string, h jute.ReplyHeader) {
			t.Helper()
			if h.Err != 0 {
				t.Fatalf("%s: %s: %d", s.Name, what, h.Err)
			}
		}
		notified := 0
		// past answers one request of c, past the notifications that come first.
		past := func(c *rawClient, op int32, req jute.Record) jute.ReplyHeader {
			t.Helper()
			xid := c.send(op, req)
			for {
				b, err := jute.ReadFrame(c.br, nil, jute.DefaultMaxBuffer)
				if err != nil {
					t.Fatal(err)
				}
				var h jute.ReplyHeader
				h.Decode(jute.NewDecoder(b))
				if h.Xid == xid {
					return h
				}
				if h.Xid != jute.XidNotification {
					t.Fatalf("%s: reply xid %d, want %d", s.Name, h.Xid, xid)
				}
				notified++
			}
		}
		// addauth is answered before ZooKeeper's request pipeline: no latency, no
		// response bytes.
		if _, err := b.nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: jute.XidAuth, Type: jute.OpAuth},
			&jute.AuthPacket{Scheme: "digest", Auth: []byte("u:p")})); err != nil {
			t.Fatal(err)
		}
		var ah jute.ReplyHeader
		if b.readFrame(&ah); ah.Xid != jute.XidAuth || ah.Err != 0 {
			t.Fatalf("%s: addauth: %+v", s.Name, ah)
		}
		ok("create /m", a.call(jute.OpCreate, &jute.CreateRequest{Path: "/m", Data: []byte("0123456789"), Acl: openACL}, nil))
		for range 3 {
			ok("getData", a.call(jute.OpGetData, &jute.GetDataRequest{Path: "/m"}, &jute.GetDataResponse{}))
		}
		// Data watches from both sessions (b's getData and exists are one watch), a child
		// watch, and a recursive watch of a's on the root.
		ok("getData watch", b.call(jute.OpGetData, &jute.GetDataRequest{Path: "/m", Watch: true}, &jute.GetDataResponse{}))
		ok("exists watch", b.call(jute.OpExists, &jute.ExistsRequest{Path: "/m", Watch: true}, nil))
		ok("getChildren watch", b.call(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/m", Watch: true}, nil))
		ok("getData watch", a.call(jute.OpGetData, &jute.GetDataRequest{Path: "/m", Watch: true}, &jute.GetDataResponse{}))
		ok("addWatch", a.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: "/", Mode: 1}, nil))
		ok("setData", past(a, jute.OpSetData, &jute.SetDataRequest{Path: "/m", Data: []byte("x"), Version: -1}))
		ok("create /m/c", past(a, jute.OpCreate, &jute.CreateRequest{Path: "/m/c", Acl: openACL}))
		ok("exists watch", past(b, jute.OpExists, &jute.ExistsRequest{Path: "/m/c", Watch: true}))
		ok("getChildren watch", past(b, jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/m", Watch: true}))
		ok("delete /m/c", past(a, jute.OpDelete, &jute.DeleteRequest{Path: "/m/c", Version: -1}))
		if h := past(b, jute.OpCreate, &jute.CreateRequest{Path: "/m", Acl: openACL}); jute.Code(h.Err) != jute.ErrNodeExists {
			t.Fatalf("%s: create of an existing node: %d", s.Name, h.Err)
		}
		if h := past(b, jute.OpDelete, &jute.DeleteRequest{Path: "/missing", Version: -1}); jute.Code(h.Err) != jute.ErrNoNode {
			t.Fatalf("%s: delete of a missing node: %d", s.Name, h.Err)
		}
		ok("sync", past(b, jute.OpSync, &jute.SyncRequest{Path: "/m"}))
		multi := &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/m1", Acl: openACL}},
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/m2", Acl: openACL}}}}
		ok("multi", past(b, jute.OpMulti, multi))
		// The events of every change are in before the pings' answers.
		notified += len(a.notifications()) + len(b.notifications())
		if notified != 9 {
			t.Fatalf("%s: %d notifications, want 9", s.Name, notified)
		}
		for _, c := range []*rawClient{a, b} {
			ok("closeSession", c.call(jute.OpCloseSession, nil, nil))
		}
		mntr := askFourLetter(t, s.Addr, "mntr")
		before := map[string]string{}
		for _, k := range compared {
			before[k] = mntrLine(mntr, k)
		}
		// ZooKeeper's FinalRequestProcessor adds a reply's bytes to response_bytes after
		// it has queued the reply, so the last closeSession's may be counted just after
		// its client reads it: response_bytes is taken once it holds still (from later
		// mntrs, whose own bytes would change bytes_received_count).
		for range 20 {
			time.Sleep(100 * time.Millisecond)
			again := mntrLine(askFourLetter(t, s.Addr, "mntr"), "response_bytes")
			settled := again == before["response_bytes"]
			before["response_bytes"] = again
			if settled {
				break
			}
		}
		for _, k := range since {
			n, err := strconv.Atoi(before[k])
			if err != nil {
				t.Fatalf("%s: %s %q", s.Name, k, before[k])
			}
			before[k] = strconv.Itoa(n - first[k])
		}
		if got := askFourLetter(t, s.Addr, "srst"); got != "Server stats reset.\n" {
			t.Fatalf("%s: srst: %q", s.Name, got)
		}
		mntr = askFourLetter(t, s.Addr, "mntr")
		after := map[string]string{}
		for _, k := range compared {
			after[k] = mntrLine(mntr, k)
		}
		return before, after, mntr
	}
	zk, zkReset, zkMntr := run(ztest.StartZooKeeper)
	us, usReset, usMntr := run(ztest.StartZkraft)
	for _, k := range compared {
		if us[k] != zk[k] || us[k] == "" {
			t.Errorf("zk_%s: zkraft %q, zookeeper %q", k, us[k], zk[k])
		}
		if usReset[k] != zkReset[k] || usReset[k] == "" {
			t.Errorf("zk_%s after srst: zkraft %q, zookeeper %q", k, usReset[k], zkReset[k])
		}
	}
	// The summaries zkraft fills have ZooKeeper's five (or nine) keys.
	for _, name := range []string{"readlatency", "updatelatency", "fsynctime", "snapshottime", "election_time"} {
		for _, v := range []string{"avg_", "min_", "max_", "cnt_", "sum_", "p50_", "p95_", "p99_", "p999_"} {
			k := v + name
			if zkHas, usHas := mntrLine(zkMntr, k) != "", mntrLine(usMntr, k) != ""; zkHas != usHas {
				t.Errorf("zk_%s: in ZooKeeper's mntr %v, in zkraft's %v", k, zkHas, usHas)
			}
		}
	}
	if t.Failed() {
		t.Logf("zookeeper: %v", zk) // (maps print in key order)
	}
}

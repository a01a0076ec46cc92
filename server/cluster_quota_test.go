package server

import (
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// Quota stats are replicated state: every member of a cluster holds the same
// zookeeper_stats, also after members restart from their snapshots, and the leader's
// enforceQuota decides for all of them.
func TestClusterQuotaStatsAgree(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) { c.EnforceQuota = true })
	c := dial(t, tc.addr(tc.follower()))
	c.connect(0, nil)
	create := func(path, data string, flags int32) int32 {
		t.Helper()
		return c.call(jute.OpCreate, &jute.CreateRequest{Path: path, Data: []byte(data), Acl: openACL, Flags: flags}, nil).Err
	}
	for _, n := range []struct{ path, data string }{
		{"/q", ""}, {"/q/a", "aa"}, {"/zookeeper/quota/q", ""},
		{"/zookeeper/quota/q/zookeeper_limits", "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=4"},
		{"/zookeeper/quota/q/zookeeper_stats", "count=0,bytes=0"},
		{"/q/b", "bbb"}, {"/q/s-", "s"},
	} {
		flags := int32(0)
		if n.path == "/q/s-" {
			flags = jute.FlagEphemeralSequential
		}
		if code := create(n.path, n.data, flags); code != 0 {
			t.Fatalf("create %s: %d", n.path, code)
		}
	}
	// Judged in every member's apply, by the leader's setting: refused through a follower.
	if code := create("/q/c", "c", 0); code != int32(jute.ErrQuotaExceeded) {
		t.Fatalf("create over the hard quota: %d", code)
	}
	multi := &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpDelete, Req: &jute.DeleteRequest{Path: "/q/b", Version: -1}},
		{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/q/a", Data: []byte("a"), Version: -1}},
	}}
	if h := c.call(jute.OpMulti, multi, &jute.MultiResponse{}); h.Err != 0 {
		t.Fatalf("multi: %d", h.Err)
	}
	tc.converge()
	tc.wantStats("count=3,bytes=2")
	if h := c.call(jute.OpCloseSession, nil, nil); h.Err != 0 {
		t.Fatalf("closeSession: %d", h.Err)
	}
	tc.converge()
	tc.wantStats("count=2,bytes=1") // the ephemeral went with its session

	// Every member restarts from a snapshot of its own, this time all configured not to
	// enforce: the new leader writes that into the log, and the create passes.
	for i := range tc.servers {
		if err := tc.servers[i].node.TakeSnapshot(); err != nil {
			t.Fatal(err)
		}
	}
	tc.stopAll()
	for i := range tc.cfgs {
		tc.cfgs[i].EnforceQuota = false
	}
	tc.start(0, 1, 2)
	tc.converge()
	tc.wantStats("count=2,bytes=1")
	// Members restarted together may elect once more (one saw the old leader's ports
	// refuse), closing the session: tried again on the leader until every create holds
	// (NodeExists: an earlier try's create was applied).
	created := map[string]bool{}
	for deadline := time.Now().Add(20 * time.Second); len(created) < 3; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("unenforced creates that held: %v", created)
		}
		d := trySession(t, tc.addr(tc.leader()), 0, nil)
		if d == nil {
			continue
		}
		for _, p := range []string{"/q/c", "/q/d", "/q/e"} {
			if created[p] {
				continue
			}
			h, err := d.exchange(jute.OpCreate, &jute.CreateRequest{Path: p, Data: []byte("xy"), Acl: openACL}, nil)
			if err != nil {
				break
			}
			if h.Err != 0 && h.Err != int32(jute.ErrNodeExists) {
				t.Fatalf("create %s unenforced: %d", p, h.Err)
			}
			created[p] = true
		}
	}
	// One follower restarts alone and catches up.
	f := tc.follower()
	tc.stop(f)
	tc.start(f)
	tc.converge()
	tc.wantStats("count=5,bytes=7")
}

// wantStats reads /q's zookeeper_stats from every running member.
func (tc *testCluster) wantStats(want string) {
	tc.t.Helper()
	for i, s := range tc.servers {
		if s == nil {
			continue
		}
		c := dial(tc.t, tc.addr(i))
		c.connect(0, nil)
		var r jute.GetDataResponse
		if h := c.call(jute.OpGetData, &jute.GetDataRequest{Path: "/zookeeper/quota/q/zookeeper_stats"}, &r); h.Err != 0 || string(r.Data) != want {
			tc.t.Fatalf("member %d: %d %q, want %q", i+1, h.Err, r.Data, want)
		}
		if r.Stat.Mzxid != r.Stat.Czxid || r.Stat.Version != 0 {
			tc.t.Fatalf("member %d: the stats node's stat changed: %+v", i+1, r.Stat)
		}
	}
}

// Members configured differently: the leader's enforceQuota applies on every member, and
// changes with the leader.
func TestClusterLeaderDecidesEnforceQuota(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) { c.EnforceQuota = c.ServerID == 1 })
	check := func() {
		t.Helper()
		l := tc.leader()
		want := l == 0
		tc.converge()
		for deadline := time.Now().Add(10 * time.Second); tc.servers[l].node.FSM.EnforceQuota() != want; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("leader %d's enforceQuota %v not applied", l+1, want)
			}
		}
		tc.converge()
		for i, s := range tc.servers {
			if got := s.node.FSM.EnforceQuota(); got != want {
				t.Fatalf("member %d: enforceQuota %v, leader %d's is %v", i+1, got, l+1, want)
			}
		}
	}
	check()
	l := tc.leader()
	if err := tc.servers[l].node.HandOver(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); tc.servers[l].node.IsLeader() || !tc.servers[l].node.HasLeader(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("leadership not handed over")
		}
	}
	check()
}

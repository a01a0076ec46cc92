package server

import (
	"math/rand"
	"strconv"
	"testing"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// randomSteps is a script of n requests drawn from seed: single writes and multis of every
// op over a few paths (valid, sequential prefixes, quota nodes, malformed), ACLs of every
// scheme, data null, empty and quota-shaped, reads with and without watches, session
// ends. Client 1 holds a digest identity; client 2 only watches everything, persistently.
// Last, the tree's counts in mntr.
func randomSteps(seed int64, n int) []opStep {
	r := rand.New(rand.NewSource(seed))
	paths := []string{"/", "/a", "/a/b", "/a/b/c", "/c", "/c/d", "/e", "/e/f", "/a/", "/zookeeper", "/zookeeper/x",
		"/a/s0000000001", "/a/s0000000002", "/a/s0000000003", "/c/s0000000000", "/c/s0000000001", "/e/s0000000000", "/t", "/t/s0000000000",
		"/zookeeper/quota/a", "/zookeeper/quota/a/zookeeper_limits", "/zookeeper/quota/a/zookeeper_stats", "/zookeeper/quota/a/b",
		"/zookeeper/quota/c/zookeeper_limits", "/zookeeper/quota/c", "/a//b", "/a/./b", "/a/..", "/a\x00", "", "a", "/a/\u00e9", "/a/\ufffe"}
	parents := []string{"/a/s", "/c/s", "/e/s", "/t/s", "/a/", "/a/b/s"}
	path := func() string {
		switch r.Intn(6) {
		case 0:
			return parents[r.Intn(len(parents))]
		case 1, 2, 3:
			return paths[r.Intn(8)]
		}
		return paths[r.Intn(len(paths))]
	}
	version := func() int32 { return int32(r.Intn(4)) - 1 }
	acls := [][]jute.ACL{openACL, openACL, openACL, {{Perms: 1, Id: jute.Id{Scheme: "world", Id: "anyone"}}}, {{Perms: 15, Id: jute.Id{Scheme: "world", Id: "anyone"}}},
		{{Perms: 31, Id: jute.Id{Scheme: "auth", Id: ""}}}, {{Perms: 31, Id: jute.Id{Scheme: "digest", Id: datatree.DigestID("u:p")}}, {Perms: 1, Id: jute.Id{Scheme: "world", Id: "anyone"}}},
		{{Perms: 31, Id: jute.Id{Scheme: "ip", Id: "127.0.0.1"}}}, {{Perms: 31, Id: jute.Id{Scheme: "ip", Id: "10.0.0.0/8"}}, {Perms: 3, Id: jute.Id{Scheme: "world", Id: "anyone"}}}}
	data := func() []byte {
		switch r.Intn(3) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		if r.Intn(3) == 0 {
			return []byte([]string{"count=3,bytes=100", "count=-1,bytes=-1=;count=2", "count=1,bytes=5", "bogus"}[r.Intn(4)])
		}
		return []byte("x" + strconv.Itoa(r.Intn(100)))
	}
	writeOp := func(inMulti bool) (int32, jute.Record) {
		switch k := r.Intn(8); k {
		case 0, 1:
			op := []int32{jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer}[r.Intn(3)]
			if inMulti && op == jute.OpCreate2 {
				op = jute.OpCreate
			}
			return op, &jute.CreateRequest{Path: path(), Data: data(), Acl: acls[r.Intn(len(acls))], Flags: int32(r.Intn(9)) - 1}
		case 2:
			ttl := []int64{-1, 0, 100000, 0xFFFFFFFFFF, 0x10000000000}[r.Intn(5)]
			return jute.OpCreateTTL, &jute.CreateTTLRequest{Path: path(), Data: data(), Acl: openACL, Flags: int32(5 + r.Intn(2)), Ttl: ttl}
		case 3, 4:
			return jute.OpDelete, &jute.DeleteRequest{Path: path(), Version: version()}
		case 5, 6:
			p := path()
			if p == "/" {
				p = "/a" // the root's data counts apart in mntr (compatibility.md)
			}
			return jute.OpSetData, &jute.SetDataRequest{Path: p, Data: data(), Version: version()}
		}
		if inMulti {
			return jute.OpCheck, &jute.CheckVersionRequest{Path: path(), Version: version()}
		}
		return jute.OpSetACL, &jute.SetACLRequest{Path: path(), Acl: acls[r.Intn(len(acls))], Version: version()}
	}
	auth := &jute.AuthPacket{Scheme: "digest", Auth: []byte("u:p")}
	steps := []opStep{{who: 1, op: jute.OpAuth, req: auth}, {who: 2, op: jute.OpAuth, req: auth},
		{who: 2, op: jute.OpAddWatch, req: &jute.AddWatchRequest{Path: "/", Mode: jute.AddWatchPersistentRecursive}},
		{who: 2, op: jute.OpAddWatch, req: &jute.AddWatchRequest{Path: "/a", Mode: jute.AddWatchPersistent}}}
	for _, p := range []string{"/a", "/a/b", "/c", "/c/d", "/e", "/zookeeper/quota/a"} {
		steps = append(steps, opStep{who: 0, op: jute.OpCreate, req: &jute.CreateRequest{Path: p, Acl: openACL}})
	}
	steps = append(steps, opStep{who: 0, op: jute.OpCreateTTL, req: &jute.CreateTTLRequest{Path: "/t", Acl: openACL, Flags: 5, Ttl: 1 << 30}})
	for len(steps) < n {
		who := r.Intn(2)
		switch k := r.Intn(10); {
		case k < 4:
			op, req := writeOp(false)
			steps = append(steps, opStep{who: who, op: op, req: req})
		case k < 7:
			var ops []jute.MultiOp
			for i := r.Intn(3) + 1; i > 0; i-- {
				op, req := writeOp(true)
				ops = append(ops, jute.MultiOp{Type: op, Req: req})
			}
			steps = append(steps, opStep{who: who, op: jute.OpMulti, req: &jute.MultiRequest{Ops: ops}})
		case k < 9:
			p := path()
			// Not sync, checkWatches or removeWatches: their differences are documented
			// (a sync's zxid, 3.9's watch checks; compatibility.md) and ops_diff_test.go
			// checks them step by step.
			switch r.Intn(7) {
			case 0:
				steps = append(steps, opStep{who: who, op: jute.OpGetData, req: &jute.GetDataRequest{Path: p, Watch: r.Intn(2) == 0}})
			case 1:
				steps = append(steps, opStep{who: who, op: jute.OpGetChildren2, req: &jute.GetChildren2Request{Path: p, Watch: r.Intn(2) == 0}})
			case 2:
				steps = append(steps, opStep{who: who, op: jute.OpExists, req: &jute.ExistsRequest{Path: p, Watch: r.Intn(2) == 0}})
			case 3:
				steps = append(steps, opStep{who: who, op: jute.OpGetAllChildrenNumber, req: &jute.GetAllChildrenNumberRequest{Path: p}})
			case 4:
				steps = append(steps, opStep{who: who, op: jute.OpGetEphemerals, req: &jute.GetEphemeralsRequest{PrefixPath: p}})
			case 5:
				steps = append(steps, opStep{who: who, op: jute.OpGetChildren, req: &jute.GetChildrenRequest{Path: p, Watch: r.Intn(2) == 0}})
			case 6:
				var ops []jute.MultiOp
				for i := r.Intn(3) + 1; i > 0; i-- {
					if r.Intn(2) == 0 {
						ops = append(ops, jute.MultiOp{Type: jute.OpGetData, Req: &jute.GetDataRequest{Path: path()}})
					} else {
						ops = append(ops, jute.MultiOp{Type: jute.OpGetChildren, Req: &jute.GetChildrenRequest{Path: path()}})
					}
				}
				steps = append(steps, opStep{who: who, op: jute.OpMultiRead, req: &jute.MultiRequest{Ops: ops}})
			}
		default:
			if r.Intn(3) == 0 {
				steps = append(steps, opStep{who: 1, op: jute.OpCloseSession})
			} else {
				steps = append(steps, opStep{who: who, op: jute.OpGetACL, req: &jute.GetACLRequest{Path: path()}})
			}
		}
	}
	return append(steps, opStep{op: opMntr})
}

// Random scripts (fixed seeds, so a failure reproduces) against ZooKeeper 3.8 and zkraft,
// every reply and every watch event compared as in ops_diff_test.go, and the node count,
// data size, ephemerals and watches mntr shows at the end. A failure names the
// first step that differs, the ones after it differing in its wake.
func TestRandomOpsMatchZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	for _, seed := range []int64{1, 2} {
		steps := randomSteps(seed, 400)
		zk, us := opsOnStandalone(t, ztest.Options{}, 3, steps)
		firstDifference(t, seed, steps, zk, us)
	}
}

// The same on a 3-member ensemble and a 3-member zkraft cluster, the clients on one
// follower (opsOnEnsembles): the follower's path (forwarded writes, reads of what it
// applied, its watches) against ZooKeeper's learner.
func TestRandomOpsMatchZooKeeperEnsemble(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	const seed = 3
	steps := randomSteps(seed, 300)
	zk, us := opsOnEnsembles(t, ztest.Options{}, 3, steps)
	firstDifference(t, seed, steps, zk, us)
}

// firstDifference reports the first step whose transcript differs between ZooKeeper
// (zk) and zkraft (us).
func firstDifference(t *testing.T, seed int64, steps []opStep, zk, us []string) {
	t.Helper()
	for i, s := range steps {
		if zk[i] != us[i] {
			t.Errorf("seed %d, step %d (client %d, op %d, %+v):\n  zookeeper %s\n  zkraft    %s", seed, i, s.who, s.op, s.req, zk[i], us[i])
			if m, ok := s.req.(*jute.MultiRequest); ok {
				for _, o := range m.Ops {
					t.Logf("  op %d %+v", o.Type, o.Req)
				}
			}
			return
		}
	}
}

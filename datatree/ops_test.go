package datatree

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// opsFixture: /p (world), /ro (READ only), /eph (ephemeral of session 0x100),
// /full with a child.
func opsFixture(t *testing.T) *fixture {
	f := newFixture(t)
	f.mustCreate("/p", 0)
	f.mustCreateAs(anyone, "/ro", 0, aclOf(jute.PermRead, "world", "anyone"))
	f.mustCreate("/ro2", 0)
	f.mustCreate("/ro2/child", 0)
	f.apply(anyone, jute.OpSetACL, &jute.SetACLRequest{Path: "/ro2", Acl: aclOf(jute.PermRead, "world", "anyone"), Version: -1})
	f.mustCreate("/eph", jute.FlagEphemeral)
	f.mustCreate("/full", 0)
	f.mustCreate("/full/c", 0)
	return f
}

func TestCreateErrors(t *testing.T) {
	// PrepRequestProcessor.pRequest2TxnCreate, in its order.
	cases := []struct {
		name string
		op   int32
		req  jute.Record
		ext  bool
		want jute.Code
	}{
		{"bad flag", jute.OpCreate, &jute.CreateRequest{Path: "/x", Acl: world, Flags: 7}, true, jute.ErrBadArguments},
		{"ttl flag, extended off", jute.OpCreateTTL, &jute.CreateTTLRequest{Path: "/x", Acl: world, Flags: jute.FlagPersistentWithTTL, Ttl: 10}, false, jute.ErrUnimplemented},
		{"ttl flag on plain create", jute.OpCreate, &jute.CreateRequest{Path: "/x", Acl: world, Flags: jute.FlagPersistentWithTTL}, true, jute.ErrBadArguments},
		{"ttl zero", jute.OpCreateTTL, &jute.CreateTTLRequest{Path: "/x", Acl: world, Flags: jute.FlagPersistentWithTTL, Ttl: 0}, true, jute.ErrBadArguments},
		{"ttl too large", jute.OpCreateTTL, &jute.CreateTTLRequest{Path: "/x", Acl: world, Flags: jute.FlagPersistentWithTTL, Ttl: MaxTTL + 1}, true, jute.ErrBadArguments},
		{"ttl with non-ttl flag", jute.OpCreateTTL, &jute.CreateTTLRequest{Path: "/x", Acl: world, Flags: 0, Ttl: 10}, true, jute.ErrBadArguments},
		{"createTTL, non-ttl flag, no ttl", jute.OpCreateTTL, &jute.CreateTTLRequest{Path: "/x", Acl: world, Flags: 0, Ttl: -1}, true, jute.ErrBadArguments},
		{"no slash", jute.OpCreate, &jute.CreateRequest{Path: "x", Acl: world}, true, jute.ErrBadArguments},
		{"nul", jute.OpCreate, &jute.CreateRequest{Path: "/x\x00", Acl: world}, true, jute.ErrBadArguments},
		{"nil acl", jute.OpCreate, &jute.CreateRequest{Path: "/x"}, true, jute.ErrInvalidACL},
		{"acl before parent", jute.OpCreate, &jute.CreateRequest{Path: "/none/x", Acl: aclOf(31, "digest", "nocolon")}, true, jute.ErrInvalidACL},
		{"no parent", jute.OpCreate, &jute.CreateRequest{Path: "/none/x", Acl: world}, true, jute.ErrNoNode},
		// "/a//b": the parent is "/a/", which does not exist: NoNode, not BadArguments (checked on 3.8.0).
		{"empty name", jute.OpCreate, &jute.CreateRequest{Path: "/p//b", Acl: world}, true, jute.ErrNoNode},
		{"no CREATE on parent", jute.OpCreate, &jute.CreateRequest{Path: "/ro/x", Acl: world}, true, jute.ErrNoAuth},
		{"under /zookeeper/config", jute.OpCreate, &jute.CreateRequest{Path: "/zookeeper/config/x", Acl: world}, true, jute.ErrNoAuth},
		{"trailing slash", jute.OpCreate, &jute.CreateRequest{Path: "/p/", Acl: world}, true, jute.ErrBadArguments},
		{"dot name", jute.OpCreate, &jute.CreateRequest{Path: "/p/..", Acl: world}, true, jute.ErrBadArguments},
		{"exists", jute.OpCreate, &jute.CreateRequest{Path: "/p", Acl: world}, true, jute.ErrNodeExists},
		{"root exists", jute.OpCreate, &jute.CreateRequest{Path: "/", Acl: world}, true, jute.ErrNodeExists},
		{"under ephemeral", jute.OpCreate, &jute.CreateRequest{Path: "/eph/x", Acl: world}, true, jute.ErrNoChildrenForEphemera},
		{"wrong record", jute.OpCreate, &jute.DeleteRequest{Path: "/x"}, true, jute.ErrMarshallingError},
		{"not a write", jute.OpGetData, &jute.GetDataRequest{Path: "/p"}, true, jute.ErrUnimplemented},
	}
	for _, c := range cases {
		f := opsFixture(t)
		f.tree.opts.ExtendedTypes = c.ext
		before := f.tree.Digest()
		resp, code, ev := f.apply(anyone, c.op, c.req)
		if code != c.want || resp != nil || ev != nil {
			t.Errorf("%s: got %v %v %v, want %v", c.name, resp, code, ev, c.want)
		}
		if f.tree.Digest() != before {
			t.Errorf("%s: failed create changed the tree", c.name)
		}
	}
}

func TestDeleteErrors(t *testing.T) {
	// The delete case of pRequest2Txn: path, parent, DELETE on parent, node, version, children.
	cases := []struct {
		name    string
		path    string
		version int32
		want    jute.Code
	}{
		{"root", "/", -1, jute.ErrBadArguments},
		{"/zookeeper", "/zookeeper", -1, jute.ErrBadArguments},
		{"/zookeeper/quota", "/zookeeper/quota", -1, jute.ErrBadArguments},
		{"/zookeeper/config", "/zookeeper/config", -1, jute.ErrBadArguments},
		{"no slash", "p", -1, jute.ErrBadArguments},
		{"no parent", "/none/x", -1, jute.ErrNoNode},
		{"NoAuth before NoNode", "/ro/missing", -1, jute.ErrNoAuth},
		{"NoAuth before NotEmpty", "/ro2/child", -1, jute.ErrNoAuth},
		{"missing", "/missing", -1, jute.ErrNoNode},
		{"trailing slash is just absent", "/p/", -1, jute.ErrNoNode},
		{"a double slash names no node", "//p", -1, jute.ErrNoNode},
		{"nor a special one", "//zookeeper", -1, jute.ErrNoNode},
		{"bad version", "/p", 3, jute.ErrBadVersion},
		{"BadVersion before NotEmpty", "/full", 3, jute.ErrBadVersion},
		{"not empty", "/full", -1, jute.ErrNotEmpty},
		{"ok any version", "/p", -1, jute.OK},
		{"ok exact version", "/p", 0, jute.OK},
		{"ok /zookeeper child", "/eph", -1, jute.OK},
	}
	for _, c := range cases {
		f := opsFixture(t)
		_, code, ev := f.apply(anyone, jute.OpDelete, &jute.DeleteRequest{Path: c.path, Version: c.version})
		if code != c.want {
			t.Errorf("%s: got %v, want %v", c.name, code, c.want)
		}
		if (code == jute.OK) != (ev != nil) {
			t.Errorf("%s: events %v with code %v", c.name, ev, code)
		}
	}
}

func TestSetDataSetACLCheckErrors(t *testing.T) {
	digestBad := aclOf(31, "digest", "bad")
	cases := []struct {
		name string
		op   int32
		req  jute.Record
		want jute.Code
	}{
		// setData: path, node, WRITE, version (checked on 3.8.0: NoAuth wins over BadVersion).
		{"set bad path", jute.OpSetData, &jute.SetDataRequest{Path: "/p/", Version: -1}, jute.ErrBadArguments},
		{"set missing", jute.OpSetData, &jute.SetDataRequest{Path: "/missing", Version: 5}, jute.ErrNoNode},
		{"set no WRITE", jute.OpSetData, &jute.SetDataRequest{Path: "/ro", Version: 7}, jute.ErrNoAuth},
		{"set /zookeeper/config", jute.OpSetData, &jute.SetDataRequest{Path: "/zookeeper/config", Version: -1}, jute.ErrNoAuth},
		{"set bad version", jute.OpSetData, &jute.SetDataRequest{Path: "/p", Version: 7}, jute.ErrBadVersion},
		{"set ok", jute.OpSetData, &jute.SetDataRequest{Path: "/p", Version: 0}, jute.OK},
		// setACL: path, ACL (before NoNode, checked on 3.8.0), node, ADMIN, aversion.
		{"setACL bad path", jute.OpSetACL, &jute.SetACLRequest{Path: "//", Acl: world, Version: -1}, jute.ErrBadArguments},
		{"setACL invalid on missing", jute.OpSetACL, &jute.SetACLRequest{Path: "/missing", Acl: digestBad, Version: -1}, jute.ErrInvalidACL},
		{"setACL empty", jute.OpSetACL, &jute.SetACLRequest{Path: "/p", Acl: []jute.ACL{}, Version: -1}, jute.ErrInvalidACL},
		{"setACL missing", jute.OpSetACL, &jute.SetACLRequest{Path: "/missing", Acl: world, Version: -1}, jute.ErrNoNode},
		{"setACL no ADMIN", jute.OpSetACL, &jute.SetACLRequest{Path: "/ro", Acl: world, Version: 9}, jute.ErrNoAuth},
		{"setACL bad aversion", jute.OpSetACL, &jute.SetACLRequest{Path: "/p", Acl: world, Version: 1}, jute.ErrBadVersion},
		{"setACL ok", jute.OpSetACL, &jute.SetACLRequest{Path: "/p", Acl: world, Version: 0}, jute.OK},
		// check: path, node, READ, version.
		{"check bad path", jute.OpCheck, &jute.CheckVersionRequest{Path: "", Version: -1}, jute.ErrBadArguments},
		{"check missing", jute.OpCheck, &jute.CheckVersionRequest{Path: "/missing", Version: 1}, jute.ErrNoNode},
		{"check bad version", jute.OpCheck, &jute.CheckVersionRequest{Path: "/p", Version: 1}, jute.ErrBadVersion},
		{"check ok", jute.OpCheck, &jute.CheckVersionRequest{Path: "/p", Version: 0}, jute.OK},
	}
	for _, c := range cases {
		f := opsFixture(t)
		_, code, _ := f.apply(anyone, c.op, c.req)
		if code != c.want {
			t.Errorf("%s: got %v, want %v", c.name, code, c.want)
		}
	}
	// check needs READ (checked on 3.8.0 inside a multi).
	f := opsFixture(t)
	f.mustCreateAs(anyone, "/wo", 0, aclOf(jute.PermWrite, "world", "anyone"))
	if _, code, _ := f.apply(anyone, jute.OpCheck, &jute.CheckVersionRequest{Path: "/wo", Version: 0}); code != jute.ErrNoAuth {
		t.Errorf("check without READ: %v", code)
	}
}

// /zookeeper/config holds the membership, which a restore parses: a setData of it is
// NoAuth for everyone, the super user included and after a setACL that grants WRITE
// (ZooKeeper lets them write anything there), alone or inside a multi. SetConfig, which
// reconfig uses, still writes it.
func TestNobodySetsTheConfigNodesData(t *testing.T) {
	f := newFixture(t)
	super := Caller{Session: 0x200, Super: true}
	set := &jute.SetDataRequest{Path: ConfigPath, Data: []byte("garbage"), Version: -1}
	if _, code, ev := f.apply(super, jute.OpSetData, set); code != jute.ErrNoAuth || ev != nil {
		t.Fatalf("super's setData of %s: %v %v, want NoAuth", ConfigPath, code, ev)
	}
	if _, code, _ := f.apply(super, jute.OpSetACL, &jute.SetACLRequest{Path: ConfigPath, Acl: world, Version: -1}); code != jute.OK {
		t.Fatalf("super's setACL of %s: %v", ConfigPath, code)
	}
	if _, code, _ := f.apply(anyone, jute.OpSetData, set); code != jute.ErrNoAuth {
		t.Fatalf("setData of %s with WRITE in its ACL: %v, want NoAuth", ConfigPath, code)
	}
	resp, code, ev := f.apply(super, jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/m", Acl: world}},
		{Type: jute.OpSetData, Req: set},
	}})
	if code != jute.OK || ev != nil {
		t.Fatalf("multi: %v %v", code, ev)
	}
	if r := resp.(*jute.MultiResponse).Results; len(r) != 2 || r[0].Err != jute.OK || r[1].Err != jute.ErrNoAuth {
		t.Fatalf("multi results %+v, want OK then NoAuth", r)
	}
	if data, st, _ := f.tree.Get(ConfigPath); len(data) != 0 || st.Version != 0 || st.Mzxid != 0 {
		t.Fatalf("%s after the refused writes: %q %+v", ConfigPath, data, st)
	}
	if _, code := f.tree.Stat("/m"); code != jute.ErrNoNode {
		t.Fatalf("/m of the failed multi: %v", code)
	}
	members := []byte("server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\nversion=7")
	if st, _ := f.tree.SetConfig(f.txn(Caller{}), members); st.Version != -1 || st.DataLength != int32(len(members)) {
		t.Fatalf("SetConfig: %+v", st)
	}
}

func TestStatsThroughLifecycle(t *testing.T) {
	f := newFixture(t)
	tx := f.txn(anyone)
	resp, code, ev := f.tree.Apply(tx, jute.OpCreate2, &jute.CreateRequest{Path: "/a", Data: []byte("abc"), Acl: world})
	if code != jute.OK {
		t.Fatal(code)
	}
	want := jute.Stat{Czxid: tx.Zxid, Mzxid: tx.Zxid, Pzxid: tx.Zxid, Ctime: tx.Time, Mtime: tx.Time, DataLength: 3}
	if got := resp.(*jute.Create2Response); got.Path != "/a" || got.Stat != want {
		t.Fatalf("create2: %+v, want %+v", got, want)
	}
	wantEv := []Event{{Type: jute.EventNodeCreated, Path: "/a"}, {Type: jute.EventNodeChildrenChanged, Path: "/"}}
	if len(ev) != 2 || !sameEvent(ev[0], wantEv[0]) || !sameEvent(ev[1], wantEv[1]) {
		t.Fatalf("events %v", ev)
	}
	root := f.stat("/")
	if root.Cversion != 0 || root.NumChildren != 2 || root.Pzxid != tx.Zxid {
		t.Fatalf("root after create %+v", root) // stored 1: 1*2-2 = 0
	}

	tx2 := f.txn(anyone)
	resp, _, ev = f.tree.Apply(tx2, jute.OpSetData, &jute.SetDataRequest{Path: "/a", Data: []byte("hello"), Version: 0})
	want.Mzxid, want.Mtime, want.Version, want.DataLength = tx2.Zxid, tx2.Time, 1, 5
	if got := resp.(*jute.SetDataResponse).Stat; got != want {
		t.Fatalf("setData: %+v, want %+v", got, want)
	}
	if len(ev) != 1 || !sameEvent(ev[0], Event{Type: jute.EventNodeDataChanged, Path: "/a"}) {
		t.Fatalf("setData events %v", ev)
	}

	resp, _, ev = f.apply(anyone, jute.OpSetACL, &jute.SetACLRequest{Path: "/a", Acl: aclOf(jute.PermAll, "ip", "10.0.0.0/8"), Version: 0})
	want.Aversion = 1
	if got := resp.(*jute.SetACLResponse).Stat; got != want || ev != nil {
		t.Fatalf("setACL: %+v %v, want %+v and no events", got, ev, want)
	}

	f.mustCreate("/b", 0)
	f.mustCreate("/b/c", 0)
	tx3 := f.txn(anyone)
	_, code, ev = f.tree.Apply(tx3, jute.OpDelete, &jute.DeleteRequest{Path: "/b/c", Version: -1})
	if code != jute.OK || len(ev) != 2 || !sameEvent(ev[0], Event{Type: jute.EventNodeDeleted, Path: "/b/c"}) || !sameEvent(ev[1], Event{Type: jute.EventNodeChildrenChanged, Path: "/b"}) {
		t.Fatalf("delete: %v %v", code, ev)
	}
	// A delete moves pzxid, leaves the stored cversion: client cversion 1*2-0 = 2.
	if b := f.stat("/b"); b.Pzxid != tx3.Zxid || b.Cversion != 2 || b.NumChildren != 0 {
		t.Fatalf("/b after delete %+v", b)
	}
}

// Sequential names use the parent's stored cversion, which counts creations only;
// clients read cversion = stored*2 - numChildren (DataNode.copyStat). The numbers are
// those a real 3.8.0 gave for the same steps.
func TestSequentialMixedCreatesAndDeletes(t *testing.T) {
	f := newFixture(t)
	f.mustCreate("/s", 0)
	var names []string
	for i := 0; i < 3; i++ {
		names = append(names, f.mustCreate("/s/n", jute.FlagPersistentSequential))
	}
	f.apply(anyone, jute.OpDelete, &jute.DeleteRequest{Path: names[1], Version: -1})
	names = append(names, f.mustCreate("/s/n", jute.FlagEphemeralSequential))
	want := []string{"/s/n0000000000", "/s/n0000000001", "/s/n0000000002", "/s/n0000000003"}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("names %v, want %v", names, want)
		}
	}
	if st := f.stat("/s"); st.Cversion != 5 || st.NumChildren != 3 {
		t.Fatalf("cversion %d numChildren %d, want 5 and 3", st.Cversion, st.NumChildren)
	}
	f.mustCreate("/s/plain", 0)
	f.apply(anyone, jute.OpDelete, &jute.DeleteRequest{Path: "/s/plain", Version: -1})
	if p := f.mustCreate("/s/n", jute.FlagPersistentSequential); p != "/s/n0000000005" {
		t.Fatalf("next %s", p)
	}
	if st := f.stat("/s"); st.Cversion != 8 {
		t.Fatalf("cversion %d, want 8", st.Cversion)
	}
	// A sequential child of the root is "/" + counter.
	if p := f.mustCreate("/", jute.FlagPersistentSequential); p != "/0000000001" {
		t.Fatalf("root sequential %s", p)
	}
}

// The counter is a Java int: it wraps, and String.format("%010d") of a negative
// number is "-" and nine digits.
func TestSequentialWrap(t *testing.T) {
	f := newFixture(t)
	f.mustCreate("/q", 0)
	f.tree.setStoredCversion("/q", 1<<31-1)
	if p := f.mustCreate("/q/x", jute.FlagPersistentSequential); p != "/q/x2147483647" {
		t.Fatal(p)
	}
	if p := f.mustCreate("/q/x", jute.FlagPersistentSequential); p != "/q/x-2147483648" {
		t.Fatal(p)
	}
	f.tree.setStoredCversion("/q", -5)
	if p := f.mustCreate("/q/x", jute.FlagPersistentSequential); p != "/q/x-000000005" {
		t.Fatal(p)
	}
	// stored -4, three children: client cversion wraps the same way Java's int does.
	if st := f.stat("/q"); st.Cversion != -4*2-3 {
		t.Fatalf("cversion %d", st.Cversion)
	}
}

func TestEphemeralOwnerAndKinds(t *testing.T) {
	f := newFixture(t)
	c := Caller{Session: 0x1234}
	cases := []struct {
		name       string
		op         int32
		req        jute.Record
		clientOwn  int64
		storedOwn  int64
		resultType jute.Record
	}{
		{"ephemeral", jute.OpCreate, &jute.CreateRequest{Path: "/e", Acl: world, Flags: jute.FlagEphemeral}, 0x1234, 0x1234, &jute.CreateResponse{}},
		{"container", jute.OpCreateContainer, &jute.CreateRequest{Path: "/c", Acl: world, Flags: jute.FlagContainer}, 0, containerOwner, &jute.Create2Response{}},
		{"ttl", jute.OpCreateTTL, &jute.CreateTTLRequest{Path: "/t", Acl: world, Flags: jute.FlagPersistentWithTTL, Ttl: 500}, 0, -0x0100000000000000 | 500, &jute.Create2Response{}},
		// DataTree.processTxn: the op decides; a container flag on a plain create is a persistent node.
		{"container flag on create", jute.OpCreate, &jute.CreateRequest{Path: "/cp", Acl: world, Flags: jute.FlagContainer}, 0, 0, &jute.CreateResponse{}},
		{"createContainer with ephemeral flag", jute.OpCreateContainer, &jute.CreateRequest{Path: "/ce", Acl: world, Flags: jute.FlagEphemeral}, 0, containerOwner, &jute.Create2Response{}},
	}
	for _, cs := range cases {
		resp, code, _ := f.apply(c, cs.op, cs.req)
		if code != jute.OK {
			t.Fatalf("%s: %v", cs.name, code)
		}
		if _, isC2 := resp.(*jute.Create2Response); isC2 != (cs.resultType != nil && isCreate2(cs.resultType)) {
			t.Errorf("%s: response %T", cs.name, resp)
		}
		var path string
		switch r := resp.(type) {
		case *jute.CreateResponse:
			path = r.Path
		case *jute.Create2Response:
			path = r.Path
			if r.Stat.EphemeralOwner != cs.clientOwn {
				t.Errorf("%s: create2 stat owner %x", cs.name, r.Stat.EphemeralOwner)
			}
		}
		if st := f.stat(path); st.EphemeralOwner != cs.clientOwn {
			t.Errorf("%s: client owner %x, want %x", cs.name, st.EphemeralOwner, cs.clientOwn)
		}
		if got := f.tree.lookup(path).owner; got != cs.storedOwn {
			t.Errorf("%s: stored owner %x, want %x", cs.name, got, cs.storedOwn)
		}
	}
	// Containers and TTL nodes may have children; ephemerals may not.
	f.mustCreate("/c/x", 0)
	f.mustCreate("/t/x", 0)
	if got := f.tree.Ephemerals(0x1234, "/"); len(got) != 1 || got[0] != "/e" {
		t.Fatalf("ephemerals %v", got)
	}
}

func isCreate2(r jute.Record) bool { _, ok := r.(*jute.Create2Response); return ok }

func TestCloseSession(t *testing.T) {
	f := newFixture(t)
	s1 := Caller{Session: 1}
	s2 := Caller{Session: 2}
	f.mustCreate("/a", 0)
	f.mustCreate("/b", 0)
	f.mustCreateAs(s1, "/b/z", jute.FlagEphemeral, world)
	f.mustCreateAs(s1, "/a/y", jute.FlagEphemeral, world)
	f.mustCreateAs(s1, "/a/x", jute.FlagEphemeralSequential, world)
	f.mustCreateAs(s2, "/a/other", jute.FlagEphemeral, world)
	if got := f.tree.Ephemerals(1, "/a"); len(got) != 2 || got[0] != "/a/x0000000001" || got[1] != "/a/y" {
		t.Fatalf("Ephemerals(1, /a) %v", got)
	}
	if got := f.tree.Ephemerals(1, " / "); len(got) != 3 {
		t.Fatalf("Ephemerals(1, ' / ') %v", got)
	}
	tx := f.txn(Caller{})
	ev := f.tree.CloseSession(tx, 1)
	want := []Event{
		{Type: jute.EventNodeDeleted, Path: "/a/x0000000001"}, {Type: jute.EventNodeChildrenChanged, Path: "/a"},
		{Type: jute.EventNodeDeleted, Path: "/a/y"}, {Type: jute.EventNodeChildrenChanged, Path: "/a"},
		{Type: jute.EventNodeDeleted, Path: "/b/z"}, {Type: jute.EventNodeChildrenChanged, Path: "/b"},
	}
	if len(ev) != len(want) {
		t.Fatalf("events %v", ev)
	}
	for i := range want {
		if !sameEvent(ev[i], want[i]) {
			t.Fatalf("events %v, want %v", ev, want)
		}
	}
	if st := f.stat("/a"); st.Pzxid != tx.Zxid || st.NumChildren != 1 {
		t.Fatalf("/a %+v", st)
	}
	if got := f.tree.EphemeralSessions(); len(got) != 1 || len(got[2]) != 1 {
		t.Fatalf("sessions %v", got)
	}
	if ev := f.tree.CloseSession(f.txn(Caller{}), 1); ev != nil {
		t.Fatalf("second close %v", ev)
	}
}

// Every event carries the ACL the node it is about had at the change (ZOOKEEPER-4799:
// DataTree passes it to triggerWatch): the new node's for created, the parent's for
// children-changed, the node's last one for deleted, even when a later op of the same
// multi changes it.
func TestEventsCarryTheACLAtTheChange(t *testing.T) {
	f := newFixture(t)
	readers := aclOf(jute.PermRead|jute.PermWrite|jute.PermDelete|jute.PermCreate, "ip", "10.0.0.0/8")
	f.mustCreate("/p", 0)
	_, code, ev := f.apply(anyone, jute.OpCreate, &jute.CreateRequest{Path: "/p/c", Acl: readers})
	if code != jute.OK || len(ev) != 2 || !reflect.DeepEqual(ev[0].ACL, readers) || !reflect.DeepEqual(ev[1].ACL, world) {
		t.Fatalf("create: %v %+v", code, ev)
	}
	_, _, ev = f.apply(anyone, jute.OpSetACL, &jute.SetACLRequest{Path: "/p", Acl: readers, Version: -1})
	if ev != nil {
		t.Fatalf("setACL fires nothing, got %+v", ev)
	}
	_, code, ev = f.apply(anyone, jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		mop(jute.OpCreate, &jute.CreateRequest{Path: "/q", Acl: world}),
		mop(jute.OpSetData, &jute.SetDataRequest{Path: "/q", Data: []byte("x"), Version: -1}),
		mop(jute.OpDelete, &jute.DeleteRequest{Path: "/q", Version: -1}),
		mop(jute.OpCreate, &jute.CreateRequest{Path: "/q", Acl: readers}),
	}})
	if code != jute.OK || len(ev) != 7 {
		t.Fatalf("multi: %v %+v", code, ev)
	}
	for i, want := range [][]jute.ACL{world, world, world, world, world, readers, world} {
		if !reflect.DeepEqual(ev[i].ACL, want) {
			t.Errorf("multi event %d (%d %s): ACL %v, want %v", i, ev[i].Type, ev[i].Path, ev[i].ACL, want)
		}
	}

	s := Caller{Session: 7, Ids: []jute.Id{{Scheme: "ip", Id: "10.1.2.3"}}}
	f.mustCreateAs(s, "/p/e", jute.FlagEphemeral, readers)
	ev = f.tree.CloseSession(f.txn(Caller{}), 7)
	if len(ev) != 2 || ev[0].Type != jute.EventNodeDeleted || !reflect.DeepEqual(ev[0].ACL, readers) ||
		!reflect.DeepEqual(ev[1].ACL, readers) {
		t.Fatalf("ephemeral's deletion at session close: %+v", ev)
	}
}

// Sequential create with a trailing slash names the node after the parent's counter.
func TestSequentialCreateWithATrailingSlash(t *testing.T) {
	f := newFixture(t)
	f.mustCreate("/p", 0)
	if p := f.mustCreate("/p/", jute.FlagPersistentSequential); p != "/p/0000000000" {
		t.Fatal(p)
	}
	_, code, _ := f.apply(anyone, jute.OpCreate, &jute.CreateRequest{Path: "/p/.", Acl: world, Flags: jute.FlagPersistentSequential})
	if code != jute.OK {
		t.Fatal(code)
	}
}

// A create finds a taken name wherever it sorts among a parent's children, also in a
// list split into chunks: the first, a middle and the last child are NodeExists; a name
// after every child is created without a search, and so is a sequential node.
func TestCreateFindsATakenNameAnywhereAmongTheChildren(t *testing.T) {
	tr := New(Options{ExtendedTypes: true})
	zxid := int64(1)
	create := func(path string, flags int32) jute.Code {
		zxid++
		_, code, _ := tr.Apply(Txn{Zxid: zxid}, jute.OpCreate, &jute.CreateRequest{Path: path, Acl: world, Flags: flags})
		return code
	}
	if code := create("/p", 0); code != jute.OK {
		t.Fatal(code)
	}
	const n = 3 * chunkMax // several chunks, so the last names are kept apart
	for i := range n {
		if code := create(fmt.Sprintf("/p/c%05d", i), 0); code != jute.OK {
			t.Fatalf("c%05d: %v", i, code)
		}
	}
	for _, name := range []string{"c00000", fmt.Sprintf("c%05d", n/2), fmt.Sprintf("c%05d", n-1)} {
		if code := create("/p/"+name, 0); code != jute.ErrNodeExists {
			t.Errorf("create of the taken %s: %v, want NodeExists", name, code)
		}
	}
	if code := create("/p/d", 0); code != jute.OK {
		t.Errorf("create of a name after every child: %v", code)
	}
	if code := create("/p/d", 0); code != jute.ErrNodeExists {
		t.Errorf("create of the new last child again: %v, want NodeExists", code)
	}
	if code := create("/p/e-", jute.FlagPersistentSequential); code != jute.OK {
		t.Errorf("sequential create: %v", code)
	}
	if got, want := tr.numChildren(tr.lookup("/p")), int32(n+2); got != want {
		t.Errorf("%d children, want %d", got, want)
	}
}

package datatree

import (
	"reflect"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

func mop(op int32, req jute.Record) jute.MultiOp { return jute.MultiOp{Type: op, Req: req} }

func TestMultiSuccess(t *testing.T) {
	f := newFixture(t)
	f.mustCreate("/x", 0)
	tx := f.txn(anyone)
	resp, code, ev := f.tree.Apply(tx, jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		mop(jute.OpCreate, &jute.CreateRequest{Path: "/m", Acl: world}),
		mop(jute.OpCreate, &jute.CreateRequest{Path: "/m/child", Acl: world, Flags: jute.FlagPersistentSequential}), // sees /m
		mop(jute.OpCreate2, &jute.CreateRequest{Path: "/m2", Acl: world}),                                           // stays create2 (ZOOKEEPER-4026)
		mop(jute.OpCreateContainer, &jute.CreateRequest{Path: "/mc", Acl: world, Flags: jute.FlagContainer}),
		mop(jute.OpCreateTTL, &jute.CreateTTLRequest{Path: "/mt", Acl: world, Flags: jute.FlagPersistentWithTTL, Ttl: 100}),
		mop(jute.OpSetData, &jute.SetDataRequest{Path: "/x", Data: []byte("v"), Version: 0}),
		mop(jute.OpCheck, &jute.CheckVersionRequest{Path: "/x", Version: 1}), // sees the setData
		mop(jute.OpDelete, &jute.DeleteRequest{Path: "/x", Version: 1}),
	}})
	if code != jute.OK {
		t.Fatal(code)
	}
	res := resp.(*jute.MultiResponse).Results
	types := []int32{jute.OpCreate, jute.OpCreate, jute.OpCreate2, jute.OpCreate2, jute.OpCreate2, jute.OpSetData, jute.OpCheck, jute.OpDelete}
	for i, r := range res {
		if r.Type != types[i] || r.Err != jute.OK {
			t.Errorf("result %d: %+v, want type %d", i, r, types[i])
		}
	}
	if p := res[1].Resp.(*jute.CreateResponse).Path; p != "/m/child0000000000" {
		t.Errorf("sequential in multi %s", p)
	}
	if c2, ok := res[2].Resp.(*jute.Create2Response); !ok || c2.Path != "/m2" || c2.Stat.Czxid != tx.Zxid || c2.Stat.EphemeralOwner != 0 {
		t.Errorf("create2 result %+v, want the path and stat", res[2].Resp)
	}
	if c2 := res[3].Resp.(*jute.Create2Response); c2.Path != "/mc" || c2.Stat.Czxid != tx.Zxid {
		t.Errorf("container result %+v", c2)
	}
	if sd := res[5].Resp.(*jute.SetDataResponse); sd.Stat.Version != 1 {
		t.Errorf("setData result %+v", sd)
	}
	if res[6].Resp != nil || res[7].Resp != nil {
		t.Errorf("check/delete carry records")
	}
	if len(ev) != 2*5+1+2 || !sameEvent(ev[0], Event{Type: jute.EventNodeCreated, Path: "/m"}) || !sameEvent(ev[len(ev)-2], Event{Type: jute.EventNodeDeleted, Path: "/x"}) {
		t.Errorf("events %v", ev)
	}
	if _, code := f.tree.Stat("/x"); code != jute.ErrNoNode {
		t.Errorf("/x still there")
	}
	if st := f.stat("/m"); st.Pzxid != tx.Zxid || st.NumChildren != 1 {
		t.Errorf("/m %+v", st)
	}
}

// PrepRequestProcessor + DataTree.processTxn(multi): all results OpError; before the
// failure Err 0, the failure its code, after it RuntimeInconsistency; header OK
// (a real 3.8.0 answered kazoo with [RolledBackError, NoNodeError, RuntimeInconsistency]).
func TestMultiFailureRollsBack(t *testing.T) {
	f := newFixture(t)
	f.mustCreate("/x", 0)
	f.mustCreateAs(Caller{Session: 9}, "/e", jute.FlagEphemeral, world)
	f.mustCreate("/seq", 0)
	before := f.tree.Digest()
	size, count := f.tree.ApproximateDataSize(), f.tree.NodeCount()
	seqBefore := f.stat("/seq")
	aclsBefore := f.tree.acls.size()

	resp, code, ev := f.apply(anyone, jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		mop(jute.OpCreate, &jute.CreateRequest{Path: "/seq/n", Acl: aclOf(31, "digest", "u:h"), Flags: jute.FlagPersistentSequential}),
		mop(jute.OpCreate, &jute.CreateRequest{Path: "/new", Data: []byte("12345"), Acl: world}),
		mop(jute.OpSetData, &jute.SetDataRequest{Path: "/x", Data: []byte("changed"), Version: -1}),
		mop(jute.OpDelete, &jute.DeleteRequest{Path: "/e", Version: -1}),
		mop(jute.OpDelete, &jute.DeleteRequest{Path: "/new", Version: -1}),
		mop(jute.OpCreate, &jute.CreateRequest{Path: "/nonexist/child", Acl: world}),
		mop(jute.OpCreate, &jute.CreateRequest{Path: "/later", Acl: world}),
		mop(jute.OpCheck, &jute.CheckVersionRequest{Path: "/x", Version: -1}),
	}})
	if code != jute.OK || ev != nil {
		t.Fatalf("header %v events %v", code, ev)
	}
	want := []jute.MultiResult{
		{Type: jute.OpError}, {Type: jute.OpError}, {Type: jute.OpError}, {Type: jute.OpError}, {Type: jute.OpError},
		{Type: jute.OpError, Err: jute.ErrNoNode},
		{Type: jute.OpError, Err: jute.ErrRuntimeInconsistency}, {Type: jute.OpError, Err: jute.ErrRuntimeInconsistency},
	}
	if got := resp.(*jute.MultiResponse).Results; !reflect.DeepEqual(got, want) {
		t.Fatalf("results %+v\nwant %+v", got, want)
	}
	if f.tree.Digest() != before || f.tree.ApproximateDataSize() != size || f.tree.NodeCount() != count || f.tree.acls.size() != aclsBefore {
		t.Fatal("failed multi changed the tree")
	}
	if got := f.tree.Ephemerals(9, "/"); len(got) != 1 {
		t.Fatalf("ephemeral index not restored: %v", got)
	}
	if f.stat("/seq") != seqBefore {
		t.Fatal("sequence counter not restored")
	}
	// The sequence counter was rolled back, so the next name reuses the number.
	if p := f.mustCreate("/seq/n", jute.FlagPersistentSequential); p != "/seq/n0000000000" {
		t.Fatal(p)
	}
}

func TestMultiMarshallingErrors(t *testing.T) {
	// MultiOperationRecord refuses reads in a write multi, and a TTL flag on a create
	// without a ttl fails with a ClassCastException -> MARSHALLINGERROR.
	cases := [][]jute.MultiOp{
		{mop(jute.OpGetData, &jute.GetDataRequest{Path: "/"})},
		{mop(jute.OpCreate, &jute.CreateRequest{Path: "/a", Acl: world}), mop(jute.OpSetACL, &jute.SetACLRequest{Path: "/", Acl: world, Version: -1})},
		{mop(jute.OpCreate, &jute.CreateRequest{Path: "/a", Acl: world, Flags: jute.FlagPersistentWithTTL})},
		// Reached after ops that succeeded: they are undone.
		{mop(jute.OpCreate, &jute.CreateRequest{Path: "/b", Acl: world}), mop(jute.OpSetData, &jute.SetDataRequest{Path: "/b", Version: 0}),
			mop(jute.OpCreate, &jute.CreateRequest{Path: "/a", Acl: world, Flags: jute.FlagPersistentSequentialWithTTL}),
			mop(jute.OpCheck, &jute.CheckVersionRequest{Path: "/nope", Version: -1})},
		{mop(jute.OpDelete, &jute.CreateRequest{Path: "/a"})},
	}
	for i, ops := range cases {
		f := newFixture(t)
		before := f.tree.Digest()
		resp, code, ev := f.apply(anyone, jute.OpMulti, &jute.MultiRequest{Ops: ops})
		if code != jute.ErrMarshallingError || resp != nil || ev != nil || f.tree.Digest() != before {
			t.Errorf("case %d: %v %v %v", i, resp, code, ev)
		}
	}
	// After an op that failed, ZooKeeper's prep step looks at no later op: the TTL flag
	// without a ttl is RuntimeInconsistency like the others (checked on 3.8.0).
	f := newFixture(t)
	resp, code, ev := f.apply(anyone, jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		mop(jute.OpCreate, &jute.CreateRequest{Path: "/b", Acl: world}),
		mop(jute.OpCheck, &jute.CheckVersionRequest{Path: "/nope", Version: -1}),
		mop(jute.OpCreate, &jute.CreateRequest{Path: "/a", Acl: world, Flags: jute.FlagPersistentWithTTL}),
		mop(jute.OpCreate, &jute.CreateRequest{Path: "/c", Acl: world}),
	}})
	want := []jute.Code{jute.OK, jute.ErrNoNode, jute.ErrRuntimeInconsistency, jute.ErrRuntimeInconsistency}
	if code != jute.OK || ev != nil {
		t.Fatalf("multi failing before a TTL flag without a ttl: %v %v", code, ev)
	}
	for i, r := range resp.(*jute.MultiResponse).Results {
		if r.Type != jute.OpError || r.Err != want[i] {
			t.Errorf("result %d: %+v, want error %v", i, r, want[i])
		}
	}
	if _, code := f.tree.Stat("/b"); code != jute.ErrNoNode {
		t.Errorf("/b after the failed multi: %v", code)
	}
	// An empty multi succeeds with no results.
	resp, code, _ = f.apply(anyone, jute.OpMulti, &jute.MultiRequest{})
	if code != jute.OK || len(resp.(*jute.MultiResponse).Results) != 0 {
		t.Errorf("empty multi: %v %v", resp, code)
	}
	// createTTL with non-TTL flags in a multi loses its ttl and is a plain create.
	resp, code, _ = f.apply(anyone, jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		mop(jute.OpCreateTTL, &jute.CreateTTLRequest{Path: "/p", Acl: world, Ttl: 5}),
	}})
	if code != jute.OK || resp.(*jute.MultiResponse).Results[0].Type != jute.OpCreate || f.tree.lookup("/p").owner != 0 {
		t.Errorf("createTTL re-typed: %+v %v", resp, code)
	}
}

// Multi rollback must restore the ephemeral and container indexes.
func TestMultiRollbackRestoresTheIndexes(t *testing.T) {
	f := newFixture(t)
	sess := Caller{Session: 0x77}
	f.mustCreateAs(sess, "/e", jute.FlagEphemeral, world)
	f.apply(anyone, jute.OpCreateContainer, &jute.CreateRequest{Path: "/c", Acl: world, Flags: jute.FlagContainer})
	_, code, _ := f.tree.Apply(f.txn(sess), jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		mop(jute.OpDelete, &jute.DeleteRequest{Path: "/e", Version: -1}),
		mop(jute.OpCreate, &jute.CreateRequest{Path: "/e2", Acl: world, Flags: jute.FlagEphemeral}),
		mop(jute.OpDelete, &jute.DeleteRequest{Path: "/c", Version: -1}),
		mop(jute.OpCreateContainer, &jute.CreateRequest{Path: "/c2", Acl: world, Flags: jute.FlagContainer}),
		mop(jute.OpCreate, &jute.CreateRequest{Path: "/c2/k", Acl: world}),
		mop(jute.OpDelete, &jute.DeleteRequest{Path: "/c2/k", Version: -1}),
		mop(jute.OpCheck, &jute.CheckVersionRequest{Path: "/nope", Version: -1}),
	}})
	if code != jute.OK {
		t.Fatal(code)
	}
	if got := f.tree.Ephemerals(0x77, ""); len(got) != 1 || got[0] != "/e" {
		t.Errorf("ephemerals after rollback %v", got)
	}
	if got := f.tree.CleanupCandidates(1 << 60); len(got) != 0 {
		t.Errorf("cleanup candidates after rollback %v", got)
	}
	if ev := f.tree.CloseSession(f.txn(anyone), 0x77); len(ev) != 2 {
		t.Errorf("close events %v", ev)
	}
}

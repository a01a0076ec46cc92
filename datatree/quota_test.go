package datatree

import (
	"bytes"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

func TestStatsTrack(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"", "count=-1,bytes=-1"},
		{"count=4,bytes=5", "count=4,bytes=5"},
		// 3.8's own format, read back as it was written (other keys sorted).
		{"count=4,bytes=5=;countHardLimit=10;byteHardLimit=7", "count=4,bytes=5=;byteHardLimit=7;countHardLimit=10"},
		{"bytes=2;count==7", "count=-1,bytes=2"}, // Java's split: ["count", "", "7"]
		{"count=1,,;;bytes=+3,", "count=1,bytes=3"},
		{"x=9", "count=-1,bytes=-1=;x=9"},
	} {
		st, err := parseStatsTrack([]byte(c.in))
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := string(st.bytes()); got != c.out {
			t.Errorf("%q: got %q, want %q", c.in, got, c.out)
		}
	}
	// Where StatsTrack's constructor throws.
	for _, in := range []string{",count=1", "count", "count=", "count=x", "count=1.5", "=", "count=99999999999999999999"} {
		if _, err := parseStatsTrack([]byte(in)); err == nil {
			t.Errorf("%q parsed", in)
		}
	}
	if _, err := parseStatsTrack(nil); err == nil {
		t.Error("null data parsed")
	}
}

// setQuota does what zkCli's setquota does: the quota node's parents, the limits node,
// then a stats node with "count=0,bytes=0", which the tree fills in.
func (f *fixture) setQuota(path, limits string) {
	f.t.Helper()
	q := quotaRoot
	for _, name := range strings.Split(path, "/")[1:] {
		q += "/" + name
		if f.tree.lookup(q) == nil {
			f.mustCreate(q, 0)
		}
	}
	f.createData(q+"/"+quotaLimitName, limits)
	f.createData(q+"/"+quotaStatsName, "count=0,bytes=0")
}

func (f *fixture) createData(path, data string) jute.Code {
	_, code, _ := f.apply(anyone, jute.OpCreate, &jute.CreateRequest{Path: path, Data: []byte(data), Acl: world})
	return code
}

func (f *fixture) setData(path, data string, version int32) jute.Code {
	_, code, _ := f.apply(anyone, jute.OpSetData, &jute.SetDataRequest{Path: path, Data: []byte(data), Version: version})
	return code
}

func (f *fixture) quotaStats(path string) string {
	f.t.Helper()
	d, _, code := f.tree.Get(quotaRoot + path + "/" + quotaStatsName)
	if code != jute.OK {
		f.t.Fatalf("stats of %s: %v", path, code)
	}
	return string(d)
}

func (f *fixture) wantStats(path, want string) {
	f.t.Helper()
	if got := f.quotaStats(path); got != want {
		f.t.Fatalf("stats of %s: %q, want %q", path, got, want)
	}
}

func TestQuotaStatsBookkeeping(t *testing.T) {
	f := newFixture(t)
	f.mustCreate("/a", 0) // data "d"
	f.mustCreate("/a/b", 0)
	f.setQuota("/a", "count=10,bytes=-1")
	f.wantStats("/a", "count=2,bytes=2") // filled from the subtree when created
	st := f.stat(quotaRoot + "/a/" + quotaStatsName)

	f.createData("/a/x", "12345")
	f.wantStats("/a", "count=3,bytes=7")
	f.setData("/a/x", "1", -1)
	f.wantStats("/a", "count=3,bytes=3")
	f.setData("/a/x", "2", -1) // same size: rewritten, unchanged
	f.wantStats("/a", "count=3,bytes=3")
	f.mustCreate("/a/b/s-", jute.FlagPersistentSequential)
	f.wantStats("/a", "count=4,bytes=4")
	if code, _ := f.tree.delete(f.txn(anyone), "/a/x", -1); code != jute.OK {
		t.Fatal(code)
	}
	f.wantStats("/a", "count=3,bytes=3")
	f.createData("/outside", "zzz") // no quota
	f.wantStats("/a", "count=3,bytes=3")

	f.createData("/a/big", "0123456789")
	f.wantStats("/a", "count=4,bytes=13")

	// ZooKeeper changes the stats node's data behind its back: no stat change, and
	// approximateDataSize keeps the length the node was created with.
	after := f.stat(quotaRoot + "/a/" + quotaStatsName)
	after.DataLength = st.DataLength
	if after != st {
		t.Errorf("stats node's stat changed: %+v, was %+v", after, st)
	}
	fresh := f.tree.computeDataSize()
	if f.tree.ApproximateDataSize() == fresh {
		t.Errorf("approximateDataSize %d follows the stats node; ZooKeeper's does not", fresh)
	}
}

func TestQuotaNested(t *testing.T) {
	f := newFixture(t)
	f.mustCreate("/a", 0)
	f.mustCreate("/a/b", 0)
	f.mustCreate("/a/b/c", 0)
	f.setQuota("/a/b", "count=5,bytes=-1")
	f.setQuota("/a", "count=5,bytes=-1")
	f.wantStats("/a/b", "count=2,bytes=2")
	f.wantStats("/a", "count=3,bytes=3") // the whole subtree, /a/b's nodes too
	// Only the deepest quota above a node counts it (getMaxPrefixWithQuota).
	f.mustCreate("/a/b/d", 0)
	f.wantStats("/a/b", "count=3,bytes=3")
	f.wantStats("/a", "count=3,bytes=3")
	f.mustCreate("/a/e", 0)
	f.wantStats("/a", "count=4,bytes=4")
	// Deleting /a/b's limits ends its quota: its nodes now count in /a.
	if code, _ := f.tree.delete(f.txn(anyone), quotaRoot+"/a/b/"+quotaLimitName, -1); code != jute.OK {
		t.Fatal(code)
	}
	f.mustCreate("/a/b/f", 0)
	f.wantStats("/a", "count=5,bytes=5")
	f.wantStats("/a/b", "count=3,bytes=3")
	// The quota'd node itself counts in its quota.
	f.mustCreate("/solo", 0)
	f.setQuota("/solo", "count=1,bytes=-1")
	if code, _ := f.tree.delete(f.txn(anyone), "/solo", -1); code != jute.OK {
		t.Fatal(code)
	}
	f.wantStats("/solo", "count=0,bytes=0")
}

func TestQuotaRemovals(t *testing.T) {
	f := newFixture(t)
	f.mustCreate("/q", 0)
	f.setQuota("/q", "count=-1,bytes=100")
	owner := Caller{Session: 0x77, Ids: anyone.Ids}
	f.mustCreateAs(owner, "/q/e1", jute.FlagEphemeral, world)
	f.mustCreateAs(owner, "/q/e2", jute.FlagEphemeralSequential, world)
	_, code, _ := f.apply(anyone, jute.OpCreateContainer, &jute.CreateRequest{Path: "/q/c", Data: []byte("cc"), Acl: world, Flags: jute.FlagContainer})
	if code != jute.OK {
		t.Fatal(code)
	}
	_, code, _ = f.apply(anyone, jute.OpCreateTTL, &jute.CreateTTLRequest{Path: "/q/t", Data: []byte("ttt"), Acl: world, Flags: jute.FlagPersistentWithTTL, Ttl: 5})
	if code != jute.OK {
		t.Fatal(code)
	}
	f.wantStats("/q", "count=5,bytes=8")
	f.tree.CloseSession(f.txn(anyone), 0x77)
	f.wantStats("/q", "count=3,bytes=6")
	// The container had a child once, and the TTL ran out: the leader's cleanup.
	f.mustCreate("/q/c/kid", 0)
	f.tree.delete(f.txn(anyone), "/q/c/kid", -1)
	f.now += 100
	for _, p := range f.tree.CleanupCandidates(f.now) {
		if _, code, _ := f.tree.Apply(Txn{Zxid: f.zxid + 1, Time: f.now}, jute.OpDeleteContainer, &jute.DeleteRequest{Path: p}); code != jute.OK {
			t.Fatalf("cleanup %s: %v", p, code)
		}
		f.zxid++
	}
	f.wantStats("/q", "count=1,bytes=1")
}

func TestQuotaMulti(t *testing.T) {
	f := newFixture(t)
	f.mustCreate("/q", 0)
	f.setQuota("/q", "count=-1,bytes=-1=;countHardLimit=3")
	f.tree.SetEnforceQuota(true)
	create := func(p string) jute.MultiOp {
		return jute.MultiOp{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: p, Data: []byte("m"), Acl: world}}
	}
	// Each op of a multi is checked against the tree before the multi (ZooKeeper's prep
	// reads the committed tree): at count 1 of 3, three creates all pass.
	resp, code, _ := f.apply(anyone, jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{create("/q/1"), create("/q/2"), create("/q/3")}})
	if code != jute.OK || resp.(*jute.MultiResponse).Results[2].Type != jute.OpCreate {
		t.Fatalf("multi: %v %+v", code, resp)
	}
	f.wantStats("/q", "count=4,bytes=4")
	// Now over: the create fails inside the multi, and the delete before it is undone
	// with its count.
	resp, _, _ = f.apply(anyone, jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpDelete, Req: &jute.DeleteRequest{Path: "/q/1", Version: -1}}, create("/q/4")}})
	rs := resp.(*jute.MultiResponse).Results
	if rs[0].Err != jute.OK || rs[1].Err != jute.ErrQuotaExceeded {
		t.Fatalf("results %+v", rs)
	}
	f.wantStats("/q", "count=4,bytes=4")
	if f.tree.lookup("/q/1") == nil {
		t.Fatal("failed multi left its delete")
	}
	// A multi that creates a quota and writes under it in one go: its own limits are not
	// seen by its checks, but its writes are counted.
	f.mustCreate("/r", 0)
	resp, _, _ = f.apply(anyone, jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		create(quotaRoot + "/r"),
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: quotaRoot + "/r/" + quotaLimitName, Data: []byte("count=-1,bytes=-1=;countHardLimit=1"), Acl: world}},
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: quotaRoot + "/r/" + quotaStatsName, Data: []byte("count=0,bytes=0"), Acl: world}},
		create("/r/1"), create("/r/2")}})
	for i, r := range resp.(*jute.MultiResponse).Results {
		if r.Type == jute.OpError {
			t.Fatalf("op %d: %v", i, r.Err)
		}
	}
	f.wantStats("/r", "count=3,bytes=3")
	if code := f.createData("/r/3", ""); code != jute.ErrQuotaExceeded {
		t.Fatalf("create over the multi's quota: %v", code)
	}
}

func TestQuotaEnforce(t *testing.T) {
	f := newFixture(t)
	var events []QuotaEvent
	f.tree.opts.OnQuota = func(e QuotaEvent) { events = append(events, e) }
	f.mustCreate("/q", 0)
	f.mustCreate("/q/a", 0)
	f.setQuota("/q", "count=2,bytes=-1=;byteHardLimit=5")
	f.wantStats("/q", "count=2,bytes=2")
	// Off (ZooKeeper's default): nothing is checked.
	if code := f.createData("/q/b", "123456789"); code != jute.OK || len(events) != 0 {
		t.Fatalf("unenforced: %v %v", code, events)
	}
	f.tree.SetEnforceQuota(true)
	// Soft count limit: a warning only. Hard byte limit: refused.
	if code := f.createData("/q/c", ""); code != jute.OK {
		t.Fatalf("over the soft limit: %v", code)
	}
	if len(events) != 1 || events[0].Hard || events[0].Message != "Quota exceeded: /q [current count=4, softCountLimit=2]" {
		t.Fatalf("soft event %+v", events)
	}
	if code := f.createData("/q/d", "x"); code != jute.ErrQuotaExceeded {
		t.Fatalf("over the hard limit: %v", code)
	}
	last := events[len(events)-1]
	if !last.Hard || last.Namespace != "q" || last.Message != "Quota exceeded: /q [current bytes=12, hardByteLimit=5]" {
		t.Fatalf("hard event %+v", last)
	}
	// setData: QuotaExceeded comes before BadVersion, after NoAuth; shrinking passes.
	if code := f.setData("/q/a", "dd", 99); code != jute.ErrQuotaExceeded {
		t.Fatalf("setData over, bad version: %v", code)
	}
	if code := f.setData("/q/b", "", 99); code != jute.ErrBadVersion {
		t.Fatalf("setData shrinking, bad version: %v", code)
	}
	if code := f.setData("/q/a", "z", -1); code != jute.OK {
		t.Fatalf("setData same size: %v", code)
	}
	f.wantStats("/q", "count=4,bytes=11")
	// A quota's own nodes are outside it.
	if code := f.setData(quotaRoot+"/q/"+quotaLimitName, "count=-1,bytes=-1", -1); code != jute.OK {
		t.Fatal(code)
	}
	if code := f.createData("/q/d", "x"); code != jute.OK {
		t.Fatalf("limits lifted: %v", code)
	}
}

func TestQuotaSnapshotAndRecompute(t *testing.T) {
	f := newFixture(t)
	f.mustCreate("/q", 0)
	f.mustCreate("/q/a", 0)
	f.setQuota("/q", "count=-1,bytes=-1=;countHardLimit=3")
	f.tree.SetEnforceQuota(true)
	// A snapshot frozen now keeps the stats as they are, while later writes change them.
	fr, err := f.tree.Freeze()
	if err != nil {
		t.Fatal(err)
	}
	f.mustCreate("/q/b", 0)
	var frozen bytes.Buffer
	for {
		b, done := fr.Next(3)
		frozen.Write(b)
		if done {
			break
		}
	}
	f.tree.Thaw(fr)
	back, err := ReadSnapshot(&frozen, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d, _, _ := back.Get(quotaRoot + "/q/" + quotaStatsName); string(d) != "count=2,bytes=2" {
		t.Fatalf("frozen stats %q", d)
	}
	// A whole snapshot: same digest, same quotas, same setting, same judgement.
	back, err = ReadSnapshot(bytes.NewReader(snapshotBytes(t, f.tree)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if back.Digest() != f.tree.Digest() || !back.EnforceQuota() {
		t.Fatal("snapshot lost quota state")
	}
	g := &fixture{t: t, tree: back, zxid: f.zxid, now: f.now}
	if code := g.createData("/q/c", ""); code != jute.ErrQuotaExceeded {
		t.Fatalf("restored tree: %v", code)
	}
	g.wantStats("/q", "count=3,bytes=3")
	// Version 2 only while a setting is on; else version 1, which older versions read.
	if v := snapshotBytes(t, f.tree)[8:12]; !bytes.Equal(v, []byte{0, 0, 0, 2}) {
		t.Fatalf("enforced tree written as version %v", v)
	}
	v1 := snapshotBytes(t, datatreeWithout(t))
	if !bytes.Equal(v1[8:12], []byte{0, 0, 0, 1}) {
		t.Fatalf("tree without settings written as version %v", v1[8:12])
	}
	if old, err := ReadSnapshot(bytes.NewReader(v1), Options{}); err != nil || old.EnforceQuota() {
		t.Fatalf("version 1: %v", err)
	}
	// RecomputeQuotas (a ZooKeeper import) counts every quota's subtree again.
	f.tree.replaceData(f.tree.lookup(quotaRoot+"/q/"+quotaStatsName), []byte("count=99,bytes=99"))
	f.tree.RecomputeQuotas()
	f.wantStats("/q", "count=3,bytes=3")
}

func datatreeWithout(t *testing.T) *Tree {
	f := newFixture(t)
	f.mustCreate("/x", 0)
	return f.tree
}

func TestQuotaMetrics(t *testing.T) {
	f := newFixture(t)
	f.mustCreate("/ns", 0)
	f.mustCreate("/ns/a", 0)
	f.mustCreate("/ns/b", 0)
	f.setQuota("/ns/a", "count=10,bytes=-1=;byteHardLimit=100;countHardLimit=4")
	f.setQuota("/ns/b", "count=3,bytes=50")
	cl, bl, cu, bu := f.tree.QuotaMetrics()
	if cl["ns"] != 7 || bl["ns"] != 150 || cu["ns"] != 2 || bu["ns"] != 2 || len(cl) != 1 {
		t.Fatalf("metrics %v %v %v %v", cl, bl, cu, bu)
	}
}

// create2 of a stats node answers the stat of the data sent, as ZooKeeper copies the
// stat before it fills the node in.
func TestQuotaStatsCreate2(t *testing.T) {
	f := newFixture(t)
	f.mustCreate("/q", 0)
	f.mustCreate(quotaRoot+"/q", 0)
	f.createData(quotaRoot+"/q/"+quotaLimitName, "count=5,bytes=-1")
	resp, code, _ := f.apply(anyone, jute.OpCreate2, &jute.CreateRequest{Path: quotaRoot + "/q/" + quotaStatsName, Data: []byte("c"), Acl: world})
	if code != jute.OK || resp.(*jute.Create2Response).Stat.DataLength != 1 {
		t.Fatalf("create2: %v %+v", code, resp)
	}
	f.wantStats("/q", "count=1,bytes=1")
}

// ZooKeeper checks every op of a multi against the committed tree (its prep reads
// getMaxPrefixWithQuota and the limit/stats nodes from the DataTree, not the pending
// changes): a quota the multi creates does not apply to its own later ops, whether or not
// the tree had a quota before (zkraft took the tree's quotas before the multi only when
// there was one, and checked the later ops against the new one otherwise).
func TestQuotaCreatedInAMultiDoesNotApplyToIt(t *testing.T) {
	run := func(preexisting bool) jute.Code {
		f := newFixture(t)
		f.tree.SetEnforceQuota(true)
		if preexisting {
			// some unrelated quota, so multiQuota is captured
			f.mustCreate("/other", 0)
			f.mustCreate("/zookeeper/quota/other", 0)
			f.apply(anyone, jute.OpCreate, &jute.CreateRequest{Path: "/zookeeper/quota/other/zookeeper_limits", Data: []byte("count=-1,bytes=-1,countHardLimit=100"), Acl: world})
			f.apply(anyone, jute.OpCreate, &jute.CreateRequest{Path: "/zookeeper/quota/other/zookeeper_stats", Data: []byte("count=0,bytes=0"), Acl: world})
		}
		f.mustCreate("/a", 0)
		f.mustCreate("/zookeeper/quota/a", 0)
		resp, code, _ := f.apply(anyone, jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
			mop(jute.OpCreate, &jute.CreateRequest{Path: "/zookeeper/quota/a/zookeeper_limits", Data: []byte("count=-1,bytes=-1,countHardLimit=1"), Acl: world}),
			mop(jute.OpCreate, &jute.CreateRequest{Path: "/zookeeper/quota/a/zookeeper_stats", Data: []byte("count=0,bytes=0"), Acl: world}),
			mop(jute.OpCreate, &jute.CreateRequest{Path: "/a/x", Acl: world}),
		}})
		if code != jute.OK {
			t.Fatal(code)
		}
		res := resp.(*jute.MultiResponse).Results
		return res[2].Err
	}
	for _, other := range []bool{false, true} {
		if code := run(other); code != jute.OK {
			t.Errorf("another quota before the multi %v: the create after the quota's limit node answered %v, want OK as ZooKeeper", other, code)
		}
	}
}

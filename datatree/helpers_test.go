package datatree

import (
	"testing"

	"github.com/zkraft/zkraft/jute"
)

var (
	world  = []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "world", Id: "anyone"}}}
	anyone = Caller{Session: 0x100, Ids: []jute.Id{{Scheme: "ip", Id: "127.0.0.1"}}}
)

func aclOf(perms int32, scheme, id string) []jute.ACL {
	return []jute.ACL{{Perms: perms, Id: jute.Id{Scheme: scheme, Id: id}}}
}

// fixture is a tree with a running zxid and clock.
type fixture struct {
	t    *testing.T
	tree *Tree
	zxid int64
	now  int64
}

func newFixture(t *testing.T) *fixture {
	return &fixture{t: t, tree: New(Options{ExtendedTypes: true}), now: 1_000_000}
}

func (f *fixture) txn(c Caller) Txn {
	f.zxid++
	f.now += 10
	return Txn{Zxid: f.zxid, Time: f.now, Caller: c}
}

func (f *fixture) apply(c Caller, op int32, req jute.Record) (jute.Record, jute.Code, []Event) {
	return f.tree.Apply(f.txn(c), op, req)
}

// mustCreate creates path (flags as given) with world ACL and returns the real path.
func (f *fixture) mustCreate(path string, flags int32) string {
	f.t.Helper()
	return f.mustCreateAs(anyone, path, flags, world)
}

func (f *fixture) mustCreateAs(c Caller, path string, flags int32, acl []jute.ACL) string {
	f.t.Helper()
	resp, code, _ := f.apply(c, jute.OpCreate, &jute.CreateRequest{Path: path, Data: []byte("d"), Acl: acl, Flags: flags})
	if code != jute.OK {
		f.t.Fatalf("create %s: %v", path, code)
	}
	return resp.(*jute.CreateResponse).Path
}

func (f *fixture) stat(path string) jute.Stat {
	f.t.Helper()
	st, code := f.tree.Stat(path)
	if code != jute.OK {
		f.t.Fatalf("stat %s: %v", path, code)
	}
	return st
}

// setStoredCversion is the test hook for the stored child-creation counter.
func (tr *Tree) setStoredCversion(path string, v int32) {
	n := tr.lookup(path)
	st := n.stat()
	st.Cversion = v
	n.setStat(st)
}

// sameEvent compares an event's type and path (its ACL is checked where it matters).
func sameEvent(a, b Event) bool { return a.Type == b.Type && a.Path == b.Path }

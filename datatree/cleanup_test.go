package datatree

import (
	"reflect"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

func TestCleanupCandidatesAndRecheck(t *testing.T) {
	f := newFixture(t)
	f.apply(anyone, jute.OpCreateContainer, &jute.CreateRequest{Path: "/used", Acl: world, Flags: jute.FlagContainer})
	f.apply(anyone, jute.OpCreateContainer, &jute.CreateRequest{Path: "/fresh", Acl: world, Flags: jute.FlagContainer})
	f.apply(anyone, jute.OpCreateContainer, &jute.CreateRequest{Path: "/busy", Acl: world, Flags: jute.FlagContainer})
	f.mustCreate("/used/c", 0)
	f.mustCreate("/busy/c", 0)
	f.apply(anyone, jute.OpDelete, &jute.DeleteRequest{Path: "/used/c", Version: -1})
	ttlTx := f.txn(anyone)
	f.tree.Apply(ttlTx, jute.OpCreateTTL, &jute.CreateTTLRequest{Path: "/ttl", Acl: world, Flags: jute.FlagPersistentWithTTL, Ttl: 1000})
	f.tree.Apply(f.txn(anyone), jute.OpCreateTTL, &jute.CreateTTLRequest{Path: "/ttlkids", Acl: world, Flags: jute.FlagPersistentSequentialWithTTL, Ttl: 1})
	f.mustCreate("/ttlkids0000000004/c", 0)
	f.mustCreate("/plain", 0)

	// ContainerManager: containers with cversion > 0 and no children; TTL nodes with
	// no children and now - mtime > ttl.
	if got := f.tree.CleanupCandidates(ttlTx.Time + 1000); !reflect.DeepEqual(got, []string{"/used"}) {
		t.Fatalf("at mtime+ttl: %v", got)
	}
	late := ttlTx.Time + 1001
	if got := f.tree.CleanupCandidates(late); !reflect.DeepEqual(got, []string{"/ttl", "/used"}) {
		t.Fatalf("after mtime+ttl: %v", got)
	}

	del := func(path string, at int64) jute.Code {
		f.zxid++
		_, code, _ := f.tree.Apply(Txn{Zxid: f.zxid, Time: at}, jute.OpDeleteContainer, &jute.DeleteRequest{Path: path, Version: -1})
		return code
	}
	// The re-check at the entry's time makes a stale proposal harmless.
	cases := []struct {
		path string
		at   int64
		want jute.Code
	}{
		{"/zookeeper", late, jute.ErrBadArguments},
		{"/missing", late, jute.ErrNoNode},
		{"/busy", late, jute.ErrNotEmpty},
		{"/plain", late, jute.ErrBadVersion},
		{"/fresh", late, jute.ErrBadArguments},
		{"/ttl", ttlTx.Time + 1000, jute.ErrBadArguments},
		{"/ttl", late, jute.OK},
		{"/used", late, jute.OK},
		{"/used", late, jute.ErrNoNode},
	}
	for _, c := range cases {
		if got := del(c.path, c.at); got != c.want {
			t.Errorf("deleteContainer %s at %d: %v, want %v", c.path, c.at, got, c.want)
		}
	}
	// A setData renews a TTL node (mtime moves).
	f.tree.Apply(Txn{Zxid: 100, Time: 10_000_000}, jute.OpCreateTTL, &jute.CreateTTLRequest{Path: "/ttl2", Acl: world, Flags: jute.FlagPersistentWithTTL, Ttl: 50})
	f.tree.Apply(Txn{Zxid: 101, Time: 10_000_040}, jute.OpSetData, &jute.SetDataRequest{Path: "/ttl2", Version: -1})
	if got := f.tree.CleanupCandidates(10_000_060); len(got) != 0 {
		t.Fatalf("renewed TTL node is a candidate: %v", got)
	}
	// maxNeverUsedIntervalMs.
	f.tree.opts.ContainerMaxNeverUsed = 5
	if got := f.tree.CleanupCandidates(20_000_000); !reflect.DeepEqual(got, []string{"/fresh", "/ttl2"}) {
		t.Fatalf("never-used containers: %v", got)
	}
}

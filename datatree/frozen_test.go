package datatree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// A snapshot written from a Frozen view while the tree keeps changing between its chunks
// is byte for byte the snapshot of the tree at Freeze; the changes all land.
func TestFrozenSnapshotIgnoresLaterChanges(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			tr, control := busyTree(t), busyTree(t)
			want := snapshotBytes(t, tr)
			rng := rand.New(rand.NewPCG(seed, 7))
			zxid, now := int64(10_000), int64(1_800_000_000_000)
			paths := allPaths(tr)
			change := func() {
				zxid++
				now++
				p := paths[rng.IntN(len(paths))]
				var op int32
				var req jute.Record
				switch rng.IntN(7) {
				case 0:
					op, req = jute.OpSetData, &jute.SetDataRequest{Path: p, Data: []byte(fmt.Sprint(zxid)), Version: -1}
				case 1:
					op, req = jute.OpCreate, &jute.CreateRequest{Path: p + "/x", Data: []byte("new"), Acl: aclOf(jute.PermRead, "world", "anyone")}
				case 2:
					op, req = jute.OpDelete, &jute.DeleteRequest{Path: p, Version: -1}
				case 3:
					op, req = jute.OpSetACL, &jute.SetACLRequest{Path: p, Acl: aclOf(jute.PermAll, "ip", fmt.Sprintf("10.0.0.%d", rng.IntN(4))), Version: -1}
				case 4: // a multi that fails half-way and is taken back
					op, req = jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
						{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: p + "/m", Acl: world}},
						{Type: jute.OpDelete, Req: &jute.DeleteRequest{Path: p, Version: -1}},
						{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/nonexistent", Version: -1}},
					}}
				case 5:
					op, req = jute.OpCreate, &jute.CreateRequest{Path: p + "/s", Acl: world, Flags: jute.FlagPersistentSequential}
				default:
					op, req = jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
						{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: p, Data: []byte("multi"), Version: -1}},
						{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: p + "/mm", Acl: world}},
					}}
				}
				tx := Txn{Zxid: zxid, Time: now, Caller: anyone}
				tr.Apply(tx, op, req)
				control.Apply(tx, op, req)
				if rng.IntN(4) == 0 {
					paths = allPaths(tr)
				}
			}
			f, err := tr.Freeze()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Freeze(); err != ErrFrozen {
				t.Fatalf("second Freeze: %v", err)
			}
			var got []byte
			for {
				for i := rng.IntN(6); i > 0; i-- {
					change()
				}
				b, done := f.Next(1 + rng.IntN(9))
				got = append(got, b...)
				if done {
					break
				}
			}
			tr.Thaw(f)
			if !bytes.Equal(got, want) {
				t.Fatalf("the frozen snapshot differs from the snapshot at Freeze (%d vs %d bytes)", len(got), len(want))
			}
			if tr.Digest() != control.Digest() {
				t.Fatal("changes made while frozen did not all land")
			}
			// After Thaw the tree snapshots as the control does.
			if !bytes.Equal(snapshotBytes(t, tr), snapshotBytes(t, control)) {
				t.Fatal("snapshot after thaw differs from the control tree's")
			}
		})
	}
}

func allPaths(tr *Tree) []string {
	var out []string
	tr.walk(func(p string, _ *node) {
		if p != "/" && p != "/zookeeper" && p != "/zookeeper/quota" && p != "/zookeeper/config" {
			out = append(out, p)
		}
	})
	return out
}

// A node with an empty ACL list (ZooKeeper refuses to create one, but an imported tree
// can hold one) keeps it through a snapshot.
func TestSnapshotKeepsEmptyACL(t *testing.T) {
	tr := New(Options{})
	tr.Apply(Txn{Zxid: 1, Time: 1}, jute.OpCreate, &jute.CreateRequest{Path: "/none", Acl: world})
	tr.Apply(Txn{Zxid: 2, Time: 2}, jute.OpCreate, &jute.CreateRequest{Path: "/open", Acl: world})
	n := tr.lookup("/none")
	tr.acls.release(n.acl)
	n.acl = tr.acls.acquire([]jute.ACL{})
	got, err := ReadSnapshot(bytes.NewReader(snapshotBytes(t, tr)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if acl, _, code := got.ACL("/none"); code != jute.OK || len(acl) != 0 {
		t.Fatalf("/none after the snapshot: %v %v", acl, code)
	}
	if got.Digest() != tr.Digest() {
		t.Fatal("digest differs")
	}
}

// Nodes walks the tree as it was at Freeze, as Tree.Nodes lists it then (every field,
// the ACL through ACLs), while the tree changes between its chunks.
func TestFrozenNodesIgnoreLaterChanges(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		tr := busyTree(t)
		var want []StoredNode
		tr.Nodes(func(n StoredNode) { want = append(want, n) })
		rng := rand.New(rand.NewPCG(seed, 9))
		paths := allPaths(tr)
		zxid := int64(20_000)
		f, err := tr.Freeze()
		if err != nil {
			t.Fatal(err)
		}
		var got []StoredNode
		for done := false; !done; {
			for i := rng.IntN(4); i > 0; i-- {
				zxid++
				p := paths[rng.IntN(len(paths))]
				tx := Txn{Zxid: zxid, Time: zxid, Caller: anyone}
				switch rng.IntN(4) {
				case 0:
					tr.Apply(tx, jute.OpSetData, &jute.SetDataRequest{Path: p, Data: []byte(fmt.Sprint(zxid)), Version: -1})
				case 1:
					tr.Apply(tx, jute.OpCreate, &jute.CreateRequest{Path: p + "/y", Acl: world})
				case 2:
					tr.Apply(tx, jute.OpDelete, &jute.DeleteRequest{Path: p, Version: -1})
				default:
					tr.Apply(tx, jute.OpSetACL, &jute.SetACLRequest{Path: p, Acl: aclOf(jute.PermAll, "ip", "10.1.1.1"), Version: -1})
				}
			}
			done = f.Nodes(1+rng.IntN(7), func(n StoredNode, acl int) {
				n.Data = bytes.Clone(n.Data)
				n.ACL = f.ACLs()[acl]
				got = append(got, n)
			})
		}
		tr.Thaw(f)
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d nodes, want %d", seed, len(got), len(want))
		}
		for i := range want {
			w, g := want[i], got[i]
			if len(w.ACL) == 0 && len(g.ACL) == 0 {
				w.ACL, g.ACL = nil, nil
			}
			if fmt.Sprint(w) != fmt.Sprint(g) {
				t.Fatalf("seed %d, node %d:\n got %+v\nwant %+v", seed, i, g, w)
			}
		}
	}
}

package datatree

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// busyTree runs a deterministic workload touching every node kind.
func busyTree(t testing.TB) *Tree {
	tr := New(Options{ExtendedTypes: true})
	zxid, now := int64(0), int64(1_700_000_000_000)
	apply := func(c Caller, op int32, req jute.Record) {
		zxid++
		now += 3
		tr.Apply(Txn{Zxid: zxid, Time: now, Caller: c}, op, req)
	}
	dig := Caller{Session: 7, Ids: []jute.Id{{Scheme: "digest", Id: DigestID("u:p")}}}
	for i := 0; i < 50; i++ {
		dir := fmt.Sprintf("/d%d", i%7)
		apply(anyone, jute.OpCreate, &jute.CreateRequest{Path: dir, Data: []byte(dir), Acl: world})
		apply(dig, jute.OpCreate, &jute.CreateRequest{Path: dir + "/s", Acl: aclOf(31, "auth", ""), Flags: jute.FlagEphemeralSequential})
		apply(anyone, jute.OpCreate, &jute.CreateRequest{Path: dir + "/n", Data: nil, Acl: world, Flags: jute.FlagPersistentSequential})
		apply(anyone, jute.OpSetData, &jute.SetDataRequest{Path: dir, Data: []byte{byte(i)}, Version: -1})
		if i%5 == 0 {
			apply(anyone, jute.OpCreateTTL, &jute.CreateTTLRequest{Path: dir + "/t", Acl: world, Flags: jute.FlagPersistentSequentialWithTTL, Ttl: int64(i + 1)})
			apply(anyone, jute.OpCreateContainer, &jute.CreateRequest{Path: dir + "/c", Acl: aclOf(jute.PermRead, "ip", "10.0.0.0/8"), Flags: jute.FlagContainer})
		}
		if i%3 == 0 {
			apply(anyone, jute.OpDelete, &jute.DeleteRequest{Path: fmt.Sprintf("%s/n%010d", dir, i/7), Version: -1})
		}
	}
	apply(anyone, jute.OpSetData, &jute.SetDataRequest{Path: "/", Data: []byte("root"), Version: -1})
	return tr
}

func snapshotBytes(t testing.TB, tr *Tree) []byte {
	var buf bytes.Buffer
	if err := tr.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestSnapshotRoundTrip(t *testing.T) {
	tr := busyTree(t)
	b := snapshotBytes(t, tr)
	got, err := ReadSnapshot(bytes.NewReader(b), Options{ExtendedTypes: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest() != tr.Digest() {
		t.Fatal("digest differs after round trip")
	}
	if got.NodeCount() != tr.NodeCount() || got.ApproximateDataSize() != tr.ApproximateDataSize() {
		t.Fatalf("counts %d/%d, sizes %d/%d", got.NodeCount(), tr.NodeCount(), got.ApproximateDataSize(), tr.ApproximateDataSize())
	}
	tr.walk(func(path string, n *node) {
		d1, s1, _ := tr.Get(path)
		d2, s2, code := got.Get(path)
		a1, _, _ := tr.ACL(path)
		a2, _, _ := got.ACL(path)
		if code != jute.OK || s1 != s2 || !bytes.Equal(d1, d2) || (d1 == nil) != (d2 == nil) || !reflect.DeepEqual(a1, a2) {
			t.Fatalf("%s differs: %+v %+v", path, s1, s2)
		}
	})
	if !reflect.DeepEqual(got.EphemeralSessions(), tr.EphemeralSessions()) {
		t.Fatal("ephemerals differ")
	}
	if !reflect.DeepEqual(got.CleanupCandidates(2e12), tr.CleanupCandidates(2e12)) {
		t.Fatal("cleanup candidates differ")
	}
	// Deterministic encoding: the copy writes the same bytes.
	if !bytes.Equal(snapshotBytes(t, got), b) {
		t.Fatal("snapshot of the restored tree differs")
	}
	// Sequential counters survive.
	c1, _, _ := tr.Apply(Txn{Zxid: 1e6}, jute.OpCreate, &jute.CreateRequest{Path: "/d1/n", Acl: world, Flags: jute.FlagPersistentSequential})
	c2, _, _ := got.Apply(Txn{Zxid: 1e6}, jute.OpCreate, &jute.CreateRequest{Path: "/d1/n", Acl: world, Flags: jute.FlagPersistentSequential})
	if c1.(*jute.CreateResponse).Path != c2.(*jute.CreateResponse).Path {
		t.Fatal("sequence differs after restore")
	}
}

func TestSnapshotCorruptionDetected(t *testing.T) {
	b := snapshotBytes(t, busyTree(t))
	for _, i := range []int{0, 9, 13, 40, len(b) / 2, len(b) - 5, len(b) - 1} {
		bad := append([]byte(nil), b...)
		bad[i] ^= 0x20
		if _, err := ReadSnapshot(bytes.NewReader(bad), Options{}); err == nil {
			t.Errorf("flipped byte %d not detected", i)
		}
	}
	for _, n := range []int{0, 5, 12, len(b) / 3, len(b) - 1} {
		if _, err := ReadSnapshot(bytes.NewReader(b[:n]), Options{}); err == nil {
			t.Errorf("truncation at %d not detected", n)
		}
	}
	bad := append([]byte(nil), b...)
	bad[11] = 3 // version
	if _, err := ReadSnapshot(bytes.NewReader(bad), Options{}); err == nil || errors.Is(err, ErrSnapshotCorrupt) {
		t.Errorf("version: %v", err)
	}
}

// Two trees fed the same entries agree; a different history does not.
func TestDeterminism(t *testing.T) {
	a, b := busyTree(t), busyTree(t)
	if a.Digest() != b.Digest() || !bytes.Equal(snapshotBytes(t, a), snapshotBytes(t, b)) {
		t.Fatal("same history, different state")
	}
	ea := a.CloseSession(Txn{Zxid: 1e6}, 7)
	eb := b.CloseSession(Txn{Zxid: 1e6}, 7)
	if !reflect.DeepEqual(ea, eb) || a.Digest() != b.Digest() {
		t.Fatal("CloseSession differs")
	}
	b.Apply(Txn{Zxid: 1e6 + 1}, jute.OpSetData, &jute.SetDataRequest{Path: "/d1", Version: -1})
	if a.Digest() == b.Digest() {
		t.Fatal("digest blind to a change")
	}
}

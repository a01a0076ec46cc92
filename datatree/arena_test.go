package datatree

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

func TestPageOfCoversEveryID(t *testing.T) {
	seen := map[[2]int]bool{}
	for id := nodeID(0); id < 5*pageMax; id++ {
		p, i := pageOf(id)
		if i < 0 || i >= pageSize(p) {
			t.Fatalf("id %d: index %d outside page %d of %d", id, i, p, pageSize(p))
		}
		if seen[[2]int{p, i}] {
			t.Fatalf("id %d: slot %d/%d given twice", id, p, i)
		}
		seen[[2]int{p, i}] = true
	}
}

func TestSizeClasses(t *testing.T) {
	for n := 1; n <= maxClassSize; n++ {
		c := classOf(n)
		if classSizes[c] < n || (c > 0 && classSizes[c-1] >= n) {
			t.Fatalf("classOf(%d) = %d (size %d)", n, c, classSizes[c])
		}
		if n > 256 && classSizes[c]-n > n/8 {
			t.Fatalf("%d bytes waste %d in class %d", n, classSizes[c]-n, classSizes[c])
		}
	}
}

// Data of every shape survives creates, setData across size classes (in place and not),
// multis and deletes; the memory in use comes back to where it was.
func TestArenaDataRoundTrip(t *testing.T) {
	f := newFixture(t)
	base := f.tree.MemoryInUse()
	sizes := []int{-1, 0, 1, 7, 8, 9, 100, 255, 256, 257, 4000, maxClassSize - 3, maxClassSize + 1, 300 << 10}
	want := map[string][]byte{}
	for i, n := range sizes {
		p := fmt.Sprintf("/n%02d", i)
		var d []byte
		if n >= 0 {
			d = bytes.Repeat([]byte{byte('a' + i)}, n)
		}
		f.apply(anyone, jute.OpCreate, &jute.CreateRequest{Path: p, Data: d, Acl: world})
		want[p] = d
	}
	check := func(when string) {
		t.Helper()
		for p, d := range want {
			got, st, code := f.tree.Get(p)
			if code != jute.OK || !bytes.Equal(got, d) || (got == nil) != (d == nil) || int(st.DataLength) != len(d) {
				t.Fatalf("%s: %s has %d bytes (nil %v), want %d (nil %v)", when, p, len(got), got == nil, len(d), d == nil)
			}
		}
	}
	check("after create")
	for round := 0; round < 3; round++ {
		for i := range sizes {
			p := fmt.Sprintf("/n%02d", i)
			n := sizes[(i+round+1)%len(sizes)]
			var d []byte
			if n >= 0 {
				d = bytes.Repeat([]byte{byte('A' + round)}, n)
			}
			f.apply(anyone, jute.OpSetData, &jute.SetDataRequest{Path: p, Data: d, Version: -1})
			want[p] = d
		}
		check(fmt.Sprintf("after setData round %d", round))
	}
	// A failing multi that changed data and created a node leaves everything as it was.
	before := f.tree.MemoryInUse()
	_, code, _ := f.apply(anyone, jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/n03", Data: make([]byte, 5000), Version: -1}},
		{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/n03", Data: make([]byte, 9), Version: -1}},
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/made", Data: []byte("x"), Acl: world}},
		{Type: jute.OpDelete, Req: &jute.DeleteRequest{Path: "/n04", Version: -1}},
		{Type: jute.OpDelete, Req: &jute.DeleteRequest{Path: "/missing", Version: -1}},
	}})
	if code != jute.OK {
		t.Fatal(code)
	}
	check("after a failed multi")
	if got := f.tree.MemoryInUse(); got != before {
		t.Fatalf("a failed multi moved the memory in use from %d to %d", before, got)
	}
	for p := range want {
		f.apply(anyone, jute.OpDelete, &jute.DeleteRequest{Path: p, Version: -1})
	}
	if got := f.tree.MemoryInUse(); got != base {
		t.Fatalf("memory in use %d after deleting everything, %d before", got, base)
	}
}

// Creating and deleting the same number of nodes again and again reuses their ids and
// slots: what the tree holds does not grow.
func TestArenaReusesFreedMemory(t *testing.T) {
	f := newFixture(t)
	f.mustCreate("/q", 0)
	held := int64(0)
	for round := 0; round < 6; round++ {
		for i := 0; i < 3000; i++ {
			f.apply(anyone, jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("/q/r%d-%d", round, i), Data: make([]byte, 40+i%200), Acl: world})
		}
		for i := 0; i < 3000; i++ {
			f.apply(anyone, jute.OpDelete, &jute.DeleteRequest{Path: fmt.Sprintf("/q/r%d-%d", round, i), Version: -1})
		}
		if round == 1 {
			held = f.tree.MemoryHeld()
		}
		if round > 1 && f.tree.MemoryHeld() != held {
			t.Fatalf("round %d: the tree holds %d bytes, %d after round 1", round, f.tree.MemoryHeld(), held)
		}
	}
	if f.tree.mem.nextID > 3010 {
		t.Fatalf("%d ids handed out for 3000 nodes at a time", f.tree.mem.nextID)
	}
}

// While a Frozen is open, a deleted node's id and slot are not handed out again (the
// frozen walk still reads them); after Thaw they are.
func TestFrozenKeepsFreedNodes(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 50; i++ {
		f.apply(anyone, jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("/k%02d", i), Data: []byte(fmt.Sprint("old", i)), Acl: world})
	}
	want := snapshotBytes(t, f.tree)
	fr, err := f.tree.Freeze()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		f.apply(anyone, jute.OpDelete, &jute.DeleteRequest{Path: fmt.Sprintf("/k%02d", i), Version: -1})
		f.apply(anyone, jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("/k%02dx", i), Data: []byte(fmt.Sprint("new", i)), Acl: world})
	}
	var got []byte
	for done := false; !done; {
		var b []byte
		b, done = fr.Next(3)
		got = append(got, b...)
	}
	ids := f.tree.mem.nextID
	f.tree.Thaw(fr)
	if !bytes.Equal(got, want) {
		t.Fatal("the frozen walk read memory that was handed out again")
	}
	f.apply(anyone, jute.OpCreate, &jute.CreateRequest{Path: "/after", Data: []byte("x"), Acl: world})
	if f.tree.mem.nextID != ids {
		t.Fatal("an id freed while frozen was not reused after Thaw")
	}
}

// Snapshots written by the tree before its memory layout changed (pointer-rich nodes,
// 2026-11-23) load, hash to the digest that tree had, and encode to the same bytes.
func TestSnapshotFromBeforeTheArenaLoads(t *testing.T) {
	for _, c := range []struct {
		file   string
		digest uint64
		nodes  int
		size   int64
	}{
		{"testdata/snapshot-2026-11-23.bin", 0x5a64de90da978a67, 427, 151958},
		{"testdata/snapshot-2026-11-23-quota.bin", 0xdab2b921aeb18ade, 430, 152094}, // (as the old tree read it back: quota stats are not counted live)
	} {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := ReadSnapshot(bytes.NewReader(b), Options{ExtendedTypes: true})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if tr.Digest() != c.digest || tr.NodeCount() != c.nodes || tr.ApproximateDataSize() != c.size {
			t.Fatalf("%s: digest %x nodes %d size %d, want %x %d %d", c.file, tr.Digest(), tr.NodeCount(), tr.ApproximateDataSize(), c.digest, c.nodes, c.size)
		}
		if !bytes.Equal(snapshotBytes(t, tr), b) {
			t.Fatalf("%s: written again, the bytes differ", c.file)
		}
		if d, _, _ := tr.Get("/big"); len(d) != 100<<10 {
			t.Fatalf("%s: /big has %d bytes", c.file, len(d))
		}
	}
}

// A tree that took memory from the system gives it back once it is unreachable.
func TestUnreachableTreeReturnsItsMemory(t *testing.T) {
	if !OffHeap {
		t.Skip("this build keeps every tree on the Go heap (make test runs datatree once without -race)")
	}
	base := OffHeapBytes()
	func() {
		tr := New(Options{})
		for i := 0; i < 3*pageMax; i++ {
			tr.Apply(Txn{Zxid: int64(i + 1)}, jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("/n%05d", i), Data: make([]byte, 100), Acl: world})
		}
		if OffHeapBytes() == base {
			t.Fatal("a tree of 12k nodes took nothing from the system")
		}
		runtime.KeepAlive(tr)
	}()
	for i := 0; i < 100 && OffHeapBytes() != base; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := OffHeapBytes(); got != base {
		t.Fatalf("off-heap bytes %d after the tree died, %d before", got, base)
	}
}

// A node record is 80 bytes: its stat is stored field by field and a blob ref is 32 bits.
// A field more, or a stat put back as one struct (padded to 64 bytes), shows here first.
func TestNodeRecordSize(t *testing.T) {
	if nodeBytes != 80 {
		t.Fatalf("a node record is %d bytes, 80 expected", nodeBytes)
	}
}

// Once every class slab a ref can name is taken, class blobs get slabs of their own: the
// data reads back, the memory in use counts them as it counts class blobs (the same tree
// built with slabs to spare reports the same figure), and freeing them returns it.
func TestClassBlobsPastTheSlabLimitGoSolo(t *testing.T) {
	build := func() (*fixture, int64, map[string][]byte) {
		f := newFixture(t)
		base := f.tree.MemoryInUse()
		want := map[string][]byte{}
		for i := 0; i < 300; i++ {
			p := fmt.Sprintf("/n%03d", i)
			d := bytes.Repeat([]byte{byte(i)}, 1+(i*37)%3000)
			f.apply(anyone, jute.OpCreate, &jute.CreateRequest{Path: p, Data: d, Acl: world})
			want[p] = d
		}
		return f, base, want
	}
	ref, _, _ := build()
	defer func(old int) { classSlabLimit = old }(classSlabLimit)
	classSlabLimit = 3 // slab 0 is unused: two class slabs
	f, base, want := build()
	if len(f.tree.mem.slabs) != 3 || len(f.tree.mem.solos) < 250 {
		t.Fatalf("%d class slabs and %d solo slabs; 3 and most of 300 blobs solo expected", len(f.tree.mem.slabs), len(f.tree.mem.solos))
	}
	if got, exp := f.tree.MemoryInUse(), ref.tree.MemoryInUse(); got != exp {
		t.Fatalf("memory in use %d with solo blobs, %d without", got, exp)
	}
	for p, d := range want {
		if got, _, code := f.tree.Get(p); code != jute.OK || !bytes.Equal(got, d) {
			t.Fatalf("%s: %d bytes, %v; want %d bytes", p, len(got), code, len(d))
		}
	}
	for p := range want {
		f.apply(anyone, jute.OpDelete, &jute.DeleteRequest{Path: p, Version: -1})
	}
	if got := f.tree.MemoryInUse(); got != base {
		t.Fatalf("memory in use %d after deleting everything, %d before", got, base)
	}
	if len(f.tree.mem.freeSolo) != len(f.tree.mem.solos) {
		t.Fatalf("%d of %d solo slabs freed", len(f.tree.mem.freeSolo), len(f.tree.mem.solos))
	}
}

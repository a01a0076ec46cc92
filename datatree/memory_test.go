package datatree

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// fillTree makes parents x perParent znodes of size bytes under /pNNNN.
func fillTree(tb testing.TB, parents, perParent, size int) *Tree {
	tr := New(Options{ExtendedTypes: true})
	z := int64(0)
	data := make([]byte, size)
	for p := 0; p < parents; p++ {
		z++
		tr.Apply(Txn{Zxid: z}, jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("/p%04d", p), Acl: world})
		for c := 0; c < perParent; c++ {
			z++
			if _, code, _ := tr.Apply(Txn{Zxid: z}, jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("/p%04d/n%06d", p, c), Data: data, Acl: world}); code != jute.OK {
				tb.Fatal(code)
			}
		}
	}
	return tr
}

// The budget: at most 120 bytes a znode beyond its data, counting what the tree
// holds (records, names, slots, child lists), with 100 B znodes.
func TestNodeMemoryBudget(t *testing.T) {
	tr := fillTree(t, 100, 1000, 100)
	per := (tr.MemoryHeld() - 100*int64(tr.nodes)) / int64(tr.nodes)
	t.Logf("%d znodes: %d bytes held, %d a znode beyond its data", tr.nodes, tr.MemoryHeld(), per)
	if per > 120 {
		t.Fatalf("%d bytes a znode beyond its data, budget 120", per)
	}
}

// BenchmarkMillionNodes reports what 1M znodes of 100 B cost: the Go heap and the
// memory outside it, a znode, beyond the data; and how long a full collection takes.
func BenchmarkMillionNodes(b *testing.B) {
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		tr := fillTree(b, 1000, 1000, 100)
		runtime.GC()
		runtime.ReadMemStats(&m1)
		heap := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
		// This tree's own mappings, not OffHeapBytes' change: the previous iteration's
		// tree is unmapped by a cleanup that may run during this fill.
		off := tr.mem.osMem.mapped
		b.ReportMetric(float64(heap+off)/float64(tr.nodes)-100, "B/znode-beyond-data")
		b.ReportMetric(float64(heap)/float64(tr.nodes), "heapB/znode")
		b.ReportMetric(float64(m1.PauseNs[(m1.NumGC+255)%256])/1e3, "last-gc-pause-µs")
		runtime.KeepAlive(tr)
	}
}

// BenchmarkReadSnapshotMillion reads a snapshot of 1M znodes of 100 B: most of what a
// restart with a large tree does.
func BenchmarkReadSnapshotMillion(b *testing.B) {
	tr := fillTree(b, 1000, 1000, 100)
	var buf bytes.Buffer
	buf.Grow(200 << 20)
	if err := tr.WriteSnapshot(&buf); err != nil {
		b.Fatal(err)
	}
	tr = nil
	b.SetBytes(int64(buf.Len()))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got, err := ReadSnapshot(bytes.NewReader(buf.Bytes()), Options{ExtendedTypes: true})
		if err != nil || got.NodeCount() != 1001005 {
			b.Fatal(err, got.NodeCount())
		}
	}
}

package watch

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// memParents x memChildren paths ("/p0042/n000123"), each watched by memWatchers
// watchers with a data and a child watch: 1M watches, as in issue 13.
const (
	memParents  = 100
	memChildren = 1000
	memWatchers = 5
)

func memPathList() []string {
	out := make([]string, 0, memParents*memChildren)
	for p := 0; p < memParents; p++ {
		for c := 0; c < memChildren; c++ {
			out = append(out, fmt.Sprintf("/p%04d/n%06d", p, c))
		}
	}
	return out
}

type nopWatcher struct{ n int }

func (w *nopWatcher) Notify(*jute.WatcherEvent, int64) { w.n++ }

func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestWatchMemory measures the registry's live heap per watch for 1M watches. Every
// Add gets a path string of its own, as the server's does (each decoded request has
// its own copy, which the server drops after the read), so the copies the registry
// keeps count, and nothing else the test holds does. It fails above maxBytesPerWatch,
// the budget issue 13 gives (a third of ZooKeeper's, see watch/doc.go).
func TestWatchMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 1M watches")
	}
	const maxBytesPerWatch = 40
	ws := make([]Watcher, memWatchers)
	for i := range ws {
		ws[i] = &nopWatcher{}
	}
	base := liveHeap()
	r := New()
	buf := make([]byte, 0, 32)
	n := 0
	for _, w := range ws {
		for p := 0; p < memParents; p++ {
			for c := 0; c < memChildren; c++ {
				buf = fmt.Appendf(buf[:0], "/p%04d/n%06d", p, c)
				r.Add(w, string(buf), Data)
				r.Add(w, string(buf), Child)
				n += 2
			}
		}
	}
	after := liveHeap()
	if r.Count() != n {
		t.Fatalf("count %d, want %d", r.Count(), n)
	}
	per := float64(after-base) / float64(n)
	t.Logf("%d watches: %d bytes live, %.1f bytes per watch", n, after-base, per)
	if f := os.Getenv("ZKRAFT_WATCHMEM_OUT"); f != "" {
		os.WriteFile(f, []byte(fmt.Sprintf("%.1f\n", per)), 0o644)
	}
	runtime.KeepAlive(r)
	runtime.KeepAlive(ws)
	if per > maxBytesPerWatch {
		t.Fatalf("%.1f bytes per watch, budget %d", per, maxBytesPerWatch)
	}
}

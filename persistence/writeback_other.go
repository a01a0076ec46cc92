//go:build !linux

package persistence

import "os"

// writeback is Linux's sync_file_range pacing; elsewhere the closing fsync does it all.
func writeback(f *os.File, off, n int64) {}

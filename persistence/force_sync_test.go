package persistence

import (
	"os"
	"sync/atomic"
	"testing"
)

// A WAL that skips its syncs (forceSync=no) stores and defers frames without one
// fdatasync of them, and what it wrote is read back after it is reopened (a process
// killed after its writes leaves them in the page cache); a WAL that syncs makes one
// per frame.
func TestWALSkipsItsSyncsWhenAsked(t *testing.T) {
	var synced atomic.Int64
	count := func(f *os.File) error { synced.Add(1); return fdatasync(f) }
	syncFrame, syncDeferred = count, count
	t.Cleanup(func() { syncFrame, syncDeferred = fdatasync, fdatasync })
	for _, skip := range []bool{true, false} {
		synced.Store(0)
		dir := t.TempDir()
		w := mustOpenWAL(t, dir, 1<<20)
		if skip {
			w.SkipSyncs()
		}
		if err := w.StoreLogs(entries(1, 3, 1)); err != nil {
			t.Fatal(err)
		}
		if err := w.StoreLogsDeferred(entries(4, 6, 1)); err != nil {
			t.Fatal(err)
		}
		if err := w.WaitDurable(6); err != nil {
			t.Fatal(err)
		}
		if n := synced.Load(); skip && n != 0 || !skip && n < 2 {
			t.Errorf("skip %v: %d fdatasyncs of two frames", skip, n)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		w = mustOpenWAL(t, dir, 1<<20)
		if last, err := w.LastIndex(); err != nil || last != 6 {
			t.Errorf("skip %v: reopened with last index %d, %v", skip, last, err)
		}
		w.Close()
	}
}

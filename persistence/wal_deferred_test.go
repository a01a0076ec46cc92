package persistence

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// holdSyncs makes the syncer's fdatasyncs wait until the returned release is called,
// or fail with fail if it is not nil; each held fdatasync is announced on started.
func holdSyncs(t *testing.T, fail error) (started <-chan struct{}, release func()) {
	t.Helper()
	gate := make(chan struct{})
	st := make(chan struct{}, 16)
	syncDeferred = func(f *os.File) error {
		st <- struct{}{}
		<-gate
		if fail != nil {
			return fail
		}
		return fdatasync(f)
	}
	released := false
	release = func() {
		if !released {
			released = true
			close(gate)
		}
	}
	t.Cleanup(func() {
		release()
		syncDeferred = fdatasync
	})
	return st, release
}

// returnsWithin reports whether fn returns within d (fn keeps running otherwise, and its
// result goes to the returned channel).
func returnsWithin(d time.Duration, fn func() error) (bool, <-chan error) {
	ch := make(chan error, 1)
	go func() { ch <- fn() }()
	select {
	case err := <-ch:
		ch <- err
		return true, ch
	case <-time.After(d):
		return false, ch
	}
}

// A deferred store returns before its fdatasync, its entries can be read at once, and
// WaitDurable, UnsyncedFrom and the next write all wait for that fdatasync.
func TestWALDeferredStoreIsDurableOnlyAfterItsSync(t *testing.T) {
	dir := t.TempDir()
	w := mustOpenWAL(t, dir, 1<<20)
	if err := w.StoreLogs(entries(1, 5, 1)); err != nil {
		t.Fatal(err)
	}
	if from := w.UnsyncedFrom(); from != 0 {
		t.Fatalf("UnsyncedFrom after a durable store = %d, want 0", from)
	}
	started, release := holdSyncs(t, nil)

	if ok, _ := returnsWithin(5*time.Second, func() error { return w.StoreLogsDeferred(entries(6, 8, 1)) }); !ok {
		t.Fatal("StoreLogsDeferred waited for its own fdatasync")
	}
	<-started
	expectLog(t, w, 1, 8, term1)
	if from := w.UnsyncedFrom(); from != 6 {
		t.Fatalf("UnsyncedFrom while the frame's fdatasync is held = %d, want 6", from)
	}
	if err := w.WaitDurable(5); err != nil {
		t.Fatalf("WaitDurable(5), durable before the deferred frame: %v", err)
	}
	waited, durable := returnsWithin(100*time.Millisecond, func() error { return w.WaitDurable(6) })
	if waited {
		t.Fatal("WaitDurable(6) returned while entry 6's fdatasync was held")
	}
	next, stored := returnsWithin(100*time.Millisecond, func() error { return w.StoreLogs(entries(9, 9, 1)) })
	if next {
		t.Fatal("a store after a deferred frame went ahead before that frame was durable")
	}

	release()
	for _, ch := range []<-chan error{durable, stored} {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("still waiting after the fdatasync was let go")
		}
	}
	if from := w.UnsyncedFrom(); from != 0 {
		t.Fatalf("UnsyncedFrom after the fdatasync = %d, want 0", from)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w = mustOpenWAL(t, dir, 1<<20)
	defer w.Close()
	expectLog(t, w, 1, 9, term1)
}

// A deferred frame whose fdatasync fails is never reported durable, the failure is
// reported to OnFailed's function once, and the log takes no more writes, as after a
// failed fdatasync of its own.
func TestWALDeferredSyncFailureStopsTheLog(t *testing.T) {
	w := mustOpenWAL(t, t.TempDir(), 1<<20)
	defer w.Close()
	failed := make(chan error, 2)
	w.OnFailed(func(err error) { failed <- err })
	boom := errors.New("disk gone")
	started, release := holdSyncs(t, boom)
	if err := w.StoreLogsDeferred(entries(1, 3, 1)); err != nil {
		t.Fatal(err)
	}
	<-started
	release()
	if err := w.WaitDurable(3); !errors.Is(err, boom) {
		t.Fatalf("WaitDurable after a failed fdatasync: %v, want %v", err, boom)
	}
	if err := <-failed; !errors.Is(err, boom) {
		t.Fatalf("reported %v, want %v", err, boom)
	}
	if from := w.UnsyncedFrom(); from != 1 {
		t.Fatalf("UnsyncedFrom after a failed fdatasync = %d, want 1", from)
	}
	if err := w.StoreLogs(entries(4, 4, 1)); !errors.Is(err, boom) {
		t.Fatalf("a store after the failed fdatasync: %v, want %v", err, boom)
	}
	if err := w.StoreLogsDeferred(entries(4, 4, 1)); !errors.Is(err, boom) {
		t.Fatalf("a deferred store after the failed fdatasync: %v, want %v", err, boom)
	}
	if len(failed) != 0 {
		t.Fatal("the failure was reported twice")
	}
}

// Close lets a deferred frame's fdatasync finish: what was stored is there on reopen.
func TestWALCloseWaitsForADeferredFrame(t *testing.T) {
	dir := t.TempDir()
	w := mustOpenWAL(t, dir, 1<<20)
	started, release := holdSyncs(t, nil)
	if err := w.StoreLogsDeferred(entries(1, 4, 2)); err != nil {
		t.Fatal(err)
	}
	<-started
	closed, done := returnsWithin(100*time.Millisecond, w.Close)
	if closed {
		t.Fatal("Close returned while a deferred frame's fdatasync was held")
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	w = mustOpenWAL(t, dir, 1<<20)
	defer w.Close()
	expectLog(t, w, 1, 4, func(uint64) uint64 { return 2 })
}

// A failed write is reported once, at once, to OnFailed's function: the server stops on
// it (as ZooKeeper's does) rather than go on with a log that takes no more writes.
func TestWALReportsItsFailure(t *testing.T) {
	w := mustOpenWAL(t, t.TempDir(), 1<<20)
	defer w.Close()
	var got []error
	w.OnFailed(func(err error) { got = append(got, err) })
	if err := w.StoreLogs(entries(1, 2, 1)); err != nil || len(got) != 0 {
		t.Fatalf("a good write: %v, reported %v", err, got)
	}
	w.segs[len(w.segs)-1].f.Close() // the next write fails
	for i := 0; i < 2; i++ {
		if err := w.StoreLogs(entries(3, 3, 1)); err == nil {
			t.Fatal("a write to a closed file succeeded")
		}
	}
	if len(got) != 1 || !strings.Contains(got[0].Error(), "takes no more writes") {
		t.Fatalf("reported %v, want the one failure", got)
	}
}

// With one P (zkraft's governor runs so), a goroutine in fdatasync keeps the P until the
// sync returns or the runtime's monitor takes the P back, so the goroutines queued behind
// the syncer would wait. On a leader those are raft's replicators: raft stores a batch
// (which readies the syncer) and then notifies each follower's replicator; the last one
// takes the P's next slot, the others queue behind the syncer. The syncer lets them run
// first. The test readies two goroutines after a deferred store, as raft does, and counts
// the rounds in which both ran before the fdatasync started. The scheduler takes its
// global queue first now and then, and -race shuffles its order, so it counts rather than
// asks for every round: with the yield nearly all rounds, without it a few under -race
// and none without; it fails below half.
func TestWALSyncerLetsReadyGoroutinesRunBeforeItsSync(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	w := mustOpenWAL(t, t.TempDir(), 1<<20)
	t.Cleanup(func() { w.Close() }) // before TempDir's removal: the preparer writes there
	var ran atomic.Int32
	first := 0
	syncDeferred = func(f *os.File) error {
		if ran.Load() == 2 {
			first++
		}
		return fdatasync(f)
	}
	t.Cleanup(func() { syncDeferred = fdatasync })
	const rounds = 40
	for i := range rounds {
		ran.Store(0)
		var ready [2]chan struct{}
		done := make(chan struct{}, 2)
		for j := range ready {
			ready[j] = make(chan struct{})
			go func() {
				<-ready[j]
				ran.Add(1)
				done <- struct{}{}
			}()
		}
		runtime.Gosched() // both wait on their channels
		if err := w.StoreLogsDeferred(entries(uint64(i+1), uint64(i+1), 1)); err != nil {
			t.Fatal(err)
		}
		close(ready[0]) // as raft notifies its replicators once the store returns
		close(ready[1])
		if err := w.WaitDurable(uint64(i + 1)); err != nil {
			t.Fatal(err)
		}
		<-done
		<-done
	}
	t.Logf("both ran before the fdatasync in %d of %d rounds", first, rounds)
	if first < rounds/2 {
		t.Fatalf("two goroutines made ready after the store both ran before the fdatasync in %d of %d rounds", first, rounds)
	}
}

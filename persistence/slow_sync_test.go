package persistence

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// slowSyncLog records what a WAL reports as slow.
type slowSyncLog struct {
	mu   sync.Mutex
	seen []SlowSync
}

func (l *slowSyncLog) report(s SlowSync) {
	l.mu.Lock()
	l.seen = append(l.seen, s)
	l.mu.Unlock()
}

func (l *slowSyncLog) take() []SlowSync {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.seen
	l.seen = nil
	return s
}

// Every fdatasync longer than the threshold is reported with its segment, the syncer's
// included, and none shorter.
func TestWALReportsSlowSyncs(t *testing.T) {
	dir := t.TempDir()
	w := mustOpenWAL(t, dir, 1<<20)
	defer w.Close()
	var log slowSyncLog

	// Nothing takes an hour: a durable store reports nothing.
	w.WarnSlowSyncs(time.Hour, log.report)
	if err := w.StoreLogs(entries(1, 3, 1)); err != nil {
		t.Fatal(err)
	}
	if got := log.take(); len(got) != 0 {
		t.Fatalf("fast fdatasyncs reported as slow: %+v", got)
	}

	// Everything takes longer than nothing: the durable store's fdatasync is reported.
	w.WarnSlowSyncs(-1, log.report)
	if err := w.StoreLogs(entries(4, 6, 1)); err != nil {
		t.Fatal(err)
	}
	got := log.take()
	if len(got) != 1 || filepath.Dir(got[0].Path) != dir || got[0].Took <= 0 {
		t.Fatalf("one fdatasync of a segment in %s reported, got %+v", dir, got)
	}

	// The syncer's fdatasync of a deferred store, slowed down past the threshold.
	w.WarnSlowSyncs(20*time.Millisecond, log.report)
	syncDeferred = func(f *os.File) error {
		time.Sleep(50 * time.Millisecond)
		return fdatasync(f)
	}
	t.Cleanup(func() { syncDeferred = fdatasync })
	if err := w.StoreLogsDeferred(entries(7, 9, 1)); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitDurable(9); err != nil {
		t.Fatal(err)
	}
	// The syncer reports after it has let the waiters go, so the report may come a moment
	// after WaitDurable returns.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		log.mu.Lock()
		n := len(log.seen)
		log.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
	}
	got = log.take()
	if len(got) != 1 || got[0].Took < 50*time.Millisecond || filepath.Dir(got[0].Path) != dir {
		t.Fatalf("the syncer's 50 ms fdatasync: reported %+v", got)
	}
}

// ObserveSyncs hears of every fdatasync, fast or slow, the syncer's of a deferred store
// included.
func TestWALObservesEverySync(t *testing.T) {
	w := mustOpenWAL(t, t.TempDir(), 1<<20)
	defer w.Close()
	var mu sync.Mutex
	var took []time.Duration
	w.ObserveSyncs(func(d time.Duration) {
		mu.Lock()
		took = append(took, d)
		mu.Unlock()
	})
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(took)
	}
	if err := w.StoreLogs(entries(1, 3, 1)); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d fdatasyncs observed for one durable store, want 1", n)
	}
	if err := w.StoreLogsDeferred(entries(4, 6, 1)); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitDurable(6); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); count() < 2 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
	}
	if n := count(); n != 2 {
		t.Fatalf("%d fdatasyncs observed after a deferred store, want 2", n)
	}
}

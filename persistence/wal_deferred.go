package persistence

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// Deferred writes. StoreLogsDeferred returns once its frame is written, before it is
// durable; the WAL's syncer goroutine fdatasyncs it at once, and WaitDurable and
// UnsyncedFrom say when it is durable. A Raft leader uses this so that its own fdatasync
// runs while the batch is on its way to the followers and in their fdatasyncs, as a
// ZooKeeper leader logs a proposal while it sends it (quorum's package doc says what the
// leader must then hold back, and why that is safe).
//
// At most one frame is ever written and not yet durable: every write, deferred or not,
// first waits until the frame before it is durable. So a crash still tears at most the
// last frame of the log (tornTail relies on it), and the syncer's segment is never
// rolled away, dropped or truncated under it.
type deferral struct {
	mu   sync.Mutex
	cond sync.Cond // on mu: the pending frame became durable, or the syncer failed
	seg  *segment  // the segment holding the pending frame
	// from is the first index of the pending frame, 0 when every frame is durable;
	// written under mu, read without it by UnsyncedFrom.
	from atomic.Uint64
	err  error // the syncer's fdatasync failed; the log takes no more writes
	// kick wakes the syncer; nil for a read-only log, which never defers, and once Close
	// stopped the syncer (under wmu).
	kick chan struct{}
	done chan struct{}
	// onDurable, when set, is called by the syncer after each fdatasync that made a
	// pending frame durable, once its waiters are let go.
	onDurable atomic.Pointer[func()]
}

// syncDeferred is the syncer's fdatasync; tests hold it to see what waits for it.
var syncDeferred = fdatasync

// startSyncer starts the goroutine that makes deferred frames durable.
func (w *WAL) startSyncer() {
	d := &w.syncer
	d.cond.L = &d.mu
	d.kick = make(chan struct{}, 1)
	d.done = make(chan struct{})
	go w.syncLoop(d.kick)
}

func (w *WAL) syncLoop(kick <-chan struct{}) {
	d := &w.syncer
	defer close(d.done)
	for range kick {
		d.mu.Lock()
		seg, from := d.seg, d.from.Load()
		d.mu.Unlock()
		if from == 0 {
			continue
		}
		// With one P, this goroutine keeps it through the fdatasync until the sync
		// returns or the runtime's monitor takes it back: let the goroutines queued on
		// the P run first (on a leader, raft's replicators, readied just after the
		// store). The syncer then waits until the P's queue is empty or the scheduler's
		// periodic look at its global queue, a bounded delay.
		runtime.Gosched()
		slow, err := w.timedSync(seg, syncDeferred)
		if err != nil {
			err = syncFailed(seg, err)
		}
		d.mu.Lock()
		if err != nil {
			d.err = err
		} else {
			d.seg = nil
			d.from.Store(0)
		}
		d.cond.Broadcast()
		d.mu.Unlock()
		if err != nil {
			w.reportFailed(err)
		} else if fn := d.onDurable.Load(); fn != nil {
			(*fn)()
		}
		w.reportSlow(slow) // after the waiters are let go: a slow sync has cost them enough
	}
}

// awaitSynced waits until no frame is pending; under wmu. It returns the syncer's
// failure, if the pending frame could not be made durable.
func (w *WAL) awaitSynced() error { return w.WaitDurable(math.MaxUint64) }

// deferred records the frame just written to seg, holding the entries from index
// first on, as pending, and wakes the syncer; under wmu, after awaitSynced.
func (w *WAL) deferred(seg *segment, first uint64) {
	d := &w.syncer
	d.mu.Lock()
	d.seg = seg
	d.from.Store(first)
	d.mu.Unlock()
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// stopSyncer lets a pending frame become durable and stops the syncer; under wmu,
// with the log already refusing writes.
func (w *WAL) stopSyncer() {
	d := &w.syncer
	if d.kick == nil {
		return
	}
	w.awaitSynced()
	close(d.kick)
	d.kick = nil
	<-d.done
}

// StoreLogsDeferred appends entries as StoreLogs does, but returns once their frame is
// written: they can be read at once and are durable when WaitDurable says so. It first
// waits until the frame before it is durable.
func (w *WAL) StoreLogsDeferred(logs []*raft.Log) error { return w.storeLogs(logs, false) }

// WaitDurable waits until the entries up to index are durable: at once when they were
// stored by StoreLogs, after the syncer's fdatasync when StoreLogsDeferred wrote them.
// It returns the fdatasync's failure if that failed.
func (w *WAL) WaitDurable(index uint64) error {
	d := &w.syncer
	if from := d.from.Load(); from == 0 || from > index {
		return nil // nothing pending there (always, read-only): every write and raft's apply come this way
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		from := d.from.Load()
		if from == 0 || from > index {
			return nil
		}
		if d.err != nil {
			return d.err
		}
		d.cond.Wait()
	}
}

// OnDurable has fn called, on the syncer's goroutine, each time a deferred frame has
// become durable (a Raft leader tells its followers so).
func (w *WAL) OnDurable(fn func()) { w.syncer.onDurable.Store(&fn) }

// UnsyncedFrom is the first index that is written but not yet durable, 0 when every
// stored entry is durable.
func (w *WAL) UnsyncedFrom() uint64 { return w.syncer.from.Load() }

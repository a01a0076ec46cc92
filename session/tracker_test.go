package session

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"
)

// runTracker starts tr.Run and returns a channel of the batches it expires and a stop
// function that cancels Run and checks it returned the context's error.
func runTracker(t *testing.T, tr *Tracker) (<-chan []int64, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	batches := make(chan []int64, 16)
	done := make(chan error, 1)
	go func() { done <- tr.Run(ctx, func(ids []int64) { batches <- ids }) }()
	stop := func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v", err)
		}
	}
	t.Cleanup(func() { cancel() })
	return batches, stop
}

func expectBatch(t *testing.T, batches <-chan []int64, want []int64) {
	t.Helper()
	select {
	case got := <-batches:
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("expired %v, want %v", got, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("nothing expired, want %v", want)
	}
}

// waitParked waits until Run is asleep on the clock, so that a test's next Advance is
// seen as the clock moving while Run waits. Only real time is spent waiting for the
// goroutine to be scheduled, never a session timeout.
func waitParked(t *testing.T, c *ManualClock, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for c.Waiters() < n {
		if time.Now().After(deadline) {
			t.Fatalf("Run did not park on the clock (%d waiters)", c.Waiters())
		}
		time.Sleep(time.Millisecond)
	}
}

func expectNone(t *testing.T, batches <-chan []int64) {
	t.Helper()
	select {
	case got := <-batches:
		t.Fatalf("unexpected expiry of %v", got)
	default:
	}
}

func TestTrackerExpires(t *testing.T) {
	clock := NewManualClock(t0)
	tr := NewTracker(clock, 2*time.Second)
	tr.Add(3, 4*time.Second) // deadline 6000
	tr.Add(1, 4*time.Second) // deadline 6000
	tr.Add(2, 8*time.Second) // deadline 10000
	batches, stop := runTracker(t, tr)
	defer stop()

	waitParked(t, clock, 1)
	clock.Advance(5999 * time.Millisecond)
	// Run re-arms only when woken; with nothing due it parks again on the same time.
	expectNone(t, batches)
	clock.Advance(time.Millisecond)
	expectBatch(t, batches, []int64{1, 3})

	// Session 2 pings at 7000: its deadline moves from 10000 to 12000.
	waitParked(t, clock, 1)
	clock.Advance(time.Second)
	tr.Add(2, 4*time.Second)
	if d, _ := tr.Deadline(2); !d.Equal(at(12000)) {
		t.Fatalf("deadline %v", d.Sub(t0))
	}
	clock.Set(at(11999))
	expectNone(t, batches)
	clock.Set(at(12000))
	expectBatch(t, batches, []int64{2})
	if tr.Len() != 0 {
		t.Fatalf("Len = %d", tr.Len())
	}
}

// A session touched with an earlier deadline than the one Run sleeps until wakes it.
func TestTrackerTouchWakesRun(t *testing.T) {
	clock := NewManualClock(t0)
	tr := NewTracker(clock, time.Second)
	batches, stop := runTracker(t, tr)
	defer stop()
	tr.Add(1, 30*time.Second) // deadline 31000
	waitParked(t, clock, 1)
	tr.Add(2, time.Second) // deadline 2000: Run must re-arm for it
	waitParked(t, clock, 2)
	clock.Set(at(2000))
	expectBatch(t, batches, []int64{2})
	clock.Set(at(31000))
	expectBatch(t, batches, []int64{1})
}

// Run with nothing to track sleeps without a timer until a Touch.
func TestTrackerIdle(t *testing.T) {
	clock := NewManualClock(t0)
	tr := NewTracker(clock, time.Second)
	batches, stop := runTracker(t, tr)
	clock.Advance(time.Hour)
	expectNone(t, batches)
	tr.Add(5, time.Second)
	waitParked(t, clock, 1)
	clock.Advance(2 * time.Second)
	expectBatch(t, batches, []int64{5})
	stop()
}

func TestTrackerRemove(t *testing.T) {
	clock := NewManualClock(t0)
	tr := NewTracker(clock, time.Second)
	tr.Add(1, time.Second)
	tr.Add(2, time.Second)
	tr.Remove(1)
	tr.Remove(99)
	batches, stop := runTracker(t, tr)
	defer stop()
	clock.Advance(2 * time.Second)
	expectBatch(t, batches, []int64{2})
}

// A new leader gives every session a full timeout from now, whatever deadline it had.
func TestTrackerResetAll(t *testing.T) {
	clock := NewManualClock(t0)
	tr := NewTracker(clock, time.Second)
	tr.Add(1, time.Second)  // 2000
	tr.Add(99, time.Second) // not in the table any more: dropped by ResetAll
	clock.Advance(1500 * time.Millisecond)
	tr.ResetAll([]Session{{ID: 1, Timeout: 4000}, {ID: 2, Timeout: 10000}})
	if tr.Len() != 2 {
		t.Fatalf("Len = %d", tr.Len())
	}
	if d, _ := tr.Deadline(1); !d.Equal(at(6000)) {
		t.Fatalf("session 1 deadline %v", d.Sub(t0))
	}
	if d, _ := tr.Deadline(2); !d.Equal(at(12000)) {
		t.Fatalf("session 2 deadline %v", d.Sub(t0))
	}
	batches, stop := runTracker(t, tr)
	defer stop()
	clock.Set(at(5999))
	expectNone(t, batches)
	clock.Set(at(6000))
	expectBatch(t, batches, []int64{1})
	clock.Set(at(12000))
	expectBatch(t, batches, []int64{2})
}

// A leader that wakes late expires every due bucket in one sorted batch.
func TestTrackerLateWake(t *testing.T) {
	clock := NewManualClock(t0)
	tr := NewTracker(clock, time.Second)
	for id, timeout := range map[int64]time.Duration{40: time.Second, 10: 2 * time.Second, 30: 3 * time.Second, 20: time.Second} {
		tr.Add(id, timeout)
	}
	clock.Advance(time.Minute)
	batches, stop := runTracker(t, tr)
	defer stop()
	expectBatch(t, batches, []int64{10, 20, 30, 40})
}

// expire runs without the lock: it may touch and remove.
func TestTrackerCallbackReenters(t *testing.T) {
	clock := NewManualClock(t0)
	tr := NewTracker(clock, time.Second)
	tr.Add(1, time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var got [][]int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		tr.Run(ctx, func(ids []int64) {
			mu.Lock()
			got = append(got, ids)
			n := len(got)
			mu.Unlock()
			if n == 1 {
				tr.Add(7, time.Second) // re-enter: a new session from inside the callback
				tr.Remove(1)
			} else {
				cancel()
			}
		})
	}()
	clock.Advance(2 * time.Second)
	waitParked(t, clock, 1)
	clock.Advance(2 * time.Second)
	<-done
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(got, [][]int64{{1}, {7}}) {
		t.Fatalf("batches %v", got)
	}
}

func TestTrackerSystemClock(t *testing.T) {
	tr := NewTracker(SystemClock{}, 10*time.Millisecond)
	batches, stop := runTracker(t, tr)
	defer stop()
	tr.Add(1, time.Millisecond)
	expectBatch(t, batches, []int64{1})
}

// Touch refreshes only a session the Tracker holds, as ZooKeeper's touchSession: an id
// never added, removed (closed) or already reported expired is not tracked again.
func TestTrackerTouchIgnoresUnknown(t *testing.T) {
	clock := NewManualClock(t0)
	tr := NewTracker(clock, time.Second)
	tr.Add(1, time.Second) // 2000
	tr.Add(2, time.Second) // 2000
	tr.Add(3, time.Second) // 2000
	tr.Remove(2)
	if tr.Touch(2, time.Second) || tr.Touch(99, time.Second) {
		t.Fatal("Touch tracked a removed or unknown session")
	}
	clock.Advance(500 * time.Millisecond)
	if !tr.Touch(3, 4*time.Second) { // 5000
		t.Fatal("Touch did not refresh a tracked session")
	}
	batches, stop := runTracker(t, tr)
	defer stop()
	clock.Set(at(2000))
	expectBatch(t, batches, []int64{1})
	if tr.Touch(1, time.Second) {
		t.Fatal("Touch tracked a session already reported expired")
	}
	clock.Set(at(5000))
	expectBatch(t, batches, []int64{3})
	if tr.Len() != 0 {
		t.Fatalf("Len = %d", tr.Len())
	}
}

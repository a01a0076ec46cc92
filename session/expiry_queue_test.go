package session

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

// t0 is a round time, so bucket boundaries (multiples of the interval since the Unix
// epoch) are easy to read in the tests.
var t0 = time.Unix(1_700_000_000, 0)

func at(ms int64) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func TestExpiryQueueRounding(t *testing.T) {
	q := NewExpiryQueue(2 * time.Second)
	for _, tt := range []struct {
		now, timeout, want int64 // ms after t0
	}{
		{0, 5000, 6000},    // 5000 rounds up to 6000
		{300, 5000, 6000},  // 5300 too
		{1000, 5000, 8000}, // 6000 is a boundary: the next one, as ZooKeeper's (t/i + 1) * i
		{1999, 5000, 8000}, // 6999
		{0, 0, 2000},       // even no timeout waits for the next boundary
		{-1, 0, 0},         // before the first boundary seen (clock set back)
		{-2001, 0, -2000},  // and further back
		{0, 40000, 42000},  // a long timeout
		{123, 3999, 6000},  // 4122
		{123, 3877, 6000},  // 4000 exactly: next boundary
		{123, 3876, 4000},  // 3999
		{1_000_000, 1, 1_002_000},
	} {
		got := q.Touch(1, time.Duration(tt.timeout)*time.Millisecond, at(tt.now))
		if !got.Equal(at(tt.want)) {
			t.Errorf("Touch at %d with timeout %d: deadline %v ms, want %d",
				tt.now, tt.timeout, got.Sub(t0).Milliseconds(), tt.want)
		}
		if d, ok := q.Deadline(1); !ok || !d.Equal(got) {
			t.Errorf("Deadline = %v, %v; Touch said %v", d, ok, got)
		}
	}
	if q.Len() != 1 {
		t.Fatalf("one id touched many times: Len = %d", q.Len())
	}
}

// Boundaries are multiples of the interval in wall time, whatever the first time seen.
func TestExpiryQueueBoundariesAreAbsolute(t *testing.T) {
	a, b := NewExpiryQueue(time.Second), NewExpiryQueue(time.Second)
	a.Touch(9, 0, at(0))   // origin on a boundary
	b.Touch(9, 0, at(730)) // origin between boundaries
	for _, now := range []int64{1, 999, 1000, 1730, 5001} {
		da, db := a.Touch(1, 2500*time.Millisecond, at(now)), b.Touch(1, 2500*time.Millisecond, at(now))
		if !da.Equal(db) {
			t.Fatalf("at %d: %v vs %v", now, da.Sub(t0), db.Sub(t0))
		}
	}
}

func TestExpiryQueueTouchMovesBuckets(t *testing.T) {
	q := NewExpiryQueue(time.Second)
	q.Touch(1, 3*time.Second, at(0)) // bucket 4000
	q.Touch(2, 3*time.Second, at(0)) // bucket 4000
	q.Touch(3, 5*time.Second, at(0)) // bucket 6000
	if n, _ := q.NextExpiration(); !n.Equal(at(4000)) {
		t.Fatalf("next = %v", n.Sub(t0))
	}
	// Session 1 pings: it moves to a later bucket and leaves the old one.
	if d := q.Touch(1, 3*time.Second, at(2500)); !d.Equal(at(6000)) {
		t.Fatalf("moved to %v", d.Sub(t0))
	}
	if got := q.Expired(at(4000)); !reflect.DeepEqual(got, []int64{2}) {
		t.Fatalf("expired at 4000: %v, want [2]", got)
	}
	// Session 2 went with its bucket.
	if _, ok := q.Deadline(2); ok || q.Len() != 2 {
		t.Fatalf("expired id still tracked; Len %d", q.Len())
	}
	// Touching within the same bucket changes nothing.
	if d := q.Touch(3, 5*time.Second, at(200)); !d.Equal(at(6000)) {
		t.Fatalf("same bucket: %v", d.Sub(t0))
	}
	// A shorter timeout moves a session to an earlier bucket.
	if d := q.Touch(3, time.Second, at(2100)); !d.Equal(at(4000)) {
		t.Fatalf("earlier bucket: %v", d.Sub(t0))
	}
	if n, _ := q.NextExpiration(); !n.Equal(at(4000)) {
		t.Fatalf("next after moving earlier = %v", n.Sub(t0))
	}
	if got := q.Expired(at(10000)); !reflect.DeepEqual(got, []int64{1, 3}) {
		t.Fatalf("expired = %v", got)
	}
	if _, ok := q.NextExpiration(); ok || q.Len() != 0 || len(q.buckets) != 0 {
		t.Fatalf("queue not empty: %d ids, %d buckets", q.Len(), len(q.buckets))
	}
}

func TestExpiryQueueExpired(t *testing.T) {
	q := NewExpiryQueue(time.Second)
	if q.Expired(at(1e9)) != nil {
		t.Fatal("empty queue expired something")
	}
	if _, ok := q.NextExpiration(); ok {
		t.Fatal("empty queue has a next expiration")
	}
	// Ids in several buckets, inserted out of order.
	for _, c := range []struct {
		id      int64
		timeout time.Duration
	}{{50, 3 * time.Second}, {-7, time.Second}, {9, 3 * time.Second}, {3, 2 * time.Second}, {1 << 60, time.Second}, {4, 9 * time.Second}} {
		q.Touch(c.id, c.timeout, at(500))
	}
	// Buckets: 2000 {-7, 1<<60}, 3000 {3}, 4000 {9, 50}, 10000 {4}.
	if got := q.Expired(at(1999)); got != nil {
		t.Fatalf("expired before the first bucket: %v", got)
	}
	if got := q.Expired(at(2000)); !reflect.DeepEqual(got, []int64{-7, 1 << 60}) {
		t.Fatalf("at the bucket time: %v", got)
	}
	if got := q.Expired(at(2000)); got != nil {
		t.Fatalf("twice: %v", got)
	}
	// A late call drains every due bucket, sorted by id across buckets.
	if got := q.Expired(at(4500)); !reflect.DeepEqual(got, []int64{3, 9, 50}) {
		t.Fatalf("late: %v", got)
	}
	if n, ok := q.NextExpiration(); !ok || !n.Equal(at(10000)) {
		t.Fatalf("next = %v, %v", n.Sub(t0), ok)
	}
	if !q.Remove(4) || q.Remove(4) || q.Len() != 0 {
		t.Fatal("Remove")
	}
	if got := q.Expired(at(1e6)); got != nil {
		t.Fatalf("removed id expired: %v", got)
	}
}

func TestExpiryQueueClear(t *testing.T) {
	q := NewExpiryQueue(time.Second)
	q.Touch(1, time.Second, at(0))
	q.Clear()
	if q.Len() != 0 || q.Expired(at(1e6)) != nil {
		t.Fatal("Clear left ids")
	}
	if d := q.Touch(1, time.Second, at(10)); !d.Equal(at(2000)) {
		t.Fatalf("after Clear: %v", d.Sub(t0))
	}
}

func TestExpiryQueueBuckets(t *testing.T) {
	q := NewExpiryQueue(time.Second)
	if got := q.Buckets(); len(got) != 0 {
		t.Fatalf("empty queue: %v", got)
	}
	q.Touch(9, 3*time.Second, at(0))
	q.Touch(2, time.Second, at(100))
	q.Touch(5, 3*time.Second, at(500))
	q.Touch(7, time.Second, at(0))
	got := q.Buckets()
	want := []Bucket{{at(2000), []int64{2, 7}}, {at(4000), []int64{5, 9}}}
	if len(got) != len(want) {
		t.Fatalf("buckets: %v", got)
	}
	for i := range want {
		if !got[i].At.Equal(want[i].At) || !slices.Equal(got[i].IDs, want[i].IDs) {
			t.Fatalf("bucket %d: %v, want %v", i, got[i], want[i])
		}
	}
}

func TestManualClock(t *testing.T) {
	c := NewManualClock(t0)
	past := c.At(t0)
	select {
	case <-past:
	default:
		t.Fatal("At(now) did not fire at once")
	}
	a, b := c.At(at(1000)), c.At(at(3000))
	if c.Waiters() != 2 {
		t.Fatalf("waiters = %d", c.Waiters())
	}
	c.Advance(999 * time.Millisecond)
	select {
	case <-a:
		t.Fatal("fired early")
	default:
	}
	c.Advance(time.Millisecond)
	if got := <-a; !got.Equal(at(1000)) || c.Waiters() != 1 {
		t.Fatalf("fired with %v; %d waiters", got.Sub(t0), c.Waiters())
	}
	c.Set(at(5000))
	<-b
	if !c.Now().Equal(at(5000)) || c.Waiters() != 0 {
		t.Fatal("Set")
	}
}

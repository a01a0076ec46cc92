package session

import (
	"slices"
	"time"
)

// ExpiryQueue keeps session deadlines in buckets of one expiration interval (the tick
// time), as ZooKeeper's ExpiryQueue does: a deadline is rounded up to the next multiple
// of the interval, so a leader with thousands of sessions wakes once per tick, not once
// per session, and touching a session whose deadline stays in the same bucket costs
// nothing.
//
// Bucket boundaries are multiples of the interval in wall-clock time, fixed at the first
// call; after that, times are compared by their monotonic readings (when they carry
// them), so a wall-clock step does not expire or revive sessions.
//
// An ExpiryQueue is not safe for concurrent use; Tracker guards one with a mutex.
type ExpiryQueue struct {
	interval time.Duration
	started  bool
	origin   time.Time     // the first time seen
	phase    time.Duration // origin's offset past a multiple of interval
	bucketOf map[int64]int64
	buckets  map[int64]map[int64]struct{} // bucket number -> ids
}

// NewExpiryQueue returns an empty queue with the given expiration interval, which must
// be positive.
func NewExpiryQueue(interval time.Duration) *ExpiryQueue {
	if interval <= 0 {
		panic("session: expiration interval must be positive")
	}
	return &ExpiryQueue{
		interval: interval,
		bucketOf: map[int64]int64{},
		buckets:  map[int64]map[int64]struct{}{},
	}
}

// Interval is the queue's expiration interval.
func (q *ExpiryQueue) Interval() time.Duration { return q.interval }

// elapsed is t's distance from the interval boundary at or before origin.
func (q *ExpiryQueue) elapsed(t time.Time) time.Duration {
	if !q.started {
		q.started = true
		q.origin = t
		q.phase = time.Duration(t.UnixNano() % int64(q.interval))
		if q.phase < 0 {
			q.phase += q.interval
		}
	}
	return t.Sub(q.origin) + q.phase
}

// floorDiv divides rounding toward minus infinity, so times before the origin (a
// ManualClock set back) still land in the right bucket.
func floorDiv(a, b int64) int64 {
	d := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		d--
	}
	return d
}

// bucketTime is the time at which bucket n expires.
func (q *ExpiryQueue) bucketTime(n int64) time.Time {
	return q.origin.Add(time.Duration(n)*q.interval - q.phase)
}

// Touch sets id's deadline to now+timeout rounded up to the next interval boundary
// (strictly after: a deadline exactly on a boundary goes to the following one, as in
// ZooKeeper) and returns it.
func (q *ExpiryQueue) Touch(id int64, timeout time.Duration, now time.Time) time.Time {
	n := floorDiv(int64(q.elapsed(now)+timeout), int64(q.interval)) + 1
	if prev, ok := q.bucketOf[id]; ok {
		if prev == n {
			return q.bucketTime(n)
		}
		q.leave(id, prev)
	}
	q.bucketOf[id] = n
	b := q.buckets[n]
	if b == nil {
		b = map[int64]struct{}{}
		q.buckets[n] = b
	}
	b[id] = struct{}{}
	return q.bucketTime(n)
}

func (q *ExpiryQueue) leave(id, n int64) {
	b := q.buckets[n]
	delete(b, id)
	if len(b) == 0 {
		delete(q.buckets, n)
	}
}

// Remove forgets id and reports whether it was there.
func (q *ExpiryQueue) Remove(id int64) bool {
	n, ok := q.bucketOf[id]
	if !ok {
		return false
	}
	delete(q.bucketOf, id)
	q.leave(id, n)
	return true
}

// Deadline returns id's deadline, the time of its bucket.
func (q *ExpiryQueue) Deadline(id int64) (time.Time, bool) {
	n, ok := q.bucketOf[id]
	if !ok {
		return time.Time{}, false
	}
	return q.bucketTime(n), true
}

// Len is the number of ids in the queue.
func (q *ExpiryQueue) Len() int { return len(q.bucketOf) }

// Expired removes and returns, sorted, the ids of every bucket whose time is at or
// before now. Unlike ZooKeeper's poll, which hands out one bucket per call, it drains
// all due buckets at once, so a leader that slept late catches up in one step.
func (q *ExpiryQueue) Expired(now time.Time) []int64 {
	if len(q.buckets) == 0 {
		return nil
	}
	// A bucket n is due when its time, n intervals past the boundary, is <= now.
	due := floorDiv(int64(q.elapsed(now)), int64(q.interval))
	var ids []int64
	for n, b := range q.buckets {
		if n > due {
			continue
		}
		for id := range b {
			ids = append(ids, id)
			delete(q.bucketOf, id)
		}
		delete(q.buckets, n)
	}
	slices.Sort(ids)
	return ids
}

// NextExpiration returns the time of the earliest non-empty bucket, or false if the
// queue is empty.
func (q *ExpiryQueue) NextExpiration() (time.Time, bool) {
	first, ok := int64(0), false
	for n := range q.buckets {
		if !ok || n < first {
			first, ok = n, true
		}
	}
	if !ok {
		return time.Time{}, false
	}
	return q.bucketTime(first), true
}

// Clear empties the queue, keeping its bucket boundaries.
func (q *ExpiryQueue) Clear() {
	clear(q.bucketOf)
	clear(q.buckets)
}

// Bucket is the sessions that expire together at At, ids sorted.
type Bucket struct {
	At  time.Time
	IDs []int64
}

// Buckets returns the queue's non-empty buckets, earliest first: what ZooKeeper's dump
// prints of its ExpiryQueue.
func (q *ExpiryQueue) Buckets() []Bucket {
	ns := make([]int64, 0, len(q.buckets))
	for n := range q.buckets {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	out := make([]Bucket, 0, len(ns))
	for _, n := range ns {
		ids := make([]int64, 0, len(q.buckets[n]))
		for id := range q.buckets[n] {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		out = append(out, Bucket{At: q.bucketTime(n), IDs: ids})
	}
	return out
}

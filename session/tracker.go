package session

import (
	"context"
	"sync"
	"time"
)

// Tracker is the leader's session expiry timer: an ExpiryQueue read against a Clock.
// A session is Added when its createSession is applied (and, on gaining leadership, for
// every session in the table); connections and followers' pings Touch it; Run wakes
// when the earliest bucket falls due and hands the expired ids to a callback, which
// proposes closeSession for them. Only the leader runs a Tracker: on gaining leadership
// it calls ResetAll (or Add) with the table's sessions, so every session gets a full
// timeout from the new leader, as in ZooKeeper, and on losing it, it cancels Run's
// context.
//
// Touch never starts tracking an id: like ZooKeeper's SessionTrackerImpl.touchSession,
// it refreshes only a session the Tracker holds. A session that was Removed (its
// closeSession was applied) or reported expired stays gone, however late a follower's
// ping or a connection's last frame mentions it; otherwise the leader would expire
// every closed session again a timeout later, one useless closeSession entry each.
//
// A Tracker is safe for concurrent use.
type Tracker struct {
	clock Clock

	mu    sync.Mutex
	q     *ExpiryQueue
	armed time.Time // the bucket time Run sleeps until; zero when it sleeps with no deadline or not at all
	wake  chan struct{}
}

// NewTracker returns a Tracker with deadline buckets of interval (the tick time).
func NewTracker(clock Clock, interval time.Duration) *Tracker {
	return &Tracker{clock: clock, q: NewExpiryQueue(interval), wake: make(chan struct{}, 1)}
}

// Add tracks id (a new session, or one the leader found in the table) with a deadline
// of timeout from now, and returns the deadline.
func (t *Tracker) Add(id int64, timeout time.Duration) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.q.Touch(id, timeout, t.clock.Now())
	t.kick(d)
	return d
}

// Touch gives id a fresh deadline of timeout from now if the Tracker holds it, and
// reports whether it did; an id it does not hold is ignored.
func (t *Tracker) Touch(id int64, timeout time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.q.Deadline(id); !ok {
		return false
	}
	t.kick(t.q.Touch(id, timeout, t.clock.Now()))
	return true
}

// kick wakes Run if deadline is earlier than the time it sleeps until. The caller holds mu.
func (t *Tracker) kick(deadline time.Time) {
	if t.armed.IsZero() || deadline.Before(t.armed) {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

// Remove stops tracking id (its session was closed).
func (t *Tracker) Remove(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.q.Remove(id)
}

// ResetAll replaces every deadline: the tracker then holds exactly sessions, each
// with a full timeout from now. A new leader calls it with Table.All().
func (t *Tracker) ResetAll(sessions []Session) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.q.Clear()
	now := t.clock.Now()
	for _, s := range sessions {
		t.kick(t.q.Touch(s.ID, s.TimeoutDuration(), now))
	}
}

// Deadline returns id's current deadline.
func (t *Tracker) Deadline(id int64) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.q.Deadline(id)
}

// Buckets returns the tracked sessions grouped by deadline, earliest first.
func (t *Tracker) Buckets() []Bucket {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.q.Buckets()
}

// Len is the number of tracked sessions.
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.q.Len()
}

// Run sleeps until the earliest deadline, then calls expire with the sorted ids whose
// deadline has passed, and repeats until ctx is done; it returns ctx's error. expire
// runs on Run's goroutine without the Tracker's lock held, so it may call Touch or
// Remove; it should not block for long, since no other expiry happens meanwhile.
func (t *Tracker) Run(ctx context.Context, expire func(ids []int64)) error {
	for {
		if ids := t.expired(); len(ids) > 0 {
			expire(ids)
			continue
		}
		fire := t.arm()
		select {
		case <-ctx.Done():
			t.disarm()
			return ctx.Err()
		case <-fire:
		case <-t.wake:
		}
		t.disarm()
	}
}

// expired removes and returns the ids that are due now.
func (t *Tracker) expired() []int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.q.Expired(t.clock.Now())
}

// arm records the time Run will sleep until and returns a channel that fires then, or
// nil (never fires) if there is nothing to wait for. A Touch after arm that makes an
// earlier deadline wakes Run through t.wake.
func (t *Tracker) arm() <-chan time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	next, ok := t.q.NextExpiration()
	if !ok {
		t.armed = time.Time{}
		return nil
	}
	t.armed = next
	return t.clock.At(next)
}

func (t *Tracker) disarm() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.armed = time.Time{}
}

package session

import (
	"sync"
	"time"
)

// Clock is where the Tracker reads time. The leader uses SystemClock; tests use a
// ManualClock and advance it, so no test sleeps for a session timeout.
type Clock interface {
	Now() time.Time
	// At returns a channel that receives once the clock has reached t (at once if it
	// already has). t is absolute, so a caller that computes it from Now and then
	// waits cannot miss an Advance that happens in between.
	At(t time.Time) <-chan time.Time
}

// SystemClock is the real clock. Times carry Go's monotonic reading, so a wall-clock
// step does not move session deadlines.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// At fires a timer at t.
func (SystemClock) At(t time.Time) <-chan time.Time { return time.NewTimer(time.Until(t)).C }

// ManualClock is a Clock that moves only when told to. It is safe for concurrent use.
type ManualClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []manualWaiter
}

type manualWaiter struct {
	at time.Time
	ch chan time.Time
}

// NewManualClock returns a clock stopped at start.
func NewManualClock(start time.Time) *ManualClock { return &ManualClock{now: start} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// At returns a channel that receives when Advance or Set reaches t.
func (c *ManualClock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if !t.After(c.now) {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, manualWaiter{at: t, ch: ch})
	return ch
}

// Advance moves the clock forward by d and fires every waiter it reaches.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set(c.now.Add(d))
}

// Set moves the clock to t (which may be earlier, to model a clock that steps back).
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set(t)
}

func (c *ManualClock) set(t time.Time) {
	c.now = t
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(t) {
			kept = append(kept, w)
			continue
		}
		w.ch <- t
	}
	clear(c.waiters[len(kept):])
	c.waiters = kept
}

// Waiters is the number of pending At channels; tests use it to know that a goroutine
// has gone to sleep on the clock.
func (c *ManualClock) Waiters() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

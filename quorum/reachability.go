package quorum

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// reachability turns the outcome of every AppendEntries this server sends (a leader
// heartbeats each member many times a second) into a log line per change: a peer
// becoming unreachable and reachable again, each logged once at WARN, and while it stays
// unreachable a count of the failed attempts at most once per interval. A server that
// stops leading stops sending, so its last word on a peer stands until it leads again.
type reachability struct {
	log   *slog.Logger
	now   func() time.Time
	every time.Duration

	nDown atomic.Int32 // len(down), so the many successful calls skip the lock
	mu    sync.Mutex
	down  map[raft.ServerID]*outage
	// back, if set, is called (outside the lock) with a peer that answered again after
	// an outage: the node's nudge of raft's replication to it (Node.peerBack).
	back atomic.Pointer[func(raft.ServerID)]
}

type outage struct {
	since, reported time.Time
	failures        int
	// last is the latest failure; refusedSince starts the unbroken run of refusals up to
	// it (zero: the latest failure was no refusal). A refused connection says the
	// peer's process is gone; a timeout may be the network.
	last, refusedSince time.Time
}

func newReachability(log *slog.Logger, now func() time.Time, every time.Duration) *reachability {
	return &reachability{log: log, now: now, every: every, down: map[raft.ServerID]*outage{}}
}

// failed records a failed attempt to reach peer id, and reports whether it starts an
// outage.
func (r *reachability) failed(id raft.ServerID, err error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	o := r.down[id]
	refused := connRefused(err)
	if o == nil {
		o = &outage{since: now, reported: now, failures: 1, last: now}
		if refused {
			o.refusedSince = now
		}
		r.down[id] = o
		r.nDown.Add(1)
		r.log.Warn("raft peer unreachable", "peer", string(id), "error", err)
		return true
	}
	o.failures++
	o.last = now
	switch {
	case !refused:
		o.refusedSince = time.Time{}
	case o.refusedSince.IsZero():
		o.refusedSince = now
	}
	if now.Sub(o.reported) >= r.every {
		o.reported = now
		r.log.Warn("raft peer still unreachable", "peer", string(id), "failed_attempts", o.failures,
			"down_for", now.Sub(o.since).Round(time.Second), "error", err)
	}
	return false
}

// outageSince is what this server has seen of peer id's current outage since from:
// how long its failures have spanned (from the first to the latest, so a peer back but
// not yet tried again is not judged by the wait), and how long the unbroken run of
// refusals that ends it has. Zeros when the peer answers. From keeps what this server
// saw when it led before out of it.
func (r *reachability) outageSince(id raft.ServerID, from time.Time) (down, refused time.Duration) {
	if r.nDown.Load() == 0 {
		return 0, 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.down[id]
	if o == nil {
		return 0, 0
	}
	span := func(start time.Time) time.Duration {
		if start.IsZero() {
			return 0
		}
		return max(o.last.Sub(later(start, from)), 0)
	}
	return span(o.since), span(o.refusedSince)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// answered records that peer id answered, and reports whether that ends an outage.
func (r *reachability) answered(id raft.ServerID) bool {
	if r.nDown.Load() == 0 {
		return false
	}
	r.mu.Lock()
	o := r.down[id]
	if o == nil {
		r.mu.Unlock()
		return false
	}
	delete(r.down, id)
	r.nDown.Add(-1)
	r.log.Warn("raft peer reachable again", "peer", string(id), "failed_attempts", o.failures,
		"down_for", r.now().Sub(o.since).Round(time.Millisecond))
	r.mu.Unlock()
	if back := r.back.Load(); back != nil {
		(*back)(id)
	}
	return true
}

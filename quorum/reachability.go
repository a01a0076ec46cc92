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
	if o == nil {
		r.down[id] = &outage{since: now, reported: now, failures: 1}
		r.nDown.Add(1)
		r.log.Warn("raft peer unreachable", "peer", string(id), "error", err)
		return true
	}
	o.failures++
	if now.Sub(o.reported) >= r.every {
		o.reported = now
		r.log.Warn("raft peer still unreachable", "peer", string(id), "failed_attempts", o.failures,
			"down_for", now.Sub(o.since).Round(time.Second), "error", err)
	}
	return false
}

// downFor is how long peer id has been unreachable (0: it answers, or nothing was
// sent to it since reset).
func (r *reachability) downFor(id raft.ServerID) time.Duration {
	if r.nDown.Load() == 0 {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if o := r.down[id]; o != nil {
		return r.now().Sub(o.since)
	}
	return 0
}

// reset forgets the outages recorded: a server that starts leading again judges each
// peer by what it sends from then on, not by what it saw when it last led.
func (r *reachability) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.down)
	r.nDown.Store(0)
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

package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// stats are the server-wide counters srvr, stat and mntr report; srst resets them.
type stats struct {
	received, sent       atomic.Int64
	authFailed, rejected atomic.Int64
	closed               closedCounts // connections closed, by reason

	mu                    sync.Mutex
	count                 int64
	total, minLat, maxLat time.Duration
}

func (s *stats) observe(start time.Time) time.Duration {
	d := time.Since(start)
	s.mu.Lock()
	if s.count == 0 || d < s.minLat {
		s.minLat = d
	}
	if d > s.maxLat {
		s.maxLat = d
	}
	s.count++
	s.total += d
	s.mu.Unlock()
	return d
}

// slowRequest is how long a request may take before it is logged. At most one line a
// second is written, saying how many more were slow meanwhile, so an overload does not
// flood the log.
const slowRequest = time.Second

type slowLog struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// observe records a request's latency and logs it if it was slow.
func (s *Server) observe(p *pending) {
	d := s.stats.observe(p.start)
	if d < slowRequest {
		return
	}
	s.slow.mu.Lock()
	if time.Since(s.slow.last) < time.Second {
		s.slow.suppressed++
		s.slow.mu.Unlock()
		return
	}
	more := s.slow.suppressed
	s.slow.last, s.slow.suppressed = time.Now(), 0
	s.slow.mu.Unlock()
	s.log.Warn("slow request", "op", p.op, "took", d.Round(time.Millisecond), "moreSlowSinceLastLine", more)
}

// latency returns min, avg and max request latency in ms, as ZooKeeper prints them.
func (s *stats) latency() (min int64, avg float64, max int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.count == 0 {
		return 0, 0, 0
	}
	return s.minLat.Milliseconds(), float64(s.total.Microseconds()) / 1000 / float64(s.count), s.maxLat.Milliseconds()
}

func (s *stats) reset() {
	s.received.Store(0)
	s.sent.Store(0)
	s.mu.Lock()
	s.count, s.total, s.minLat, s.maxLat = 0, 0, 0, 0
	s.mu.Unlock()
}

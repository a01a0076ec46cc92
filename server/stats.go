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

	mu                    sync.Mutex
	count                 int64
	total, minLat, maxLat time.Duration
}

func (s *stats) observe(start time.Time) {
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

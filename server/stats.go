package server

import (
	"math/big"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// stats are the server-wide counters srvr, stat and mntr report; srst resets them.
type stats struct {
	received, sent       atomic.Int64
	authFailed, rejected atomic.Int64
	fsyncExceeded        atomic.Int64 // fdatasyncs of the log slower than fsync.warningthresholdms; srst keeps it, as ZooKeeper's
	closed               closedCounts // connections closed, by reason
	responses            responseSizes

	mu                    sync.Mutex
	count                 int64
	total, minLat, maxLat int64 // ms, as ticksBetween counts them
}

// observe records a request that arrived at start, in the server's latency and in split
// (ZooKeeper's readlatency or updatelatency: under the lock taken anyway, so requests
// contend for it once), and returns how long it took.
func (s *stats) observe(start time.Time, split *summary) time.Duration {
	now := time.Now()
	ms := ticksBetween(start, now)
	s.mu.Lock()
	if s.count == 0 || ms < s.minLat {
		s.minLat = ms
	}
	s.maxLat = max(s.maxLat, ms)
	s.count++
	s.total += ms
	split.record(ms)
	s.mu.Unlock()
	return now.Sub(start)
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

// observe records a request's latency and logs it if it was slow. Requests ZooKeeper
// answers outside its request pipeline (addauth, SASL, an op it does not take, a write
// its ReadOnlyRequestProcessor refuses) are not counted, as ZooKeeper's are not. A
// request is an update if ZooKeeper gives it a transaction header: a write (a failed one
// too) that its throttle let through.
func (s *Server) observe(p *pending) {
	if p.invalid || p.op == jute.OpAuth || p.err == jute.ErrNotReadOnly {
		return
	}
	split := &s.metrics.readLatency
	if jute.IsWrite(p.op) && p.err != jute.ErrThrottled {
		split = &s.metrics.updateLatency
	}
	d := s.stats.observe(p.start, split)
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

// latency returns min, avg and max request latency in ms, as ZooKeeper prints them:
// whole ms, and the average rounded half up to four decimals (AvgMinMaxCounter), so it
// never exceeds the maximum.
func (s *stats) latency() (min int64, avg float64, max int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.count == 0 {
		return 0, 0, 0
	}
	return s.minLat, roundHalfUp4(float64(s.total) / float64(s.count)), s.maxLat
}

// roundHalfUp4 rounds a non-negative f to four decimals, half up, from its exact binary
// value (Java's new BigDecimal(f).setScale(4, HALF_UP).doubleValue()).
func roundHalfUp4(f float64) float64 {
	r := new(big.Rat).SetFloat64(f)
	if r == nil {
		return f
	}
	r.Mul(r, big.NewRat(10000, 1))
	r.Add(r, big.NewRat(1, 2))
	n := new(big.Int).Quo(r.Num(), r.Denom()) // floor, as both are positive
	return float64(n.Int64()) / 10000
}

// responseSizes are the sizes of the replies and notifications sent, without their
// length prefix (ZooKeeper's client_response BufferStats). Each holds the size plus one,
// so the zero value means none yet, which ZooKeeper prints as -1.
type responseSizes struct{ last, min, max atomic.Int64 }

func (r *responseSizes) record(n int) {
	v := int64(n) + 1
	r.last.Store(v)
	lowerTo(&r.min, v)
	raiseTo(&r.max, v)
}

// lowerTo stores v in a if a holds 0 (none yet) or more than v.
func lowerTo(a *atomic.Int64, v int64) {
	for cur := a.Load(); cur == 0 || v < cur; cur = a.Load() {
		if a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// raiseTo stores v in a if a holds less than v.
func raiseTo(a *atomic.Int64, v int64) {
	for cur := a.Load(); v > cur; cur = a.Load() {
		if a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// sizes returns the last, smallest and largest response size, -1 for none.
func (r *responseSizes) sizes() (last, min, max int64) {
	return r.last.Load() - 1, r.min.Load() - 1, r.max.Load() - 1
}

func (r *responseSizes) reset() {
	r.last.Store(0)
	r.min.Store(0)
	r.max.Store(0)
}

// reset is srst's part of the server's counters: what ZooKeeper's ServerStats.reset
// clears, with its metrics provider's counters (ServerMetrics.resetAll), of which
// connection_rejected is one. Not the auth failure count (ServerStats keeps it apart)
// nor the closed-connection counts (zkraft's own Prometheus counters).
func (s *stats) reset() {
	s.received.Store(0)
	s.sent.Store(0)
	s.rejected.Store(0)
	s.responses.reset()
	s.mu.Lock()
	s.count, s.total, s.minLat, s.maxLat = 0, 0, 0, 0
	s.mu.Unlock()
}

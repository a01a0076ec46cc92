package server

import (
	"math"
	"sync"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// connStats are one connection's figures that cons and the AdminServer's connections
// print, kept as ZooKeeper's ServerCnxn keeps them: updated when a request is answered
// (ZooKeeper's FinalRequestProcessor), so not for addauth, SASL or an op it does not
// know, which ZooKeeper answers before that stage. Latencies are whole milliseconds.
type connStats struct {
	mu       sync.Mutex
	lastOp   string
	lastCxid int64 // -1 until a request with a non-negative xid (pings have -2)
	lastZxid int64
	lastResp int64 // when the last answer went out, ms on a monotonic clock
	lastLat  int64
	minLat   int64
	maxLat   int64
	total    int64
	count    int64
}

func newConnStats() *connStats {
	return &connStats{lastOp: "NA", lastCxid: -1, lastZxid: -1, minLat: math.MaxInt64}
}

// reset clears the figures as ZooKeeper's ServerCnxn.resetStats does (crst).
func (s *connStats) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastOp, s.lastCxid, s.lastZxid, s.lastResp, s.lastLat = "NA", -1, -1, 0, 0
	s.minLat, s.maxLat, s.total, s.count = math.MaxInt64, 0, 0, 0
}

// resetConnStats is crst: every connection's packet counts and figures start again.
func (s *Server) resetConnStats() {
	for _, c := range s.connList() {
		c.recv.Store(0)
		c.sent.Store(0)
		c.stats.reset()
	}
}

// resetStats is srst: the server's counters and latencies, and a leader's proposal
// sizes, as ZooKeeper's leader resets its proposal stats with its server stats.
func (s *Server) resetStats() {
	s.stats.reset()
	s.metrics.reset()
	s.throttle.reset()
	s.connThrottle.reset()
	s.large.rejected.Store(0)
	s.ensemble.reset()
	s.node.ResetProposalSizes()
}

// monotonicStart anchors lresp: ZooKeeper prints its monotonic clock in ms, whose origin
// means nothing either.
var monotonicStart = time.Now()

// ticksBetween is a request's latency as ZooKeeper measures it: the difference of two
// readings of a millisecond clock, so a request that crosses a tick counts one ms and
// the average over many is the true one.
func ticksBetween(start, end time.Time) int64 {
	return end.Sub(monotonicStart).Milliseconds() - start.Sub(monotonicStart).Milliseconds()
}

// lastOp is the name cons shows for a request answered with code, and false for a
// request ZooKeeper answers before its FinalRequestProcessor (addauth, SASL, an unknown
// op, a write refused by a read-only server). A write other than multi that failed shows
// NA: ZooKeeper turned it into an error transaction, which FinalRequestProcessor names
// nothing.
func lastOp(op int32, code jute.Code) (string, bool) {
	info, _ := jute.Op(op)
	name, ok := info.Short, info.Short != ""
	if code == jute.ErrNotReadOnly {
		return "", false
	}
	if ok && code != jute.OK && jute.IsWrite(op) && op != jute.OpMulti {
		name = "NA"
	}
	return name, ok
}

// answered records the answer to a request that arrived at start.
func (s *connStats) answered(op, xid int32, code jute.Code, zxid int64, start time.Time) {
	name, ok := lastOp(op, code)
	if !ok {
		return
	}
	now := time.Now()
	lat := ticksBetween(start, now)
	s.mu.Lock()
	defer s.mu.Unlock()
	if xid >= 0 {
		s.lastCxid = int64(xid)
	}
	s.lastZxid, s.lastOp = zxid, name
	s.lastResp, s.lastLat = now.Sub(monotonicStart).Milliseconds(), lat
	s.minLat, s.maxLat = min(s.minLat, lat), max(s.maxLat, lat)
	s.count++
	s.total += lat
}

// latencies are min, avg and max as ZooKeeper prints them: 0 before any answer, the
// average in whole ms.
func (s *connStats) latencies() (minLat, avgLat, maxLat int64) {
	if s.count == 0 {
		return 0, 0, s.maxLat
	}
	return s.minLat, s.total / s.count, s.maxLat
}

// connFigures are a connection's figures at one moment, as cons and the AdminServer's
// connections show them (ServerCnxn.getConnectionInfo).
type connFigures struct {
	lastOp                 string
	lastCxid               int64 // -1 until a request with a non-negative xid
	lastZxid               int64
	lastResp, lastLat      int64
	minLat, avgLat, maxLat int64
}

func (s *connStats) figures() connFigures {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := connFigures{lastOp: s.lastOp, lastCxid: s.lastCxid, lastZxid: s.lastZxid, lastResp: s.lastResp, lastLat: s.lastLat}
	f.minLat, f.avgLat, f.maxLat = s.latencies()
	return f
}

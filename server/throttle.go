package server

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// ThrottleConfig is ZooKeeper's request throttle (RequestThrottler, 3.6+), read from
// the same system properties. Off by default, as in ZooKeeper.
type ThrottleConfig struct {
	// MaxRequests (zookeeper.request_throttle_max_requests): while this many requests
	// are in process server-wide, a connection's next request stalls in StallTime
	// steps until one finishes. 0: no limit.
	MaxRequests int
	// StallTime (zookeeper.request_throttle_stall_time, 100 ms): one stall step.
	StallTime time.Duration
	// DropStale (zookeeper.request_throttle_drop_stale, true): a request found stale
	// while it stalls is dropped and its connection closed, so no later request of the
	// connection runs without it.
	DropStale bool
	// StaleConnectionCheck (zookeeper.request_stale_connection_check, true): a request
	// whose connection has closed is stale. StaleLatencyCheck
	// (zookeeper.request_stale_latency_check, false): so is one older than its
	// session's timeout.
	StaleConnectionCheck bool
	StaleLatencyCheck    bool
	// ThrottledOpWaitTime (zookeeper.throttled_op_wait_time): a request that waited
	// longer than this between arriving and being admitted is not run but answered with
	// ThrottledOp (-127), in its place in the connection's order, so the client backs
	// off. Pings and session creation and closing are never answered so. 0: never.
	ThrottledOpWaitTime time.Duration
}

// DefaultThrottle is ZooKeeper 3.8's: nothing throttled.
func DefaultThrottle() ThrottleConfig {
	return ThrottleConfig{StallTime: 100 * time.Millisecond, DropStale: true, StaleConnectionCheck: true}
}

// on reports whether requests are counted at all.
func (t *ThrottleConfig) on() bool { return t.MaxRequests > 0 || t.ThrottledOpWaitTime > 0 }

// throttle counts the requests in process server-wide (admitted by a connection's
// processor and not yet answered) and stalls admission at MaxRequests.
type throttle struct {
	cfg       ThrottleConfig
	inProcess atomic.Int64

	mu   sync.Mutex
	wake chan struct{} // closed, and replaced, when a request finishes

	// mntr's figures, named as ZooKeeper's ServerMetrics.
	waits, throttled, stale, staleDropped atomic.Int64
}

func newThrottle(cfg ThrottleConfig) *throttle {
	return &throttle{cfg: cfg, wake: make(chan struct{})}
}

// admission is a connection's share of the throttle: how many of its requests are
// counted in process, given back at once when the connection closes.
type admission struct {
	mu       sync.Mutex
	admitted int64
	settled  bool // the connection closed: nothing more is counted
}

// admit lets p into processing, or reports false when p was dropped as stale (the
// caller closes the connection). A request that waited too long gets ThrottledOp as
// its answer instead of running.
func (c *conn) admit(p *pending) bool {
	t := c.srv.throttle
	if !t.cfg.on() || p.invalid {
		return true
	}
	if t.cfg.MaxRequests > 0 {
		for t.inProcess.Load() >= int64(t.cfg.MaxRequests) {
			if t.cfg.DropStale && c.stale(p) {
				t.staleDropped.Add(1)
				c.srv.log.Warn("closing connection: stale request dropped by the request throttle", "client", c.nc.RemoteAddr().String(), "session", fmt.Sprintf("0x%x", c.sessionID()))
				return false
			}
			t.waits.Add(1)
			t.mu.Lock()
			wake := t.wake
			t.mu.Unlock()
			timer := time.NewTimer(t.cfg.StallTime)
			select {
			case <-wake:
			case <-timer.C:
			case <-c.done:
			}
			timer.Stop()
		}
	}
	if c.stale(p) {
		t.stale.Add(1)
	}
	if w := t.cfg.ThrottledOpWaitTime; w > 0 && throttlable(p.op) && time.Since(p.start) > w && p.err == jute.OK {
		t.throttled.Add(1)
		p.err = jute.ErrThrottled
	}
	c.adm.mu.Lock()
	defer c.adm.mu.Unlock()
	if c.adm.settled {
		return false
	}
	c.adm.admitted++
	t.inProcess.Add(1)
	p.admitted = true
	return true
}

// finish gives back p's place once it is answered.
func (c *conn) finish(p *pending) {
	if !p.admitted {
		return
	}
	p.admitted = false
	c.adm.mu.Lock()
	if !c.adm.settled {
		c.adm.admitted--
		c.srv.throttle.release(1)
	}
	c.adm.mu.Unlock()
}

// settleAdmissions gives back every place the closed connection still holds.
func (c *conn) settleAdmissions() {
	c.adm.mu.Lock()
	c.adm.settled = true
	n := c.adm.admitted
	c.adm.admitted = 0
	c.adm.mu.Unlock()
	if n > 0 {
		c.srv.throttle.release(n)
	}
}

// reset zeroes the figures (srst: ZooKeeper's ServerStats.reset resets every
// ServerMetrics counter).
func (t *throttle) reset() {
	t.waits.Store(0)
	t.throttled.Store(0)
	t.stale.Store(0)
	t.staleDropped.Store(0)
}

func (t *throttle) release(n int64) {
	t.inProcess.Add(-n)
	if t.cfg.MaxRequests == 0 {
		return
	}
	t.mu.Lock()
	close(t.wake)
	t.wake = make(chan struct{})
	t.mu.Unlock()
}

// stale is ZooKeeper's Request.isStale: closeSession never is.
func (c *conn) stale(p *pending) bool {
	if p.op == jute.OpCloseSession {
		return false
	}
	t := &c.srv.throttle.cfg
	if t.StaleConnectionCheck {
		select {
		case <-c.done:
			return true
		default:
		}
	}
	return t.StaleLatencyCheck && time.Since(p.start) > time.Duration(c.timeout)*time.Millisecond
}

// throttlable is ZooKeeper's Request.isThrottlable: not a ping, nor session creation or
// closing. ZooKeeper handles addauth and sasl on the connection, outside the throttle,
// so they are never throttled either.
func throttlable(op int32) bool {
	switch op {
	case jute.OpPing, jute.OpCloseSession, jute.OpCreateSession, jute.OpAuth, jute.OpSASL:
		return false
	}
	return true
}

package server

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/zkraft/zkraft/jute"
)

// LargeRequestConfig is ZooKeeper's bound on the bytes of large requests in process
// (3.6+, ZooKeeperServer's checkRequestSize), read from the same system properties.
type LargeRequestConfig struct {
	// Threshold (zookeeper.largeRequestThreshold): a request frame longer than this many
	// bytes is large. -1, the default: none is, and nothing is counted.
	Threshold int
	// MaxBytes (zookeeper.largeRequestMaxBytes, 100 MiB): the bytes that large requests
	// read and not yet answered may hold together. A request that would take them past
	// it closes its connection.
	MaxBytes int
}

// DefaultLargeRequests is ZooKeeper 3.8's: off.
func DefaultLargeRequests() LargeRequestConfig {
	return LargeRequestConfig{Threshold: -1, MaxBytes: 100 << 20}
}

// largeRequests counts the bytes large requests hold server-wide.
type largeRequests struct {
	cfg      LargeRequestConfig
	held     atomic.Int64
	rejected atomic.Int64 // mntr's large_requests_rejected
}

func (l *largeRequests) isLarge(n int) bool { return l.cfg.Threshold > 0 && n > l.cfg.Threshold }

// fits reports whether a frame of n bytes may be read now without being held (a
// ConnectRequest, addauth, SASL: ZooKeeper checks them as they arrive but does not hold
// them); false counts a rejection.
func (l *largeRequests) fits(n int) bool {
	if !l.isLarge(n) || l.held.Load()+int64(n) <= int64(l.cfg.MaxBytes) {
		return true
	}
	l.rejected.Add(1)
	return false
}

// take holds n bytes for a large request until it is answered; false (a rejection,
// counted) when that would pass MaxBytes.
func (l *largeRequests) take(n int) bool {
	if l.held.Add(int64(n)) > int64(l.cfg.MaxBytes) {
		l.held.Add(-int64(n))
		l.rejected.Add(1)
		return false
	}
	return true
}

// largeHeld is what a connection's large requests hold, given back as each is answered
// and all at once when the connection closes (a request queued behind the close is
// never answered).
type largeHeld struct {
	mu     sync.Mutex
	bytes  int64
	closed bool
}

// admitLarge applies the large request bound to p, read from a frame of n bytes: false
// closes the connection. addauth and SASL are checked but not held, as ZooKeeper runs
// them on the connection, outside its request pipeline.
func (c *conn) admitLarge(p *pending, n int) bool {
	if !c.srv.large.isLarge(n) {
		return true // every frame, with the bound off (the default)
	}
	if p.op == jute.OpAuth || p.op == jute.OpSASL {
		return c.fitsLarge(n)
	}
	return c.holdLarge(p, n)
}

// holdLarge holds the bytes of p's large frame of n bytes; false means the connection is
// to be closed: the bytes held would pass largeRequestMaxBytes.
func (c *conn) holdLarge(p *pending, n int) bool {
	l := &c.srv.large
	c.large.mu.Lock()
	defer c.large.mu.Unlock()
	if c.large.closed {
		return true // read after the close: nothing of it runs
	}
	if !l.take(n) {
		c.srv.log.Warn("closing connection: rejecting large request", "client", c.nc.RemoteAddr().String(),
			"session", fmt.Sprintf("0x%x", c.sessionID()), "bytes", n, "largeRequestMaxBytes", l.cfg.MaxBytes)
		return false
	}
	c.large.bytes += int64(n)
	p.large = int32(n)
	return true
}

// fitsLarge is fits for a frame the connection does not hold (see largeRequests.fits),
// logged as holdLarge's refusal.
func (c *conn) fitsLarge(n int) bool {
	if c.srv.large.fits(n) {
		return true
	}
	c.srv.log.Warn("closing connection: rejecting large request", "client", c.nc.RemoteAddr().String(),
		"session", fmt.Sprintf("0x%x", c.sessionID()), "bytes", n, "largeRequestMaxBytes", c.srv.large.cfg.MaxBytes)
	return false
}

// releaseLarge gives back p's bytes once it is answered.
func (c *conn) releaseLarge(p *pending) {
	if p.large == 0 {
		return
	}
	n := int64(p.large)
	p.large = 0
	c.large.mu.Lock()
	defer c.large.mu.Unlock()
	if c.large.closed {
		return // given back at the close
	}
	c.large.bytes -= n
	c.srv.large.held.Add(-n)
}

// releaseAllLarge gives back everything the closed connection holds.
func (c *conn) releaseAllLarge() {
	c.large.mu.Lock()
	n := c.large.bytes
	c.large.bytes, c.large.closed = 0, true
	c.large.mu.Unlock()
	if n != 0 {
		c.srv.large.held.Add(-n)
	}
}

package session

import (
	"crypto/subtle"
	"time"
)

// Session is one client session as the replicated table holds it.
type Session struct {
	ID       int64
	Password []byte // 16 bytes for sessions zkraft creates (NewPassword)
	Timeout  int32  // negotiated timeout in milliseconds, as on the wire
	// Owner is the id of the cluster member the client is connected to (empty in
	// standalone). A write proposed through another member is refused with
	// SESSIONMOVED, as ZooKeeper's leader refuses it.
	Owner string
	// Conn and Seq are the cursor of the session's client writes: the connection (a
	// number its member chose, unique there) and the running sequence number of the last
	// write applied. A write applies only if it directly follows it (see Table.Advance),
	// so no write of a connection is ever applied after a later one was lost.
	Conn uint64
	Seq  uint64
}

// TimeoutDuration is Timeout as a time.Duration.
func (s Session) TimeoutDuration() time.Duration {
	return time.Duration(s.Timeout) * time.Millisecond
}

// CheckPassword reports whether p is the session's password, in constant time so a
// client cannot learn the password a byte at a time from how fast reconnects fail.
func (s Session) CheckPassword(p []byte) bool {
	return subtle.ConstantTimeCompare(s.Password, p) == 1
}

// NegotiateTimeout clamps a client's requested session timeout (ms) into [min, max]
// the way ZooKeeperServer.processConnectRequest does: min is applied first, then max,
// so max wins if the two are misconfigured.
func NegotiateTimeout(requested, min, max int32) int32 {
	t := requested
	if t < min {
		t = min
	}
	if t > max {
		t = max
	}
	return t
}

// ZooKeeperPassword is the password Apache ZooKeeper gives session id
// (ZooKeeperServer.generatePasswd: java.util.Random seeded with id ^ 0xB3415C00, 16
// bytes of nextBytes). Sessions imported from ZooKeeper get it, so their clients can
// reconnect to zkraft with the password ZooKeeper handed them.
func ZooKeeperPassword(id int64) []byte {
	const (
		multiplier = 0x5DEECE66D
		mask       = 1<<48 - 1
	)
	seed := (uint64(id^0xB3415C00) ^ multiplier) & mask
	p := make([]byte, 16)
	for i := 0; i < len(p); {
		seed = (seed*multiplier + 0xB) & mask
		rnd := int32(seed >> 16) // next(32)
		for n := min(len(p)-i, 4); n > 0; n-- {
			p[i] = byte(rnd)
			rnd >>= 8
			i++
		}
	}
	return p
}

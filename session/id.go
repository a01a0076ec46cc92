package session

import (
	"errors"
	"math"
	"time"
)

// ErrServerID means a server id cannot prefix session ids: ids must fit in the top
// byte of a session id, and 255 is reserved, because ZooKeeper's extended ephemeral
// types (TTL nodes) mark a node's ephemeralOwner with a top byte of 0xff
// (EphemeralType.validateServerId).
var ErrServerID = errors.New("session: server id must be in [0, 254]")

// containerOwner is the ephemeralOwner value ZooKeeper reserves for container nodes
// (EphemeralType.CONTAINER_EPHEMERAL_OWNER); no session may have it.
const containerOwner = math.MinInt64

// InitialID returns the first session id a server hands out, as ZooKeeper's
// SessionTrackerImpl.initializeNextSessionId computes it: the server id in the top
// byte, then the low 40 bits of the time in milliseconds, then 16 zero bits that the
// following sessions count up in. The shift right is unsigned (Java's >>>), so the
// top byte holds the server id alone.
func InitialID(serverID int64, now time.Time) (int64, error) {
	if serverID < 0 || serverID > 254 {
		return 0, ErrServerID
	}
	ms := now.UnixMilli()
	id := int64(uint64(ms<<24)>>8) | serverID<<56
	if id == containerOwner {
		id++
	}
	return id, nil
}

// IDGenerator hands out session ids one after another from InitialID, as ZooKeeper's
// nextSessionId.getAndIncrement does. The leader owns one and writes the ids it picks
// into createSession entries. It is not safe for concurrent use.
type IDGenerator struct{ next int64 }

// NewIDGenerator starts at InitialID(serverID, now).
func NewIDGenerator(serverID int64, now time.Time) (*IDGenerator, error) {
	id, err := InitialID(serverID, now)
	if err != nil {
		return nil, err
	}
	return &IDGenerator{next: id}, nil
}

// Next returns a new id. It skips 0, which the protocol reads as "no session", and the
// container owner value.
func (g *IDGenerator) Next() int64 {
	for g.next == 0 || g.next == containerOwner {
		g.next++
	}
	id := g.next
	g.next++
	return id
}

package datatree

import "github.com/zkraft/zkraft/jute"

// storedStat is ZooKeeper's StatPersisted: what the tree keeps per node. Cversion here
// is the count of child creations (the sequential counter), not what clients see.
type storedStat struct {
	Czxid          int64
	Mzxid          int64
	Ctime          int64
	Mtime          int64
	Pzxid          int64
	EphemeralOwner int64
	Version        int32
	Cversion       int32
	Aversion       int32
}

// ephemeralOwner bit layout (EphemeralType.java).
const (
	containerOwner   int64 = -0x8000000000000000 // 0x8000000000000000, Long.MIN_VALUE
	extendedMask     int64 = -0x0100000000000000 // 0xFF00000000000000
	reservedBitsMask int64 = 0x00ffff0000000000
	// MaxTTL is the largest TTL in milliseconds (EphemeralType.TTL.maxValue(), about 34 years).
	MaxTTL int64 = ^(extendedMask | reservedBitsMask) // 0x000000FFFFFFFFFF
)

// kind is EphemeralType.
type kind uint8

const (
	kindVoid      kind = iota // persistent (owner 0)
	kindEphemeral             // NORMAL: owned by a session
	kindContainer
	kindTTL
)

// kindOf classifies an ephemeralOwner as EphemeralType.get does: the TTL layouts are
// only recognised when extended types are enabled; otherwise such an owner is a session.
func kindOf(owner int64, o *Options) kind {
	if o.ExtendedTypes && o.Emulate353TTL && owner < 0 && owner != containerOwner {
		return kindTTL // EphemeralTypeEmulate353.get; ttlOf reads its TTL as ZooKeeper's getValue does
	}
	if o.ExtendedTypes && owner&extendedMask == extendedMask {
		// Reserved feature bits other than 0 (TTL) are invalid; ZooKeeper throws. They
		// cannot be created through Apply, so treat them as TTL-shaped values.
		return kindTTL
	}
	switch owner {
	case containerOwner:
		return kindContainer
	case 0:
		return kindVoid
	}
	return kindEphemeral
}

func ttlOwner(ttl int64) int64 { return extendedMask | ttl }

func ttlOf(owner int64) int64 { return owner &^ (extendedMask | reservedBitsMask) }

func (t *Tree) kind(n *node) kind { return kindOf(n.owner, &t.opts) }

// SessionOwner reports whether a node with this ephemeralOwner is the ephemeral of the
// session of that id, as these options classify owners (EphemeralType.get is NORMAL).
func (o Options) SessionOwner(owner int64) bool { return kindOf(owner, &o) == kindEphemeral }

// clientStat is DataNode.copyStat: cversion becomes the count of child changes
// (every create but the children still present had a delete) and the owner of a
// container or TTL node reads as 0.
func (t *Tree) clientStat(n *node) jute.Stat {
	s := n.stat()
	nc := t.numChildren(n)
	owner := s.EphemeralOwner
	if t.kind(n) != kindEphemeral {
		owner = 0
	}
	return jute.Stat{
		Czxid:          s.Czxid,
		Mzxid:          s.Mzxid,
		Ctime:          s.Ctime,
		Mtime:          s.Mtime,
		Version:        s.Version,
		Cversion:       s.Cversion*2 - nc,
		Aversion:       s.Aversion,
		EphemeralOwner: owner,
		DataLength:     max(n.dataLen, 0),
		NumChildren:    nc,
		Pzxid:          s.Pzxid,
	}
}

package quorum

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/zkraft/zkraft/jute"
)

// The type bytes of log entries. A server refuses (panics on) a type byte it does not
// know, so a newer format gets a new byte (see the package doc). This version writes v2
// and still applies v1, which an older version wrote into the log.
const (
	entryV1 byte = 1 // no Conn; Seq named a forwarded proposal
	entryV2 byte = 2 // Conn after Origin; (Conn, Seq) is the connection's write cursor
)

// Entry is one replicated command: a client write (or session event) with everything
// Apply needs to reach the same result on every server: the proposer's clock, the
// caller's identities and, for createSession, the chosen id and password.
type Entry struct {
	Session int64
	Cxid    int32
	Time    int64 // ms since the epoch, from the leader's clock
	Op      int32 // a jute op code
	Super   bool
	Ids     []jute.Id
	Req     jute.Record // the op's request record; nil for closeSession

	// Origin is the member whose client asked for the entry (empty for the leader's own
	// duties): the session's owner must be that member.
	Origin string
	// Conn and Seq place a client write in its connection's order: Conn is the
	// connection (a number unique on Origin), Seq its running write number from 1. The
	// FSM applies the write only if it directly follows the last one applied for the
	// session (session.Table.Advance). Conn 0: not a connection's write (createSession,
	// moveSession, the leader's duties); Seq then only names a proposal a follower
	// forwarded. Origin, Conn and Seq together name the entry a follower waits to apply.
	Conn uint64
	Seq  uint64
}

// OpMoveSession is zkraft's own op (ZooKeeper revalidates a session at the leader
// instead): a client reconnected to the member named by the entry's Origin, which now
// owns the session.
const OpMoveSession int32 = -100

// OpSetConfig is zkraft's own op: the first leader of a cluster writes the configured
// membership (a SetDataRequest of /zookeeper/config without the version line) into
// /zookeeper/config, where ZooKeeper shows it.
const OpSetConfig int32 = -101

// OpSetEnforceQuota is zkraft's own op: a leader whose zookeeper.enforceQuota differs
// from the one the log holds writes its own (an EnforceQuotaRequest) when it takes
// office, so every member judges quotas by the leader's setting, as ZooKeeper's leader
// alone judges them in its prep step, and all of them judge alike.
const OpSetEnforceQuota int32 = -103

// EnforceQuotaRequest is the body of an OpSetEnforceQuota entry.
type EnforceQuotaRequest struct{ On bool }

// Encode writes the request.
func (r *EnforceQuotaRequest) Encode(e *jute.Encoder) { e.Bool(r.On) }

// Decode reads the request.
func (r *EnforceQuotaRequest) Decode(d *jute.Decoder) { r.On = d.Bool() }

// SessionRequest is the body of a createSession entry.
type SessionRequest struct {
	Timeout  int32
	Password []byte
}

// Encode writes the request.
func (s *SessionRequest) Encode(e *jute.Encoder) {
	e.Int(s.Timeout)
	e.Buffer(s.Password)
}

// Decode reads the request.
func (s *SessionRequest) Decode(d *jute.Decoder) {
	s.Timeout = d.Int()
	s.Password = d.Buffer()
}

// recordFor returns an empty request record for a replicated op.
func recordFor(op int32) (jute.Record, bool) {
	switch op {
	case jute.OpCreateSession:
		return &SessionRequest{}, true
	case jute.OpDeleteContainer:
		return &jute.DeleteRequest{}, true
	case jute.OpSync:
		return &jute.SyncRequest{}, true
	case OpMoveSession:
		return nil, true
	case OpSetConfig:
		return &jute.SetDataRequest{}, true
	case OpReconfigNoQuorum, OpReconfigInProgress:
		return &jute.ReconfigRequest{}, true
	case OpSetEnforceQuota:
		return &EnforceQuotaRequest{}, true
	}
	if info, ok := jute.Op(op); ok && info.Write {
		return info.NewRecord(), true
	}
	return nil, false
}

// marshalScratch lends Marshal the encoders it writes into before copying the entry
// out at its exact size: one allocation an entry, where growing a buffer took several.
var marshalScratch = sync.Pool{New: func() any { return &jute.Encoder{Buf: make([]byte, 0, 512)} }}

// marshalKeep is the largest scratch buffer given back to marshalScratch.
const marshalKeep = 64 << 10

// Marshal encodes e with its type byte.
func (e *Entry) Marshal() []byte {
	enc := marshalScratch.Get().(*jute.Encoder)
	enc.Buf = append(enc.Buf[:0], entryV2)
	enc.Long(e.Session)
	enc.Int(e.Cxid)
	enc.Long(e.Time)
	enc.Int(e.Op)
	enc.Bool(e.Super)
	enc.String(e.Origin)
	enc.Long(int64(e.Conn))
	enc.Long(int64(e.Seq))
	enc.Int(int32(len(e.Ids)))
	for i := range e.Ids {
		e.Ids[i].Encode(enc)
	}
	if e.Req != nil {
		e.Req.Encode(enc)
	}
	b := bytes.Clone(enc.Buf)
	if cap(enc.Buf) <= marshalKeep {
		marshalScratch.Put(enc)
	}
	return b
}

// Where Marshal writes Time and Op, the header fields a leader sets on an entry a member
// forwarded (after the type byte, Session and Cxid; the same in v1 and v2).
const (
	entryTimeAt = 1 + 8 + 4
	entryOpAt   = entryTimeAt + 8
)

// restamp returns the bytes of e for the log, given b, the bytes e was decoded from,
// after the leader changed e's Time and Op: b itself with those fields written over, as
// Marshal would write them, so the leader does not encode the entry again. Bytes of an
// older type are encoded again, as the current type.
func (e *Entry) restamp(b []byte) []byte {
	if b[0] != entryV2 {
		return e.Marshal()
	}
	binary.BigEndian.PutUint64(b[entryTimeAt:], uint64(e.Time))
	binary.BigEndian.PutUint32(b[entryOpAt:], uint32(e.Op))
	return b
}

// UnmarshalEntry decodes an entry written by Marshal (or by a version that wrote v1).
func UnmarshalEntry(b []byte) (*Entry, error) {
	if len(b) == 0 || (b[0] != entryV1 && b[0] != entryV2) {
		return nil, fmt.Errorf("quorum: unknown entry type byte in %d-byte entry", len(b))
	}
	d := jute.NewDecoder(b[1:])
	e := &Entry{Session: d.Long(), Cxid: d.Int(), Time: d.Long(), Op: d.Int(), Super: d.Bool(), Origin: d.String()}
	if b[0] == entryV2 {
		e.Conn = uint64(d.Long())
	}
	e.Seq = uint64(d.Long())
	if n := d.VectorLen(8); n > 0 {
		e.Ids = make([]jute.Id, n)
		for i := range e.Ids {
			e.Ids[i].Decode(d)
		}
	}
	req, ok := recordFor(e.Op)
	if !ok {
		return nil, fmt.Errorf("quorum: entry with op %d cannot be replicated", e.Op)
	}
	if req != nil {
		req.Decode(d)
		e.Req = req
	}
	if d.Err == nil && d.Remaining() != 0 {
		d.Err = fmt.Errorf("quorum: %d trailing bytes in entry", d.Remaining())
	}
	return e, d.Err
}

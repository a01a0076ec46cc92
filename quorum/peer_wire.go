package quorum

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/jute"
)

// The peer port carries one stream from each follower or observer to the member it takes
// for the leader. Every frame is a 4-byte big-endian length, then a kind byte and its
// body.
//
// Member to leader:
//
//	'E' entry    Entry.Marshal: a proposal, appended to the log in stream order
//	'P' pings    a length byte and the member's id, then (session int64, timeout int32)
//	             pairs: the sessions heard from since the last ping
//	'Q' query    does the member hold a Raft state? Answered by one frame of one byte
//	             (1 or 0) with no kind, and the stream ends. A new server asks before it
//	             bootstraps.
//
// Leader to member:
//
//	'C' commit   index uint64, term uint64: the last command applied there (so committed)
//	'D' durable  index uint64, term uint64: the leader's log is durable up to this entry
//	             of its own term (sent only to a voter of a three-voter membership; see
//	             durable_notice.go)
//	'R' refused  conn uint64, seq uint64, code byte, text: a proposal that failed there
//	             (codes in refusals; text only for refusedOther)
//	'L' left     no body: the member no longer leads; it refuses what comes after
const (
	frameEntry   byte = 'E'
	framePings   byte = 'P'
	frameQuery   byte = 'Q'
	frameCommit  byte = 'C'
	frameDurable byte = 'D'
	frameRefused byte = 'R'
	frameLeft    byte = 'L'
)

// The codes of a refused proposal on the wire, and the errors they stand for: one table
// for both directions, so no error is compared by its text.
const (
	refusedNotLeader      byte = 1 // not appended: the member does not lead
	refusedLeadershipLost byte = 2 // appended, then leadership was lost: outcome unknown
	refusedShutdown       byte = 3 // the leader is shutting down
	refusedOther          byte = 4 // the error's text follows
)

var refusals = []struct {
	code byte
	err  error
}{
	{refusedNotLeader, raft.ErrNotLeader},
	{refusedLeadershipLost, raft.ErrLeadershipLost},
	{refusedShutdown, raft.ErrRaftShutdown},
}

func encodeRefusal(err error) (byte, []byte) {
	for _, r := range refusals {
		if errors.Is(err, r.err) {
			return r.code, nil
		}
	}
	return refusedOther, []byte(err.Error())
}

// decodeRefusal is the error a refused proposal fails with on the member.
func decodeRefusal(code byte, text []byte) error {
	for _, r := range refusals {
		if r.code == code {
			return fmt.Errorf("%w: %w", ErrNoLeader, r.err)
		}
	}
	return fmt.Errorf("%w: refused by the leader: %s", ErrNoLeader, text)
}

// maxForwardFrame bounds one frame (jute.maxbuffer plus the entry header).
const maxForwardFrame = 4 << 20

func writeFrame(w *bufio.Writer, kind byte, body []byte) error {
	var hdr [5]byte
	if _, err := w.Write(appendFrameHeader(hdr[:0], kind, len(body))); err != nil {
		return err
	}
	_, err := w.Write(body)
	return err
}

// appendFrameHeader appends a peer frame's header (its length, then its kind) for a body
// of n bytes to b.
func appendFrameHeader(b []byte, kind byte, n int) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(1+n))
	return append(b, kind)
}

// readFrame reads one frame into bytes of its own: a leader puts a forwarded entry's in
// its log as they are.
func readFrame(r *bufio.Reader) ([]byte, error) { return jute.ReadFrame(r, nil, maxForwardFrame) }

// servePeers accepts the members' streams on the peer port.
func (n *Node) servePeers(l net.Listener) {
	acceptStreams(l, n.done, n.cfg.Logger, func(c net.Conn) bool {
		go n.servePeer(c)
		return true
	})
}

// servePeer serves one member's stream. Three goroutines: this one reads and appends
// the proposals in stream order; answer waits for each proposal's outcome in that order
// and reports the failed ones; write sends those reports and the commit notices, the
// newest commit point whenever one was applied since the last.
func (n *Node) servePeer(c net.Conn) {
	n.peerConns.Store(c, struct{}{})
	defer n.peerConns.Delete(c)
	defer c.Close()
	select {
	case <-n.done: // closed while this stream was being accepted
		return
	default:
	}
	type proposal struct {
		key waitKey
		f   raft.ApplyFuture
		err error
	}
	proposals := make(chan proposal, 1024)
	refused := make(chan []byte, 64)
	done := make(chan struct{})
	var member atomic.Pointer[string] // the member's id, from its pings
	var started bool
	defer func() {
		close(done)
		if started {
			close(proposals)
		}
	}()
	start := func() {
		started = true
		go func() { // answer
			for p := range proposals {
				err := p.err
				if err == nil {
					if err = p.f.Error(); errors.Is(err, raft.ErrNotLeader) {
						// Not a refusal before appending: later entries may be in the log.
						err = raft.ErrLeadershipLost
					}
				}
				if err == nil {
					continue
				}
				code, text := encodeRefusal(err)
				msg := binary.BigEndian.AppendUint64(nil, p.key.conn)
				msg = binary.BigEndian.AppendUint64(msg, p.key.seq)
				msg = append(append(msg, code), text...)
				select {
				case refused <- msg:
				case <-done:
				}
			}
		}()
		go n.writePeer(c, &member, refused, done)
	}
	refusing := false
	gen := n.streamGen.Add(1) // this stream's place among the accepted ones (newest_stream.go)
	var claimed *newestClaim  // the record of the member this stream carries, once named
	var claimedID string
	streamsOf := func(id string) *newestClaim {
		if claimed == nil || claimedID != id {
			claimed, claimedID = n.streams.of(id), id
		}
		return claimed
	}
	// A member whose newest stream ended is no synced learner now (mntr's
	// synced_followers), as a ZooKeeper leader drops a learner whose socket closed; its
	// next stream's first ping counts it again.
	defer func() {
		if m := member.Load(); m != nil {
			streamsOf(*m).whileNewest(gen, func() { n.learners.Delete(*m) })
		}
	}()
	br := bufio.NewReader(c)
	for {
		b, err := readFrame(br)
		if err != nil || len(b) == 0 {
			return
		}
		switch b[0] {
		case frameQuery:
			var has byte
			if n.raft.LastIndex() > 0 {
				has = 1
			}
			w := bufio.NewWriter(c)
			if writeFrame(w, has, nil) == nil {
				w.Flush()
			}
			return
		case framePings:
			if !started {
				start()
			}
			p := b[1:]
			if len(p) < 1 || len(p) < 1+int(p[0]) {
				return
			}
			id := string(p[1 : 1+int(p[0])])
			streamsOf(id).whileNewest(gen, func() {})
			if m := member.Load(); m == nil || *m != id {
				member.Store(&id)
				n.commits.notify() // the writer may send a durable notice now
				if f := n.cfg.Figures.LearnerJoined; f != nil && n.IsLeader() {
					f()
				}
			}
			n.learnerSeen(id)
			for p = p[1+int(p[0]):]; len(p) >= 12; p = p[12:] {
				n.duties.touch(int64(binary.BigEndian.Uint64(p)), int32(binary.BigEndian.Uint32(p[8:])))
			}
		case frameEntry:
			if !started {
				start()
			}
			// Decoded whole, as every member's Apply will decode it: bytes that do not
			// decode never reach the log. The log keeps body, with the leader's time
			// written in (restamp): readFrame gives every frame bytes of its own.
			body := b[1:]
			e, err := UnmarshalEntry(body)
			if err != nil {
				return
			}
			key := waitKey{conn: e.Conn, seq: e.Seq}
			// Once this member has refused an entry as not the leader, or the member has
			// opened a newer stream, it refuses the rest of the stream too: none of them
			// is appended after one that was not.
			if refusing = refusing || n.raft.State() != raft.Leader; refusing {
				proposals <- proposal{key: key, err: raft.ErrNotLeader}
				continue
			}
			n.membershipFirst()
			n.awaitMembers(e)
			var f raft.ApplyFuture
			if !streamsOf(e.Origin).whileNewest(gen, func() {
				e.Time = time.Now().UnixMilli()
				n.judgeReconfig(e, n.raft.CurrentTerm())
				f = n.applyEntry(e.Op, e.restamp(body))
			}) {
				refusing = true
				proposals <- proposal{key: key, err: raft.ErrNotLeader}
				continue
			}
			proposals <- proposal{key: key, f: f}
		default:
			return
		}
	}
}

// writePeer writes the refusals, the commit notices (those the member needs:
// appliesOnItsOwn) and the durable notices of one member's stream, and once that this
// member no longer leads, flushing when nothing more is ready, with a deadline on every
// flush.
func (n *Node) writePeer(c net.Conn, member *atomic.Pointer[string], refused <-chan []byte, done <-chan struct{}) {
	notices := n.commits.subscribe()
	defer n.commits.unsubscribe(notices)
	notices <- struct{}{} // the commit point now, for a member that just connected
	bw := bufio.NewWriter(c)
	var sent uint64
	var sentDurable commitPoint
	leading := n.IsLeader()
	for {
		select {
		case <-done:
			return
		case msg := <-refused:
			if writeFrame(bw, frameRefused, msg) != nil {
				c.Close()
				return
			}
		case <-notices:
			if leading && !n.IsLeader() {
				leading = false
				if writeFrame(bw, frameLeft, nil) != nil {
					c.Close()
					return
				}
			}
			if p, ok := n.durableNotice(member, sentDurable); ok {
				sentDurable = p
				if writePoint(bw, frameDurable, p) != nil {
					c.Close()
					return
				}
			}
			index, term := n.FSM.Committed()
			if index <= sent || n.cfg.noCommitNotices {
				break
			}
			sent = index
			if n.appliesOnItsOwn(member, sentDurable, commitPoint{index: index, term: term}) {
				n.noticesSkipped.Add(1)
				break
			}
			if writePoint(bw, frameCommit, commitPoint{index: index, term: term}) != nil {
				c.Close()
				return
			}
		}
		if len(refused) == 0 && len(notices) == 0 {
			c.SetWriteDeadline(time.Now().Add(peerWriteTimeout))
			if bw.Flush() != nil {
				c.Close()
				return
			}
		}
	}
}

// writePoint writes a commit or durable notice.
func writePoint(w *bufio.Writer, kind byte, p commitPoint) error {
	var msg [16]byte
	binary.BigEndian.PutUint64(msg[:], p.index)
	binary.BigEndian.PutUint64(msg[8:], p.term)
	return writeFrame(w, kind, msg[:])
}

// readPoint is the point a notice frame b (its kind byte, then writePoint's 16 bytes)
// carries.
func readPoint(b []byte) commitPoint {
	return commitPoint{index: binary.BigEndian.Uint64(b[1:]), term: binary.BigEndian.Uint64(b[9:])}
}

// clusterFormed asks the other configured members whether any of them already holds a
// Raft state. A new server whose cluster exists must not bootstrap one of its own: it
// waits to be added (it was started for a reconfig -add, or its data dir was wiped).
func clusterFormed(cfg *Config) bool {
	answers := make(chan bool, len(cfg.Peers))
	asked := 0
	for _, p := range cfg.Peers {
		if p.ID == cfg.ID {
			continue
		}
		asked++
		go func(addr string) {
			answers <- askFormed(cfg.Network, addr)
		}(p.PeerAddr)
	}
	formed := false
	for ; asked > 0; asked-- {
		formed = <-answers || formed
	}
	return formed
}

func askFormed(network Network, addr string) bool {
	c, err := network.Dial(addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	w := bufio.NewWriter(c)
	if writeFrame(w, frameQuery, nil) != nil || w.Flush() != nil {
		return false
	}
	b, err := readFrame(bufio.NewReader(c))
	return err == nil && len(b) == 1 && b[0] == 1
}

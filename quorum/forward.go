package quorum

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// Future is a proposal on its way: Error waits until it is applied on this server (or
// has failed, outcome unknown); Response is then its *Result. raft.ApplyFuture is one.
type Future interface {
	Error() error
	Response() interface{}
}

// ErrNoLeader means a follower could not reach a leader for a forwarded proposal.
var ErrNoLeader = errors.New("quorum: no leader reachable")

// forwardFuture is a proposal a follower forwarded to the leader. It completes when the
// entry is applied here (the FSM finds it by Origin and Seq) or when the stream to the
// leader fails first, in which case the outcome is unknown.
type forwardFuture struct {
	once sync.Once
	done chan struct{}
	res  *Result
	err  error
}

func (f *forwardFuture) complete(res *Result, err error) {
	f.once.Do(func() {
		f.res, f.err = res, err
		close(f.done)
	})
}

func (f *forwardFuture) Error() error          { <-f.done; return f.err }
func (f *forwardFuture) Response() interface{} { <-f.done; return f.res }

// Frame kinds on the peer stream, follower to leader.
const (
	frameEntry byte = 'E' // a proposal: Entry.Marshal follows
	// framePings is a follower's heartbeat: its id (a length byte, then the id) and the
	// sessions heard from since the last one, as (id int64, timeout int32) pairs.
	framePings byte = 'P'
	// frameQuery asks whether the member has a Raft state; the answer is one frame of
	// one byte, 1 or 0, and the stream ends. A new server asks before it bootstraps.
	frameQuery byte = 'Q'
)

// maxForwardFrame bounds one forwarded entry (jute.maxbuffer plus the entry header).
const maxForwardFrame = 4 << 20

func writeFrame(w *bufio.Writer, b []byte) error {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(b)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	_, err := w.Write(b)
	return err
}

func readFrame(r *bufio.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxForwardFrame {
		return nil, fmt.Errorf("quorum: forwarded frame of %d bytes", size)
	}
	b := make([]byte, size)
	_, err := io.ReadFull(r, b)
	return b, err
}

// forwarder is a follower's one ordered stream of proposals to the current leader:
// one stream keeps every connection's writes in the order they were proposed.
type forwarder struct {
	n       *Node
	mu      sync.Mutex
	conn    net.Conn
	bw      *bufio.Writer
	leader  string
	seq     uint64
	pending map[uint64]*pendingEntry
	touched map[int64]int32 // sessions heard from since the last ping to the leader
}

// pendingEntry is a forwarded proposal the leader has not answered yet; data is kept so
// it can be sent again when the member turned out not to lead.
type pendingEntry struct {
	fut  *forwardFuture
	data []byte
}

// newForwarder starts Seq at the clock, so a restarted server never waits on an entry
// its previous run forwarded with the same Seq (the log may still be replaying it).
func newForwarder(n *Node) *forwarder {
	return &forwarder{n: n, pending: map[uint64]*pendingEntry{}, seq: uint64(time.Now().UnixNano())}
}

// forward sends e to the leader; the future completes when e is applied here.
func (fw *forwarder) forward(e *Entry) Future {
	fut := &forwardFuture{done: make(chan struct{})}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if err := fw.reconnectLocked(); err != nil {
		fut.complete(nil, err)
		return fut
	}
	fw.seq++
	e.Origin, e.Seq = fw.n.cfg.ID, fw.seq
	data := append([]byte{frameEntry}, e.Marshal()...)
	fw.pending[e.Seq] = &pendingEntry{fut: fut, data: data}
	fw.n.FSM.waiters.Store(e.Seq, fut)
	err := writeFrame(fw.bw, data)
	if err == nil {
		err = fw.bw.Flush()
	}
	if err != nil {
		fw.dropLocked(fmt.Errorf("%w: %v", ErrNoLeader, err))
	}
	return fut
}

// reconnectLocked connects to the leader, waiting while an election runs or the new
// leader starts listening rather than fail a proposal that was not sent yet. It holds the
// lock while it waits, so no proposal overtakes another.
func (fw *forwarder) reconnectLocked() error {
	deadline := time.Now().Add(10 * fw.n.cfg.HeartbeatTimeout)
	for {
		err := fw.connectLocked()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// resendLocked is called when the member the stream went to answered that it does not
// lead: it appended none of the entries still pending (it refuses every entry after
// the first refusal), so they go again, in order, to the leader there is now.
func (fw *forwarder) resendLocked(stale net.Conn) {
	if fw.conn == stale {
		fw.conn.Close()
		fw.conn = nil
	}
	seqs := make([]uint64, 0, len(fw.pending))
	for seq := range fw.pending {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	if err := fw.reconnectLocked(); err != nil {
		fw.dropLocked(err)
		return
	}
	for _, seq := range seqs {
		if p := fw.pending[seq]; p != nil {
			if err := writeFrame(fw.bw, p.data); err != nil {
				fw.dropLocked(fmt.Errorf("%w: %v", ErrNoLeader, err))
				return
			}
		}
	}
	if err := fw.bw.Flush(); err != nil {
		fw.dropLocked(fmt.Errorf("%w: %v", ErrNoLeader, err))
	}
}

// connectLocked dials the current leader's peer address if the stream is not to it.
func (fw *forwarder) connectLocked() error {
	_, id := fw.n.raft.LeaderWithID()
	if id == "" {
		return fmt.Errorf("%w: none known", ErrNoLeader)
	}
	if fw.conn != nil && fw.leader == string(id) {
		return nil
	}
	if fw.conn != nil {
		fw.dropLocked(fmt.Errorf("%w: the leader changed", ErrNoLeader))
	}
	p, ok := fw.n.peer(string(id))
	if !ok {
		return fmt.Errorf("%w: leader %s is not a known member", ErrNoLeader, id)
	}
	c, err := fw.n.cfg.Network.Dial(p.PeerAddr, 2*time.Second)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoLeader, err)
	}
	fw.conn, fw.bw, fw.leader = c, bufio.NewWriter(c), string(id)
	go fw.readReplies(c)
	return nil
}

// dropLocked closes the stream and fails every proposal still in flight on it: their
// outcome is unknown, so the clients that made them lose their connections.
func (fw *forwarder) dropLocked(err error) {
	if fw.conn != nil {
		fw.conn.Close()
		fw.conn = nil
	}
	for seq, p := range fw.pending {
		fw.n.FSM.waiters.Delete(seq)
		p.fut.complete(nil, err)
		delete(fw.pending, seq)
	}
}

// readReplies reads the leader's answers: an empty error means the entry is in the
// log (the future completes when it is applied here); otherwise the proposal failed.
func (fw *forwarder) readReplies(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		b, err := readFrame(br)
		if err != nil || len(b) < 8 {
			fw.mu.Lock()
			if fw.conn == c {
				fw.dropLocked(fmt.Errorf("%w: stream to leader broke", ErrNoLeader))
			}
			fw.mu.Unlock()
			return
		}
		seq := binary.BigEndian.Uint64(b[:8])
		fw.mu.Lock()
		if fw.conn != c {
			fw.mu.Unlock()
			return // the stream was replaced; its pending entries went elsewhere
		}
		if string(b[8:]) == raft.ErrNotLeader.Error() {
			fw.resendLocked(c)
			fw.mu.Unlock()
			return
		}
		p := fw.pending[seq]
		delete(fw.pending, seq)
		fw.mu.Unlock()
		if p != nil && len(b) > 8 {
			fw.n.FSM.waiters.Delete(seq)
			p.fut.complete(nil, errors.New(string(b[8:])))
		}
	}
}

// touch records that a session was heard from here; pingLoop reports it to the leader.
func (fw *forwarder) touch(id int64, timeout int32) {
	fw.mu.Lock()
	if fw.touched == nil {
		fw.touched = map[int64]int32{}
	}
	fw.touched[id] = timeout
	fw.mu.Unlock()
}

// pingLoop sends the sessions heard from to the leader every half tick, so sessions
// connected to a follower do not expire on the leader.
func (fw *forwarder) pingLoop(every time.Duration, done <-chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		fw.mu.Lock()
		// Sent even with no sessions: the leader counts its learners by these.
		if fw.connectLocked() == nil {
			msg := append([]byte{framePings, byte(len(fw.n.cfg.ID))}, fw.n.cfg.ID...)
			for id, to := range fw.touched {
				msg = binary.BigEndian.AppendUint64(msg, uint64(id))
				msg = binary.BigEndian.AppendUint32(msg, uint32(to))
			}
			if writeFrame(fw.bw, msg) == nil && fw.bw.Flush() == nil {
				fw.touched = nil
			}
		}
		fw.mu.Unlock()
	}
}

func (fw *forwarder) close() {
	fw.mu.Lock()
	fw.dropLocked(ErrNoLeader)
	fw.mu.Unlock()
}

// servePeers accepts followers' streams on the peer port. Each stream's entries are
// stamped with this server's clock and appended to the log in stream order; the answer
// (empty, or the error) goes back in the same order.
func (n *Node) servePeers(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go n.servePeer(c)
	}
}

func (n *Node) servePeer(c net.Conn) {
	defer c.Close()
	type inflight struct {
		seq uint64
		f   raft.ApplyFuture
		err error
	}
	answers := make(chan inflight, 1024)
	go func() {
		bw := bufio.NewWriter(c)
		for a := range answers {
			err := a.err
			if err == nil {
				if err = a.f.Error(); errors.Is(err, raft.ErrNotLeader) {
					// Not a refusal before appending: later entries may be in the log.
					err = raft.ErrLeadershipLost
				}
			}
			msg := make([]byte, 8, 64)
			binary.BigEndian.PutUint64(msg, a.seq)
			if err != nil {
				msg = append(msg, err.Error()...)
			}
			if writeFrame(bw, msg) != nil {
				c.Close()
				return
			}
			if len(answers) == 0 && bw.Flush() != nil {
				c.Close()
				return
			}
		}
	}()
	defer close(answers)
	refusing := false
	br := bufio.NewReader(c)
	for {
		b, err := readFrame(br)
		if err != nil || len(b) == 0 {
			return
		}
		if b[0] == frameQuery {
			var has byte
			if n.raft.LastIndex() > 0 {
				has = 1
			}
			w := bufio.NewWriter(c)
			if writeFrame(w, []byte{has}) == nil {
				w.Flush()
			}
			return
		}
		if b[0] == framePings {
			if len(b) < 2 || len(b) < 2+int(b[1]) {
				return
			}
			n.learnerSeen(string(b[2 : 2+int(b[1])]))
			for p := b[2+int(b[1]):]; len(p) >= 12; p = p[12:] {
				n.duties.touch(int64(binary.BigEndian.Uint64(p)), int32(binary.BigEndian.Uint32(p[8:])))
			}
			continue
		}
		e, err := UnmarshalEntry(b[1:])
		if err != nil || b[0] != frameEntry {
			return
		}
		// Once this member has refused an entry as not the leader, it refuses the rest
		// of the stream too, so the follower can send them all again in order.
		if refusing = refusing || n.raft.State() != raft.Leader; refusing {
			answers <- inflight{seq: e.Seq, err: raft.ErrNotLeader}
			continue
		}
		e.Time = time.Now().UnixMilli()
		n.judgeReconfig(e)
		answers <- inflight{seq: e.Seq, f: n.raft.Apply(e.Marshal(), 0)}
	}
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
	if writeFrame(w, []byte{frameQuery}) != nil || w.Flush() != nil {
		return false
	}
	b, err := readFrame(bufio.NewReader(c))
	return err == nil && len(b) == 1 && b[0] == 1
}

package quorum

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
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
	framePings byte = 'P' // sessions heard from: (id int64, timeout int32) pairs follow
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
	pending map[uint64]*forwardFuture
	touched map[int64]int32 // sessions heard from since the last ping to the leader
}

// newForwarder starts Seq at the clock, so a restarted server never waits on an entry
// its previous run forwarded with the same Seq (the log may still be replaying it).
func newForwarder(n *Node) *forwarder {
	return &forwarder{n: n, pending: map[uint64]*forwardFuture{}, seq: uint64(time.Now().UnixNano())}
}

// forward sends e to the leader; the future completes when e is applied here.
func (fw *forwarder) forward(e *Entry) Future {
	fut := &forwardFuture{done: make(chan struct{})}
	// During an election there is briefly no leader: wait for one rather than fail.
	for deadline := time.Now().Add(4 * fw.n.cfg.HeartbeatTimeout); time.Now().Before(deadline); {
		if _, id := fw.n.raft.LeaderWithID(); id != "" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if err := fw.connectLocked(); err != nil {
		fut.complete(nil, err)
		return fut
	}
	fw.seq++
	e.Origin, e.Seq = fw.n.cfg.ID, fw.seq
	fw.pending[e.Seq] = fut
	fw.n.FSM.waiters.Store(e.Seq, fut)
	err := writeFrame(fw.bw, append([]byte{frameEntry}, e.Marshal()...))
	if err == nil {
		err = fw.bw.Flush()
	}
	if err != nil {
		fw.dropLocked(fmt.Errorf("%w: %v", ErrNoLeader, err))
	}
	return fut
}

// connectLocked dials the current leader's peer address if the stream is not to it.
func (fw *forwarder) connectLocked() error {
	_, id := fw.n.raft.LeaderWithID()
	if id == "" {
		return ErrNoLeader
	}
	if fw.conn != nil && fw.leader == string(id) {
		return nil
	}
	fw.dropLocked(ErrNoLeader)
	var addr string
	for _, p := range fw.n.cfg.Peers {
		if p.ID == string(id) {
			addr = p.PeerAddr
		}
	}
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
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
	for seq, fut := range fw.pending {
		fw.n.FSM.waiters.Delete(seq)
		fut.complete(nil, err)
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
		fut := fw.pending[seq]
		delete(fw.pending, seq)
		fw.mu.Unlock()
		if fut != nil && len(b) > 8 {
			fw.n.FSM.waiters.Delete(seq)
			fut.complete(nil, errors.New(string(b[8:])))
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
		if len(fw.touched) > 0 && fw.connectLocked() == nil {
			msg := []byte{framePings}
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
				err = a.f.Error()
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
	br := bufio.NewReader(c)
	for {
		b, err := readFrame(br)
		if err != nil || len(b) == 0 {
			return
		}
		if b[0] == framePings {
			for p := b[1:]; len(p) >= 12; p = p[12:] {
				n.duties.touch(int64(binary.BigEndian.Uint64(p)), int32(binary.BigEndian.Uint32(p[8:])))
			}
			continue
		}
		e, err := UnmarshalEntry(b[1:])
		if err != nil || b[0] != frameEntry {
			return
		}
		if n.raft.State() != raft.Leader {
			answers <- inflight{seq: e.Seq, err: raft.ErrNotLeader}
			continue
		}
		e.Time = time.Now().UnixMilli()
		answers <- inflight{seq: e.Seq, f: n.raft.Apply(e.Marshal(), 0)}
	}
}

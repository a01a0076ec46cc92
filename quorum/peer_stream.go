package quorum

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// peerStream is one TCP stream from this member to the member it takes for the leader.
//
// Writes are flushed in groups: a frame is appended to the pending bytes, and the first
// writer that finds no flush running writes everything pending with one system call;
// the frames that arrive meanwhile wait for that write to end and go together in the
// next. A lone write costs one system call as before; under load one call carries many
// forwarded entries instead of one each.
type peerStream struct {
	conn   net.Conn
	leader string
	broken atomic.Bool
	// leftAt (unix ns; 0: not left) is when the member said it no longer leads, or
	// refused a proposal as not the leader; no new proposal goes on the stream after it
	// (those on it still get their answers).
	leftAt atomic.Int64

	wmu      sync.Mutex
	flushed  sync.Cond  // on wmu: a group was written (or failed)
	pending  []byte     // frames not yet handed to the socket
	group    *peerGroup // the group pending belongs to
	flushing bool       // a writer is in conn.Write
	spare    []byte     // the last written group's buffer, for reuse
	failed   error      // set by the first failed write: nothing more is written
}

// peerGroup is the outcome of one flush: how many of its bytes reached the socket.
type peerGroup struct {
	done    bool
	written int
	err     error
}

func newPeerStream(c net.Conn, leader string) *peerStream {
	s := &peerStream{conn: c, leader: leader, group: &peerGroup{}}
	s.flushed.L = &s.wmu
	return s
}

// leave marks the stream left, at the first call.
func (s *peerStream) leave() { s.leftAt.CompareAndSwap(0, time.Now().UnixNano()) }

func (s *peerStream) left() bool { return s.leftAt.Load() != 0 }

// peerWriteTimeout bounds how long a flush on a peer stream may make no progress: a
// member that stops reading is dropped, not waited for.
const peerWriteTimeout = 5 * time.Second

// write sends one frame. nil means the frame reached the socket whole (its group may
// still have failed after it: the stream is then broken, and whoever waits for the
// frame's outcome learns it from that); an error means it did not, so the leader never
// decoded it.
func (s *peerStream) write(kind byte, body []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.failed != nil {
		return s.failed
	}
	g := s.group
	s.pending = append(appendFrameHeader(s.pending, kind, len(body)), body...)
	end := len(s.pending)
	for !g.done {
		switch {
		case s.flushing:
			s.flushed.Wait()
		case s.failed != nil:
			// An earlier group broke off part way: nothing more goes after its
			// partial frame, or the leader would read another frame's bytes as its end.
			g.done, g.err = true, s.failed
		default:
			s.flush()
		}
	}
	if g.err != nil && end > g.written {
		return g.err
	}
	return nil
}

// flush writes the pending group (wmu held; released during the write).
func (s *peerStream) flush() {
	buf, g := s.pending, s.group
	s.pending, s.group = s.spare[:0], &peerGroup{}
	s.flushing = true
	s.wmu.Unlock()
	n, err := writeAll(s.conn, buf, peerWriteTimeout)
	s.wmu.Lock()
	s.flushing = false
	g.done, g.written, g.err = true, n, err
	if err != nil && s.failed == nil {
		s.failed = err
	}
	s.spare = nil          // (the buffer pending uses now was the spare)
	if cap(buf) <= 1<<20 { // a huge group's buffer is not kept
		s.spare = buf
	}
	s.flushed.Broadcast()
}

// writeAll writes b to c, giving each write that makes progress a fresh deadline of d:
// a reader that keeps reading is never cut off for the size of a group, one that stops
// for d is. It returns how many bytes reached the socket.
func writeAll(c net.Conn, b []byte, d time.Duration) (int, error) {
	n := 0
	for {
		c.SetWriteDeadline(time.Now().Add(d))
		m, err := c.Write(b[n:])
		n += m
		if err == nil || m == 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			return n, err
		}
	}
}

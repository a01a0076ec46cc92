package server

import (
	"bufio"
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// A connection's read buffer is lent only while the connection is busy. Most
// coordination clients hold a session and send a ping every third of its timeout; a
// buffer held through those waits was a fifth of an idle connection's memory. So once a
// connection has waited longer than idleAfter for a request, its reader gives the buffer
// back to readerPool and waits for the socket to become readable without one (a one-byte
// MSG_PEEK, which leaves the bytes in the socket), then borrows a buffer and reads
// them. A busy connection (its waits shorter than idleAfter) keeps its buffer and reads
// a burst with one system call, as before; an idle one pays one more (the peek) per
// wake-up. Only a plain TCP socket waits so: a TLS connection's bytes are decrypted by
// the tls package's own buffers, which a peek at the socket cannot see.

// idleAfter is how long a wait for a request makes the next one wait without a buffer.
const idleAfter = 20 * time.Millisecond

// readerPool lends read buffers of readBufferSize.
var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufferSize) }}

// handshakeBufferSize is the buffer a plain TCP connection reads its handshake (or its
// four-letter word) through: a ConnectRequest is under 100 bytes, and a frame larger than
// the buffer is read past it. The reader trades it for one of readBufferSize at its first
// wait after the handshake (the connection starts idle). A burst of connects holds one
// buffer for each handshake waiting for its session's commit, and the pool keeps them
// until two collections pass: at readBufferSize that was 0.4 KiB of RSS per session of
// a 3,000-connection burst (docs/benchmarks.md, fortieth session).
const handshakeBufferSize = 256

var handshakePool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, handshakeBufferSize) }}

// connReader reads a connection's frames through a buffer it borrows from readerPool.
// One goroutine at a time uses it: the handshake's, then the reader's.
type connReader struct {
	nc  net.Conn
	raw syscall.RawConn // nil where waiting without a buffer cannot see every byte (TLS)
	br  *bufio.Reader   // nil while the reader waits without a buffer or after release
	// idle: the last wait for a request took longer than idleAfter, so the next one
	// gives the buffer back first. A new connection starts idle once its handshake is
	// read (setIdle): many clients connect and then only ping.
	idle bool
	peek [1]byte
	// lent counts the buffers borrowed and not given back, over all connections.
	lent *atomic.Int64
	// now is the clock waits are timed with (tests).
	now func() time.Time
}

func newConnReader(nc net.Conn, lent *atomic.Int64) *connReader {
	r := &connReader{nc: nc, now: time.Now, lent: lent}
	if tc, ok := nc.(*net.TCPConn); ok {
		if raw, err := tc.SyscallConn(); err == nil {
			r.raw = raw
		}
	}
	if r.raw != nil {
		r.borrowFrom(&handshakePool)
	} else {
		r.borrow() // a TLS connection keeps its first buffer (next never trades it)
	}
	return r
}

func (r *connReader) borrow() { r.borrowFrom(&readerPool) }

func (r *connReader) borrowFrom(pool *sync.Pool) {
	r.br = pool.Get().(*bufio.Reader)
	r.br.Reset(r.nc)
	r.lent.Add(1)
}

// release gives the buffer back to the pool it came from; nothing may be buffered in it.
func (r *connReader) release() {
	if r.br != nil {
		r.br.Reset(nil)
		if r.br.Size() == handshakeBufferSize {
			handshakePool.Put(r.br)
		} else {
			readerPool.Put(r.br)
		}
		r.br = nil
		r.lent.Add(-1)
	}
}

// buffered is the bufio.Reader the handshake and the four-letter words read from.
func (r *connReader) buffered() *bufio.Reader { return r.br }

// frameBuffered reports whether a whole frame is buffered, so reading it will not wait.
func (r *connReader) frameBuffered() bool {
	n := r.br.Buffered()
	if n < 4 {
		return false // (Peek would wait for more)
	}
	b, _ := r.br.Peek(4)
	return n >= 4+int(binary.BigEndian.Uint32(b))
}

// setIdle makes the next wait for a request give the buffer back first.
func (r *connReader) setIdle() { r.idle = true }

// next reads the next frame into buf (see jute.ReadFrame). When nothing is buffered it
// waits for the client, without the buffer if the connection was idle before.
func (r *connReader) next(buf []byte, max int) ([]byte, error) {
	if r.br.Buffered() > 0 {
		return jute.ReadFrame(r.br, buf, max)
	}
	start := r.now()
	if r.idle && r.raw != nil {
		r.release()
		r.waitReadable()
		r.borrow()
	}
	frame, err := jute.ReadFrame(r.br, buf, max)
	r.idle = r.now().Sub(start) > idleAfter
	return frame, err
}

// waitReadable returns once the socket has a byte to read, has reached its end, or
// failed; the read that follows then returns the bytes, the end or the error. A
// deadline set on the connection ends the wait as it ends a read.
func (r *connReader) waitReadable() {
	r.raw.Read(func(fd uintptr) bool {
		for {
			_, _, err := syscall.Recvfrom(int(fd), r.peek[:], syscall.MSG_PEEK)
			switch err {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // not readable yet: the poller wakes this when it is
			}
			return true
		}
	})
}

package quorum

import (
	"bufio"
	"io"
	"net"
	"sync"
)

// Raft's streams read ahead of raft (received.go says why). Each stream this member
// accepts on its raft address gets a reader goroutine that takes whatever arrives off the
// socket at once, keeps it for raft's transport to read at its own pace, and decodes the
// requests in it as raft's transport will, handing each AppendEntries to received. The
// bytes raft reads are exactly the bytes that arrived: the decoding only looks at them.
// Should it fail (a request it does not know), it stops looking and the bytes still
// flow.

// The request types of hashicorp/raft's network transport, the byte before each request.
const (
	rpcAppendEntries uint8 = iota
	rpcRequestVote
	rpcInstallSnapshot
	rpcTimeoutNow
	rpcRequestPreVote
)

// readAheadMax bounds the bytes read but not yet taken by raft: a snapshot being sent
// waits in the socket, not in memory.
const readAheadMax = 4 << 20

// readAheadListener wraps what a raft listener accepts in readAheadConns, kept in open
// until they close.
type readAheadListener struct {
	net.Listener
	recv *received
	open *openStreams
}

func (l readAheadListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	r := newReadAheadConn(c, l.recv)
	l.open.add(r)
	return r, nil
}

// openStreams are the raft streams a member accepted and has not closed. Raft's
// NetworkTransport.Close closes its listener but not the streams it accepted: their
// handlers read on and refuse each RPC with "transport shutdown". A stopped process takes
// them with it, but a member stopped and started again within one process (the
// in-process clusters of the tests) would leave its leader a pooled connection to the old
// transport, which it finds only once the member is back (a failed AppendEntries, an
// outage logged after the member's return). So the node closes them with its transport.
type openStreams struct{ m sync.Map } // *readAheadConn -> struct{}

func (o *openStreams) add(r *readAheadConn) {
	r.open = o
	o.m.Store(r, struct{}{})
}

func (o *openStreams) closeAll() {
	o.m.Range(func(c, _ any) bool {
		c.(*readAheadConn).Close()
		return true
	})
}

// readAheadConn is an accepted raft stream whose bytes a goroutine reads as they arrive.
type readAheadConn struct {
	net.Conn
	open   *openStreams // the set it is kept in while open, if any
	mu     sync.Mutex
	cond   sync.Cond
	buf    []byte // read off the socket, not yet taken by Read
	err    error  // the socket's read error, once buf is drained
	closed bool
}

func newReadAheadConn(c net.Conn, recv *received) *readAheadConn {
	r := &readAheadConn{Conn: c}
	r.cond.L = &r.mu
	go r.pump(recv)
	return r
}

// Read returns bytes the pump read, waiting for some.
func (r *readAheadConn) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.buf) == 0 && r.err == nil && !r.closed {
		r.cond.Wait()
	}
	if len(r.buf) == 0 {
		if r.closed {
			// Closed under the reader: its node is stopping (openStreams.closeAll). The
			// end of the stream, so raft's handler ends without logging an error.
			return 0, io.EOF
		}
		return 0, r.err
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	if len(r.buf) == 0 {
		r.buf = nil
	}
	r.cond.Broadcast() // room for the pump
	return n, nil
}

func (r *readAheadConn) Close() error {
	if r.open != nil {
		r.open.m.Delete(r)
	}
	r.mu.Lock()
	r.closed = true
	r.cond.Broadcast()
	r.mu.Unlock()
	return r.Conn.Close()
}

// keep keeps what the pump read for Read, waiting while readAheadMax bytes are kept; it
// is the pump's side of Read.
func (r *readAheadConn) keep(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.buf) >= readAheadMax && !r.closed {
		r.cond.Wait()
	}
	if r.closed {
		return 0, net.ErrClosed
	}
	r.buf = append(r.buf, p...)
	r.cond.Broadcast()
	return len(p), nil
}

// keeper is readAheadConn.keep as an io.Writer.
type keeper struct{ c *readAheadConn }

func (k keeper) Write(p []byte) (int, error) { return k.c.keep(p) }

// pump reads the socket until it fails, keeping every byte for Read and decoding the
// requests among them.
func (r *readAheadConn) pump(recv *received) {
	// Every byte the decoder's reader takes off the socket is kept first.
	br := bufio.NewReaderSize(io.TeeReader(r.Conn, keeper{r}), 64<<10)
	err := decodeRequests(br, recv)
	if err == nil {
		// Decoding stopped; the rest of the stream is only passed on.
		_, err = io.Copy(keeper{r}, r.Conn)
		if err == nil {
			err = io.EOF
		}
	}
	r.mu.Lock()
	r.err = err
	r.cond.Broadcast()
	r.mu.Unlock()
}

// decodeRequests reads raft requests from br as raft's transport will (raft_wire.go),
// handing the AppendEntries to recv, until br fails (its error returned) or a request
// is not one it understands (nil returned: the stream goes on undecoded).
func decodeRequests(br *bufio.Reader, recv *received) error {
	w := &wireReader{br: br}
	for {
		kind, err := br.ReadByte()
		if err != nil {
			return err
		}
		switch kind {
		case rpcAppendEntries:
			req, err := w.appendEntries()
			if err != nil {
				// Bytes it does not understand, or the stream failed under it: the copy
				// after it ends as the stream does.
				return nil
			}
			recv.add(req)
		case rpcRequestVote, rpcRequestPreVote, rpcTimeoutNow:
			if w.skip(0) != nil {
				return nil
			}
		case rpcInstallSnapshot:
			size, err := w.snapshotSize()
			if err != nil {
				return nil
			}
			// The snapshot's bytes follow the request.
			if _, err := io.CopyN(io.Discard, br, size); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}
